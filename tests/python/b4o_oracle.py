"""Runs B4O reference programs through trex's gurobipy layer (shared by the oracle tests and the CLI below).

run_reference(record, workdir) executes the record's `reference_code` in-process with cwd = workdir, its
instance written to workdir/data.json and every `data.json` substring replaced by that absolute path
(OR_BENCHMARKS.md §4). Returns (model, path of the LP it wrote or None, error text or None).
"""
import contextlib
import io
import json
import os
import re
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SOURCE_DIR, "python", "shim"))


def benchmarks_dir():
    d = os.environ.get("TREX_BENCHMARKS") or os.path.join(SOURCE_DIR, "..", "shared", "benchmarks")
    if not os.path.isfile(os.path.join(d, "bench4opt_orgeval.jsonl")):
        raise RuntimeError(f"benchmark data missing: {d} has no bench4opt_orgeval.jsonl (set TREX_BENCHMARKS)")
    return d


def load_records(name):
    with open(os.path.join(benchmarks_dir(), name), encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


_ADDVARS_AT_EOL = re.compile(r"model\.addVars\(([^)]*)\)\n")


def insert_free_lb(code):
    """ORGEval's lb-insertion quirk (OR_BENCHMARKS.md §5.2): a `model.addVars(` call with no `)` inside its
    arguments, closed right before a newline and without `lb=`, gets `lb=-GRB.INFINITY`. The reference LPs
    were written from code rewritten this way."""
    def fix(m):
        args = m.group(1)
        if "lb=" in args:
            return m.group(0)
        sep = "" if args.rstrip().endswith(",") else ", "
        return f"model.addVars({args}{sep}lb=-GRB.INFINITY)\n"
    return _ADDVARS_AT_EOL.sub(fix, code)


def run_reference(record, workdir, orgeval_rewrite=False):
    data_path = os.path.join(workdir, "data.json")
    with open(data_path, "w", encoding="utf-8") as f:
        json.dump(record["data"], f)
    code = record["reference_code"].replace("data.json", data_path)
    if orgeval_rewrite:
        code = "from gurobipy import GRB\n" + insert_free_lb(code)
    old = os.getcwd()
    env = {"__name__": "__main__"}
    err = None
    os.chdir(workdir)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(code, f"<{record['id']}>", "exec"), env)
    except Exception:  # the item's failure is reported, the sweep goes on
        err = traceback.format_exc(limit=3)
    finally:
        os.chdir(old)
    model = env.get("model", env.get("m"))
    lp = os.path.join(workdir, "model.lp")
    return model, (lp if os.path.isfile(lp) else None), err


if __name__ == "__main__":
    # Textual comparison of written LPs with the reference files: python3 b4o_oracle.py [orgeval|feasible]
    import tempfile
    which = sys.argv[1] if len(sys.argv) > 1 else "orgeval"
    recs = load_records(f"bench4opt_{which}.jsonl")
    same = 0
    same_body = 0
    shown = 0
    for r in recs:
        with tempfile.TemporaryDirectory() as d:
            model, lp, err = run_reference(r, d, orgeval_rewrite=os.environ.get("LBQUIRK", "0") == "1")
            if lp is None:
                print(r["id"], "NO LP", err)
                continue
            got = open(lp).read()
        ref = open(os.path.join(benchmarks_dir(), r["lp_file"])).read()
        if got == ref:
            same += 1
        elif got.split("\n", 1)[1] == ref.split("\n", 1)[1]:
            same_body += 1
            print(r["id"], "identical except the model name in the header")
        elif shown < int(os.environ.get("SHOW", "5")):
            shown += 1
            gl, rl = got.split("\n"), ref.split("\n")
            for i, (a, b) in enumerate(zip(gl, rl)):
                if a != b:
                    print(r["id"], "line", i + 1, "\n  got:", repr(a), "\n  ref:", repr(b))
                    break
            else:
                print(r["id"], "length differs", len(gl), len(rl))
    print(f"{which}: {same}/{len(recs)} byte-identical, {same_body} more identical except the header's model name")
