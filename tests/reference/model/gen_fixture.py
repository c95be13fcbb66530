"""Writes tests/model/fixtures/model_fixture.safetensors: the fixture config's model with random weights (seeded),
packed inputs, the twin's logits, every loss term and every parameter gradient (computed in float64, stored as
float32). Usage: /usr/bin/python3 tests/reference/model/gen_fixture.py [OUT] [VARIANT]. VARIANT "mtp2": the
chained-MTP case (2 layers + 2 MTP modules, model_fixture_mtp2.safetensors); "dense": the dense indexer
warm-up (model_fixture_dense.safetensors)."""
import json
import os
import struct
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import twin  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def load_cfg(path):
    cfg = json.load(open(path))
    cfg.update(cfg.get("trex", {}))
    return cfg


def write_safetensors(path, tensors, metadata):
    header, blobs, off = {"__metadata__": metadata}, [], 0
    for name, t in tensors.items():
        t = t.detach().contiguous()
        dt = {torch.float32: "F32", torch.int64: "I64", torch.int32: "I32"}[t.dtype]
        raw = t.numpy().tobytes()
        header[name] = {"dtype": dt, "shape": list(t.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


def inputs(cfg, gen, B, T):
    tok = torch.randint(0, cfg["vocab_size"], (B, T), generator=gen)
    doc = torch.zeros(B, T, dtype=torch.long)
    doc[1, 13:] = 1  # row 1 packs two documents (13 + 19 tokens): restarts positions, windows, block grids
    mask = (torch.rand(B, T, generator=gen) > 0.2).to(torch.long)
    return tok, doc, mask


def run(cfg, P32, tabs, tok, doc, mask, dtype):
    P = {k: v.to(dtype).requires_grad_(not (k.endswith("gate.bias"))) for k, v in P32.items()}
    P.update(tabs)
    logits, mtp_logits, losses, stats = twin.forward(P, cfg, tok, doc, mask)
    losses["total"].backward()
    grads = {k: (P[k].grad if P[k].grad is not None else torch.zeros_like(P[k])) for k in P32}
    return logits, mtp_logits, losses, stats, grads


# Config overrides per fixture variant (the base is fixture_config.json).
VARIANTS = {
    "": {},
    # chained MTP, depth 2: module 1 reads module 0's block output; a CSA layer keeps the indexer in the chain
    "mtp2": {"num_hidden_layers": 2, "compress_ratios": [0, 4, 0, 0], "num_nextn_predict_layers": 2},
    # dense indexer warm-up: CSA attends to every visible compressed entry, KL over all of them
    "dense": {"num_hidden_layers": 3, "compress_ratios": [0, 4, 8, 0], "indexer_dense_warmup": True},
}


def main():
    variant = sys.argv[2] if len(sys.argv) > 2 else ""
    name = "model_fixture.safetensors" if not variant else f"model_fixture_{variant}.safetensors"
    out = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] != "-" else os.path.join(HERE, "..", "..", "model",
                                                                                     "fixtures", name)
    cfg = load_cfg(os.path.join(HERE, "fixture_config.json"))
    cfg.update(VARIANTS[variant])
    gen = torch.Generator().manual_seed(20260401)
    P32 = twin.random_params(cfg, gen, torch.float32)
    tabs = twin.hash_tables(cfg, gen)
    tok, doc, mask = inputs(cfg, gen, 2, 32)
    lg, ml, losses, stats, grads = run(cfg, P32, tabs, tok, doc, mask, torch.float64)
    # float32 run: selections must agree with float64, else the fixture would depend on rounding
    lg32, _, losses32, stats32, _ = run(cfg, P32, tabs, tok, doc, mask, torch.float32)
    for a, b in zip(stats["selected"], stats32["selected"]):
        assert torch.equal(a, b), "indexer selection differs between float32 and float64: pick another seed"
    assert stats["load"] == stats32["load"], "MoE routing differs between float32 and float64"
    print("losses:", {k: float(v) for k, v in losses.items()})
    print("max |logits64 - logits32|:", float((lg - lg32.double()).abs().max()))
    T = {}
    for k, v in P32.items():
        T["param/" + k] = v
    for k, v in tabs.items():
        T["param/" + k] = v
    for k, v in grads.items():
        T["grad/" + k] = v.to(torch.float32)
    T["input/tokens"], T["input/doc_ids"], T["input/loss_mask"] = tok, doc, mask
    T["out/logits"] = lg.detach().to(torch.float32)
    T["out/mtp_logits"] = ml.detach().to(torch.float32)
    for k, v in losses.items():
        T["loss/" + k] = torch.tensor([float(v)], dtype=torch.float32)
    for p, load in stats["load"].items():
        T["load/" + p] = torch.tensor(load, dtype=torch.int64)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    write_safetensors(out, T, {"config": json.dumps(cfg)})
    print("wrote", out, os.path.getsize(out), "bytes")


if __name__ == "__main__":
    main()
