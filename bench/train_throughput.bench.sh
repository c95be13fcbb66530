#!/usr/bin/env bash
# Training throughput, `bench` preset (d 256, 4 layers + MTP, 8 experts top-2, V 4096; MACHINE.md §7 shape):
# trex's trainer vs the PyTorch twin (tests/reference/model/twin.py + torch.optim.AdamW) on the same packed
# micro-batches (synthetic OR corpus, byte-level BPE, CPT windows of SEQ tokens). Both sides run with the
# OpenBLAS variables unset (auto-detected AVX-512 kernels) in this command only; the peer also gets
# GLIBC_TUNABLES (MACHINE.md §3: keeps freed memory, nearly doubles PyTorch) and torch 1 thread + OpenBLAS 2
# (its best FP32 setting, MACHINE.md §7). trex: OpenMP 2 threads that spin briefly before sleeping
# (GOMP_SPINCOUNT=10000: a step opens ~1,350 parallel regions, and OMP_WAIT_POLICY=passive pays a futex wake-up
# for each, ~3 % of the step; a full spin starves when the machine is shared) — trex drives OpenBLAS
# single-threaded and spreads the GEMMs over its OpenMP threads itself (docs/train.md, Threads).
# tokens/s exclude each side's first step; MFU = trex FLOP/s (DEEPSEEK_V4.md §10, 3 x forward) / 433 GFLOP/s (the
# issue's FP32 denominator); the bf16 run also against the ≈875 GFLOP/s bf16-dot peak (MACHINE.md §1: the dense peak
# of the matmul dtype), and both against what the cores deliver now (register-only FP32 FMA loop, bench_gemm_shapes
# peak, with the CPU's family: MACHINE.md's figures are a Zen 5; on a Zen 4 host the FP32 peak is half).
# trex runs twice: fp32 matrix products (the precision of the twin) and --matmul bf16 (AVX512_BF16 operands, fp32
# accumulation, fp32 weights and optimizer; nn/gemm_bf16.hpp). cpu s/step: process CPU time per warm step.
set -euo pipefail
STEPS=${TRAIN_BENCH_STEPS:-8}
BATCH=${TRAIN_BENCH_BATCH:-8}
SEQ=${TRAIN_BENCH_SEQ:-256}
SRC=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
TREX="$TREX_BUILD_DIR/trex"
"$TREX" tokenizer corpus --bytes 2000000 --seed 3 -o "$TMP/corpus.jsonl" >/dev/null
"$TREX" tokenizer train -i "$TMP/corpus.jsonl" -o "$TMP/tok.json" --vocab-size 4096 >/dev/null 2>&1
"$TREX" data pack --mode cpt -t "$TMP/tok.json" -i "$TMP/corpus.jsonl" -o "$TMP/cpt" >/dev/null 2>&1
"$TREX" model info bench --seq-len "$SEQ" | head -3 || true

TREX_ENV="env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE -u OMP_WAIT_POLICY OMP_NUM_THREADS=2 GOMP_SPINCOUNT=10000"
echo "trex ($TREX_ENV), fp32 matmul:"
TREX_JSON=$($TREX_ENV \
  "$TREX_BUILD_DIR/bench/bench_train_throughput" "$TMP/cpt" "$TMP/out" "$STEPS" "$BATCH" "$SEQ" "$TMP/batches.bin" fp32 \
  2>"$TMP/trex.err")
echo "$TREX_JSON" | tr -d '\n' | sed 's/  */ /g'; echo
echo "trex, bf16 matmul (--matmul bf16), same data:"
BF16_JSON=$($TREX_ENV \
  "$TREX_BUILD_DIR/bench/bench_train_throughput" "$TMP/cpt" "$TMP/out_bf16" "$STEPS" "$BATCH" "$SEQ" "$TMP/batches_bf16.bin" bf16 \
  2>"$TMP/trex_bf16.err")
echo "$BF16_JSON" | tr -d '\n' | sed 's/  */ /g'; echo
echo "torch twin (env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE, GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=17179869184:glibc.malloc.top_pad=268435456, torch 1 thread + OPENBLAS_NUM_THREADS=2):"
TWIN_JSON=$(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=2 \
  GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=17179869184:glibc.malloc.top_pad=268435456 \
  /usr/bin/python3 "$SRC/tests/reference/train/twin_train_bench.py" "$TMP/out/step-$(printf %08d "$STEPS")/config.json" \
  "$TMP/batches.bin" "$STEPS" "$BATCH" "$SEQ" 1)
echo "$TWIN_JSON"
echo "machine load (1/5/15 min): $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
PEAK_LINE=$("$TREX_BUILD_DIR/bench/bench_gemm_shapes" peak | tail -1)
echo "$PEAK_LINE"
FP32_NOW=$(echo "$PEAK_LINE" | sed -E 's/.*FP32 FMA ([0-9.]+) GFLOP.*/\1/')
/usr/bin/python3 - "$TREX_JSON" "$TWIN_JSON" "$BF16_JSON" "$FP32_NOW" <<'PY'
import json, sys
t = json.loads(sys.argv[1]); p = json.loads(sys.argv[2]); b = json.loads(sys.argv[3]); now = 2 * float(sys.argv[4])
for name, x in (("fp32", t), ("bf16", b)):
    bf16_peak = f", {100 * x['tflops'] * 1000 / 875:.1f}% of the 875 GFLOP/s bf16-dot peak" if name == "bf16" else ""
    print(f"trex {name} {x['tokens_per_s']:.0f} tok/s, torch twin {p['tokens_per_s']:.0f} tok/s, ratio {x['tokens_per_s'] / p['tokens_per_s']:.2f}x "
          f"(target >= 2); trex {x['tflops'] * 1000:.1f} GFLOP/s = MFU {100 * x['mfu']:.1f}% of {x['peak_gflops']:.0f} GFLOP/s "
          f"(target 50%){bf16_peak}, {100 * x['tflops'] * 1000 / now:.1f}% of the {now:.0f} GFLOP/s FP32 the 2 cores deliver now; "
          f"{x['cpu_seconds_per_step']:.2f} CPU s/step; loss trex {x['first_loss']:.3f} -> {x['last_loss']:.3f}, "
          f"twin {p['loss_first']:.3f} -> {p['loss_last']:.3f}")
PY
