"""coptpy oracle: the same coptpy programs through the real coptpy 8.0.7 (the reference environment,
scripts/reference-env.sh; its bundled size-limited licence) and through trex's coptpy layer (python/trex_coptpy,
imported as `coptpy` via python/shim), compared item by item (issue #25 point 4).

Program sets (each program: id, code, the files it reads):
  orlm          ORLM-style coptpy programs (tests/python/coptpy_oracle_programs.py)
  b4o_feasible, b4o_orgeval
                every B4O reference program, rewritten from gurobipy to coptpy by to_coptpy() (the same model in
                coptpy's API, as an ORLM-style model would write it), with its instance as data.json
  synth         the code answers of a `trex synth` folder (one per family x variant x representation x layout x
                task, as the gurobipy oracle picks them), rewritten to coptpy the same way, with their data files
  FILE.jsonl    programs in the worker's format (id, set, code, files, replace_data_json)

Each program runs once per executor in a worker process (`coptpy_oracle.py worker`, run by that executor's
interpreter), in a fresh folder holding its files, at module level; the model is the global `model`, else `m`,
else the last coptpy Model among the globals. The worker solves it if it is still UNSTARTED and records status,
objval (when OPTIMAL), Cols, Rows, the program's error (exception type, retcode) and RESULT.

Comparison (compare()): both raise -> the same exception type; trex's layer refuses a feature (CoptError with
"unsupported") -> "layer unsupported"; coptpy refuses with its size-limited licence (retcode 4) -> "over the size
limit"; else status, objval when both are OPTIMAL (|a - b| <= 1e-6 * max(1, |a|, |b|)), Cols, and RESULT. Anything
else is a difference, printed with its reason; documented() names the differences docs/coptpy-layer.md explains.

  python3 coptpy_oracle.py run --reference-python P [--trex BIN] [--sets orlm,b4o_feasible,b4o_orgeval,synth]
          [--synth-dir DIR] [--ids A,B] [--json OUT] [--quiet]
exit status 0 when every difference is a documented one, 1 otherwise (all are printed).
"""
import argparse
import collections
import json
import math
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.dirname(os.path.dirname(HERE))
SHIM = os.path.join(SOURCE_DIR, "python", "shim")
RETCODE_LICENSE = 4
OPTIMAL = 1


# ---------------------------------------------------------------------------------------------------------------
# worker: runs programs with whatever `coptpy` its interpreter imports

def _worker(programs_file, out_dir, timeout):
    import contextlib
    import io
    import signal
    import traceback

    # COPT's C library prints its banner and logs to file descriptor 1: keep the worker's stdout silent.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    import coptpy as cp
    layer = bool(getattr(cp, "TREX_LAYER", False))

    class Timeout(Exception):
        pass

    def on_alarm(signum, frame):
        raise Timeout(f"program ran past {timeout} s")

    signal.signal(signal.SIGALRM, on_alarm)

    def err_of(e):
        return {"type": type(e).__name__, "retcode": getattr(e, "retcode", None), "message": str(e)[:300]}

    def attr(model, name):
        try:
            v = model.getAttr(name)
            return v if isinstance(v, (int, float, str)) else float(v)
        except Exception as e:
            return {"unavailable": type(e).__name__}

    results = []
    with open(programs_file, encoding="utf-8") as f:
        programs = [json.loads(line) for line in f if line.strip()]
    cwd0 = os.getcwd()
    for n, p in enumerate(programs):
        d = os.path.join(out_dir, f"p{n:05d}")
        os.makedirs(d)
        for name, content in p.get("files", {}).items():
            with open(os.path.join(d, name), "w", encoding="utf-8") as fh:
                fh.write(content)
        code = p["code"]
        if p.get("replace_data_json"):
            code = code.replace("data.json", os.path.join(d, "data.json"))
        res = {"id": p["id"], "set": p["set"], "layer": layer, "error": None, "model": False}
        g = {"__name__": "__main__"}
        os.chdir(d)
        signal.alarm(timeout)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(code, f"<{p['id']}>", "exec"), g)
        except BaseException as e:  # the program's failure is its outcome
            if isinstance(e, KeyboardInterrupt):
                raise
            res["error"] = err_of(e)
            res["error"]["where"] = "program"
            res["traceback"] = traceback.format_exc(limit=4)[-1500:]
        model = None
        for key in ("model", "m"):
            if isinstance(g.get(key), cp.Model):
                model = g[key]
                break
        if model is None:
            models = [v for v in g.values() if isinstance(v, cp.Model)]
            model = models[-1] if models else None
        if "RESULT" in g:
            try:
                res["result"] = json.loads(json.dumps(g["RESULT"], default=repr))
            except Exception as e:
                res["result"] = {"unserialisable": repr(e)}
        if model is not None:
            res["model"] = True
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    try:
                        model.setParam("Logging", 0)
                    except Exception:
                        pass
                    if attr(model, "Status") == 0:
                        try:
                            model.solve()
                        except Exception as e:
                            if isinstance(e, Timeout):
                                raise
                            if res["error"] is None:
                                res["error"] = err_of(e)
                                res["error"]["where"] = "solve"
                    for a in ("Status", "Cols", "Rows", "IsMIP", "ObjSense"):
                        res[a] = attr(model, a)
                    if res["Status"] == OPTIMAL:
                        try:
                            res["objval"] = float(model.objval)
                        except Exception as e:
                            res["objval"] = {"unavailable": type(e).__name__}
            except Timeout as e:
                res["error"] = err_of(e)
                res["error"]["where"] = "solve"
        signal.alarm(0)
        os.chdir(cwd0)
        results.append(res)
        g.clear()
    with open(os.path.join(out_dir, "results.jsonl"), "w", encoding="utf-8") as f:
        for r in results:
            f.write(json.dumps(r) + "\n")


