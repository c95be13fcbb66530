"""Responses for every item of every built-in benchmark, for bench/eval_scoring.bench.sh (`trex eval --benchmarks all
--responses FILE`). Real programs that go through the whole harness (extraction, sandbox, the gurobipy layer,
CBC), not a shortcut:

- statement benchmarks (NL4OPT, OptiBench and the seven further public sets): per item a small gurobipy program
  whose optimum is the gold (min x + 2y s.t. x + y >= gold, x free, y >= 0; x integer where the gold is an integer
  and the item's index is even, so CBC's MILP path runs too); every 10th item (index % 10 == 3) is off by 2e-5
  relative (the relative rule only), index % 10 == 7 is off by max(1, 1 % of |gold|) (neither rule), and
  index % 20 == 9 raises a NameError;
- B4O-Feasible: the reference program with `<model>.optimize()` appended (bench/oracle_responses.py's "oracle");
- B4O-ORGEval: the reference program as written.

  python3 eval_responses_all.py BENCHMARKS_DIR RESPONSES_JSONL EXPECTED_JSON
writes the responses and, per statement benchmark, the expected counts under each rule (computed here from the
programs' optima), and prints how many responses each benchmark got.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle_responses import _MODEL  # noqa: E402

STATEMENT = (("nl4opt", "nl4opt.jsonl"), ("optibench", "optibench.jsonl"), ("industryor", "industryor.jsonl"),
             ("mamo_easy", "mamo_easy.jsonl"), ("mamo_complex", "mamo_complex.jsonl"),
             ("complexor", "complexor.jsonl"), ("logior", "logior.jsonl"), ("nlp4lp", "nlp4lp.jsonl"),
             ("optmath_bench", "optmath_bench.jsonl"))
REL_TOL = 1e-4


def program(value, integer):
    vtype = ", vtype=GRB.INTEGER" if integer else ""
    return ("import gurobipy as gp\nfrom gurobipy import GRB\nm = gp.Model('bench')\n"
            f"x = m.addVar(lb=-GRB.INFINITY{vtype}, name='x')\ny = m.addVar(lb=0, name='y')\n"
            f"m.addConstr(x + y >= {value!r}, name='c')\nm.setObjective(x + 2 * y, GRB.MINIMIZE)\nm.optimize()\n")


def main():
    data, out, expected_path = sys.argv[1:4]
    counts, expected = {}, {}
    with open(out, "w", encoding="utf-8") as f:
        def emit(bench, rid, code):
            f.write(json.dumps({"id": rid, "benchmark": bench, "response": "```python\n" + code + "\n```"}) + "\n")
            counts[bench] = counts.get(bench, 0) + 1

        for bench, name in STATEMENT:
            exp = {"n": 0, "absolute": 0, "relative": 0}
            with open(os.path.join(data, name), encoding="utf-8") as fh:
                for i, line in enumerate(fh):
                    r = json.loads(line)
                    gold = float(r["answer"])
                    exp["n"] += 1
                    if i % 20 == 9:
                        emit(bench, r["id"], "import gurobipy as gp\nm = gp.Model('bench')\nundefined_name + 1\n")
                        continue
                    value = gold
                    if i % 10 == 3:
                        value = gold * (1 + 2e-5)
                    elif i % 10 == 7:
                        value = gold + max(1.0, 0.01 * abs(gold))
                    integer = value == gold and gold == int(gold) and i % 2 == 0
                    emit(bench, r["id"], program(value, integer))
                    exp["absolute"] += abs(value - gold) <= 1e-6
                    exp["relative"] += abs(value - gold) <= max(1e-6, REL_TOL * abs(gold))
            expected[bench] = exp
        for bench, name in (("b4o_feasible", "bench4opt_feasible.jsonl"), ("b4o_orgeval", "bench4opt_orgeval.jsonl")):
            with open(os.path.join(data, name), encoding="utf-8") as fh:
                for line in fh:
                    r = json.loads(line)
                    code = r["reference_code"]
                    names = _MODEL.findall(code)
                    if bench == "b4o_feasible" and names and ".optimize(" not in code:
                        code = code.rstrip("\n") + f"\n{names[0]}.optimize()\n"
                    emit(bench, r["id"], code)
    with open(expected_path, "w", encoding="utf-8") as f:
        json.dump(expected, f, indent=1)
    print("responses: " + ", ".join(f"{b} {n}" for b, n in counts.items()) + f" ({sum(counts.values())} in all)")


if __name__ == "__main__":
    main()
