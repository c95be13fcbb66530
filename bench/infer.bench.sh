#!/usr/bin/env bash
# infer: prefill and greedy-decode tokens/s of the tiny and bench presets (random init, 128-token prompt,
# 32 decoded tokens). No incremental-decoding peer exists (trex decodes with a full-sequence forward per token,
# and so would the PyTorch twin); the ratio printed is decode vs prefill tokens/s of trex itself.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${TREX_BUILD_DIR:-$here/../build}
for preset in tiny bench; do
  j=$(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=2 OMP_NUM_THREADS=2 OMP_WAIT_POLICY=passive \
      "$build/bench/bench_infer" --preset "$preset" --prompt 128 --decode 32) || { echo "bench_infer failed"; exit 1; }
  echo "trex : $j"
  /usr/bin/python3 - "$j" <<'PY'
import json, sys
t = json.loads(sys.argv[1])
print(f"infer {t['preset']} prompt {t['prompt']} decode {t['decode']}: prefill {t['prefill_tok_per_s']:.0f} tok/s, "
      f"decode {t['decode_tok_per_s']:.2f} tok/s (full forward per token; no incremental peer), "
      f"decode/prefill x{t['decode_tok_per_s'] / t['prefill_tok_per_s']:.4f}")
PY
done