# ---------------------------------------------------------------------------------------------------------------
# program sets

def orlm_programs():
    import importlib.util
    spec = importlib.util.spec_from_file_location("coptpy_oracle_programs",
                                                  os.path.join(HERE, "coptpy_oracle_programs.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return [{"set": "orlm", "id": name, "code": code, "files": {}, "replace_data_json": False}
            for name, code in mod.PROGRAMS]


def _call_spans(code, method):
    """(start, end) of the argument text of every `.method(` call (balanced parentheses, strings skipped)."""
    spans = []
    for m in re.finditer(r"\." + method + r"\(", code):
        i, depth, quote = m.end(), 1, None
        while i < len(code) and depth:
            ch = code[i]
            if quote:
                if ch == "\\":
                    i += 1
                elif ch == quote:
                    quote = None
            elif ch in "'\"":
                quote = ch
            elif ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
            i += 1
        if depth == 0:
            spans.append((m.end(), i - 1))
    return spans


def _rename_keyword(code, method, old, new):
    """`old=` -> `new=` among the top-level keyword arguments of every .method(...) call."""
    out, last = [], 0
    for start, end in _call_spans(code, method):
        args = code[start:end]
        depth, quote, j, edited = 0, None, 0, []
        while j < len(args):
            ch = args[j]
            if quote:
                if ch == "\\":
                    j += 1
                elif ch == quote:
                    quote = None
            elif ch in "'\"":
                quote = ch
            elif ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
            elif depth == 0 and args.startswith(old + "=", j) and not args.startswith(old + "==", j) and \
                    (j == 0 or not (args[j - 1].isalnum() or args[j - 1] == "_")):
                edited.append(j)
            j += 1
        for j in reversed(edited):
            args = args[:j] + new + "=" + args[j + len(old) + 1:]
        out.append(code[last:start])
        out.append(args)
        last = end
    out.append(code[last:])
    return "".join(out)


_HEADER = ("import coptpy as cp\nfrom coptpy import COPT, quicksum, tupledict, tuplelist, multidict\n"
           "_copt_env = cp.Envr()\n")


def to_coptpy(code):
    """A gurobipy program (B4O's reference style) as the same model written with coptpy's API: imports,
    GRB -> COPT, Model(...) -> env.createModel(...), addVars/addConstrs name= -> nameprefix=, optimize -> solve,
    Status / ObjVal / X / VarName -> status / objval / x / name, OutputFlag -> Logging. A rewrite, not a parser:
    what it misses fails the same way in both executors (counted as agreeing errors, and listed)."""
    lines = []
    for line in code.split("\n"):
        s = line.strip()
        if re.match(r"(import gurobipy|from gurobipy)\b", s):
            continue
        lines.append(line)
    code = "\n".join(lines)
    code = re.sub(r"\bgp\.GRB\.", "COPT.", code)
    code = re.sub(r"\bGRB\.INF\b", "COPT.INFINITY", code)
    code = re.sub(r"\bGRB\.", "COPT.", code)
    code = re.sub(r"\b(?:gp|gurobipy)\.Model\(", "_copt_env.createModel(", code)
    code = re.sub(r"(?<![\w.])Model\(", "_copt_env.createModel(", code)
    code = re.sub(r"\b(?:gp|gurobipy)\.(quicksum|tupledict|tuplelist|multidict|LinExpr)\b", r"cp.\1", code)
    code = re.sub(r"(?<![\w.])(LinExpr)\(", r"cp.\1(", code)
    code = _rename_keyword(code, "addVars", "name", "nameprefix")
    code = _rename_keyword(code, "addConstrs", "name", "nameprefix")
    code = re.sub(r"\.addLConstr\(", ".addConstr(", code)
    # variable attributes are COPT "information": v.setAttr(GRB.Attr.LB, 3) -> v.setInfo(COPT.Info.LB, 3)
    code = re.sub(r"\.setAttr\(\s*(?:COPT\.Attr\.(LB|UB|Obj)|['\"](LB|UB|Obj|lb|ub|obj)['\"])\s*,",
                  lambda mt: ".setInfo(COPT.Info.%s," % (mt.group(1) or mt.group(2)).upper().replace("OBJ", "Obj"), code)
    code = re.sub(r"\.optimize\(\)", ".solve()", code)
    code = re.sub(r"\.(Status|status)\b", ".status", code)
    code = re.sub(r"\.(ObjVal|objVal|objval)\b", ".objval", code)
    code = re.sub(r"\.X\b", ".x", code)
    code = re.sub(r"\.VarName\b", ".name", code)
    code = re.sub(r"\.ConstrName\b", ".name", code)
    code = re.sub(r"(\w+)\.(?:setParam|Params\.)\(?\s*['\"]?(OutputFlag|LogToConsole)['\"]?\s*[,=]\s*(\w+)\)?",
                  r"\1.setParam('Logging', \3)", code)
    code = re.sub(r"\b(\w+)\.Params\.(\w+)\s*=\s*(.+)", r"\1.setParam('\2', \3)", code)
    return _HEADER + code


def b4o_programs(which):
    sys.path.insert(0, HERE)
    import gurobipy_oracle as go
    out = []
    for p in go.b4o_programs(which):
        out.append(dict(p, code=to_coptpy(p["code"])))
    return out


def synth_programs(synth_dir):
    sys.path.insert(0, HERE)
    import gurobipy_oracle as go
    return [dict(p, code=to_coptpy(p["code"])) for p in go.synth_programs(synth_dir)]


def load_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


# ---------------------------------------------------------------------------------------------------------------
# comparison

def run_worker(python, programs, out_dir, env_extra, timeout=300):
    os.makedirs(out_dir)
    pf = os.path.join(out_dir, "programs.jsonl")
    with open(pf, "w", encoding="utf-8") as f:
        for p in programs:
            f.write(json.dumps(p) + "\n")
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.update(env_extra)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    proc = subprocess.run([python, os.path.abspath(__file__), "worker", pf, out_dir, str(timeout)], env=env,
                          capture_output=True, text=True)
    path = os.path.join(out_dir, "results.jsonl")
    if proc.returncode != 0 or not os.path.exists(path):
        raise SystemExit(f"worker {python} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    rows = load_jsonl(path)
    if len(rows) != len(programs):
        raise SystemExit(f"worker {python} returned {len(rows)} results for {len(programs)} programs")
    return rows


def same_num(a, b):
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-6)
    return a == b


def same_value(a, b):
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    return same_num(a, b)


CATEGORIES = ("agree", "both raise", "differ", "layer unsupported", "over the size limit")


def compare(c, l):
    """(category, reasons) for coptpy's row c and the layer's row l."""
    ce, le = c.get("error"), l.get("error")
    if le and le.get("type") == "CoptError" and "unsupported" in (le.get("message") or "").lower() and \
            not (ce and ce.get("where") == "program"):  # coptpy ran the program: the layer refused a feature
        return "layer unsupported", [f"layer: {le['message']}"]
    if ce and ce.get("retcode") == RETCODE_LICENSE:
        return "over the size limit", [f"coptpy: {ce['message']}"]
    reasons = []
    if bool(ce) != bool(le) or (ce and le and ce["type"] != le["type"]):
        reasons.append(f"error: coptpy {ce and ce['type']} ({ce and ce['message'][:120]}) / layer "
                       f"{le and le['type']} ({le and le['message'][:120]})")
    for key in ("model", "Status", "Cols"):
        if not same_num(c.get(key), l.get(key)):
            reasons.append(f"{key}: coptpy {c.get(key)!r} / layer {l.get(key)!r}")
    if c.get("Status") == OPTIMAL and l.get("Status") == OPTIMAL:
        a, b = c.get("objval"), l.get("objval")
        if not (isinstance(a, float) and isinstance(b, float)
                and abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))):
            reasons.append(f"objval: coptpy {a!r} / layer {b!r}")
    if not same_value(c.get("result"), l.get("result")):
        reasons.append(f"RESULT: coptpy {c.get('result')!r} / layer {l.get('result')!r}")
    if reasons:
        return "differ", reasons
    return ("both raise" if ce else "agree"), []


