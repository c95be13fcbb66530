#!/usr/bin/env bash
# ctest fixture text_tokenizer_reference: installs the reference encoder with npm (exact versions from
# package-lock.json) into the build folder, trains trex's own tokenizer on a deterministic corpus, and
# writes the expected ids (make_reference.mjs). Fails loudly when npm, node or the registry is missing.
#   setup.sh OUT_DIR TREX_BIN
set -euo pipefail
out=$1
trex=$2
src=$(cd "$(dirname "$0")" && pwd)
fail() { echo "error: tokenizer reference fixture: $*" >&2; exit 1; }
command -v node >/dev/null || fail "node is not installed (needed for the @lenml/tokenizers reference encoder)"
command -v npm >/dev/null || fail "npm is not installed (needed to fetch @lenml/tokenizers)"
mkdir -p "$out"
rm -f "$out"/*.expected.jsonl "$out"/*.tokenizer.json
cp "$src/package.json" "$src/package-lock.json" "$src/make_reference.mjs" "$out/"
( cd "$out" && npm ci --no-audit --no-fund --loglevel=error ) \
  || fail "npm ci failed in $out (is the npm registry reachable?)"
"$trex" -q tokenizer corpus --bytes 2000000 --seed 7 -o "$out/train_corpus.jsonl" || fail "trex tokenizer corpus failed"
"$trex" -q tokenizer train -i "$out/train_corpus.jsonl" -i "$src/samples.jsonl" -o "$out/ours.tokenizer.json" \
  --vocab-size 3000 --threads 2 || fail "trex tokenizer train failed"
( cd "$out" && node make_reference.mjs --samples "$src/samples.jsonl" --out "$out" --ours "$out/ours.tokenizer.json" ) \
  || fail "make_reference.mjs failed"
echo "tokenizer reference written to $out"
