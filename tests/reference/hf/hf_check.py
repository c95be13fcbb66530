"""Live check of trex's Hugging Face export against transformers (issue #22; docs/huggingface.md).

Run with the transformers environment (scripts/hf-env.sh), never by `make test`:

  python tests/reference/hf/hf_check.py DIR [--save OUT]

DIR is a checkpoint folder trex wrote (`trex train`, `trex run`). The script
  1. loads it with AutoModelForCausalLM.from_pretrained(DIR, output_loading_info=True) and prints the load
     report: missing / unexpected / mismatched keys (all must be empty) and the checkpoint tensors transformers
     does not build (the MTP module, mtp.*), which it skips by its _keys_to_ignore_on_load_unexpected;
  2. checks that every tensor transformers holds equals, bit for bit, the tensor of DIR it was loaded from (names
     matched through transformers' own rename rules for deepseek_v4);
  3. loads AutoTokenizer.from_pretrained(DIR) when DIR has a tokenizer and renders a conversation through its
     chat template, which must spell trex's chat format (DEEPSEEK_V4.md §12);
  4. runs one forward pass (finite logits of the right shape);
  5. with --save OUT: model.save_pretrained(OUT) (+ tokenizer), then compares every tensor of OUT with DIR's,
     bit for bit (the round trip trex -> transformers -> trex; trex then loads OUT itself, see the docs).
Exit status 0 only when every check holds.
"""
import argparse
import json
import os
import sys

import torch
from safetensors import safe_open
from transformers import AutoModelForCausalLM, AutoTokenizer
from transformers.conversion_mapping import get_checkpoint_conversion_mapping
from transformers.core_model_loading import WeightRenaming, apply_renamings


def read_folder(path):
    """Every tensor of the safetensors files of a folder (index.json's shards or every *.safetensors)."""
    index = os.path.join(path, "model.safetensors.index.json")
    if os.path.exists(index):
        files = sorted(set(json.load(open(index))["weight_map"].values()))
    else:
        files = sorted(f for f in os.listdir(path) if f.endswith(".safetensors"))
    out = {}
    for f in files:
        with safe_open(os.path.join(path, f), "pt") as st:
            for k in st.keys():
                out[k] = st.get_tensor(k)
    return out, files


RENAMES = [t for t in get_checkpoint_conversion_mapping("deepseek_v4") if isinstance(t, WeightRenaming)]


def module_key(name):
    k = name[len("model."):] if name.startswith("model.") else name
    k = apply_renamings(k, RENAMES)
    return k if k.startswith("lm_head.") else "model." + k


def per_expert(state):
    """transformers' fused experts split back into per-expert tensors, keyed like module_key()."""
    out = {}
    for k, v in state.items():
        if k.endswith("mlp.experts.gate_up_proj"):
            p = k[: -len("gate_up_proj")]
            f = v.shape[1] // 2
            for e in range(v.shape[0]):
                out[f"{p}{e}.w1.weight"] = v[e, :f]
                out[f"{p}{e}.w3.weight"] = v[e, f:]
        elif k.endswith("mlp.experts.down_proj"):
            p = k[: -len("down_proj")]
            for e in range(v.shape[0]):
                out[f"{p}{e}.w2.weight"] = v[e]
        else:
            out[k] = v
    return out


def same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a.contiguous().view(torch.uint8), b.contiguous().view(torch.uint8))