# Known differences (docs/coptpy-layer.md, "Checked against coptpy 8.0.7"): name -> (predicate on the two rows
# and the reasons, explanation).
def documented(c, l, reasons, program=None):
    ce, le = c.get("error") or {}, l.get("error") or {}
    if reasons and all(r.startswith("Cols:") for r in reasons) and "addGenConstr" in (program or {}).get("code", "") \
            and isinstance(c.get("Cols"), int) and isinstance(l.get("Cols"), int) and c["Cols"] > l["Cols"]:
        # COPT adds auxiliary columns to the model for max / min / abs / PWL constraints as they are added
        return "general constraints: COPT's auxiliary columns"
    if len(reasons) == 1 and reasons[0].startswith("error:") and ce.get("type") == "ValueError" and \
            le.get("type") == "GurobiError" and "bool value" in (le.get("message") or "") + (ce.get("message") or ""):
        return "chained comparison"  # `a <= expr <= b`: both refuse it, with their own exception type
    if ce.get("type") == "TypeError" and "not 'QuadExpr'" in (ce.get("message") or "") and \
            ce.get("where") == "program" and (not le or "unsupported" in (le.get("message") or "").lower()) and \
            all(r.split(":")[0] in ("error", "objval", "Status") for r in reasons):
        # lin += quadratic term: coptpy's LinExpr refuses it (the program stops there, the objective unset), the
        # layer promotes it to a QuadExpr and goes on (and solves the model when the quadratic solve can)
        return "quadratic +="
    if reasons == [f"Status: coptpy 20 / layer {OPTIMAL}"]:
        return "nonconvex QP: COPT's local optimum, trex's proven one"  # LOCAL_OPTIMAL vs a proven global optimum
    return None


