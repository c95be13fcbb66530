#!/usr/bin/env bash
# Tokenizer: BPE training time on a 50 MB deterministic corpus and encode throughput. Peer: Hugging Face
# tokenizers (the reference environment, scripts/reference-env.sh) on the same 2 MB slice with the same
# tokenizer.json (DeepSeek-V3's real one and trex's trained one), 1 and 2 threads each; prints the ratios.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
TOKENIZERS=${TREX_TOKENIZERS:-$SRC/../shared/tokenizers}
work="$TREX_BUILD_DIR/bench/tokenizer_work"
mkdir -p "$work"
env_dir=$(bash "$SRC/scripts/reference-env.sh" | tail -1)
py="$env_dir/bin/python"
ds_json="$TOKENIZERS/deepseek_v3.tokenizer.json"
[[ -f "$ds_json" ]] || { echo "error: $ds_json missing (set TREX_TOKENIZERS)" >&2; exit 1; }
out=$("$TREX_BUILD_DIR/bench/bench_tokenizer" "$work" "$ds_json" 50 2)
echo "$out" | grep -v '^trex_encode_mbps'
for name in deepseek-v3 ours-32k; do
  json="$ds_json"
  [ "$name" = ours-32k ] && json="$work/ours.tokenizer.json"
  for threads in 1 2; do
    p=$(RAYON_NUM_THREADS=$threads TOKENIZERS_PARALLELISM=true "$py" "$SRC/tests/reference/tokenizer/encode_throughput.py" \
        --tokenizer "$json" --input "$work/peer_corpus.jsonl" --name "$name")
    echo "$p" | grep -v '^peer_encode_mbps'
    t=$(echo "$out" | sed -n "s/^trex_encode_mbps\[$name,$threads\]=//p")
    q=$(echo "$p" | sed -n "s/^peer_encode_mbps\[$name,$threads\]=//p")
    awk -v t="$t" -v q="$q" -v n="$name" -v th="$threads" 'BEGIN { printf "encode [%s] on the same 2 MB slice, %d thread(s): trex %.1f MB/s vs HF tokenizers %.1f MB/s -> ratio %.2fx\n", n, th, t, q, t / q }'
  done
done
echo "machine load (1/5/15 min): $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
