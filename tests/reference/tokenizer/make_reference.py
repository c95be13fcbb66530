#!/usr/bin/env python3
"""Writes the reference for trex's tokenizer parity tests (tests/text/reference/tokenizer_parity.cpp), with
Hugging Face `tokenizers` (the reference environment, scripts/reference-env.sh) as the oracle.

  make_reference.py --samples samples.jsonl --tokenizers DIR --ours ours.tokenizer.json --out OUT
                    [--generated N] [--seed S]

Texts: the committed samples (samples.jsonl) followed by N generated ones (generated_texts(): mixed scripts,
digits, whitespace runs, emoji, text next to what UTF-8 cannot hold, special tokens and near-specials, OR prose
and code), the same for every tokenizer. For each tokenizer it writes OUT/NAME.expected.jsonl, one
{"text", "ids", "decoded"} per text in order: the ids HF gives (no template tokens: add_special_tokens=False)
and HF's decode of them (skip_special_tokens=False). Tokenizers:
  deepseek_v3, gpt2  the real tokenizer.json files in DIR (../shared/tokenizers), read in place;
  ours               a tokenizer.json written by `trex tokenizer train` (HF must load it);
  hf_trained         a byte-level BPE trained here by HF's own trainer on the same corpus, written to
                     OUT/hf_trained.tokenizer.json (trex must load it: the other way round).
Every file is written to a temporary name and renamed, so an interrupted run leaves nothing half-written.
"""
import argparse
import json
import os
import random
import sys
import unicodedata

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers


def read_texts(path, field="text"):
    texts = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"{path}:{n}: invalid JSON: {e}")
            if not isinstance(rec.get(field), str):
                sys.exit(f"{path}:{n}: field '{field}' must be a string")
            texts.append(rec[field])
    return texts


# Code points by script or kind; random characters are drawn only where Python's Unicode database (14.0, the
# version trex's PCRE2 10.42 knows) assigns them, so no character's class depends on the Unicode version.
POOLS = [
    (0x20, 0x7E), (0xA0, 0x24F), (0x300, 0x36F), (0x370, 0x3FF), (0x400, 0x4FF), (0x530, 0x58F), (0x590, 0x6FF),
    (0x900, 0x97F), (0x980, 0x9FF), (0xE00, 0xE7F), (0x10A0, 0x10FF), (0x1100, 0x11FF), (0x1E00, 0x1EFF),
    (0x2000, 0x206F), (0x20A0, 0x20CF), (0x2100, 0x214F), (0x2190, 0x23FF), (0x2460, 0x24FF), (0x2500, 0x27BF),
    (0x3000, 0x30FF), (0x3130, 0x318F), (0x4E00, 0x9FFF), (0xAC00, 0xD7A3), (0xF900, 0xFAFF), (0xFE00, 0xFFFD),
    (0xFF00, 0xFFEF), (0x1D400, 0x1D7FF), (0x1F300, 0x1FAFF), (0x20000, 0x2A6DF),
]
# Next to what UTF-8 cannot hold: the last code points before and after the surrogates, the replacement
# character, noncharacters, the largest code point, private use, BOM, joiners, variation selectors, controls.
EDGE = ["\ud7ff", "\ue000", "\ufffd", "\ufffe", "\uffff", "\U0010ffff", "\U0010fffd", "\U000f0000", "\ufeff",
        "\u200d", "\u200c", "\ufe0f", "\U000e0001", "\x00", "\x01", "\x7f", "\x80", "\x9f", "\u0085", "\u2028",
        "\u2029", "\U0001f3fb", "\u0301", "\u034f"]
DIGITS = ["0", "7", "42", "123", "1234", "12345", "123456", "3.14159", "-0.001", "1e-6", "2E+10", "1,000,000",
          "٣٤٥", "४५६", "๑๒๓", "１２３", "²³", "½", "Ⅻ", "0x1F", "007", "9" * 17]
SPACES = [" ", "  ", "   ", "\t", "\t\t", "\n", "\n\n", "\r\n", "\r", " \n", "\n ", "\u00a0", "\u3000", "\u2009",
          "\u2003", "\u200b", "\f", "\v", " " * 9, "\n" * 5]
EMOJI = ["🙂", "😀", "👍🏽", "👨‍👩‍👧‍👦", "🇫🇷", "🇯🇵", "❤️", "✔️", "🚀", "🏳️‍🌈", "🧑🏿‍💻", "#️⃣", "🫠", "💯"]
SPECIALS_DS = ["<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>", "<think>",
               "</think>", "<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>", "<｜tool▁calls▁begin｜>", "<｜▁pad▁｜>"]
