"""gurobipy oracle: the same programs through the real gurobipy (the reference environment, scripts/reference-env.sh)
and through trex's layer (python/, imported as `gurobipy` via python/shim), compared item by item.

Program sets (each program: id, code, the files it reads):
  b4o_feasible, b4o_orgeval  every B4O reference program with its instance as data.json (the harness's
                             `data.json` -> absolute path substitution, OR_BENCHMARKS.md §4; no ORGEval rewriting)
  synth                      the code answers of a `trex synth` folder, one per family x variant x representation
                             (x data-file layout x task), with the data files synth exported for them
  api                        the layer's own test programs (tests/python/gurobipy_oracle_api.py)
  genconstr                  general constraints, PWL and multiple objectives (gurobipy_oracle_genconstr.py)
  genconstr_fuzz             400 generated general-constraint models (fuzz_program(seed), seeds 0-399)
  FILE.jsonl                 programs in the worker's format (the committed subset of the ctest)

Each program runs once per executor in a worker process (`gurobipy_oracle.py worker`, run by that executor's
interpreter): in a fresh folder holding its files, at module level; the model is the global `model`, else `m`,
else the last gurobipy Model among the globals. The worker then writes the model (`model.write(oracle.lp)`), solves
it if it is still LOADED, and records status, ObjVal, NumVars, NumConstrs, NumQConstrs, the error of the program
(exception type, errno) and every other .lp file the program wrote itself.

Comparison (compare()): both raise -> same exception type and errno; the layer refuses (errno 10024) -> "layer
unsupported"; gurobipy refuses with the size-limited licence (errno 10010) -> "over the size limit"; else status,
ObjVal when both are OPTIMAL (|a - b| <= 1e-6 * max(1, |a|, |b|)), the three counts and every LP file: identical
text, else `trex lp-equiv GUROBI.lp LAYER.lp` equivalent (or, where Gurobi's own file fails ORGEval's sufficiency
test against itself, the same WL colours and counts). Anything else is a difference, printed with its reason.

  python3 gurobipy_oracle.py run --reference-python P [--trex BIN] [--sets b4o_feasible,b4o_orgeval,synth,api]
          [--synth-dir DIR] [--ids A,B] [--save-programs FILE] [--json OUT] [--quiet]
exit status 0 when every difference is a documented one (documented()), 1 otherwise (all are printed).
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

ERR_NOT_SUPPORTED = 10024   # GRB.Error.NOT_SUPPORTED: trex's layer refuses (quadratic solve, general constraints)
ERR_SIZE_LIMIT = 10010      # GRB.Error.SIZE_LIMIT_EXCEEDED: the pip licence (2,000 variables / constraints)
OPTIMAL = 2


# ---------------------------------------------------------------------------------------------------------------
# worker: runs programs with whatever `gurobipy` its interpreter imports

def _worker(programs_file, out_dir, timeout):
    import contextlib
    import io
    import signal
    import traceback

    # Gurobi's C library logs to file descriptor 1; keep the worker's own stdout for nothing but silence.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    import gurobipy as gp
    layer = bool(getattr(gp, "TREX_LAYER", False))
    try:
        gp.setParam("OutputFlag", 0)
    except Exception:
        pass

    class Timeout(Exception):
        pass

    def on_alarm(signum, frame):
        raise Timeout(f"program ran past {timeout} s")

    signal.signal(signal.SIGALRM, on_alarm)

    def err_of(e):
        return {"type": type(e).__name__, "errno": getattr(e, "errno", None), "message": str(e)[:300]}

    def attr(model, name):
        try:
            v = getattr(model, name)
            return v if isinstance(v, (int, float, str)) else float(v)
        except Exception as e:  # unavailable attribute
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
        except BaseException as e:  # SystemExit and KeyboardInterrupt-free failures alike are the item's outcome
            if isinstance(e, KeyboardInterrupt):
                raise
            res["error"] = err_of(e)
            res["error"]["where"] = "program"
            res["traceback"] = traceback.format_exc(limit=4)[-1500:]
        model = None
        for key in ("model", "m"):
            if hasattr(g.get(key), "optimize") and isinstance(g.get(key), gp.Model):
                model = g[key]
                break
        if model is None:
            models = [v for v in g.values() if isinstance(v, gp.Model)]
            model = models[-1] if models else None
        if "RESULT" in g:
            try:
                res["result"] = json.loads(json.dumps(g["RESULT"], default=repr))
            except Exception as e:
                res["result"] = {"unserialisable": repr(e)}
        own = sorted(x for x in os.listdir(d) if x.endswith(".lp"))
        res["own_lp"] = own
        if model is not None:
            res["model"] = True
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    try:
                        model.Params.OutputFlag = 0
                    except Exception:
                        pass
                    try:
                        model.write(os.path.join(d, "__oracle__.lp"))
                        res["lp"] = True
                    except Exception as e:
                        res["write_error"] = err_of(e)
                    if attr(model, "Status") == 1:
                        try:
                            model.optimize()
                        except Exception as e:
                            if not isinstance(e, Timeout) and res["error"] is None:
                                res["error"] = err_of(e)
                                res["error"]["where"] = "optimize"
                            elif isinstance(e, Timeout):
                                raise
                    for a in ("Status", "ObjVal", "NumVars", "NumConstrs", "NumQConstrs", "NumIntVars",
                              "NumBinVars", "ModelSense"):
                        res[a] = attr(model, a)
                    if res["Status"] == 4 and not layer:
                        # INF_OR_UNBD: what Gurobi proves without dual reductions in presolve
                        try:
                            model.Params.DualReductions = 0
                            model.reset()
                            model.optimize()
                            res["StatusDefinite"] = attr(model, "Status")
                        except Exception as e:
                            res["StatusDefinite"] = {"error": type(e).__name__}
            except Timeout as e:
                res["error"] = err_of(e)
                res["error"]["where"] = "optimize"
        signal.alarm(0)
        os.chdir(cwd0)
        results.append(res)
        if model is not None and hasattr(model, "dispose"):
            try:
                model.dispose()
            except Exception:
                pass
        g.clear()
    with open(os.path.join(out_dir, "results.jsonl"), "w", encoding="utf-8") as f:
        for r in results:
            f.write(json.dumps(r) + "\n")


# ---------------------------------------------------------------------------------------------------------------
# program sets

def benchmarks_dir():
    d = os.environ.get("TREX_BENCHMARKS") or os.path.join(SOURCE_DIR, "..", "shared", "benchmarks")
    if not os.path.isfile(os.path.join(d, "bench4opt_orgeval.jsonl")):
        raise SystemExit(f"benchmark data missing: {d} has no bench4opt_orgeval.jsonl (set TREX_BENCHMARKS)")
    return d


def b4o_programs(which):
    out = []
    with open(os.path.join(benchmarks_dir(), f"bench4opt_{which}.jsonl"), encoding="utf-8") as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                out.append({"set": f"b4o_{which}", "id": r["id"], "code": r["reference_code"],
                            "files": {"data.json": json.dumps(r["data"])}, "replace_data_json": True})
    return out


_PY_FENCE = re.compile(r"```python\s*(.*?)```", re.S)
_PY_TAG = re.compile(r"<python>(.*?)</python>", re.S | re.I)


def synth_programs(synth_dir):
    """One code answer per (structure, variant, mode, data_files, task) of a `trex synth` folder."""
    seen = set()
    out = []
    with open(os.path.join(synth_dir, "sft.jsonl"), encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            md = r["metadata"]
            if md["task"] not in ("full_model", "code_only"):
                continue
            key = (md["structure"], md["variant"], md["mode"], md.get("data_files", "-"), md["task"])
            if key in seen:
                continue
            answer = r["messages"][-1]["content"]
            blocks = _PY_FENCE.findall(answer) or _PY_TAG.findall(answer)
            if not blocks:
                continue
            seen.add(key)
            files = {}
            fdir = os.path.join(synth_dir, "files", r["id"])
            if os.path.isdir(fdir):
                for name in sorted(os.listdir(fdir)):
                    with open(os.path.join(fdir, name), encoding="utf-8") as fh:
                        files[name] = fh.read()
            out.append({"set": "synth", "id": r["id"] + ":" + "/".join(key), "code": max(blocks, key=len).strip(),
                        "files": files, "replace_data_json": False, "gold": md["objective"]})
    return out


def api_programs():
    import importlib.util
    spec = importlib.util.spec_from_file_location("gurobipy_oracle_api", os.path.join(HERE, "gurobipy_oracle_api.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return [{"set": "api", "id": name, "code": code, "files": {}, "replace_data_json": False}
            for name, code in mod.PROGRAMS]


def _genconstr_module():
    import importlib.util
    spec = importlib.util.spec_from_file_location("gurobipy_oracle_genconstr",
                                                  os.path.join(HERE, "gurobipy_oracle_genconstr.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def genconstr_fuzz_programs(start=0, stop=400):
    """Generated general-constraint models (gurobipy_oracle_genconstr.fuzz_program; same seed, same program)."""
    return [{"set": "genconstr_fuzz", "id": name, "code": code, "files": {}, "replace_data_json": False}
            for name, code in _genconstr_module().fuzz_programs(start, stop)]


def genconstr_programs():
    """The general-constraint set (issue #25 point 3); a program's known difference travels as `documented`."""
    mod = _genconstr_module()
    out = []
    for name, code in mod.PROGRAMS:
        p = {"set": "genconstr", "id": name, "code": code, "files": {}, "replace_data_json": False}
        if name in mod.DOCUMENTED:
            p["documented"] = list(mod.DOCUMENTED[name])
        out.append(p)
    return out


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
    if proc.returncode != 0:
        raise SystemExit(f"worker {python} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    rows = load_jsonl(os.path.join(out_dir, "results.jsonl"))
    for n, r in enumerate(rows):
        r["dir"] = os.path.join(out_dir, f"p{n:05d}")
    return rows


def lp_equiv(trex, ref, gen):
    proc = subprocess.run([trex, "lp-equiv", ref, gen, "--json"], capture_output=True, text=True, timeout=120)
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError:
        return {"equivalent": False, "reason": f"lp-equiv exit {proc.returncode}: {proc.stderr.strip()[-200:]}"}


def quadratic_parts(text):
    """The tokens inside each `[ ... ]` section (both programs use the same names, so the text can be compared)."""
    parts, cur = [], None
    for tok in text.split():
        if tok == "[":
            cur = []
        elif tok == "]" and cur is not None:
            parts.append(" ".join(cur))
            cur = None
        elif cur is not None:
            cur.append(tok)
    return sorted(parts)


def compare_lp(trex, g_path, l_path):
    """None when the files agree, else the reason."""
    with open(g_path, encoding="utf-8", errors="replace") as f:
        gt = f.read()
    with open(l_path, encoding="utf-8", errors="replace") as f:
        lt = f.read()
    if gt == lt:
        return None, "identical"
    eq = lp_equiv(trex, g_path, l_path)
    if eq.get("equivalent") and quadratic_parts(gt) != quadratic_parts(lt):
        eq = {"equivalent": False, "reason": "quadratic parts differ (ORGEval's check does not see them)"}
    if eq.get("equivalent"):
        return None, "equivalent"
    if (eq.get("var_num_check") and eq.get("cons_num_check") and eq.get("wl_check")
            and eq.get("sufficiency_ref") not in (None, "WL-determinable", "symmetric-decomposable")):
        return None, "same WL colours (Gurobi's file fails sufficiency against itself)"
    gl, ll = gt.split("\n"), lt.split("\n")
    first = next((i for i, (a, b) in enumerate(zip(gl, ll)) if a != b), min(len(gl), len(ll)))
    ga = gl[first] if first < len(gl) else "<end>"
    la = ll[first] if first < len(ll) else "<end>"
    return (f"LP not equivalent ({eq.get('reason') or 'checks failed'}); line {first + 1}: gurobipy {ga[:90]!r}"
            f" / layer {la[:90]!r}"), "different"


def same_num(a, b):
    if isinstance(a, dict) or isinstance(b, dict):
        return isinstance(a, dict) and isinstance(b, dict)
    if a == b:  # also infinities (parameter defaults such as TimeLimit)
        return True
    return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))


