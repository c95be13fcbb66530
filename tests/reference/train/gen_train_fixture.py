#!/usr/bin/python3
"""Twin of trex's training step on the whole fixture model (tests/reference/model: twin.py, fixture_config.json,
the same random weights and inputs as gen_fixture.py), for AdamW and for Muon: 3 optimizer steps, each with
2 micro-batches (the two fixture rows) whose gradients are averaged, global-norm clipping to 1.0, the
optimizer update (the formulas of src/train/optimizer.hpp, themselves checked against torch.optim.AdamW by
gen_optimizer_fixture.py) and the aux-loss-free gate-bias update b += rate * sign(mean load - load).
Computed in float64. Writes tests/train/fixtures/train_steps.safetensors: init/<param>, <opt>/step<k>/<param>
(parameters after step k), <opt>/loss<k>, <opt>/gnorm<k>, <opt>/load<k>/<block prefix>.
Usage: /usr/bin/python3 tests/reference/train/gen_train_fixture.py"""
import json
import math
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "model"))
import gen_fixture  # noqa: E402  (the model fixture's weights, inputs and safetensors writer)
import twin  # noqa: E402

STEPS = 3
LRS = {"adamw": [2e-3, 1e-3, 5e-4], "muon": [2e-3, 1e-3, 5e-4]}
CLIP = 1.0
BIAS_RATE = 1e-3


def adamw_set(name, shape):
    """DEEPSEEK_V4.md §9: tensors that stay on AdamW under Muon (optimizer.cpp uses_adamw_under_muon)."""
    if len(shape) < 2:
        return True
    return (name.startswith("embed") or ".embed." in name or name == "head.weight" or name.endswith(".head.weight")
            or name.endswith("_base") or name.endswith("_scale") or name.endswith("norm.weight")
            or name.endswith("attn_sink") or name.endswith(".ape"))


def newton_schulz(g, steps=10):
    x = g.clone()
    transposed = x.shape[0] > x.shape[1]
    if transposed:
        x = x.T
    x = x / (x.norm() + 1e-7)
    for i in range(steps):
        a, b, c = (3.4445, -4.7750, 2.0315) if i < 8 else (2.0, -1.5, 0.5)
        A = x @ x.T
        B = b * A + c * A @ A
        x = a * x + B @ x
    return x.T if transposed else x


def run(cfg, P0, tabs, tok, doc, mask, kind, out):
    P = {k: v.to(torch.float64).clone().requires_grad_(not k.endswith("gate.bias")) for k, v in P0.items()}
    P.update(tabs)
    names = list(P0.keys())
    m = {k: torch.zeros_like(P[k]) for k in names}
    v = {k: torch.zeros_like(P[k]) for k in names}
    hash_prefixes = {f"layers.{l}." for l in range(min(cfg["num_hash_layers"], cfg["num_hidden_layers"]))}
    for s in range(STEPS):
        lr, t = LRS[kind][s], s + 1
        for k in names:
            P[k].grad = None
        total, loads = 0.0, None
        for row in range(tok.shape[0]):  # micro-batches of one row each
            _, _, losses, stats = twin.forward(P, cfg, tok[row:row + 1], doc[row:row + 1], mask[row:row + 1])
            (losses["total"] / tok.shape[0]).backward()
            total += float(losses["total"]) / tok.shape[0]
            loads = stats["load"]  # the bias update uses the last forward's loads, as Model::update_gate_bias
        train = [k for k in names if P[k].requires_grad]
        gnorm = math.sqrt(sum(float((P[k].grad ** 2).sum()) for k in train))
        scale = CLIP / gnorm if gnorm > CLIP else 1.0
        with torch.no_grad():
            for k in train:
                g = P[k].grad * scale
                p = P[k]
                if kind == "muon" and not adamw_set(k, list(p.shape)):
                    g2 = g.reshape(p.shape[0], -1)
                    m[k] = 0.95 * m[k] + g2.reshape(p.shape)
                    u = (0.95 * m[k] + g2.reshape(p.shape)).reshape(p.shape[0], -1)
                    o = newton_schulz(u) * math.sqrt(max(u.shape)) * 0.18
                    p.mul_(1 - lr * 0.1).sub_(lr * o.reshape(p.shape))
                else:
                    wd = 0.01 if p.dim() >= 2 else 0.0
                    m[k] = 0.9 * m[k] + 0.1 * g
                    v[k] = 0.999 * v[k] + 0.001 * g * g
                    denom = v[k].sqrt() / math.sqrt(1 - 0.999 ** t) + 1e-8
                    p.mul_(1 - lr * wd).sub_((lr / (1 - 0.9 ** t)) * m[k] / denom)
            for prefix, load in loads.items():
                if prefix in hash_prefixes:
                    continue
                mean = sum(load) / len(load)
                b = P[prefix + "ffn.gate.bias"]
                for e, x in enumerate(load):
                    b[e] += BIAS_RATE * ((mean - x > 0) - (mean - x < 0))
                out[f"{kind}/load{s}/{prefix}"] = torch.tensor(load, dtype=torch.int64)
        for k in names:
            out[f"{kind}/step{s}/{k}"] = P[k].detach().to(torch.float32)
        out[f"{kind}/loss{s}"] = torch.tensor([total], dtype=torch.float32)
        out[f"{kind}/gnorm{s}"] = torch.tensor([gnorm], dtype=torch.float32)
        print(kind, "step", s + 1, "loss", round(total, 6), "grad norm", round(gnorm, 6))


def main():
    cfg = gen_fixture.load_cfg(os.path.join(HERE, "..", "model", "fixture_config.json"))
    gen = torch.Generator().manual_seed(20260401)
    P32 = twin.random_params(cfg, gen, torch.float32)
    tabs = twin.hash_tables(cfg, gen)
    tok, doc, mask = gen_fixture.inputs(cfg, gen, 2, 32)
    out = {}
    for k, t in P32.items():
        out["init/" + k] = t
    for k, t in tabs.items():
        out["init/" + k] = t
    out["input/tokens"], out["input/doc_ids"], out["input/loss_mask"] = tok, doc, mask
    for kind in ("adamw", "muon"):
        run(cfg, P32, tabs, tok, doc, mask, kind, out)
    dst = os.path.join(HERE, "..", "..", "train", "fixtures", "train_steps.safetensors")
    gen_fixture.write_safetensors(dst, out, {"config": json.dumps(cfg), "lrs": json.dumps(LRS), "clip": str(CLIP),
                                             "bias_rate": str(BIAS_RATE), "torch": torch.__version__})
    print("wrote", os.path.normpath(dst), os.path.getsize(dst), "bytes")


if __name__ == "__main__":
    main()
