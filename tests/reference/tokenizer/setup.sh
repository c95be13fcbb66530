#!/usr/bin/env bash
# ctest fixture text_tokenizer_reference: trains trex's own tokenizer on a deterministic corpus, then has Hugging
# Face tokenizers (the reference environment's python) write the expected ids and decodes of the committed
# samples plus 10,000 generated texts for DeepSeek-V3's and GPT-2's real tokenizer.json, for trex's trained one,
# and for one trained by HF itself (make_reference.py). Fails loudly, naming the step, when anything is missing.
#   setup.sh OUT_DIR TREX_BIN REFERENCE_PYTHON TOKENIZERS_DIR
set -euo pipefail
out=$1
trex=$2
python=$3
tokenizers=$4
src=$(cd "$(dirname "$0")" && pwd)
fail() { echo "error: tokenizer reference fixture: $*" >&2; exit 1; }
[[ -x "$python" ]] || fail "$python is missing (the reference_env fixture, scripts/reference-env.sh, did not run)"
# The real files are read in place; their checksums (../shared/tokenizers/README.md) say they are the ones meant.
for f in deepseek_v3.tokenizer.json:621ac2e32d0dba65 gpt2.tokenizer.json:cda20b8ca044949a; do
  file="$tokenizers/${f%%:*}"
  [[ -f "$file" ]] || fail "$file is missing (set TREX_TOKENIZERS to the folder of the real tokenizer files)"
  sum=$(sha256sum "$file" | cut -c1-16)
  [[ "$sum" == "${f##*:}" ]] || fail "$file: sha256 begins $sum, expected ${f##*:} (see that folder's README)"
done
mkdir -p "$out"
rm -f "$out"/*.expected.jsonl "$out"/*.tokenizer.json
"$trex" -q tokenizer corpus --bytes 2000000 --seed 7 -o "$out/train_corpus.jsonl" || fail "trex tokenizer corpus failed"
"$trex" -q tokenizer train -i "$out/train_corpus.jsonl" -i "$src/samples.jsonl" -o "$out/ours.tokenizer.json" \
  --vocab-size 3000 --threads 2 || fail "trex tokenizer train failed"
"$python" "$src/make_reference.py" --samples "$src/samples.jsonl" --tokenizers "$tokenizers" \
  --ours "$out/ours.tokenizer.json" --corpus "$out/train_corpus.jsonl" --out "$out" \
  || fail "make_reference.py (Hugging Face tokenizers) failed"
echo "tokenizer reference written to $out"
