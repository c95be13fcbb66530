#!/usr/bin/env bash
# ORGEval equivalence sweep: the 394 B40 reference LPs each checked against itself, per-file and
# total times. No peer runs: upstream's equivalence_check.py needs gurobipy (a licensed Gurobi), so
# only trex's figures are printed.
set -euo pipefail
"$TREX_BUILD_DIR/bench/bench_equiv_sweep" "$TREX_BENCHMARKS"
echo "peer: none (upstream ORGEval check requires gurobipy); figures above are trex only"
