#!/usr/bin/env bash
# scripts/gpu-train-check.sh TREX WORKDIR: `trex train --device cuda` end to end against `--device cpu` on the tiny
# preset (issue #24 point 6 through the command line; docs/cuda.md). Packs a small synthetic OR corpus, trains 10
# steps on each device (fp32 products, AdamW, clipped, 2 micro-batches a step), then resumes the CPU run's step-5
# checkpoint on the GPU. Passes when every step's loss of the GPU run and of the resumed run is within 2^-8 of the
# CPU run's. Needs a full build (the trex executable) and a GPU; scripts/gpu-check.sh --full runs it.
# Exit: 0 passed, 1 a difference or a failure, 3 no usable GPU.
# TREX_TRAIN_CHECK_DEVICE (default "--device cuda") replaces the device arguments of the runs under test; with
# "--device cpu --test-cpu-device-step" the script checks itself on a machine without a GPU.
set -u
read -r -a DEV <<<"${TREX_TRAIN_CHECK_DEVICE:---device cuda}"
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
exit $status
