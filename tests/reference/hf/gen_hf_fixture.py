"""Writes the transformers-parity fixture (issue #22 point 4): tests/model/fixtures/hf/{config.json,
model.safetensors, reference/expected.safetensors}. Run with the transformers environment (scripts/hf-env.sh):

  python tests/reference/hf/gen_hf_fixture.py [OUT_DIR]

A tiny DeepseekV4ForCausalLM (transformers 5.23.0, torch 2.15.0, fp32): SWA, CSA, HCA (ratio 8), CSA; one hash
layer then top-k MoE; hc_mult 2, o_groups 2; 48 tokens, so CSA has up to 12 compressed entries and its indexer keeps
3, HCA up to 6. Weights are drawn at unit activation scale, saved by save_pretrained (transformers' layout: what
trex must import). expected.safetensors holds the input tokens, transformers' logits [T, V], its loss
(labels = inputs), the gradient of every parameter (zeros where transformers gives none: the indexer), keyed by
transformers' module path with experts per expert (model.layers.N.mlp.experts.E.w1.weight), and 32 greedy tokens.
The script asserts that no indexer, MoE or greedy choice is within 1e-3 of a tie, so fp32 rounding cannot flip
one (the fixture does not depend on tie-breaking, where transformers and trex differ: docs/model.md).
Departures configured away: config "trex": clamp_shared_expert true (transformers clamps the shared expert),
no MTP block, no balance or indexer loss (transformers has neither).
"""
import json
import math
import os
import sys

import torch
from safetensors.torch import save_file
from transformers import DeepseekV4Config, DeepseekV4ForCausalLM
import transformers.models.deepseek_v4.modeling_deepseek_v4 as M

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../../model/fixtures/hf")
T, V, GREEDY, MARGIN = 48, 64, 32, 1e-3
torch.manual_seed(6)
cfg = DeepseekV4Config(
    vocab_size=V, hidden_size=32, moe_intermediate_size=16, num_hidden_layers=4, num_attention_heads=2, head_dim=32,
    q_lora_rank=16, num_experts_per_tok=2, n_routed_experts=4, n_shared_experts=1,
    layer_types=["sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention",
                 "compressed_sparse_attention"],
    compress_rates={"compressed_sparse_attention": 4, "heavily_compressed_attention": 8},
    mlp_layer_types=["hash_moe", "moe", "moe", "moe"], sliding_window=8, o_groups=2, o_lora_rank=8,
    index_n_heads=8, index_head_dim=16, index_topk=3, partial_rotary_factor=8 / 32, hc_mult=2,
    rope_parameters={"rope_type": "yarn", "factor": 16.0, "original_max_position_embeddings": 65536,
                     "beta_fast": 32.0, "beta_slow": 1.0},
    max_position_embeddings=65536, num_nextn_predict_layers=0, swiglu_limit=10.0, dtype="float32")
model = DeepseekV4ForCausalLM(cfg).float()
with torch.no_grad():
    for name, p in model.named_parameters():
        if name.endswith("norm.weight"):
            p.copy_(1 + 0.1 * torch.randn_like(p))
        elif name.endswith(("hc.fn", "hc_head.hc_fn")):
            p.copy_(0.1 * torch.randn_like(p))
        elif name.endswith(("hc.base", "hc_base")):
            p.copy_(0.5 * torch.randn_like(p))
        elif name.endswith(("hc.scale", "hc_scale")):
            p.copy_(1 + 0.2 * torch.randn_like(p))
        elif name.endswith(("sinks", "position_bias")):
            p.copy_(torch.randn_like(p))
        elif p.dim() >= 2:
            p.copy_(torch.randn_like(p) / math.sqrt(p.shape[-1]))
    for name, b in model.named_buffers():
        if name.endswith("e_score_correction_bias"):
            b.copy_(0.1 * torch.randn_like(b))
        if name.endswith("tid2eid"):  # distinct experts per token, balanced
            b.copy_(torch.stack([torch.randperm(4)[:2] for _ in range(V)]))

