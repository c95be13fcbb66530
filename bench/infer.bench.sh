#!/usr/bin/env bash
# infer: incremental decoding throughput of the tiny and bench presets (random init, 128-token prompt): prefill
# tokens/s, greedy decode tokens/s for one sequence and for 8 sequences stepped together, against the peer path
# it replaces (a full-sequence forward per new token, the same greedy tokens) with the ratio.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${TREX_BUILD_DIR:-$here/../build}
for preset in tiny bench; do
  j=$(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=2 OMP_NUM_THREADS=2 OMP_WAIT_POLICY=passive \
      "$build/bench/bench_infer" --preset "$preset" --prompt 128 --decode 64 --batch 8 --reference-decode 8) \
      || { echo "bench_infer failed: $j"; exit 1; }
  echo "trex : $j"
  /usr/bin/python3 - "$j" <<'PY'
import json, sys
t = json.loads(sys.argv[1])
print(f"infer {t['preset']} prompt {t['prompt']}: prefill {t['prefill_tok_per_s']:.0f} tok/s; "
      f"decode {t['decode_tok_per_s']:.1f} tok/s (1 sequence), {t['batch_decode_tok_per_s']:.1f} tok/s "
      f"({t['batch']} sequences); full-forward-per-token peer {t['reference_decode_tok_per_s']:.2f} tok/s "
      f"-> incremental x{t['decode_tok_per_s'] / t['reference_decode_tok_per_s']:.1f}; "
      f"same greedy tokens: {t['same_greedy_tokens']}")
PY
done
