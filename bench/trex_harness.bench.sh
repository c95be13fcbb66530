#!/usr/bin/env bash
# The report's own harness vs `trex eval` on the same responses (issue #21 point 4). Builds SLAI T-Rex's
# `or_benchmark_eval/` (github.com/SLAI-AITP/SLAI-T-Rex, commit 8d6487e, the parity target of OR_BENCHMARKS.md)
# outside the repository — none of its code is in ours — with the real gurobipy of the reference environment
# (scripts/reference-env.sh) plus the few packages its B4O runners import (openai, tqdm, networkx at the versions of
# its requirements.txt) in a separate virtual environment, and runs its unmodified B4O runners
# (evaluation.bench4opt.run_evaluation_solver for B40 feasible, run_evaluation_fast for B40 ORGEval) against a
# replay server (bench/replay_server.py) that answers each request with the recorded response. The responses are
# the B4O reference programs and the scripted wrong answers of bench/oracle_responses.py. The same responses are
# scored by `trex eval --responses` with both executors (trex's layer, the real gurobipy). Prints per benchmark and
# variant how many verdicts differ between T-Rex's harness and trex eval, then each difference with both sides'
# messages, and how the harness's copy of the data differs from ours (the data defects documented in
# docs/eval.md).
#
# Where: $TREX_HARNESS_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/trex/slai-t-rex) holds a bare clone
# (or $SLAI_TREX_GIT: an existing git directory of that repository) and the virtual environment.
# ORACLE_EVERY=K scores every K-th item only (default 1: all 738 items per variant, about an hour on 2 cores);
# KEEP_WORK=1 keeps the working folder (printed) with every result file.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN="$TREX_BUILD_DIR/trex"
DATA=${TREX_BENCHMARKS:-$ROOT/../shared/benchmarks}
COMMIT=8d6487e
CACHE=${TREX_HARNESS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/trex/slai-t-rex}
mkdir -p "$CACHE"
GIT=${SLAI_TREX_GIT:-$CACHE/SLAI-T-Rex.git}
if [ ! -d "$GIT" ]; then
  git clone --quiet --bare https://github.com/SLAI-AITP/SLAI-T-Rex "$GIT"