# Margins of every discrete choice: indexer top-k boundaries, MoE top-k boundaries.
margins = {"indexer": math.inf, "moe": math.inf}
orig_scorer, orig_router = M.DeepseekV4IndexerScorer.forward, M.DeepseekV4TopKRouter.forward


def scorer(self, q, kv, h):
    s = orig_scorer(self, q, kv, h)  # [B, S, entries]
    for t in range(s.shape[1]):
        nv = (t + 1) // 4
        k = min(cfg.index_topk, nv)
        if 0 < k < nv:
            v = s[0, t, :nv].sort(descending=True).values
            margins["indexer"] = min(margins["indexer"], (v[k - 1] - v[k]).item())
    return s


def router(self, x):
    out = orig_router(self, x)
    sc = self.score_fn(torch.nn.functional.linear(x.reshape(-1, self.hidden_dim), self.weight)) + self.e_score_correction_bias
    v = sc.sort(dim=-1, descending=True).values
    margins["moe"] = min(margins["moe"], (v[:, self.top_k - 1] - v[:, self.top_k]).min().item())
    return out


M.DeepseekV4IndexerScorer.forward, M.DeepseekV4TopKRouter.forward = scorer, router
g = torch.Generator().manual_seed(5)
ids = torch.randint(0, V, (1, T), generator=g)
model.train(False)
out = model(ids, labels=ids, use_cache=False)
out.loss.backward()
logits = out.logits[0].detach()
seq = ids[0].tolist()
greedy_margin = math.inf
with torch.no_grad():
    for _ in range(GREEDY):
        l = model(torch.tensor([seq]), use_cache=False).logits[0, -1]
        v = l.sort(descending=True).values
        greedy_margin = min(greedy_margin, (v[0] - v[1]).item())
        seq.append(int(l.argmax()))
print("margins", margins, "greedy", greedy_margin, file=sys.stderr)
assert margins["indexer"] > MARGIN and margins["moe"] > MARGIN and greedy_margin > MARGIN, "a choice is near a tie: reseed"

os.makedirs(os.path.join(OUT, "reference"), exist_ok=True)  # weight loaders glob OUT/*.safetensors
model.save_pretrained(OUT)
c = json.load(open(os.path.join(OUT, "config.json")))
c["trex"] = {"clamp_shared_expert": True, "seq_balance_alpha": 0.0, "indexer_loss_coeff": 0.0, "mtp_loss_weight": 0.0}
json.dump(c, open(os.path.join(OUT, "config.json"), "w"), indent=1, sort_keys=True)
for f in ("generation_config.json",):
    if os.path.exists(os.path.join(OUT, f)):
        os.remove(os.path.join(OUT, f))

exp = {"tokens": ids[0].to(torch.int64), "logits": logits.float().contiguous(),
       "loss": out.loss.detach().double().reshape(1), "greedy": torch.tensor(seq[T:], dtype=torch.int64)}
for name, p in model.named_parameters():
    gr = p.grad if p.grad is not None else torch.zeros_like(p)
    if name.endswith("mlp.experts.gate_up_proj"):
        pre, f = name[: -len("gate_up_proj")], gr.shape[1] // 2
        for e in range(gr.shape[0]):
            exp[f"grad/{pre}{e}.w1.weight"] = gr[e, :f].contiguous()
            exp[f"grad/{pre}{e}.w3.weight"] = gr[e, f:].contiguous()
    elif name.endswith("mlp.experts.down_proj"):
        pre = name[: -len("down_proj")]
        for e in range(gr.shape[0]):
            exp[f"grad/{pre}{e}.w2.weight"] = gr[e].contiguous()
    else:
        exp[f"grad/{name}"] = gr.detach().contiguous()
save_file(exp, os.path.join(OUT, "reference", "expected.safetensors"),
          metadata={"transformers": __import__("transformers").__version__, "torch": torch.__version__,
                    "margins": json.dumps({**margins, "greedy": greedy_margin})})
print("wrote", OUT, sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(OUT) for f in fs), "bytes", file=sys.stderr)