NEAR_SPECIALS = ["<｜User", "｜User｜>", "<|User|>", "<｜Use", "<<｜User｜>", "<｜User｜>>", "<|endoftext|>",
                 "<|endoftext", "<think", "</think", "<｜end▁of▁sentence"]
WORDS = ["minimize", "maximize", "subject", "to", "profit", "cost", "x_1", "y[2,3]", "The", "factory", "produces",
         "units", "hours", "can't", "I'm", "we'll", "O'Brien", "CamelCase", "snake_case", "gp.quicksum", "m.addVars(",
         "==", "<=", ">=", "->", "...", "—", "«", "»", "café", "naïve", "運籌學", "線形計画", "선형", "линейное",
         "βέλτιστο", "البرمجة", "תכנות", "प्रोग्राम", "การโปรแกรม"]


def random_char(rng):
    lo, hi = rng.choice(POOLS)
    for _ in range(100):
        ch = chr(rng.randint(lo, hi))
        if unicodedata.category(ch) not in ("Cn", "Cs", "Co"):
            return ch
    return "?"


def generated_texts(n, seed, corpus):
    """n deterministic texts, each a random mix of pieces of the kinds above (and lines of the OR corpus)."""
    rng = random.Random(seed)
    kinds = [
        (random_char, 30), (lambda r: r.choice(EDGE), 6), (lambda r: r.choice(DIGITS), 10),
        (lambda r: r.choice(SPACES), 12), (lambda r: r.choice(EMOJI), 6), (lambda r: r.choice(SPECIALS_DS), 4),
        (lambda r: r.choice(NEAR_SPECIALS), 3), (lambda r: r.choice(WORDS) + r.choice([" ", "", "\n"]), 20),
        (lambda r: (lambda t: t[r.randrange(max(1, len(t) - 80)):][: r.randint(1, 120)])(r.choice(corpus)), 9),
    ]
    pick = [k for k, w in kinds for _ in range(w)]
    texts = []
    for _ in range(n):
        pieces = [rng.choice(pick)(rng) for _ in range(rng.randint(1, 40))]
        texts.append("".join(pieces))
    return texts


def write_atomic(path, content):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(content)
    os.replace(tmp, path)


def write_expected(tok, texts, out, name):
    encodings = tok.encode_batch(texts, add_special_tokens=False)
    lines = []
    for text, enc in zip(texts, encodings):
        decoded = tok.decode(enc.ids, skip_special_tokens=False)
        lines.append(json.dumps({"text": text, "ids": enc.ids, "decoded": decoded}, ensure_ascii=False))
    write_atomic(os.path.join(out, f"{name}.expected.jsonl"), "\n".join(lines) + "\n")
    print(f"{name}: {len(texts)} texts")


def train_hf_bpe(corpus, vocab_size):
    """A byte-level BPE (GPT-2's pre-tokenizer regex) trained by HF's trainer, with two added special tokens."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<|endoftext|>", "<|pad|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(corpus, trainer=trainer)
    return tok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", required=True)
    ap.add_argument("--tokenizers", required=True, help="folder of the real tokenizer.json files")
    ap.add_argument("--ours", required=True, help="tokenizer.json written by trex tokenizer train")
    ap.add_argument("--corpus", required=True, help="JSONL {text} corpus (the one ours was trained on)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--generated", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=20261201)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    corpus = read_texts(a.corpus)
    texts = read_texts(a.samples) + generated_texts(a.generated, a.seed, corpus)
    for name in ("deepseek_v3", "gpt2"):
        path = os.path.join(a.tokenizers, f"{name}.tokenizer.json")
        if not os.path.isfile(path):
            sys.exit(f"{path}: missing (the real tokenizer files live in ../shared/tokenizers; set TREX_TOKENIZERS)")
        write_expected(Tokenizer.from_file(path), texts, a.out, name)
    write_expected(Tokenizer.from_file(a.ours), texts, a.out, "ours")
    hf = train_hf_bpe(corpus, 3000)
    tmp = os.path.join(a.out, "hf_trained.tokenizer.json.tmp")
    hf.save(tmp)
    os.replace(tmp, os.path.join(a.out, "hf_trained.tokenizer.json"))
    write_expected(hf, texts, a.out, "hf_trained")


if __name__ == "__main__":
    main()
