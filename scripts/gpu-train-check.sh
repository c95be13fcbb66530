#!/usr/bin/env bash
# scripts/gpu-train-check.sh TREX WORKDIR: `trex train --device cuda` end to end against `--device cpu` on the tiny
# preset (issue #24 point 6 through the command line; docs/cuda.md). Packs a small synthetic OR corpus, trains 10
# steps on each device (fp32 products, AdamW, clipped, 2 micro-batches a step), then resumes the CPU run's step-5
# checkpoint on the GPU. Passes when every step's loss of the GPU run and of the resumed run is within 2^-8 of the
# CPU run's. Needs a full build (the trex executable) and a GPU; scripts/gpu-check.sh --full runs it.
# Where mpirun exists, two ranks on the device: --dp 2, --ep 2 and --pp 2 against the CPU run, and the step-5
# checkpoints of every device run (one process, --dp 2, --ep 2, --pp 2) resumed on the CPU.
# Then `trex generate --device cuda` against `--device cpu` on the CPU run's checkpoint: greedy, 24 tokens, three
# prompts in one batch (prefill, batched decoding), every prompt token scored (--echo): the same tokens, each
# generated and prompt token's log-probability within 1e-3.
# Exit: 0 passed, 1 a difference or a failure, 3 no usable GPU.
# TREX_TRAIN_CHECK_DEVICE (default "--device cuda") replaces the device arguments of the training runs under test
# and TREX_GENERATE_CHECK_DEVICE (default "--device cuda") those of the generation; with "--device cpu
# --test-cpu-device-step" and "--device cpu" the script checks itself on a machine without a GPU.
set -u
read -r -a DEV <<<"${TREX_TRAIN_CHECK_DEVICE:---device cuda}"
read -r -a GDEV <<<"${TREX_GENERATE_CHECK_DEVICE:---device cuda}"
TREX=${1:?usage: $0 TREX WORKDIR}
W=${2:?usage: $0 TREX WORKDIR}
rm -rf "$W" && mkdir -p "$W" || exit 1
"$TREX" tokenizer corpus --bytes 120000 --seed 7 -o "$W/corpus.jsonl" >/dev/null || exit 1
"$TREX" tokenizer train -i "$W/corpus.jsonl" -o "$W/tok.json" --vocab-size 512 --threads 4 >/dev/null || exit 1
"$TREX" data pack --mode cpt -t "$W/tok.json" -i "$W/corpus.jsonl" -o "$W/cpt" --threads 4 >/dev/null || exit 1
common=(train --config tiny --data "$W/cpt" --mode cpt --seq-len 64 --micro-batch 2 --grad-accum 2 --lr 1e-3
        --warmup 2 --clip 0.5 --steps 10 --save-every 5 --keep 2 --quiet)
"$TREX" "${common[@]}" --out "$W/cpu" --device cpu || exit 1
out=$("$TREX" "${common[@]}" --out "$W/gpu" "${DEV[@]}" 2>&1)
rc=$?
echo "$out"
if [ $rc -ne 0 ]; then
  if echo "$out" | grep -q "CUDA asked for but"; then exit 3; fi
  exit 1
fi
mkdir -p "$W/resumed" && cp -r "$W/cpu/step-00000005" "$W/resumed/" && echo step-00000005 >"$W/resumed/latest" || exit 1
"$TREX" "${common[@]}" --out "$W/resumed" "${DEV[@]}" --resume || exit 1

# "step loss" per line of a metrics file (error lines have no loss and are left out)
losses() { awk 'match($0, /"loss":[-0-9.eE+]+/) { l = substr($0, RSTART + 7, RLENGTH - 7)
                     if (match($0, /"step":[0-9]+/)) print substr($0, RSTART + 7, RLENGTH - 7), l }' "$1"; }
compare() {  # name, reference metrics, metrics: every step of the second file against the same step of the first
  awk -v name="$1" '
    NR == FNR { ref[$1] = $2; next }
    { if (!($1 in ref)) { printf "%s step %d: not in the reference run\n", name, $1; bad = 1; next }
      d = ref[$1] - $2; if (d < 0) d = -d; r = d / (ref[$1] < 0 ? -ref[$1] : ref[$1]); if (r > worst) worst = r;
      printf "%s step %d: cpu %.6f device %.6f rel %.2e\n", name, $1, ref[$1], $2, r; n++ }
    END { printf "%s: %d steps, worst rel %.2e (bound 3.91e-03)\n", name, n, worst
          exit (bad || n == 0 || worst > 0.00390625) }' <(losses "$2") <(losses "$3")
}
status=0
compare "device run" "$W/cpu/metrics.jsonl" "$W/gpu/metrics.jsonl" || status=1
compare "device run resumed from the cpu step-5 checkpoint" "$W/cpu/metrics.jsonl" "$W/resumed/metrics.jsonl" || status=1