def default_trex():
    for cand in (os.environ.get("TREX_BIN"), os.path.join(SOURCE_DIR, "build", "trex")):
        if cand and os.path.isfile(cand):
            return cand
    raise SystemExit("trex executable not found (set TREX_BIN or --trex)")


def sweep(programs, reference_python, layer_python, trex):
    with tempfile.TemporaryDirectory(prefix="trex-coptpy-oracle-") as work:
        crows = run_worker(reference_python, programs, os.path.join(work, "coptpy"), {})
        lrows = run_worker(layer_python, programs, os.path.join(work, "layer"),
                           {"PYTHONPATH": SHIM + os.pathsep + os.path.join(SOURCE_DIR, "python"), "TREX_BIN": trex})
    if any(r["layer"] for r in crows):
        raise SystemExit(f"{reference_python} imports trex's layer, not the real coptpy")
    if not all(r["layer"] for r in lrows):
        raise SystemExit(f"{layer_python} with python/shim does not import trex's layer")
    counts = collections.OrderedDict()
    report = []
    for p, c, l in zip(programs, crows, lrows):
        cat, reasons = compare(c, l)
        doc = documented(c, l, reasons, p) if cat == "differ" else None
        counts.setdefault(p["set"], collections.Counter())[cat] += 1
        if doc:
            counts[p["set"]]["documented"] += 1
        report.append({"set": p["set"], "id": p["id"], "category": cat, "documented": doc, "reasons": reasons,
                       "coptpy": {k: c.get(k) for k in ("Status", "objval", "Cols", "error")},
                       "layer": {k: l.get(k) for k in ("Status", "objval", "Cols", "error")}})
    return counts, report


