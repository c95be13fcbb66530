#!/usr/bin/env python3
"""Writes samples.jsonl: the varied texts whose token ids are compared with the reference encoder
(OR problems, code, numbers, CJK, emoji, whitespace runs, special tokens, random Unicode).
Deterministic (fixed seed); rerun only to change the fixture. Random characters are drawn from code
points assigned in Python's Unicode database (14.0, the version PCRE2 10.42 knows)."""
import json
import random
import unicodedata

S = []
S += [
    "Hello world 12345",
    "A factory produces two products, A and B. Each unit of A yields a profit of $40 and each unit of B "
    "yields $30. Product A needs 2 hours of machining and B needs 1 hour; 100 hours are available. "
    "Maximize profit.",
    "Minimize  3x_1 + 5x_2\nsubject to\n  x_1 + x_2 >= 10\n  2x_1 - x_2 <= 4\n  x_1, x_2 >= 0, x_2 integer\nEnd\n",
    "\\ Problem name: knapsack\nMaximize\n obj: 10 x1 + 13 x2 + 7 x3\nSubject To\n c1: 4 x1 + 6 x2 + 3 x3 <= 12\n"
    "Binary\n x1 x2 x3\nEnd",
    "import gurobipy as gp\nfrom gurobipy import GRB\n\nm = gp.Model('diet')\nx = m.addVars(foods, lb=0.0, "
    "name='x')\nm.setObjective(gp.quicksum(cost[f] * x[f] for f in foods), GRB.MINIMIZE)\nm.optimize()\n"
    "if m.status == GRB.OPTIMAL:\n    print(f\"obj = {m.objVal:.6f}\")\n",
    "def f(x):\n\treturn x**2  # square\n\n\n\nclass A:\n    pass\n",
    "for (int i = 0; i < n; ++i) { sum += a[i] * b[i]; }  // dot product\r\n",
    "{\"vars\": [1, 2, 3], \"rhs\": -4.5e-3, \"ok\": true, \"name\": \"c_12\"}",
    "| Item | Weight (kg) | Value ($) |\n|------|-------------|-----------|\n| A    | 12.5        | 1,200     |\n| B    | 7           | 950       |\n",
    "Numbers: 0 7 42 123 1234 12345 123456 1234567 3.14159265 -0.001 1e-6 2E+10 1,000,000 10^9 ½ ¾ ² ³ ٣ ४ 〇 Ⅻ",
    "Dates 2024-01-31T23:59:59Z, phone +1 (555) 010-9999, version v1.2.3-rc.4",
    "运筹学是一门应用数学学科，研究如何在有限资源下做出最优决策。目标函数：最大化利润 z = 3x + 2y。",
    "線形計画法（せんけいけいかくほう）は、最適化問題の一つです。カタカナとひらがなと漢字。",
    "선형 계획법은 최적화 문제입니다. 한국어 텍스트 123개.",
    "Mixed 中文English混合123测试abc。日本語テキストとEnglish。",
    "Emoji: 🙂😀👍🏽 👨‍👩‍👧‍👦 🇫🇷🇯🇵 ❤️ ✔️ 🚀🚀🚀 ∑∏∫ ≤ ≥ ≠ → ⇒ ∀x∈ℝ",
    "   leading spaces and trailing spaces   ",
    "tabs\t\tand\t\t\tmore\ttabs",
    "line1\nline2\n\nline4\n\n\n\nline8\r\nwindows\r\n\r\n",
    "wide\u3000space nbsp\u00a0here zwsp\u200bthere bom\ufeffin nel\u0085x thin\u2009space  \u2003em",
    "          ",
    "\n",
    " ",
    "",
    "<｜User｜>What is 2+2?<｜Assistant｜></think>4<｜end▁of▁sentence｜>",
    "<｜begin▁of▁sentence｜>You are a helpful assistant.<｜User｜>Solve the LP.<｜Assistant｜><think>Let me "
    "think.</think>The optimum is 42.<｜end▁of▁sentence｜>",
    "text with <｜fim▁begin｜>fim<｜fim▁hole｜>tokens<｜fim▁end｜> and <｜tool▁calls▁begin｜>",
    "near-specials: <｜User｜ <|User|> <｜Use <｜▁pad▁｜><｜▁pad▁｜>",
    "Contractions: I'm, you're, he's, we've, they'll, I'd, don't, CAN'T, It'S",
    "Punctuation!!! ??? ... ,,, ;;; --- ___ *** ### @@@ $$$ %%% ^^^ &&& ((( ))) [[[ ]]] {{{ }}} <<< >>> ~~~ ```",
    "URL https://example.com/path?q=linear+programming&x=1#frag and e-mail someone@example.org",
    "LaTeX: $\\min_{x \\in \\mathbb{R}^n} c^\\top x \\quad \\text{s.t.} \\; Ax \\le b, \\; x \\ge 0$",
    "Русский текст: задача линейного программирования. Ελληνικά: βελτιστοποίηση.",
    "العربية: البرمجة الخطية. עברית: תכנות לינארי.",
    "हिन्दी: रैखिक प्रोग्रामिंग। ภาษาไทย: การโปรแกรมเชิงเส้น",
    "Accents NFC: café naïve résumé; NFD: cafe\u0301 nai\u0308ve",
    "Zalgo: Z\u0351\u036b\u0343a\u0352\u0310l\u0300g\u0306o\u0363",
    "a" * 300,
    "ab" * 200 + " " + "x1" * 150,
    " " * 100 + "\n" * 50 + "\t" * 30,
    "supercalifragilisticexpialidocious antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis",
    "CamelCaseIdentifiers snake_case_names kebab-case-names SCREAMING_CASE x1y2z3 a_1_b_2",
    "'quoted' \"double\" `back` «guillemets» „German“ 「括弧」 『二重』 【墨付き】",
    ".hidden ./path ../up /abs/path C:\\Windows\\System32 ~/home",
    "0x1F 0b1010 0o17 1_000_000 3.0f 2.5e-10L",
    "Σ_{i=1}^{n} x_i ≤ C,  ∀ j ∈ J:  Σ_i a_ij x_i ≥ b_j",
]
rng = random.Random(20241129)
pools = [
    (0x20, 0x7E), (0xA0, 0x24F), (0x370, 0x3FF), (0x400, 0x4FF), (0x590, 0x6FF), (0x900, 0x97F),
    (0xE00, 0xE7F), (0x1100, 0x11FF), (0x2000, 0x206F), (0x2190, 0x23FF), (0x3000, 0x30FF),
    (0x4E00, 0x9FFF), (0xAC00, 0xD7A3), (0xFE00, 0xFFFD), (0x1F300, 0x1FAFF), (0x20000, 0x2A6DF),
]
specials_for_random = ["\n", "\r\n", " ", "  ", "\t", "123", "4567", "<｜User｜>"]
for _ in range(60):
    out = []
    for _ in range(rng.randint(5, 60)):
        if rng.random() < 0.15:
            out.append(rng.choice(specials_for_random))
            continue
        lo, hi = rng.choice(pools)
        while True:
            cp = rng.randint(lo, hi)
            ch = chr(cp)
            cat = unicodedata.category(ch)
            if cat not in ("Cn", "Cs", "Co") and not (0xD800 <= cp < 0xE000):
                break
        out.append(ch)
    S.append("".join(out))
with open("samples.jsonl", "w", encoding="utf-8") as f:
    for s in S:
        f.write(json.dumps({"text": s}, ensure_ascii=False) + "\n")
print(len(S), "samples")
