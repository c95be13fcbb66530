"""Responses for the executor and harness comparisons (bench/eval_executors.bench.sh, bench/trex_harness.bench.sh):
the B4O reference programs as written ("as_written"), the same programs as B4O-Feasible's prompt asks for them
("oracle": the B4O-Feasible programs build their models without solving them, so `<model>.optimize()` is appended;
the ORGEval programs stay as written) and scripted wrong answers made from "oracle", one file per variant.

  python3 oracle_responses.py BENCHMARKS_DIR OUT_DIR [--every K]
writes OUT_DIR/<variant>.jsonl (trex eval --responses format: id, benchmark, response) for the variants below and
prints how many responses each holds. A wrong answer is the reference program with a few lines inserted before
its first optimize()/write() call (same indentation), or a change at its top; an item whose program has no
`<name> = gp.Model(...)` assignment gets no wrong answers. --every K keeps every K-th item of each benchmark.
"""
import json
import os
import re
import sys

BENCHMARKS = (("bench4opt_feasible.jsonl", "b4o_feasible"), ("bench4opt_orgeval.jsonl", "b4o_orgeval"))
_MODEL = re.compile(r"^[ \t]*(\w+)\s*=\s*(?:gp\.|gurobipy\.)?Model\(", re.M)
_ANCHOR = re.compile(r"^([ \t]*)\w+\.(?:optimize|write)\(", re.M)

# variant -> lines inserted before the anchor ({m} = the model's name); None: the change is made in mutate()
VARIANTS = {
    "sense": ["{m}.ModelSense = -{m}.ModelSense"],                       # wrong objective sense
    "relax": ["for _v in {m}.getVars():", "    _v.VType = GRB.CONTINUOUS"],  # integrality dropped
    "extra_row": ["{m}.addConstr(gp.quicksum({m}.getVars()) >= 1, name='extra')"],  # one row too many
    "tight_ub": ["{m}.update()", "for _v in {m}.getVars():", "    _v.UB = min(_v.UB, 0.5)"],  # often infeasible
    "legacy_addconstr": ["{m}.update()", "{m}.addConstr({m}.getVars()[0], GRB.GREATER_EQUAL, 0, 'legacy')"],
    "key_error": None,   # reads a key data.json does not have
    "no_model": None,    # the model ends up under another name
}


def mutate(code, variant):
    names = _MODEL.findall(code)
    if not names:
        return None
    m = names[0]
    if variant == "key_error":
        return "import json\n_missing = json.load(open('data.json'))['__no_such_key__']\n" + code
    if variant == "no_model":
        return code + f"\n_kept = {m}\ndel {m}\n" + ("" if m == "m" else "m = None\n")
    anchor = _ANCHOR.search(code)
    lines = VARIANTS[variant]
    if anchor is None:  # no optimize/write call: append at the end
        return code + "\nfrom gurobipy import GRB\n" + "\n".join(x.format(m=m) for x in lines) + "\n"
    indent = anchor.group(1)
    block = "".join(indent + x.format(m=m) + "\n" for x in ["from gurobipy import GRB"] + lines)
    return code[:anchor.start()] + block + code[anchor.start():]


def main():
    data, out = sys.argv[1], sys.argv[2]
    every = int(sys.argv[sys.argv.index("--every") + 1]) if "--every" in sys.argv else 1
    os.makedirs(out, exist_ok=True)
    files = {v: open(os.path.join(out, f"{v}.jsonl"), "w", encoding="utf-8")
             for v in ["as_written", "oracle"] + list(VARIANTS)}
    counts = {v: 0 for v in files}
    for name, bench in BENCHMARKS:
        with open(os.path.join(data, name), encoding="utf-8") as f:
            records = [json.loads(line) for line in f if line.strip()][::every]
        for r in records:
            written = r["reference_code"]
            code = written
            names = _MODEL.findall(written)
            if bench == "b4o_feasible" and names and ".optimize(" not in written:
                code = written.rstrip("\n") + f"\n{names[0]}.optimize()\n"
            for v, fh in files.items():
                text = written if v == "as_written" else code if v == "oracle" else mutate(code, v)
                if text is None:
                    continue
                fh.write(json.dumps({"id": r["id"], "benchmark": bench,
                                     "response": "```python\n" + text + "\n```"}) + "\n")
                counts[v] += 1
    for fh in files.values():
        fh.close()
    print("responses: " + ", ".join(f"{v} {n}" for v, n in counts.items()))


if __name__ == "__main__":
    main()
