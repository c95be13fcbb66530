#!/usr/bin/env bash
# tune: the kernel tiling tuner checked by measurement (PLANNER_AND_TUNER.md §B6). `trex tune gemm` chooses the
# bf16 GEMM cache blocking (kc, mc, nc) for the products of one `bench`-preset training step (512 tokens) with its
# MILP, then times every blocking of a 120-point space on one core (best of 3 per shape) — the exhaustive
# reference — plus the kernel's default and the BLIS analytical blocking. Printed for both L1 rules (the default
# "stream" and BLIS's capacity rule): the choice, its measured rank and its time over the fastest measured
# (acceptance: ≥ 0.9 of the fastest, in the top 5), and the kernel default's time over the choice.
# OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE unset (they do not touch this kernel).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${TREX_BUILD_DIR:-$here/../build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
space=(--model bench --tokens 512 --kc 128 256 320 384 512 768 --mc 32 64 128 256 512 --nc 256 512 1024 4096)
run() { env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=1 "$build/trex" tune gemm "${space[@]}" "$@"; }
run --exhaustive --reps 3 --json > "$tmp/measured.json" 2>/dev/null || { echo "trex tune gemm --exhaustive failed"; exit 1; }
run --rules blis --json > "$tmp/blis.json" 2>/dev/null || { echo "trex tune gemm --rules blis failed"; exit 1; }
/usr/bin/python3 - "$tmp/measured.json" "$tmp/blis.json" <<'PY'
import json, sys
m, b = (json.load(open(p)) for p in sys.argv[1:3])
rows = sorted(m["blockings"], key=lambda r: r["measured_s"])
key = lambda r: (r["kc"], r["mc"], r["nc"])
rank = {key(r): i + 1 for i, r in enumerate(rows)}
t = {key(r): r["measured_s"] for r in rows}
best = rows[0]
flops = sum(s["weight"] * 2 * s["m"] * s["n"] * s["k"] for s in m["shapes"])
print(f"{len(rows)} blockings timed on {m['cpu']['name']}; fastest kc {best['kc']} mc {best['mc']} nc {best['nc']}: "
      f"{1e3 * best['measured_s']:.2f} ms ({flops / best['measured_s'] / 1e9:.1f} GFLOP/s)")
med = rows[len(rows) // 2]["measured_s"]
print(f"spread: median {best['measured_s'] / med:.3f} of the fastest's speed, slowest {best['measured_s'] / rows[-1]['measured_s']:.3f} "
      f"(kc {rows[-1]['kc']} mc {rows[-1]['mc']} nc {rows[-1]['nc']})")
default = (512, 128, 512)
for name, j in (("stream (default)", m), ("blis", b)):
    c = (j["milp"]["kc"], j["milp"]["mc"], j["milp"]["nc"])
    print(f"L1 rule {name:<17}: MILP choice kc {c[0]} mc {c[1]} nc {c[2]}, measured {1e3 * t[c]:.2f} ms, rank {rank[c]} "
          f"of {len(rows)}, fastest / choice {best['measured_s'] / t[c]:.3f}, kernel default / choice {t[default] / t[c]:.3f}")
PY
