"""Live forward parity between trex and transformers' DeepseekV4ForCausalLM (issue #22, point 4; not in make test).

  python tests/reference/hf/hf_parity_live.py DIR OUT --trex build/trex [--tokens 96]

DIR: a trex checkpoint folder (with tokenizer). The script loads it in transformers, replaces every weight by a
seeded random one of unit-scale activations (a freshly initialised model's logits are nearly uniform, which would
hide differences), saves it with save_pretrained into OUT (so trex reads transformers' layout), then
  - scores a prompt of --tokens tokens (long enough that CSA and HCA layers compress several blocks and the
    indexer chooses: top-k below the visible entries) in both: `trex generate --echo --logprobs 5` against
    transformers' log_softmax (float64 from its fp32 logits) at every position;
  - runs up to 32 greedy tokens in both, stopping at EOS as trex generate does (transformers by full forward
    passes, no cache; trex by incremental decoding with its caches).
Both sides are compared over the ids the tokenizer can decode (trex never scores or emits a padded vocabulary's
extra rows).
Prints the maximum absolute log-probability difference, the greedy tokens and whether they agree.
Measured (transformers 5.23.0, torch 2.15.0; SWA/CSA/HCA(16)/CSA, index_topk 4, 111-token prompt): identical
(< 1e-4) up to position 38, then apart: at position 39 a CSA layer's indexer has six entries scored exactly 0
(ReLU) at its top-4 boundary, trex keeps the lower indices (DEEPSEEK_V4.md §16.4), torch.topk others. With
--index-topk 64 (every visible entry selected) max |d log p| 4.0e-6 over all positions.
Departures configured away (docs/model.md, "transformers' DeepSeek-V4"): no MTP in the comparison (transformers
has none); transformers clamps the shared expert by swiglu_limit, trex does not unless clamp_shared_expert — the
script sets "trex": {"clamp_shared_expert": true} in OUT's config so both compute the same function.
"""
import argparse
import json
import math
import subprocess
import sys

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("out")
    ap.add_argument("--trex", required=True)
    ap.add_argument("--tokens", type=int, default=96)
    ap.add_argument("--index-topk", type=int, help="override index_topk in OUT's config (both models read it)")
    a = ap.parse_args()
    torch.manual_seed(1234)
    model = AutoModelForCausalLM.from_pretrained(a.dir, dtype=torch.float32).eval()
    tok = AutoTokenizer.from_pretrained(a.dir)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1 + 0.1 * torch.randn_like(p))
            elif name.endswith(("hc.fn", "hc_head.hc_fn")):
                p.copy_(0.05 * torch.randn_like(p))
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
    model.save_pretrained(a.out)
    tok.save_pretrained(a.out)
    cfg = json.load(open(f"{a.out}/config.json"))
    cfg.setdefault("trex", {})["clamp_shared_expert"] = True  # transformers clamps the shared expert (departure)
    if a.index_topk:
        cfg["index_topk"] = model.config.index_topk = a.index_topk
        for mod in model.modules():
            if hasattr(mod, "index_topk"):
                mod.index_topk = a.index_topk
    json.dump(cfg, open(f"{a.out}/config.json", "w"), indent=1)

    g = torch.Generator().manual_seed(7)
    ids = torch.randint(2, min(cfg["vocab_size"], len(tok)), (a.tokens,), generator=g).tolist()
    prompt = tok.decode(ids)
    r = subprocess.run([a.trex, "generate", "--ckpt", a.out, "--prompt", prompt, "--max-tokens", "32",
                        "--temperature", "0", "--logprobs", "5", "--echo", "--max-context", "4096"],
                       capture_output=True, text=True, env={"OMP_NUM_THREADS": "1"})
    if r.returncode != 0:
        sys.exit("trex generate failed: " + r.stderr)
    d = json.loads(r.stdout)
    # trex's prompt tokens: the first one is not scored; take them from trex's own tokenisation.
    scored = d["prompt_logprobs"]
    first = tok(prompt, add_special_tokens=False)["input_ids"]
    if [s["id"] for s in scored] != first[1:]:
        sys.exit("trex and transformers tokenise the prompt differently")
    # trex scores and samples only the ids its tokenizer can decode (a vocabulary padded beyond the tokenizer, as
    # `trex train --config tiny` with a smaller tokenizer gives, never emits the extra rows), so its probabilities
    # are normalised over those; compare on the same support.
    usable = min(cfg["vocab_size"], len(tok))
    x = torch.tensor([first])
    with torch.no_grad():
        lp = torch.log_softmax(model(x).logits[0, :, :usable].double(), dim=-1)
    diff_tok, diff_top, first_bad = 0.0, 0.0, None
    for t, s in enumerate(scored):
        e = abs(lp[t, s["id"]].item() - s["logprob"])
        diff_tok = max(diff_tok, e)
        if e > 1e-4 and first_bad is None:
            first_bad = t
        for alt in s["top_logprobs"]:
            diff_top = max(diff_top, abs(lp[t, alt["id"]].item() - alt["logprob"]))
    trex_greedy = [s["id"] for s in d["logprobs"]]
    seq = list(first)
    with torch.no_grad():
        for _ in range(32):
            nxt = int(model(torch.tensor([seq])).logits[0, -1, :usable].argmax())
            if nxt == cfg["eos_token_id"]:  # trex generate stops there (the EOS itself is not among its tokens)
                break
            seq.append(nxt)
    hf_greedy = seq[len(first):]
    spread = (lp.max(dim=-1).values - lp.min(dim=-1).values).mean().item()
    report = {"prompt_tokens": len(first), "vocab_size": cfg["vocab_size"], "tokenizer_ids": len(tok), "layer_types": model.config.layer_types,
              "index_topk": model.config.index_topk, "compress_rates": model.config.compress_rates,
              "max_abs_logprob_diff_prompt_tokens": diff_tok, "max_abs_logprob_diff_top5": diff_top,
              "mean_logprob_spread_per_position": spread, "first_position_off_by_1e-4": first_bad,
              "greedy_trex": trex_greedy, "greedy_transformers": hf_greedy,
              "greedy_identical": trex_greedy == hf_greedy}
    print(json.dumps(report, indent=1))
    sys.exit(0 if trex_greedy == hf_greedy else 1)


if __name__ == "__main__":
    main()