fi
WORK=$(mktemp -d)
SERVER_PID=""
cp "$BIN" "$WORK/trex-bin"  # a private copy: the build folder's executable may be relinked while this runs
BIN="$WORK/trex-bin"
cleanup() { [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null; [ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"; }
trap cleanup EXIT
# The harness: only or_benchmark_eval/ (the repository's large files, e.g. the report PDF, may be absent from a
# partial clone; git archive then complains about them, so the extracted tree is checked instead).
git --git-dir="$GIT" archive "$COMMIT" or_benchmark_eval 2>/dev/null | tar -x -C "$WORK" || true
H="$WORK/or_benchmark_eval"
for f in evaluation/bench4opt/run_evaluation_solver.py evaluation/bench4opt/run_evaluation_fast.py \
         evaluate/equivalence_check.py data/bench4opt/test.jsonl data/bench4opt_feasible/test.jsonl requirements.txt; do
  [ -f "$H/$f" ] || { echo "trex harness bench: $f missing from $GIT at $COMMIT" >&2; exit 1; }
done
# Its virtual environment: the reference environment's packages (gurobipy, numpy) through a .pth file, plus the
# harness's own pins for what its B4O runners import.
REF=$(bash "$ROOT/scripts/reference-env.sh" | tail -1)
VENV="$CACHE/venv-$COMMIT-$(basename "$REF")"
if [ ! -f "$VENV/.complete" ]; then
  rm -rf "$VENV"
  /usr/bin/python3 -m venv "$VENV"
  "$REF/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' \
    > "$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/trex-reference-env.pth"
  grep -iE '^(openai|tqdm|networkx|anyio|certifi|distro|h11|httpcore|httpx|idna|jiter|pydantic|pydantic-core|sniffio|typing-inspection|annotated-types)==' \
    "$H/requirements.txt" > "$WORK/harness-requirements.txt"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --only-binary=:all: \
    -r "$WORK/harness-requirements.txt" >&2
  "$VENV/bin/python" -c 'import gurobipy, numpy, networkx, openai, tqdm'
  touch "$VENV/.complete"
fi
bash "$ROOT/scripts/reference-env.sh" --wrapper "$WORK/refpy" > /dev/null
[ -n "${KEEP_WORK:-}" ] && echo "trex harness bench: working folder $WORK"
echo "trex harness bench: T-Rex or_benchmark_eval $COMMIT with $("$VENV/bin/python" -c 'import gurobipy; print("gurobipy %d.%d.%d" % gurobipy.gurobi.version())' 2>/dev/null | tail -1); load average $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 "$ROOT/bench/oracle_responses.py" "$DATA" "$WORK/responses" --every "${ORACLE_EVERY:-1}"
/usr/bin/python3 "$ROOT/bench/replay_server.py" "$WORK/responses" "$DATA" "$WORK/port" 2> "$WORK/server.log" &
SERVER_PID=$!
for _ in $(seq 100); do [ -f "$WORK/port" ] && break; sleep 0.1; done
[ -f "$WORK/port" ] || { echo "trex harness bench: the replay server did not start" >&2; cat "$WORK/server.log" >&2; exit 1; }
/usr/bin/python3 - "$BIN" "$DATA" "$WORK" "$VENV/bin/python" "$(cat "$WORK/port")" <<'PY'
import collections, glob, json, os, subprocess, sys, time
binary, data, work, hpy, port = sys.argv[1:6]
H = os.path.join(work, "or_benchmark_eval")
SETS = {"b4o_feasible": ("bench4opt_feasible", "bench4opt_feasible.jsonl"),
        "b4o_orgeval": ("bench4opt", "bench4opt_orgeval.jsonl")}

# How the harness's copy of the data differs from ours (same ids, statements, golds, instances, reference LPs).
ours = {b: {r["id"]: r for r in map(json.loads, open(os.path.join(data, f)))} for b, (_, f) in SETS.items()}
theirs = {b: {r["id"]: r for r in map(json.loads, open(os.path.join(H, "data", d, "test.jsonl")))}
          for b, (d, _) in SETS.items()}
for b in SETS:
    d = SETS[b][0]
    diffs = collections.Counter()
    for i, t in theirs[b].items():
        o = ours[b].get(i)
        if o is None:
            diffs["id missing in ours"] += 1
            continue
        diffs["problem"] += t["problem"] != o["problem"]
        if "optimal_value" in t:
            diffs["gold"] += float(t["optimal_value"]) != float(o["answer"])
        diffs["data"] += json.load(open(os.path.join(H, "data", d, t["data_path"]))) != o["data"]
        ref = open(os.path.join(H, "data", d, t["reference_lp_path"])).read()
        diffs["reference LP"] += ref != open(os.path.join(data, o["lp_file"])).read()
    print(f"data {b}: {len(theirs[b])} items in the harness's copy, {len(ours[b])} in ours; differing: "
          + ", ".join(f"{k} {v}" for k, v in diffs.items()))

def trex_eval(variant, ids, executor):
    out = os.path.join(work, "trex", executor, variant)
    extra = ["--executor", "gurobipy", "--python", os.path.join(work, "refpy")] if executor == "gurobipy" else []
    subprocess.run([binary, "eval", "--responses", os.path.join(work, "responses", variant + ".jsonl"),
                    "--benchmarks", "b4o_feasible,b4o_orgeval", "--data", data, "--ids", ",".join(sorted(ids)),
                    "--out", out, "--concurrency", "2", "--json"] + extra, check=True, stdout=subprocess.DEVNULL)
    res = {}
    for b in SETS:
        for line in open(os.path.join(out, b, "results.jsonl")):
            r = json.loads(line)
            res[(b, r["id"])] = r
    return res

def harness(variant, b, ids):
    d, _ = SETS[b]
    sub = os.path.join(work, "hdata", variant, d)  # the harness's data, its item list cut to the scored items
    os.makedirs(sub)
    for entry in os.listdir(os.path.join(H, "data", d)):
        if entry != "test.jsonl":
            os.symlink(os.path.join(H, "data", d, entry), os.path.join(sub, entry))
    with open(os.path.join(sub, "test.jsonl"), "w") as f:
        for line in open(os.path.join(H, "data", d, "test.jsonl")):
            if json.loads(line)["id"] in ids:
                f.write(line)
    save = os.path.join(work, "harness", f"{variant}.{b}.json")
    os.makedirs(os.path.dirname(save), exist_ok=True)
    common = ["--model_name", f"{variant}.{b}", "--save_path", save, "--data_dir", sub,
              "--openai_base_url", f"http://127.0.0.1:{port}/v1", "--openai_api_key", "none", "--max_workers", "2",
              "--seed", "42", "--temperature", "0.6", "--top_p", "1.0", "--max_tokens", "9600"]
    if b == "b4o_feasible":
        cmd = [hpy, "-m", "evaluation.bench4opt.run_evaluation_solver", "--timeout", "360", "--tolerance", "1e-6",
               "--save_every", "32"] + common
    else:
        cmd = [hpy, "-m", "evaluation.bench4opt.run_evaluation_fast", "--eval_workers", "2", "--eval_timeout", "180",
               "--save_every", "32"] + common
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONPATH", None)
    p = subprocess.run(cmd, cwd=H, env=env, capture_output=True, text=True)
    if p.returncode != 0 or not os.path.exists(save):
        raise SystemExit(f"T-Rex harness failed ({' '.join(cmd[:3])}): {p.stderr[-2000:]}")
    out = {}
    for r in json.load(open(save)):
        if b == "b4o_feasible":
            ok = bool(r.get("success"))
            why = f"{r.get('message', '')}; predicted {r.get('predicted_optimal_value')!r}, gold {r.get('gt_optimal_value')!r}"
        else:
            rw = r.get("reward") or {}
            ok = float(rw.get("wl_reward", 0.0)) >= 1.0
            ver = r.get("verification") or {}
            why = f"code {rw.get('code_reward')} wl {rw.get('wl_reward')}: " + \
                  str(ver.get("wl_verification") or ver.get("code_verification") or "")[:90]
        out[(b, r["id"])] = (ok, why.replace("\n", " "))
    return out

variants = sorted((os.path.basename(p)[:-6] for p in glob.glob(os.path.join(work, "responses", "*.jsonl"))),
                  key=lambda v: (v not in ("as_written", "oracle"), v != "as_written", v))
print(f"{'variant':<17} {'benchmark':<13} {'items':>5} {'T-Rex ok':>8} {'trex ok':>7} {'differ':>6} "
      f"{'trex(gurobipy) ok':>17} {'differ':>6} {'trex vs trex(gurobipy)':>22}")
total = collections.Counter()
listed = []
for v in variants:
    recs = [json.loads(l) for l in open(os.path.join(work, "responses", v + ".jsonl"))]
    t0 = time.monotonic()
    t = trex_eval(v, {r["id"] for r in recs}, "trex")
    g = trex_eval(v, {r["id"] for r in recs}, "gurobipy")
    for b in SETS:
        ids = {r["id"] for r in recs if r["benchmark"] == b}
        h = harness(v, b, ids)
        keys = sorted(k for k in h if k in t)
        d1 = [k for k in keys if h[k][0] != t[k]["success"]]
        d2 = [k for k in keys if h[k][0] != g[k]["success"]]
        d3 = [k for k in keys if t[k]["success"] != g[k]["success"]]
        total["items"] += len(keys)
        total["trex"] += len(d1)
        total["gurobipy"] += len(d2)
        total["executors"] += len(d3)
        print(f"{v:<17} {b:<13} {len(keys):>5} {sum(h[k][0] for k in keys):>8} {sum(t[k]['success'] for k in keys):>7} "
              f"{len(d1):>6} {sum(g[k]['success'] for k in keys):>17} {len(d2):>6} {len(d3):>22}")
        for k in sorted(set(d1) | set(d2)):
            listed.append((v, k, h[k], t[k], g[k], k in d1, k in d2))
    print(f"  ({v}: {time.monotonic() - t0:.0f} s)")
print(f"all: {total['items']} items scored by both; T-Rex harness vs trex eval: {total['trex']} verdicts differ; "
      f"vs trex eval --executor gurobipy: {total['gurobipy']}; trex eval's two executors: {total['executors']}")
for v, k, h, t, g, a, b in listed:
    print(f"DIFF {v:<17} {k[0]:<13} {k[1]:<14} T-Rex {'ok' if h[0] else 'fail'} ({h[1]!r})")
    print(f"     trex eval: {t['kind']} ({t['detail'][:80]!r}){'  <- differs' if a else ''}; "
          f"--executor gurobipy: {g['kind']} ({g['detail'][:60]!r}){'  <- differs' if b else ''}")
PY
