#!/usr/bin/env bash
# Tokenizer: BPE training time on a 50 MB deterministic corpus and encode throughput. Peer: the
# reference encoder @lenml/tokenizers (JavaScript port of Hugging Face tokenizers, node) on the same
# 2 MB slice with the same tokenizer.json (DeepSeek-V3's and trex's trained one); prints the ratio.
set -euo pipefail
ref_src=$(cd "$(dirname "$0")/../tests/reference/tokenizer" && pwd)
work="$TREX_BUILD_DIR/bench/tokenizer_work"
mkdir -p "$work"
cp "$ref_src/package.json" "$ref_src/package-lock.json" "$ref_src/make_reference.mjs" "$ref_src/encode_throughput.mjs" "$work/"
peer=1
if ! (cd "$work" && npm ci --no-audit --no-fund --loglevel=error >/dev/null 2>&1 && \
      node make_reference.mjs --samples "$ref_src/samples.jsonl" --out "$work" >/dev/null); then
  echo "peer unavailable: npm ci / make_reference.mjs failed (registry unreachable?); trex figures only"
  peer=0
fi
ds_json=""
[ "$peer" = 1 ] && ds_json="$work/deepseek_v3.tokenizer.json"
out=$("$TREX_BUILD_DIR/bench/bench_tokenizer" "$work" $ds_json 50 2)
echo "$out" | grep -v '^trex_encode_mbps'
[ "$peer" = 1 ] || exit 0
for name in deepseek-v3 ours-32k; do
  json="$work/deepseek_v3.tokenizer.json"
  [ "$name" = ours-32k ] && json="$work/ours.tokenizer.json"
  p=$(cd "$work" && node encode_throughput.mjs --tokenizer "$json" --input "$work/peer_corpus.jsonl" --name "$name")
  echo "$p" | grep -v '^peer_encode_mbps'
  t=$(echo "$out" | sed -n "s/^trex_encode_mbps\[$name\]=//p")
  q=$(echo "$p" | sed -n "s/^peer_encode_mbps\[$name\]=//p")
  awk -v t="$t" -v q="$q" -v n="$name" 'BEGIN { printf "encode [%s] on the same 2 MB slice, 1 thread: trex %.1f MB/s vs peer %.1f MB/s -> ratio %.2fx\n", n, t, q, t / q }'
done
