"""Oracle, ORGEval structure: the LP each B4O-ORGEval reference program writes is equivalent to the reference
LP under `trex lp-equiv REF GEN --json` (OR_BENCHMARKS.md §6), except the items listed below."""
import json
import os
import subprocess
import tempfile
import unittest

import b4o_oracle

SHARDS = 2
# Fail the sufficiency test against themselves (README issue 6): the ORGEval ceiling is 390/394.
SELF_INSUFFICIENT = {"BENCH4OPT_286", "BENCH4OPT_287", "BENCH4OPT_360", "BENCH4OPT_361"}
# The reference LP was not written by this reference_code or from this data (see test_b4o_lp_text.py):
# 32 and 206 were written from the twin's data, 144/145 have free X variables the code does not create,
# 380/381 come from another program (model "CuttingStock", a single variable y in the objective).
# (42/43, 198/199, 362/363, 378/379 also come from other programs but are still equivalent.)
DATA_MISMATCH = {"BENCH4OPT_32", "BENCH4OPT_206", "BENCH4OPT_144", "BENCH4OPT_145", "BENCH4OPT_380",
                 "BENCH4OPT_381"}
EXPECTED_NOT_EQUIVALENT = SELF_INSUFFICIENT | DATA_MISMATCH


def trex():
    path = os.environ.get("TREX_BIN")
    if not path or not os.path.isfile(path):
        raise RuntimeError(f"TREX_BIN is not set to the trex executable (got {path!r})")
    return path


def equivalent(ref, gen):
    proc = subprocess.run([trex(), "lp-equiv", ref, gen, "--json"], capture_output=True, text=True, timeout=120)
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise RuntimeError(f"trex lp-equiv gave no JSON (exit {proc.returncode}): {proc.stderr[-500:]}") from None


class EquivOracle(unittest.TestCase):
    def run_shard(self, k):
        records = b4o_oracle.load_records("bench4opt_orgeval.jsonl")
        mine = records[k::SHARDS]
        not_equivalent = []
        for r in mine:
            with tempfile.TemporaryDirectory() as d:
                _, lp, err = b4o_oracle.run_reference(r, d)
                self.assertIsNotNone(lp, f"{r['id']}: no LP written: {err}")
                ref = os.path.join(b4o_oracle.benchmarks_dir(), r["lp_file"])
                result = equivalent(ref, lp)
            self.assertNotIn("error", result, f"{r['id']}: trex could not read an LP: {result.get('error')}")
            if not result.get("equivalent"):
                not_equivalent.append(r["id"])
        expected = sorted(i for i in EXPECTED_NOT_EQUIVALENT if i in {r["id"] for r in mine})
        print(f"\nshard {k}: {len(mine) - len(not_equivalent)}/{len(mine)} equivalent")
        self.assertEqual(sorted(not_equivalent), expected)


class EdgeModelsReadBack(unittest.TestCase):
    """LPs with every bound form, empty rows, an empty objective and quadratic parts are read by trex."""

    def test_edge_models_read_back(self):
        import gurobipy as gp
        from gurobipy import GRB
        m = gp.Model("edge")
        x = m.addVar(lb=-GRB.INFINITY, ub=5, name="x")
        y = m.addVar(lb=-3, name="y")
        b = m.addVar(vtype=GRB.BINARY, lb=1, name="b")
        i = m.addVar(vtype=GRB.INTEGER, ub=1, name="i")
        f = m.addVar(lb=-GRB.INFINITY, vtype=GRB.INTEGER, name="f")
        w = m.addVar(lb=2, ub=2, name="w")
        m.addConstr(x + y + b + i + f + w >= 1)
        m.addConstr(True)
        m.addConstr(x * y <= 3, "q")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "edge.lp")
            m.write(path)
            result = equivalent(path, path)
            self.assertNotIn("error", result)
            self.assertTrue(result["equivalent"])
            m.setObjective(2 * x - y + 4 + x * x, GRB.MAXIMIZE)
            m.write(path)
            self.assertNotIn("error", equivalent(path, path))


for _k in range(SHARDS):
    setattr(EquivOracle, f"test_shard_{_k}", lambda self, k=_k: self.run_shard(k))

if __name__ == "__main__":
    unittest.main()