def print_report(counts, report, quiet=False, json_out=None):
    for item in report:
        if item["category"] != "agree" and (item["category"] == "differ" or not quiet):
            doc = f"  (documented: {item['documented']})" if item["documented"] else ""
            print(f"{item['category'].upper():<20} {item['set']} {item['id']}{doc}")
            for why in item["reasons"]:
                print(f"    {why}")
            if item["category"] == "both raise" and not quiet:
                print(f"    both: {item['coptpy']['error']['type']}: {item['coptpy']['error']['message'][:150]}")
    print()
    print(f"{'set':<14} {'programs':>8} " + " ".join(f"{k:>19}" for k in CATEGORIES) + "  (differ: documented)")
    total = collections.Counter()
    for s, c in counts.items():
        total.update(c)
        n = sum(c[k] for k in CATEGORIES)
        print(f"{s:<14} {n:>8} " + " ".join(f"{c[k]:>19}" for k in CATEGORIES) + f"  {c['documented']:>21}")
    print(f"{'all':<14} {sum(total[k] for k in CATEGORIES):>8} " + " ".join(f"{total[k]:>19}" for k in CATEGORIES)
          + f"  {total['documented']:>21}")
    undocumented = total["differ"] - total["documented"]
    print(f"undocumented differences: {undocumented}")
    if json_out:
        with open(json_out, "w", encoding="utf-8") as f:
            json.dump({"counts": {s: dict(c) for s, c in counts.items()}, "items": report}, f, indent=1)
    return 1 if undocumented else 0


def select_programs(sets, synth_dir=None):
    programs = []
    for s in sets.split(","):
        if s == "synth":
            if not synth_dir:
                raise SystemExit("--sets synth needs --synth-dir (a `trex synth` output folder)")
            programs += synth_programs(synth_dir)
        elif s == "orlm":
            programs += orlm_programs()
        elif s in ("b4o_feasible", "b4o_orgeval"):
            programs += b4o_programs(s[4:])
        elif s.endswith(".jsonl"):
            programs += load_jsonl(s)
        elif s:
            raise SystemExit(f"unknown set {s!r}")
    return programs


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "worker":
        _worker(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--reference-python", required=True)
    r.add_argument("--layer-python", default="/usr/bin/python3")
    r.add_argument("--trex")
    r.add_argument("--sets", default="orlm,b4o_feasible,b4o_orgeval")
    r.add_argument("--synth-dir")
    r.add_argument("--ids")
    r.add_argument("--json")
    r.add_argument("--quiet", action="store_true")
    t = sub.add_parser("translate", help="print to_coptpy() of a gurobipy file")
    t.add_argument("file")
    args = ap.parse_args()
    if args.cmd == "translate":
        with open(args.file, encoding="utf-8") as f:
            print(to_coptpy(f.read()))
        return 0
    trex = os.path.abspath(args.trex or default_trex())
    programs = select_programs(args.sets, args.synth_dir)
    if args.ids:
        keep = set(args.ids.split(","))
        programs = [p for p in programs if p["id"] in keep]
    counts, report = sweep(programs, args.reference_python, args.layer_python, trex)
    return print_report(counts, report, args.quiet, args.json)


if __name__ == "__main__":
    sys.exit(main())
