"""trex_pulp (python/trex_pulp): PuLP answers on Debian's python3-pulp run CBC, as on PyPI's PuLP. Debian's
package ships no CBC binary (PULP_CBC_CMD is "Not Available" and the default solver falls back to GLPK);
install() points PULP_CBC_CMD, getSolver("PULP_CBC_CMD") and the default solver at /usr/bin/cbc."""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.join(os.path.dirname(os.path.dirname(HERE)), "python")


def run(code, env_extra=None):
    """Runs code in a fresh /usr/bin/python3 (PuLP's module state is per process) and returns its stdout."""
    env = dict(os.environ)
    env["PYTHONPATH"] = PYTHON_DIR
    env.update(env_extra or {})
    proc = subprocess.run(["/usr/bin/python3", "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=env, timeout=60)
    if proc.returncode != 0:
        raise AssertionError(proc.stderr[-2000:])
    return proc.stdout.strip().splitlines()


class DebianPulp(unittest.TestCase):
    def test_without_install_pulp_cbc_cmd_is_missing(self):
        # What the wrapper fixes: Debian's PuLP as shipped cannot run PULP_CBC_CMD (and defaults to GLPK).
        out = run("""
            import pulp
            print(pulp.PULP_CBC_CMD().available())
            print(type(pulp.LpSolverDefault).__name__)
        """)
        self.assertEqual(out[0], "False")
        self.assertNotEqual(out[1], "PULP_CBC_CMD")

    def test_install_runs_debian_cbc(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = run("""
                import os, pulp, trex_pulp
                trex_pulp.install()
                s = pulp.PULP_CBC_CMD(msg=0, timeLimit=20)
                print(s.path, s.available() is not False, pulp.LpSolverDefault.path, pulp.LpSolverDefault.name)
                print(pulp.getSolver("PULP_CBC_CMD", msg=0).path, s.tmpDir == os.environ["TMPDIR"])
                prob = pulp.LpProblem("paint", pulp.LpMaximize)
                a = pulp.LpVariable("a", 0, cat="Integer")
                b = pulp.LpVariable("b", 0, cat="Integer")
                prob += 5 * a + 4 * b
                prob += 6 * a + 4 * b <= 24
                prob += a + 2 * b <= 6
                print(prob.solve(s), pulp.value(prob.objective), prob.sol_status)
                prob2 = pulp.LpProblem("lp", pulp.LpMaximize)
                x = pulp.LpVariable("x", 0)
                prob2 += x
                prob2 += 2 * x <= 7
                print(prob2.solve(), pulp.value(prob2.objective))
                try:
                    pulp.PULP_CBC_CMD(path="/bin/true")
                except pulp.PulpSolverError as e:
                    print("refused", e)
                print(sorted(os.listdir(os.environ["TMPDIR"])))
            """, {"TMPDIR": tmp})
        self.assertEqual(out[0], "/usr/bin/cbc True /usr/bin/cbc PULP_CBC_CMD")
        self.assertEqual(out[1], "/usr/bin/cbc True")
        self.assertEqual(out[2], "1 20.0 1")  # integer optimum 20 at (4, 0); the LP relaxation gives 21
        self.assertEqual(out[3], "1 3.5")
        self.assertTrue(out[4].startswith("refused Use COIN_CMD"))
        self.assertEqual(out[5], "[]")  # CBC's temporary files went to TMPDIR and were removed

    def test_infeasible_and_unbounded(self):
        out = run("""
            import pulp, trex_pulp
            trex_pulp.install()
            p = pulp.LpProblem("i", pulp.LpMinimize)
            n = pulp.LpVariable("n", 0, 10, cat="Integer")
            p += n
            p += 2 * n == 7
            print(pulp.LpStatus[p.solve()])
            q = pulp.LpProblem("u", pulp.LpMaximize)
            z = pulp.LpVariable("z", 0)
            q += z
            q += z >= 1
            print(pulp.LpStatus[q.solve()])
        """)
        self.assertEqual(out, ["Infeasible", "Unbounded"])

    def test_confirm_overrules_cbc_preprocessing(self):
        # Issue #25's MILP: CBC (with preprocessing, PuLP's call) says infeasible; trex's re-solve of PuLP's own LP
        # file finds the optimum -489.75 (+ the objective's constant 10, which PuLP's LP file leaves out).
        out = run("""
            import json, pulp, trex_pulp
            trex_pulp.install()
            p = pulp.LpProblem("victim", pulp.LpMinimize)
            v = {n: pulp.LpVariable(n, lo, up, cat=c) for n, lo, up, c in (
                ("qty0", 0, 56, "Continuous"), ("flow1", 0, 36, "Continuous"), ("qty2", 3, 51, "Continuous"),
                ("y3", 0, 6, "Continuous"), ("y4", 0, 24, "Integer"), ("qty5", -17, 43, "Continuous"),
                ("z6", 0, 20, "Continuous"), ("x7", 0, 2, "Integer"))}
            p += (-1.25 * v["qty0"] + 0.5 * v["flow1"] - 2 * v["qty2"] + 1.25 * v["y3"] + 2 * v["y4"]
                  - 1.25 * v["qty5"] - 12 * v["z6"] - 12 * v["x7"] + 10)
            p += 10 * v["qty0"] - 2.25 * v["y3"] >= 287.25
            p += 1.5 * v["qty0"] - 3 * v["flow1"] - 10 * v["qty2"] - 4 * v["qty5"] + 10 * v["z6"] <= -248
            print(pulp.LpStatus[p.solve()])
            c = trex_pulp.confirm(p)
            print(c["status"], c["objective"], c["overruled"], len(c["checks"]))
            q = pulp.LpProblem("odd", pulp.LpMinimize)
            n = pulp.LpVariable("n", 0, 10, cat="Integer")
            q += n
            q += 2 * n == 7
            q.solve()
            c = trex_pulp.confirm(q)
            print(c["status"], c["overruled"])
        """)
        self.assertEqual(out[0], "Infeasible")
        self.assertEqual(out[1], "optimal -479.75 True 2")
        self.assertEqual(out[2], "infeasible False")


if __name__ == "__main__":
    unittest.main()
