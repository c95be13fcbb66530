#!/usr/bin/env bash
# A trex checkpoint served by the Hugging Face ecosystem's OpenAI-compatible server (issue #22, point 6):
# `transformers serve` (transformers[serving] 5.23.0 from scripts/hf-env.sh) loads the CPT -> SFT checkpoint
# of a `trex run` folder, answers the run's first N held-out prompts by POST /v1/chat/completions (greedy, the
# run's 512-token cap), and each answer is compared with what `trex generate` writes for the same prompt in
# the same command. Prints identical answers out of N and both sides' wall time (trex batched, transformers one
# request at a time, as its server runs without continuous batching).
#
#   bench/hf_serve.bench.sh [RUN_DIR (default runs/default, written by make run)] [N (default 8)]
# Exit status: non-zero when an answer differs (after printing everything) or a step fails.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${TREX_BUILD_DIR:-$SRC/build}
RUN=${1:-$SRC/runs/default}
N=${2:-8}
PORT=${HF_SERVE_PORT:-18765}
TRAIN="$RUN/train/cpt_sft"
[[ -r "$TRAIN/latest" && -r "$RUN/eval/prompts.jsonl" ]] \
  || { echo "hf_serve.bench: $RUN holds no finished trex run (make run writes runs/default)" >&2; exit 1; }
CKPT="$TRAIN/$(tr -d ' \n' <"$TRAIN/latest")"
TMP=$(mktemp -d)
SERVER=""
cleanup() { [[ -n "$SERVER" ]] && kill "$SERVER" 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT
ENV_DIR=$(bash "$SRC/scripts/hf-env.sh" --wrapper "$TMP/hfpy" | tail -n 1)
head -n "$N" "$RUN/eval/prompts.jsonl" >"$TMP/prompts.jsonl"

t0=$(date +%s.%N)
"$BUILD/trex" generate --ckpt "$CKPT" --input "$TMP/prompts.jsonl" --output "$TMP/trex.jsonl" --max-tokens 512 \
  --temperature 0 --batch 8 >/dev/null 2>"$TMP/trex.err" || { cat "$TMP/trex.err"; exit 1; }
t1=$(date +%s.%N)

"$ENV_DIR/bin/transformers" serve --port "$PORT" "$CKPT" >"$TMP/serve.log" 2>&1 &
SERVER=$!
for _ in $(seq 1 120); do
  curl -sf "http://localhost:$PORT/health" >/dev/null && break
  kill -0 "$SERVER" 2>/dev/null || { cat "$TMP/serve.log"; echo "FAIL: transformers serve exited"; exit 1; }
  sleep 1
done
"$TMP/hfpy" - "$CKPT" "$TMP/prompts.jsonl" "$TMP/trex.jsonl" "$PORT" "$t0" "$t1" <<'PYEOF'
import json, sys, time, urllib.request
ckpt, prompts, trex_out, port = sys.argv[1:5]
trex_s = float(sys.argv[6]) - float(sys.argv[5])
items = [json.loads(l) for l in open(prompts)]
mine = {r["id"]: r for r in map(json.loads, open(trex_out))}
same, t = 0, time.time()
for it in items:
    body = {"model": ckpt, "messages": it["messages"], "max_tokens": 512, "temperature": 0, "stream": False}
    req = urllib.request.Request(f"http://localhost:{port}/v1/chat/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    out = json.loads(urllib.request.urlopen(req, timeout=900).read())
    text = out["choices"][0]["message"]["content"]
    ok = text == mine[it["id"]]["text"]
    same += ok
    print(f"{it['id']}: transformers {out['usage']['completion_tokens']} tokens ({out['choices'][0]['finish_reason']}), "
          f"trex {mine[it['id']]['completion_tokens']} ({mine[it['id']]['finish_reason']}): "
          f"{'identical' if ok else 'DIFFERENT'}")
hf_s = time.time() - t
print(f"identical answers: {same}/{len(items)}")
print(f"wall: trex generate (batch 8) {trex_s:.1f} s, transformers serve (sequential requests) {hf_s:.1f} s, "
      f"ratio {hf_s / trex_s:.2f}x")
sys.exit(0 if same == len(items) else 1)
PYEOF