# two ranks on the device (they share it when there is one GPU): data parallelism (a replica each, gradients
# averaged), expert parallelism (each rank its half of the routed experts, routed rows exchanged through the host)
# and pipeline parallelism (a stage each, 1F1B, the streams through the host); the sharded runs' step-5 checkpoints
# (gathered from both ranks) resumed in one process on the CPU
if command -v mpirun >/dev/null 2>&1; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  mpi=(mpirun -np 2 --oversubscribe --mca mpi_yield_when_idle 1)
  for layout in "dp 2" "ep 2" "pp 2"; do
    name=${layout// /}
    if "${mpi[@]}" "$TREX" "${common[@]}" --out "$W/$name" "${DEV[@]}" --$layout >"$W/$name.log" 2>&1; then
      compare "device run --$layout (2 ranks)" "$W/cpu/metrics.jsonl" "$W/$name/metrics.jsonl" || status=1
    else
      echo "device run --$layout (2 ranks): failed"; tail -20 "$W/$name.log"; status=1
    fi
  done
  # every device run's checkpoint: the one-process and --dp 2 ones through the unsharded download, the --ep 2 and
  # --pp 2 ones gathered from both ranks
  for name in gpu dp2 ep2 pp2; do
    [ -d "$W/$name/step-00000005" ] || { echo "$name: no step-5 checkpoint"; status=1; continue; }
    case $name in
      gpu) what="cpu run resumed from the one-process device run's step-5 checkpoint" ;;
      *) what="cpu run resumed from the device --${name%2} 2 step-5 checkpoint" ;;
    esac
    mkdir -p "$W/$name-resumed" && cp -r "$W/$name/step-00000005" "$W/$name-resumed/" &&
      echo step-00000005 >"$W/$name-resumed/latest"
    if "$TREX" "${common[@]}" --out "$W/$name-resumed" --device cpu --resume >"$W/$name-resumed.log" 2>&1; then
      compare "$what" "$W/cpu/metrics.jsonl" "$W/$name-resumed/metrics.jsonl" || status=1
    else
      echo "$what: failed"; tail -20 "$W/$name-resumed.log"; status=1
    fi
  done
else
  echo "device runs with 2 ranks: not run (no mpirun on this machine)"
fi

# generation on the device against the CPU
printf '%s\n' '{"prompt":"minimise cost subject to"}' '{"prompt":"x + y <= 4 and"}' '{"prompt":"route the trucks"}' \
  >"$W/prompts.jsonl"
# --echo: every prompt token scored too (the GPU decoder's all-position path): the same ids on both sides, so their
# log-probabilities test attention and the caches even where the greedy tokens (of a 10-step model) are all alike
gen=(generate --ckpt "$W/cpu" --tokenizer "$W/tok.json" --input "$W/prompts.jsonl" --temperature 0 --max-tokens 24
     --logprobs 0 --echo --batch 3)
"$TREX" "${gen[@]}" --output "$W/gen-cpu.jsonl" --device cpu || exit 1
"$TREX" "${gen[@]}" --output "$W/gen-device.jsonl" "${GDEV[@]}" || status=1
if [ -f "$W/gen-device.jsonl" ]; then
  # per record: the generated ids, then the prompt's, with their log-probabilities
  tokens() { sed 's/"top_logprobs":\[[^]]*\]//g' "$1" | awk '{ n = 0; s = $0; out = "";
    while (match(s, /"id":[0-9]+,"logprob":[-0-9.eE+]+/)) { t = substr(s, RSTART, RLENGTH); sub(/"id":/, "", t);
      sub(/,"logprob":/, " ", t); out = out t ";"; s = substr(s, RSTART + RLENGTH) } print out }'; }
  paste -d'|' <(tokens "$W/gen-cpu.jsonl") <(tokens "$W/gen-device.jsonl") | awk -F'|' '
    { nc = split($1, c, ";"); nd = split($2, d, ";"); same = (nc == nd); worst = 0
      for (i = 1; i < nc && same; ++i) { split(c[i], a, " "); split(d[i], b, " "); if (a[1] != b[1]) same = 0
        e = a[2] - b[2]; if (e < 0) e = -e; if (e > worst) worst = e }
      printf "generate record %d: %d generated and prompt tokens, %s, worst logprob difference %.2e\n", NR - 1, nc - 1,
             same ? "the same tokens" : "DIFFERENT TOKENS", worst
      if (!same || worst > 1e-3 || nc < 2) bad = 1 }
    END { exit bad }' || status=1
fi
exit $status
