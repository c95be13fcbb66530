#!/usr/bin/python3
"""PyTorch peer of bench/train_throughput: repeats trex's training run with the twin (tests/reference/model/twin.py)
— the same computation, step for step — and times it. What bench_train_throughput wrote defines the run:
  --init DIR      trex's initial weights (Model::init(seed): matrices, norms, mHC, the hash layers' tables)
  --recipe FILE   the update rule (clip, weight decay and which tensors get it, AdamW's betas and eps)
  --schedule FILE the trainer's trainer_state.json (LR: warm-up steps, then cosine from lr to min_lr)
  --batches FILE  the micro-batches (int32 tokens, doc ids, loss mask per step)
Per step, as trex::train::train with one micro-batch: forward (CE + mtp_loss_weight * MTP + sequence-balance +
indexer loss, all from the config), backward, global-norm clip over the trainable tensors (scale clip / norm when
the norm exceeds clip), torch.optim.AdamW at lr_at(step) (decoupled decay on matrices), then the
auxiliary-loss-free gate-bias update b += bias_update_rate * sign(mean load - load) on every non-hash MoE block from
that forward's loads. --autocast bf16 runs the forward under torch.autocast(device_type="cpu", dtype=bfloat16)
(the peer's mixed precision; parameters, gradients and optimizer stay fp32). Prints one JSON line: tok/s over the
steps after the first (warm-up) and the per-step losses. Runs on Debian's torch 1.13 and on current PyPI torch."""
import argparse
import contextlib
import json
import math
import os
import struct
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "model"))
import twin  # noqa: E402

DTYPES = {"F32": (torch.float32, 4), "F64": (torch.float64, 8), "I64": (torch.int64, 8), "I32": (torch.int32, 4)}


