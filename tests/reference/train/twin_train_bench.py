#!/usr/bin/python3
"""PyTorch peer of bench/train_throughput: trains the twin (tests/reference/model/twin.py) with torch's AdamW
(betas 0.9/0.999, eps 1e-8, weight decay 0.01 on matrices), global-norm clip 1.0, on the micro-batches that
bench_train_throughput dumped (int32 tokens, doc ids, loss mask per step). Prints one JSON line with tok/s
over the steps after the first (warm-up). Usage: twin_train_bench.py CONFIG_JSON DUMP STEPS BATCH SEQ [THREADS]"""
import json
import math
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "model"))
import twin  # noqa: E402
import twin_bench  # noqa: E402  (init_params: the C++ Model::init scheme)


def main():
    cfg_path, dump, steps, B, T = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    torch.set_num_threads(int(sys.argv[6]) if len(sys.argv) > 6 else 1)
    cfg = json.load(open(cfg_path))
    cfg.update(cfg.get("trex", {}))
    raw = torch.frombuffer(bytearray(open(dump, "rb").read()), dtype=torch.int32).to(torch.long)
    raw = raw.view(steps, 3, B, T)
    P = twin_bench.init_params(cfg, torch.Generator().manual_seed(1234))
    params = [p for p in P.values() if p.dtype.is_floating_point and p.requires_grad]
    decay = [p for p in params if p.dim() >= 2]
    no_decay = [p for p in params if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.999), eps=1e-8)
    losses, times = [], []
    for s in range(steps):
        t0 = time.perf_counter()
        tok, doc, mask = raw[s, 0], raw[s, 1], raw[s, 2]
        opt.zero_grad(set_to_none=True)
        _, _, L, _ = twin.forward(P, cfg, tok, doc, mask)
        L["total"].backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        times.append(time.perf_counter() - t0)
        losses.append(float(L["total"]))
    warm = times[1:] if len(times) > 1 else times
    tok_s = B * T * len(warm) / sum(warm)
    print(json.dumps({"impl": "torch-twin", "torch": torch.__version__, "threads": torch.get_num_threads(),
                      "steps": steps, "batch": B, "seq": T, "first_step_s": round(times[0], 3),
                      "tokens_per_s": round(tok_s, 1), "loss_first": round(losses[0], 4),
                      "loss_last": round(losses[-1], 4)}))


if __name__ == "__main__":
    main()
