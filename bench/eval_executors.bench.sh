#!/usr/bin/env bash
# `trex eval --executor trex` (trex's gurobipy layer, CBC) vs `--executor gurobipy` (the real gurobipy 13.0.3 of the
# reference environment, scripts/reference-env.sh) on the same responses (issue #21 point 4): the B4O reference
# programs (as written, and "oracle": B4O-Feasible's with the optimize() call its prompt asks for) and scripted wrong answers made from them (bench/oracle_responses.py: wrong sense, integrality
# dropped, an extra row, tight bounds, the legacy addConstr form, a missing data key, no model). Prints per
# benchmark and variant how many items' verdicts (success) differ and how many outcome kinds differ (goal: 0
# verdicts), then every item whose verdict differs with both outcomes. The peer is gurobipy itself.
# Optional: ORACLE_EVERY=K scores every K-th item only (default 1: all 738 B4O items per variant).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN="$TREX_BUILD_DIR/trex"
DATA=${TREX_BENCHMARKS:-$ROOT/../shared/benchmarks}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cp "$BIN" "$WORK/trex-bin"  # a private copy: the build folder's executable may be relinked while this runs
BIN="$WORK/trex-bin"
bash "$ROOT/scripts/reference-env.sh" --wrapper "$WORK/refpy" > /dev/null
/usr/bin/python3 "$ROOT/bench/oracle_responses.py" "$DATA" "$WORK/responses" --every "${ORACLE_EVERY:-1}"
/usr/bin/python3 - "$BIN" "$DATA" "$WORK" <<'PY'
import collections, glob, json, os, subprocess, sys, time
binary, data, work = sys.argv[1:4]

def score(variant, executor):
    out = os.path.join(work, "eval", executor, variant)
    extra = ["--executor", "gurobipy", "--python", os.path.join(work, "refpy")] if executor == "gurobipy" else []
    ids = sorted({json.loads(l)["id"] for l in open(os.path.join(work, "responses", variant + ".jsonl"))})
    t0 = time.monotonic()
    subprocess.run([binary, "eval", "--responses", os.path.join(work, "responses", variant + ".jsonl"),
                    "--benchmarks", "b4o_feasible,b4o_orgeval", "--data", data, "--ids", ",".join(ids),
                    "--out", out, "--concurrency", "2", "--json"] + extra,
                   check=True, stdout=subprocess.DEVNULL)
    res = {}
    for bench in ("b4o_feasible", "b4o_orgeval"):
        for line in open(os.path.join(out, bench, "results.jsonl")):
            r = json.loads(line)
            res[(bench, r["id"])] = r
    return res, time.monotonic() - t0

variants = [os.path.basename(p)[:-6] for p in sorted(glob.glob(os.path.join(work, "responses", "*.jsonl")))]
variants.sort(key=lambda v: (v not in ("as_written", "oracle"), v != "as_written", v))
total = collections.Counter()
shown = []
print(f"{'variant':<17} {'benchmark':<13} {'items':>5} {'trex ok':>7} {'gurobipy ok':>11} {'verdicts differ':>15} "
      f"{'kinds differ':>12}")
for v in variants:
    t, ts = score(v, "trex")
    g, gs = score(v, "gurobipy")
    for bench in ("b4o_feasible", "b4o_orgeval"):
        keys = sorted(k for k in t if k[0] == bench)
        vd = [k for k in keys if t[k]["success"] != g[k]["success"]]
        kd = [k for k in keys if t[k]["kind"] != g[k]["kind"]]
        total["items"] += len(keys)
        total["verdicts"] += len(vd)
        total["kinds"] += len(kd)
        total[bench, "items"] += len(keys)
        total[bench, "verdicts"] += len(vd)
        print(f"{v:<17} {bench:<13} {len(keys):>5} {sum(t[k]['success'] for k in keys):>7} "
              f"{sum(g[k]['success'] for k in keys):>11} {len(vd):>15} {len(kd):>12}")
        for k in kd:
            shown.append((v, k, k in vd, t[k], g[k]))
    print(f"  ({v}: trex {ts:.1f} s, gurobipy {gs:.1f} s)")
for bench in ("b4o_feasible", "b4o_orgeval"):
    print(f"{bench}: {total[bench, 'items']} scored items (all variants), verdicts differ {total[bench, 'verdicts']}")
print(f"all: {total['items']} scored items, verdicts differ {total['verdicts']}, outcome kinds differ {total['kinds']}")
for v, k, verdict, a, b in shown:
    tag = "VERDICT" if verdict else "kind   "
    print(f"{tag} {v:<17} {k[0]:<13} {k[1]:<14} trex {a['kind']} ({a['detail'][:70]!r}) / gurobipy {b['kind']} "
          f"({b['detail'][:70]!r})")
PY