def compare(src, dst, what, failures):
    """src, dst: {module_key: tensor}. Every dst tensor must equal src's (after casting to src's dtype when the
    dtypes differ, which must then be exact)."""
    bad = []
    for k, v in dst.items():
        if k not in src:
            bad.append(f"{k}: not in the source")
            continue
        s = src[k]
        w = v if v.dtype == s.dtype else v.to(s.dtype)
        if not same_bits(s, w):
            bad.append(f"{k}: differs ({s.dtype} {tuple(s.shape)} vs {v.dtype} {tuple(v.shape)})")
    if bad:
        failures.append(f"{what}: {len(bad)} tensors differ, e.g. " + "; ".join(bad[:5]))
    return len(dst) - len(bad)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--save")
    a = ap.parse_args()
    torch.manual_seed(0)
    failures = []
    report = {"transformers": __import__("transformers").__version__, "torch": torch.__version__, "dir": a.dir}

    model, info = AutoModelForCausalLM.from_pretrained(a.dir, output_loading_info=True)
    model.eval()
    stored, files = read_folder(a.dir)
    report["files"] = files
    report["load_report"] = {k: sorted(v) if isinstance(v, (set, list)) else v for k, v in info.items()}
    for k in ("missing_keys", "unexpected_keys", "mismatched_keys", "error_msgs"):
        if info.get(k):
            failures.append(f"from_pretrained: {k} = {sorted(info[k])[:10]}")
    src = {module_key(k): v for k, v in stored.items()}
    held = per_expert(model.state_dict())
    skipped = sorted(k for k in stored if module_key(k) not in held)
    report["checkpoint_tensors"] = len(stored)
    report["not_built_by_transformers"] = {"count": len(skipped), "all_mtp": all(k.startswith("mtp.") for k in skipped),
                                           "first": skipped[:3]}
    if not all(k.startswith("mtp.") for k in skipped):
        failures.append(f"tensors transformers does not hold beyond MTP: {[k for k in skipped if not k.startswith('mtp.')][:10]}")
    report["loaded_tensors_equal_to_checkpoint"] = compare(src, held, "from_pretrained values", failures)

    cfg = model.config
    report["config"] = {"layer_types": cfg.layer_types, "mlp_layer_types": cfg.mlp_layer_types,
                        "compress_rates": cfg.compress_rates, "qk_rope_head_dim": cfg.qk_rope_head_dim,
                        "rope_parameters": cfg.rope_parameters, "dtype": str(model.dtype)}

    if os.path.exists(os.path.join(a.dir, "tokenizer.json")):
        tok = AutoTokenizer.from_pretrained(a.dir)
        msgs = [{"role": "system", "content": "S"}, {"role": "user", "content": "u1"},
                {"role": "assistant", "content": "a1", "reasoning_content": "r1"}, {"role": "user", "content": "u2"}]
        text = tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
        want = ("<｜begin▁of▁sentence｜>S<｜User｜>u1<｜Assistant｜></think>a1<｜end▁of▁sentence｜>"
                "<｜User｜>u2<｜Assistant｜></think>")
        report["chat_template"] = {"rendered": text, "matches_trex_format": text == want,
                                   "bos_id": tok.bos_token_id, "eos_id": tok.eos_token_id, "vocab": len(tok)}
        if text != want:
            failures.append(f"chat template renders {text!r}, trex's format is {want!r}")
        ids = tok(text, add_special_tokens=False)["input_ids"]
        if ids[0] != cfg.bos_token_id:
            failures.append(f"the rendered prompt does not start with BOS id {cfg.bos_token_id}: {ids[:3]}")
        if tok.eos_token_id != cfg.eos_token_id:
            failures.append(f"tokenizer EOS {tok.eos_token_id} != config eos_token_id {cfg.eos_token_id}")
    else:
        report["chat_template"] = "no tokenizer.json in the folder"

    ids = torch.randint(0, cfg.vocab_size, (1, 48))
    with torch.no_grad():
        logits = model(ids).logits
    report["forward"] = {"shape": list(logits.shape), "finite": bool(torch.isfinite(logits).all())}
    if not torch.isfinite(logits).all():
        failures.append("forward: non-finite logits")

    if a.save:
        model.save_pretrained(a.save)
        if os.path.exists(os.path.join(a.dir, "tokenizer.json")):
            tok.save_pretrained(a.save)
        saved, sfiles = read_folder(a.save)
        dst = {module_key(k): v for k, v in saved.items()}
        report["save_pretrained"] = {"dir": a.save, "files": sfiles, "tensors": len(saved),
                                     "bit_identical_to_trex": compare(src, dst, "save_pretrained round trip", failures)}
    report["failures"] = failures
    print(json.dumps(report, indent=1, default=str))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
