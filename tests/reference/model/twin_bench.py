"""Times a forward+backward step of the PyTorch twin on the config and tokens written by bench_model_step, so
both sides run the same model shape on the same inputs. Prints one JSON line.
Usage: twin_bench.py --config config.json --tokens tokens.bin --batch B --seq T [--steps 3] [--warmup 1]"""
import argparse
import json
import math
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import twin  # noqa: E402


def init_params(cfg, gen):
    """The C++ Model::init scheme (values differ, distribution the same): matrices N(0, init_std), norm weights
    and mHC scales 1, mHC bases, sinks and gate biases 0."""
    P = {}
    std = cfg.get("init_std", 0.02)
    for name, shape in twin.param_shapes(cfg).items():
        if name.endswith("norm.weight") or name.endswith("_scale"):
            t = torch.ones(shape)
        elif name.endswith("_base") or name.endswith("attn_sink") or name.endswith("gate.bias"):
            t = torch.zeros(shape)
        else:
            t = torch.randn(shape, generator=gen) * std
        P[name] = t.requires_grad_(not name.endswith("gate.bias"))
    P.update(twin.hash_tables(cfg, gen))
    return P


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", required=True)
    ap.add_argument("--tokens", required=True)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--seq", type=int, required=True)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    cfg = json.load(open(a.config))
    cfg.update(cfg.get("trex", {}))
    raw = open(a.tokens, "rb").read()
    tok = torch.frombuffer(bytearray(raw), dtype=torch.int32).to(torch.long).view(a.batch, a.seq)
    doc = torch.zeros_like(tok)
    mask = torch.ones_like(tok)
    P = init_params(cfg, torch.Generator().manual_seed(1))
    params = [p for p in P.values() if p.dtype.is_floating_point and p.requires_grad]

    def step():
        for p in params:
            p.grad = None
        _, _, losses, _ = twin.forward(P, cfg, tok, doc, mask)
        losses["total"].backward()
        return float(losses["total"])

    t0 = time.perf_counter()
    loss0 = step()
    first = (time.perf_counter() - t0) * 1000
    for _ in range(a.warmup - 1):
        step()
    t0 = time.perf_counter()
    for _ in range(a.steps):
        loss = step()
    ms = (time.perf_counter() - t0) * 1000 / a.steps
    print(json.dumps({"impl": "torch-twin", "torch": torch.__version__, "threads": a.threads, "batch": a.batch,
                      "seq": a.seq, "first_step_ms": round(first, 1), "step_ms": round(ms, 2),
                      "tok_per_s": round(a.batch * a.seq / (ms / 1000)), "loss_first": round(loss0, 5),
                      "log_vocab": round(math.log(cfg["vocab_size"]), 3)}))


if __name__ == "__main__":
    main()
