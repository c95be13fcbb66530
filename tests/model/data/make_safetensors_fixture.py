#!/usr/bin/python3
"""Writes python_format.safetensors: a small file laid out by the safetensors format rules, as the Python
library writes them (u64 LE header length; compact JSON with "__metadata__" first and tensors in offset
order; header padded with spaces to a multiple of 8; data ordered by dtype, widest enum first, then name),
using numpy only (the safetensors package is not installed). Quantised tensors are decoded here by an
independent generic minifloat decoder and stored next to them as F32 "*.expected" tensors, so the C++
reader and dequantiser are checked against a second implementation.

Run: /usr/bin/python3 tests/model/data/make_safetensors_fixture.py   (deterministic; output is committed)
"""
import json
import math
import os
import struct

import numpy as np

# safetensors Rust crate enum order (the Python library sorts data by it, descending, then by name)
DTYPE_ORDER = ["BOOL", "F4", "F6_E2M3", "F6_E3M2", "U8", "I8", "F8_E5M2", "F8_E4M3", "F8_E8M0", "I16", "U16",
               "F16", "BF16", "I32", "U32", "F32", "C64", "F64", "I64", "U64"]


def minifloat(code, ebits, mbits, bias, ieee_specials, fn_nan=False):
    """Value of a sign/exponent/mantissa code (generic, written independently of the C++ decoders)."""
    sign = -1.0 if (code >> (ebits + mbits)) & 1 else 1.0
    e = (code >> mbits) & ((1 << ebits) - 1)
    m = code & ((1 << mbits) - 1)
    emax = (1 << ebits) - 1
    if ieee_specials and e == emax:
        return sign * math.inf if m == 0 else math.nan
    if fn_nan and e == emax and m == (1 << mbits) - 1:
        return math.nan
    if e == 0:
        return sign * (m / (1 << mbits)) * 2.0 ** (1 - bias)
    return sign * (1 + m / (1 << mbits)) * 2.0 ** (e - bias)


def e4m3(c): return minifloat(c, 4, 3, 7, False, fn_nan=True)
def e5m2(c): return minifloat(c, 5, 2, 15, True)
def e2m1(c): return minifloat(c, 2, 1, 1, False)
def e8m0(c): return math.nan if c == 255 else 2.0 ** (c - 127)


def main():
    rng = np.random.default_rng(20261129)
    t = {}  # name -> (dtype, shape, bytes)

    def put(name, dtype, arr):
        arr = np.ascontiguousarray(arr)
        t[name] = (dtype, list(arr.shape), arr.tobytes())

    put("plain.f32", "F32", (np.arange(12, dtype=np.float32).reshape(3, 4) * 0.5 - 1.0))
    put("plain.f64", "F64", np.array([1.0 / 3.0, -2.5, 1e300], dtype=np.float64))
    f16 = np.array([0.0, 1.0, -2.0, 65504.0, 2.0 ** -14, 2.0 ** -24, np.inf, -np.inf], dtype=np.float16)
    put("plain.f16", "F16", f16)
    src = np.array([1.0, -3.140625, 1.00390625, 1.01171875, 3.0e38, -1e-40, 0.0, 65536.5], dtype=np.float32)
    u = src.view(np.uint32).astype(np.uint64)
    bf = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)  # round to nearest even
    put("plain.bf16", "BF16", bf)
    put("plain.bf16.expected", "F32", (bf.astype(np.uint32) << 16).view(np.float32))
    put("ffn.gate.tid2eid", "I64", np.array([[0, 5], [7, 2], [-1, 2 ** 40]], dtype=np.int64))
    put("plain.i32", "I32", np.array([-2147483648, 0, 2147483647], dtype=np.int32))
    put("plain.i8", "I8", np.array([-128, -1, 0, 127], dtype=np.int8))
    put("plain.u8", "U8", np.array([0, 1, 255], dtype=np.uint8))
    put("plain.bool", "BOOL", np.array([True, False, True], dtype=np.bool_))
    put("plain.empty", "F32", np.zeros((0, 3), dtype=np.float32))

    # FP8 E4M3 weight with 128x128 e8m0 block scales; 130x136 leaves partial blocks on both edges.
    rows, cols = 130, 136
    codes = rng.integers(0, 256, size=(rows, cols), dtype=np.uint8)
    codes[0, :256 if cols >= 256 else cols] = np.arange(cols, dtype=np.uint8)  # many distinct codes
    codes[129, :120] = np.arange(136, 256, dtype=np.uint8)  # the rest, incl. NaN 0x7F/0xFF, in the edge block
    scale = np.array([[127, 130], [120, 0]], dtype=np.uint8)  # 2^0, 2^3, 2^-7, 2^-127 (subnormal result)
    put("layers.0.attn.wq_a.weight", "F8_E4M3", codes)
    put("layers.0.attn.wq_a.scale", "F8_E8M0", scale)
    exp = np.empty((rows, cols), dtype=np.float32)
    for r in range(rows):
        for c in range(cols):
            exp[r, c] = np.float32(e4m3(int(codes[r, c])) * e8m0(int(scale[r // 128, c // 128])))
    put("layers.0.attn.wq_a.expected", "F32", exp)

    # FP4 E2M1 packed expert weight: logical [4, 80] stored as I8 [4, 40]; scales [4, ceil(80/32) = 3].
    rows, cols = 4, 80
    nib = rng.integers(0, 16, size=(rows, cols), dtype=np.uint8)
    nib[0, :16] = np.arange(16, dtype=np.uint8)
    packed = (nib[:, 0::2] | (nib[:, 1::2] << 4)).astype(np.uint8).view(np.int8)  # element 2j low nibble
    fscale = np.array([[127, 128, 126], [100, 127, 140], [127, 127, 127], [1, 254, 127]], dtype=np.uint8)
    put("layers.0.ffn.experts.0.w1.weight", "I8", packed)
    put("layers.0.ffn.experts.0.w1.scale", "F8_E8M0", fscale)
    with np.errstate(over="ignore"):  # 6 * 2^127 overflows float32 to inf, as it does in C++
        fexp = np.array([[e2m1(int(nib[r, c])) * e8m0(int(fscale[r, c // 32])) for c in range(cols)]
                         for r in range(rows)], dtype=np.float32)
    put("layers.0.ffn.experts.0.w1.expected", "F32", fexp)

    # All 256 E5M2 codes with their values.
    allc = np.arange(256, dtype=np.uint8)
    put("plain.e5m2", "F8_E5M2", allc)
    put("plain.e5m2.expected", "F32", np.array([e5m2(int(c)) for c in allc], dtype=np.float32))

    order = sorted(t.items(), key=lambda kv: (-DTYPE_ORDER.index(kv[1][0]), kv[0]))
    header = {"__metadata__": {"format": "pt", "producer": "numpy fixture"}}
    offset = 0
    for name, (dtype, shape, data) in order:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    hjson = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hjson += b" " * ((8 - len(hjson) % 8) % 8)
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_format.safetensors")
    with open(out, "wb") as f:
        f.write(struct.pack("<Q", len(hjson)))
        f.write(hjson)
        for _, (_, _, data) in order:
            f.write(data)
    print(out, 8 + len(hjson) + offset, "bytes,", len(t), "tensors")


if __name__ == "__main__":
    main()