def same_value(a, b):
    """RESULT values: numbers within the objective tolerance, containers element by element."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return same_num(a, b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    return a == b


def compare(trex, g, l):
    """(category, reasons, lp_kind): category agree / differ / layer unsupported / over the size limit.
    Where the layer refuses to solve (errno 10024) or the licence refuses (errno 10010), status and objective
    are not compared, but the counts and LP files still are (both sides build and write such models)."""
    ge, le = g.get("error"), l.get("error")
    refused = None
    if ge and ge.get("errno") == ERR_SIZE_LIMIT:
        refused = "over the size limit"
    elif le and le.get("errno") == ERR_NOT_SUPPORTED:
        refused = "layer unsupported"
    reasons = []
    if refused and (ge if refused == "over the size limit" else le).get("where") == "program":
        # refused while the program ran: the rest of it did not run on that side, nothing more to compare
        return refused, [(ge if refused == "over the size limit" else le)["message"][:160]], None
    if refused:
        pass
    elif bool(ge) != bool(le):
        reasons.append(f"error: gurobipy {ge and (ge['type'], ge['errno'], ge['message'][:120])} / layer "
                       f"{le and (le['type'], le['errno'], le['message'][:120])}")
    elif ge and le and (ge["type"], ge["errno"]) != (le["type"], le["errno"]):
        reasons.append(f"error type: gurobipy {ge['type']} {ge['errno']} ({ge['message'][:80]}) / layer "
                       f"{le['type']} {le['errno']} ({le['message'][:80]})")
    if "result" in g or "result" in l:
        gr, lr = g.get("result"), l.get("result")
        if not (isinstance(gr, dict) and isinstance(lr, dict)):
            if not same_value(gr, lr):
                reasons.append(f"RESULT: gurobipy {gr} / layer {lr}")
        else:
            for k in sorted(set(gr) | set(lr)):
                if not same_value(gr.get(k), lr.get(k)):
                    reasons.append(f"RESULT[{k!r}]: gurobipy {gr.get(k)!r} / layer {lr.get(k)!r}")
    if g["model"] != l["model"]:
        reasons.append(f"model found: gurobipy {g['model']} / layer {l['model']}")
    lp_kind = None
    if g["model"] and l["model"]:
        for a in ("NumVars", "NumConstrs", "NumQConstrs") if refused else ("Status", "NumVars", "NumConstrs",
                                                                            "NumQConstrs"):
            if g.get(a) != l.get(a):
                why = f"{a}: gurobipy {g.get(a)} / layer {l.get(a)}"
                if a == "Status" and g.get(a) == 4 and "StatusDefinite" in g:
                    why += f" (gurobipy with DualReductions=0: {g['StatusDefinite']})"
                reasons.append(why)
        if not refused and g.get("Status") == OPTIMAL and l.get("Status") == OPTIMAL and not same_num(g["ObjVal"], l["ObjVal"]):
            reasons.append(f"ObjVal: gurobipy {g['ObjVal']!r} / layer {l['ObjVal']!r}")
        if g.get("lp") and l.get("lp"):
            why, lp_kind = compare_lp(trex, os.path.join(g["dir"], "__oracle__.lp"),
                                      os.path.join(l["dir"], "__oracle__.lp"))
            if why:
                reasons.append(why)
        elif g.get("lp") != l.get("lp"):
            reasons.append(f"write(): gurobipy {g.get('write_error') or 'ok'} / layer {l.get('write_error') or 'ok'}")
    if g["own_lp"] != l["own_lp"]:
        reasons.append(f"LP files the program wrote: gurobipy {g['own_lp']} / layer {l['own_lp']}")
    else:
        for name in g["own_lp"]:
            if name == "__oracle__.lp":
                continue
            why, _ = compare_lp(trex, os.path.join(g["dir"], name), os.path.join(l["dir"], name))
            if why:
                reasons.append(f"{name}: {why}")
    if reasons:
        return "differ", reasons, lp_kind
    return (refused or "agree"), ([ (ge if refused == "over the size limit" else le)["message"][:160]] if refused
                                  else []), lp_kind


CATEGORIES = ("agree", "differ", "layer unsupported", "over the size limit")


def documented(g, l, reasons, program=None):
    """The name of the documented difference (docs/gurobipy-layer.md, "Checked against gurobipy 13.0.3") that
    explains every reason of a differing item, else None. One is known: Gurobi's presolve stops at INF_OR_UNBD
    (4) where CBC proves INFEASIBLE (3) or UNBOUNDED (5); it counts only when gurobipy, re-solved with
    DualReductions=0, proves the very status the layer reports, and nothing else differs. Other known differences
    are carried by the program itself (`documented`: a name and the reason prefixes it explains; the
    genconstr set's DOCUMENTED), and count only when every reason starts with one of those prefixes."""
    if (g.get("Status") == 4 and l.get("Status") in (3, 5) and g.get("StatusDefinite") == l.get("Status")
            and all(r.startswith("Status: gurobipy 4") or r.startswith("RESULT['status']: gurobipy 4")
                    for r in reasons)):
        return "INF_OR_UNBD"
    known = (program or {}).get("documented")
    if known and reasons and all(any(r.startswith(pre) for pre in known[1]) for r in reasons):
        return known[0]  # a program-specific difference explained in docs/gurobipy-layer.md
    return None


def default_trex():
    for c in (os.environ.get("TREX_BIN"), os.path.join(SOURCE_DIR, "build", "trex")):
        if c and os.path.isfile(c):
            return c
    raise SystemExit("trex executable not found (set TREX_BIN or --trex)")


def run(args):
    trex = os.path.abspath(args.trex or default_trex())
    programs = []
    for s in args.sets.split(","):
        if s in ("b4o_feasible", "b4o_orgeval"):
            programs += b4o_programs(s[4:])
        elif s == "synth":
            if not args.synth_dir:
                raise SystemExit("--sets synth needs --synth-dir (a `trex synth` output folder)")
            programs += synth_programs(args.synth_dir)
        elif s == "api":
            programs += api_programs()
        elif s == "genconstr":
            programs += genconstr_programs()
        elif s == "genconstr_fuzz":
            programs += genconstr_fuzz_programs()
        elif s.endswith(".jsonl"):
            programs += load_jsonl(s)
        elif s:
            raise SystemExit(f"unknown set {s!r}")
    if args.ids:
        keep = set(args.ids.split(","))
        programs = [p for p in programs if p["id"] in keep]
    if args.save_programs:
        with open(args.save_programs, "w", encoding="utf-8") as f:
            for p in programs:
                f.write(json.dumps(p, sort_keys=True) + "\n")
    counts, lpkinds, report = sweep(programs, args.reference_python, args.layer_python, trex)
    return print_report(counts, lpkinds, report, args.quiet, args.json)


def sweep(programs, reference_python, layer_python, trex):
    """Runs programs through both executors; returns (counts per set, LP comparison kinds per set, items)."""
    with tempfile.TemporaryDirectory(prefix="trex-gurobipy-oracle-") as work:
        grows = run_worker(reference_python, programs, os.path.join(work, "gurobipy"), {})
        lrows = run_worker(layer_python, programs, os.path.join(work, "layer"),
                           {"PYTHONPATH": SHIM + os.pathsep + os.path.join(SOURCE_DIR, "python"), "TREX_BIN": trex})
        if any(r["layer"] for r in grows):
            raise SystemExit(f"{reference_python} imports trex's layer, not the real gurobipy")
        if not all(r["layer"] for r in lrows):
            raise SystemExit(f"{layer_python} with python/shim does not import trex's layer")
        counts = collections.OrderedDict()
        lpkinds = collections.defaultdict(collections.Counter)
        report = []
        for p, g, l in zip(programs, grows, lrows):
            cat, reasons, lpk = compare(trex, g, l)
            doc = documented(g, l, reasons, p) if cat == "differ" else None
            counts.setdefault(p["set"], collections.Counter())[cat] += 1
            if doc:
                counts[p["set"]]["documented"] += 1
            if lpk:
                lpkinds[p["set"]][lpk] += 1
            report.append({"set": p["set"], "id": p["id"], "category": cat, "documented": doc, "reasons": reasons,
                           "gurobipy": {k: g.get(k) for k in ("Status", "ObjVal", "NumVars", "NumConstrs", "error")},
                           "layer": {k: l.get(k) for k in ("Status", "ObjVal", "NumVars", "NumConstrs", "error")}})
    return counts, lpkinds, report


def print_report(counts, lpkinds, report, quiet=False, json_out=None):
    for item in report:
        if item["category"] != "agree" and (item["category"] == "differ" or not quiet):
            doc = f"  (documented: {item['documented']})" if item["documented"] else ""
            print(f"{item['category'].upper():<20} {item['set']} {item['id']}{doc}")
            for why in item["reasons"]:
                print(f"    {why}")
    print()
    print(f"{'set':<14} {'programs':>8} " + " ".join(f"{c:>19}" for c in CATEGORIES)
          + "  (differ: documented)   LP files compared")
    total = collections.Counter()
    for s, c in counts.items():
        total.update(c)
        n = sum(c[k] for k in CATEGORIES)
        kinds = ", ".join(f"{v} {k}" for k, v in sorted(lpkinds[s].items()))
        print(f"{s:<14} {n:>8} " + " ".join(f"{c[k]:>19}" for k in CATEGORIES) + f"  {c['documented']:>21}   {kinds}")
    print(f"{'all':<14} {sum(total[k] for k in CATEGORIES):>8} " + " ".join(f"{total[k]:>19}" for k in CATEGORIES)
          + f"  {total['documented']:>21}")
    undocumented = total["differ"] - total["documented"]
    print(f"undocumented differences: {undocumented}")
    if json_out:
        with open(json_out, "w", encoding="utf-8") as f:
            json.dump({"counts": {s: dict(c) for s, c in counts.items()}, "items": report}, f, indent=1)
    return 1 if undocumented else 0


def synth_subset(synth_dir):
    """One synth program per (structure, variant), the representation and task rotating through the 8 kinds
    (DP/DT/DPS-json/DPS-json_csv x full_model/code_only) so that each kind occurs: the ctest's committed set."""
    by_variant = collections.OrderedDict()
    for p in synth_programs(synth_dir):
        sv = tuple(p["id"].split(":", 1)[1].split("/")[:2])
        by_variant.setdefault(sv, []).append(p)
    kinds = [(m, f, t) for t in ("code_only", "full_model") for m, f in (("DP", "json"), ("DT", "json"),
             ("DPS", "json"), ("DPS", "json_csv"), ("DP", "-"), ("DT", "-"))]
    out = []
    for n, (sv, progs) in enumerate(sorted(by_variant.items())):
        def kind(p):
            k = p["id"].split(":", 1)[1].split("/")
            return (k[2], k[3], k[4])
        ordered = sorted(progs, key=lambda p: (kinds.index(kind(p)) - n) % len(kinds) if kind(p) in kinds else 99)
        out.append(ordered[0])
    return out


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "worker":
        _worker(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "subset":  # gurobipy_oracle.py subset SYNTH_DIR OUT.jsonl
        with open(sys.argv[3], "w", encoding="utf-8") as f:
            for p in synth_subset(sys.argv[2]):
                f.write(json.dumps(p, sort_keys=True) + "\n")
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--reference-python", default=os.environ.get("TREX_REFERENCE_PYTHON"))
    r.add_argument("--layer-python", default="/usr/bin/python3")
    r.add_argument("--trex")
    r.add_argument("--sets", default="b4o_feasible,b4o_orgeval,api")
    r.add_argument("--synth-dir")
    r.add_argument("--ids")
    r.add_argument("--save-programs")
    r.add_argument("--json")
    r.add_argument("--quiet", action="store_true", help="print only the differences, not the exceptions")
    args = ap.parse_args()
    if not args.reference_python:
        raise SystemExit("--reference-python (or TREX_REFERENCE_PYTHON) must name the reference environment's python")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