def read_safetensors(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    data = bytearray(raw[8 + n:])
    out = {}
    for name, h in header.items():
        if name == "__metadata__":
            continue
        if h["dtype"] not in DTYPES:
            raise SystemExit(f"twin_train_bench: {path}: tensor {name} has dtype {h['dtype']} (expected F32/I64)")
        a, b = h["data_offsets"]
        dt, size = DTYPES[h["dtype"]]
        t = torch.frombuffer(data, dtype=dt, count=(b - a) // size, offset=a) if b > a else torch.empty(0, dtype=dt)
        out[name] = t.clone().view(h["shape"])
    return out


def lr_at(step, warmup, total, max_lr, min_lr):
    """src/train/optimizer.cpp lr_at: linear warm-up, then cosine decay to min_lr; step is 0-based."""
    if warmup > 0 and step < warmup:
        return max_lr * (step + 1) / warmup
    if step >= total:
        return min_lr
    decay = total - warmup
    if decay <= 0:
        return max_lr
    return min_lr + 0.5 * (max_lr - min_lr) * (1.0 + math.cos(math.pi * (step - warmup) / decay))


def main():
    ap = argparse.ArgumentParser()
    for a in ("--init", "--recipe", "--schedule", "--batches"):
        ap.add_argument(a, required=True)
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--seq", type=int, required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--autocast", choices=("none", "bf16"), default="none")
    # diagnostics: departures from trex's run that the bench's loss-curve check must catch
    ap.add_argument("--no-bias-update", action="store_true", help="leave out the gate-bias update")
    ap.add_argument("--constant-lr", action="store_true", help="lr throughout (the old bench's schedule)")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    cfg = json.load(open(os.path.join(a.init, "config.json")))
    cfg.update(cfg.get("trex", {}))
    recipe = json.load(open(a.recipe))
    sched = json.load(open(a.schedule))["schedule"]
    if recipe["optimizer"] != "adamw" or recipe["grad_accum"] != 1 or recipe["freeze_router"]:
        raise SystemExit(f"twin_train_bench: only AdamW, one micro-batch per step, trained router (got {recipe})")
    if sched["steps"] != a.steps:
        raise SystemExit(f"twin_train_bench: the schedule is for {sched['steps']} steps, asked for {a.steps}")

    W = read_safetensors(os.path.join(a.init, "model.safetensors"))
    shapes = twin.param_shapes(cfg)
    tables = {k for k in W if k.endswith("gate.tid2eid")}
    if set(W) - tables != set(shapes):
        raise SystemExit("twin_train_bench: the initial weights do not match the twin's tensors: missing "
                         f"{sorted(set(shapes) - set(W))[:5]}, extra {sorted(set(W) - tables - set(shapes))[:5]}")
    P = {}
    for name, t in W.items():
        if name in tables:
            P[name] = t.to(torch.int64)
        else:
            assert list(t.shape) == shapes[name], name
            P[name] = t.to(torch.float32).requires_grad_(not name.endswith("gate.bias"))
    params = [p for p in P.values() if p.requires_grad]
    decay = [p for p in params if p.dim() >= 2 or recipe["decay_1d"]]
    no_decay = [p for p in params if not (p.dim() >= 2 or recipe["decay_1d"])]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": recipe["weight_decay"]},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=sched["lr"], betas=(recipe["beta1"], recipe["beta2"]), eps=recipe["eps"])
    hash_prefixes = {f"layers.{l}." for l in range(min(cfg["num_hash_layers"], cfg["num_hidden_layers"]))}
    rate = cfg["bias_update_rate"]

    raw = torch.frombuffer(bytearray(open(a.batches, "rb").read()), dtype=torch.int32).to(torch.long)
    raw = raw.view(a.steps, 3, a.batch, a.seq)
    amp = (lambda: torch.autocast(device_type="cpu", dtype=torch.bfloat16)) if a.autocast == "bf16" \
        else contextlib.nullcontext
    losses, gnorms, lrs, times = [], [], [], []
    for s in range(a.steps):
        t0 = time.perf_counter()
        tok, doc, mask = raw[s, 0], raw[s, 1], raw[s, 2]
        opt.zero_grad(set_to_none=True)
        with amp():
            _, _, L, stats = twin.forward(P, cfg, tok, doc, mask)
        L["total"].backward()
        gnorm = math.sqrt(sum(float(p.grad.double().pow(2).sum()) for p in params))
        if not math.isfinite(gnorm) or not math.isfinite(float(L["total"].detach())):
            raise SystemExit(f"twin_train_bench: non-finite loss or gradient at step {s + 1}")
        if recipe["clip"] > 0 and gnorm > recipe["clip"]:
            for p in params:
                p.grad.mul_(recipe["clip"] / gnorm)
        lr = sched["lr"] if a.constant_lr else lr_at(s, sched["warmup"], sched["steps"], sched["lr"], sched["min_lr"])
        for g in opt.param_groups:
            g["lr"] = lr
        opt.step()
        if not a.no_bias_update:
            with torch.no_grad():
                for prefix, load in stats["load"].items():
                    if prefix in hash_prefixes:
                        continue
                    mean = sum(load) / len(load)
                    sign = torch.tensor([float((mean - x > 0) - (mean - x < 0)) for x in load])
                    P[prefix + "ffn.gate.bias"].add_(rate * sign)
        times.append(time.perf_counter() - t0)
        losses.append(float(L["total"].detach()))
        gnorms.append(gnorm)
        lrs.append(lr)
    warm = times[1:] if len(times) > 1 else times
    tok_s = a.batch * a.seq * len(warm) / sum(warm)
    print(json.dumps({"impl": "torch-twin", "torch": torch.__version__, "threads": torch.get_num_threads(),
                      "autocast": a.autocast, "steps": a.steps, "batch": a.batch, "seq": a.seq,
                      "first_step_s": round(times[0], 3), "tokens_per_s": round(tok_s, 1),
                      "loss_first": losses[0], "loss_last": losses[-1], "losses": losses, "grad_norms": gnorms,
                      "lrs": lrs}))


if __name__ == "__main__":
    main()
