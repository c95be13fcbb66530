"""PyTorch twin of trex's DeepSeek-V4 model (DEEPSEEK_V4.md §2-§8, decisions §16), written for clarity.

Autograd provides the backward; the C++ model's hand-written backward is compared with it through the committed
fixture (gen_fixture.py). Parameters use the official checkpoint names of §11. Runs with Debian's torch 1.13.
"""
import math

import torch
import torch.nn.functional as F


# ----------------------------------------------------------------------------- configuration helpers
def kind(cfg, layer):
    r = cfg["compress_ratios"][layer]
    return "SWA" if r == 0 else ("CSA" if r == 4 else "HCA")


def rope_omega(cfg, yarn_setting):
    r = cfg["qk_rope_head_dim"]
    base = cfg["compress_rope_theta"] if yarn_setting else cfg["rope_theta"]
    i = torch.arange(0, r // 2, dtype=torch.float64)
    w = base ** (-2.0 * i / r)
    rs = cfg.get("rope_scaling")
    if yarn_setting and rs:
        s, L0 = rs["factor"], rs["original_max_position_embeddings"]

        def corr(beta):
            return r * math.log(L0 / (2 * math.pi * beta)) / (2 * math.log(base))

        lo = max(0.0, math.floor(corr(rs["beta_fast"])))
        hi = min(float(r - 1), math.ceil(corr(rs["beta_slow"])))
        if lo == hi:
            hi += 0.001
        g = ((i - lo) / (hi - lo)).clamp(0, 1)
        w = w * (1 - g) + (w / s) * g
    return w


def rope(x, pos, omega, inverse=False):
    """x [..., r] interleaved pairs; pos broadcastable to x[..., 0]; angles in float64, cos/sin cast to x's dtype."""
    ang = pos.to(torch.float64)[..., None] * omega
    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
    if inverse:
        sin = -sin
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * cos - b * sin, a * sin + b * cos], -1).flatten(-2)


def rope_tail(x, pos, omega, r, inverse=False):
    return torch.cat([x[..., :-r], rope(x[..., -r:], pos, omega, inverse)], -1)


def rmsnorm(x, w, eps):
    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return y * w if w is not None else y


def stable_topk_rank(scores):
    """rank[i, s] = position of s in the (score desc, index asc) order (§16.4)."""
    order = torch.sort(scores, dim=-1, descending=True, stable=True).indices
    rank = torch.empty_like(order)
    rank.scatter_(-1, order, torch.arange(scores.shape[-1]).expand_as(order).contiguous())
    return rank


# ----------------------------------------------------------------------------- parameters
def param_shapes(cfg):
    d, V, n = cfg["hidden_size"], cfg["vocab_size"], cfg["hc_mult"]
    H, c, qr = cfg["num_attention_heads"], cfg["head_dim"], cfg["q_lora_rank"]
    G, ro = cfg["o_groups"], cfg["o_lora_rank"]
    E, f, k = cfg["n_routed_experts"], cfg["moe_intermediate_size"], cfg["num_experts_per_tok"]
    HI, cI = cfg["index_n_heads"], cfg["index_head_dim"]
    L = cfg["num_hidden_layers"]
    shapes = {"embed.weight": [V, d], "head.weight": [V, d], "norm.weight": [d],
              "hc_head_fn": [n, n * d], "hc_head_base": [n], "hc_head_scale": [1]}

    def block(p, layer):
        s = {p + "attn_norm.weight": [d], p + "ffn_norm.weight": [d]}
        for w in ("attn", "ffn"):
            s[p + f"hc_{w}_fn"] = [(2 + n) * n, n * d]
            s[p + f"hc_{w}_base"] = [(2 + n) * n]
            s[p + f"hc_{w}_scale"] = [3]
        a = p + "attn."
        s.update({a + "wq_a.weight": [qr, d], a + "q_norm.weight": [qr], a + "wq_b.weight": [H * c, qr],
                  a + "wkv.weight": [c, d], a + "kv_norm.weight": [c], a + "wo_a.weight": [G * ro, H * c // G],
                  a + "wo_b.weight": [d, G * ro], a + "attn_sink": [H]})
        m = cfg["compress_ratios"][layer]
        if m:
            kap = 2 if m == 4 else 1
            cp = a + "compressor."
            s.update({cp + "wkv.weight": [kap * c, d], cp + "wgate.weight": [kap * c, d], cp + "ape": [m, kap * c],
                      cp + "norm.weight": [c]})
        if m == 4:
            ip = a + "indexer."
            s.update({ip + "wq_b.weight": [HI * cI, qr], ip + "weights_proj.weight": [HI, d],
                      ip + "compressor.wkv.weight": [2 * cI, d], ip + "compressor.wgate.weight": [2 * cI, d],
                      ip + "compressor.ape": [4, 2 * cI], ip + "compressor.norm.weight": [cI]})
        fp = p + "ffn."
        s[fp + "gate.weight"] = [E, d]
        if not (layer < cfg["num_hash_layers"] and layer < L):
            s[fp + "gate.bias"] = [E]
        for e in range(E):
            s.update({fp + f"experts.{e}.w1.weight": [f, d], fp + f"experts.{e}.w3.weight": [f, d],
                      fp + f"experts.{e}.w2.weight": [d, f]})
        fs = f * cfg.get("n_shared_experts", 1)
        if fs:
            s.update({fp + "shared_experts.w1.weight": [fs, d], fp + "shared_experts.w3.weight": [fs, d],
                      fp + "shared_experts.w2.weight": [d, fs]})
        return s

    for l in range(L):
        shapes.update(block(f"layers.{l}.", l))
    for i in range(cfg.get("num_nextn_predict_layers", 0)):
        p = f"mtp.{i}."
        shapes.update({p + "e_proj.weight": [d, d], p + "h_proj.weight": [d, d], p + "enorm.weight": [d],
                       p + "hnorm.weight": [d], p + "norm.weight": [d], p + "hc_head_fn": [n, n * d],
                       p + "hc_head_base": [n], p + "hc_head_scale": [1]})
        shapes.update(block(p, L + i))
    return shapes


def random_params(cfg, gen, dtype=torch.float32):
    """Fixture init: every tensor random (norm weights around 1, gates and biases non-zero) so that every
    gradient path is exercised."""
    P = {}
    for name, shape in param_shapes(cfg).items():
        if name.endswith("norm.weight"):
            t = 1.0 + 0.1 * torch.randn(shape, generator=gen, dtype=torch.float64)
        elif name.endswith("_scale"):
            t = 0.5 + 0.2 * torch.randn(shape, generator=gen, dtype=torch.float64)
        elif name.endswith("_base") or name.endswith("gate.bias") or name.endswith("ape"):
            t = 0.3 * torch.randn(shape, generator=gen, dtype=torch.float64)
        elif name.endswith("attn_sink"):
            t = 0.5 * torch.randn(shape, generator=gen, dtype=torch.float64)
        elif name.endswith("_fn"):
            t = 0.1 * torch.randn(shape, generator=gen, dtype=torch.float64)
        else:
            t = torch.randn(shape, generator=gen, dtype=torch.float64) / math.sqrt(shape[-1])
        P[name] = t.to(dtype)
    return P


def hash_tables(cfg, gen):
    """Fixed balanced token->expert tables with distinct experts per token (§16.12)."""
    V, E, k = cfg["vocab_size"], cfg["n_routed_experts"], cfg["num_experts_per_tok"]
    tabs = {}
    for l in range(min(cfg["num_hash_layers"], cfg["num_hidden_layers"])):
        rows = []
        for v in range(V):
            rows.append(torch.randperm(E, generator=gen)[:k])
        tabs[f"layers.{l}.ffn.gate.tid2eid"] = torch.stack(rows).to(torch.int64)
    return tabs


# ----------------------------------------------------------------------------- sub-blocks
def segments(doc_row):
    """[(start, length)] of the runs of equal document id in one row."""
    segs, s0 = [], 0
    T = doc_row.shape[0]
    for t in range(1, T + 1):
        if t == T or doc_row[t] != doc_row[s0]:
            segs.append((s0, t - s0))
            s0 = t
    return segs


def positions(doc_row):
    pos = torch.zeros(doc_row.shape[0], dtype=torch.long)
    for s0, ln in segments(doc_row):
        pos[s0:s0 + ln] = torch.arange(ln)
    return pos


def hc_mix(X, fn, eps):
    xf = X.flatten(-2)
    return (xf @ fn.t()) * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)


def hc_pre(P, p, X, cfg):
    n, eps, heps = cfg["hc_mult"], cfg["rms_norm_eps"], cfg["hc_eps"]
    mix = hc_mix(X, P[p + "_fn"], eps)
    base, scale = P[p + "_base"], P[p + "_scale"]
    pre = torch.sigmoid(scale[0] * mix[..., :n] + base[:n]) + heps
    post = 2 * torch.sigmoid(scale[1] * mix[..., n:2 * n] + base[n:2 * n])
    A = (scale[2] * mix[..., 2 * n:] + base[2 * n:]).unflatten(-1, (n, n))
    M = torch.softmax(A, -1) + heps
    M = M / (M.sum(-2, keepdim=True) + heps)
    for _ in range(cfg["hc_sinkhorn_iters"] - 1):
        M = M / (M.sum(-1, keepdim=True) + heps)
        M = M / (M.sum(-2, keepdim=True) + heps)
    y = (pre[..., None] * X).sum(-2)
    return y, post, M


def hc_post(Fx, X, post, M):
    # X'_k = post_k F + sum_j M_jk X_j  (transpose convention, §6)
    return torch.einsum("...jk,...jd->...kd", M, X) + post[..., None] * Fx[..., None, :]


def hc_head(P, p, X, cfg):
    mix = hc_mix(X, P[p + "hc_head_fn"], cfg["rms_norm_eps"])
    pre = torch.sigmoid(P[p + "hc_head_scale"][0] * mix + P[p + "hc_head_base"]) + cfg["hc_eps"]
    return (pre[..., None] * X).sum(-2)


def compress(P, p, x, m, cdim, omega, r, eps):
    """Token-level compressor over one document x [ln, d] (§4): entries [ln // m, cdim] after norm and RoPE."""
    ln = x.shape[0]
    nb = ln // m
    if nb == 0:
        return x.new_zeros(0, cdim)
    C = x[:nb * m] @ P[p + "wkv.weight"].t()
    Z = x[:nb * m] @ P[p + "wgate.weight"].t() + P[p + "ape"].repeat(nb, 1)
    C, Z = C.view(nb, m, -1), Z.view(nb, m, -1)
    if m == 4:  # overlapping: slots 0..m-1 from the previous block's first channel half
        Cp = torch.cat([C.new_zeros(1, m, cdim), C[:-1, :, :cdim]], 0)
        Zp = torch.cat([Z.new_full((1, m, cdim), float("-inf")), Z[:-1, :, :cdim]], 0)
        C = torch.cat([Cp, C[:, :, cdim:]], 1)
        Z = torch.cat([Zp, Z[:, :, cdim:]], 1)
    S = torch.softmax(Z, dim=1)
    out = (S * C).sum(1)
    out = rmsnorm(out, P[p + "norm.weight"], eps)
    return rope_tail(out, torch.arange(nb) * m, omega, r)


def attention(P, p, x, doc_row, layer, cfg, stats):
    """One row x [T, d] (after attn_norm). Returns [T, d]; adds the indexer KL sum to stats['indexer']."""
    T = x.shape[0]
    H, c, r = cfg["num_attention_heads"], cfg["head_dim"], cfg["qk_rope_head_dim"]
    eps, win = cfg["rms_norm_eps"], cfg["sliding_window"]
    m = cfg["compress_ratios"][layer]
    k_ = kind(cfg, layer)
    omega = rope_omega(cfg, m != 0)
    pos = positions(doc_row)
    a = p + "attn."
    cq = rmsnorm(x @ P[a + "wq_a.weight"].t(), P[a + "q_norm.weight"], eps)
    q = (cq @ P[a + "wq_b.weight"].t()).view(T, H, c)
    q = rmsnorm(q, None, eps)
    q = rope_tail(q, pos[:, None], omega, r)
    kv = rmsnorm(x @ P[a + "wkv.weight"].t(), P[a + "kv_norm.weight"], eps)
    kv = rope_tail(kv, pos, omega, r)

    segs = segments(doc_row)
    same_doc = doc_row[:, None] == doc_row[None, :]
    rel = torch.arange(T)[:, None] - torch.arange(T)[None, :]
    mask_w = same_doc & (rel >= 0) & (rel < win)
    keys, mask = kv, mask_w
    if m:
        ents, ent_doc, ent_idx = [], [], []
        for s0, ln in segs:
            e = compress(P, a + "compressor.", x[s0:s0 + ln], m, c, omega, r, eps)
            ents.append(e)
            ent_doc += [int(doc_row[s0])] * e.shape[0]
            ent_idx += list(range(e.shape[0]))
        Ce = torch.cat(ents, 0)
        ent_doc, ent_idx = torch.tensor(ent_doc, dtype=doc_row.dtype), torch.tensor(ent_idx)
        nvis = torch.div(pos + 1, m, rounding_mode="floor")
        vis = (doc_row[:, None] == ent_doc[None, :]) & (ent_idx[None, :] < nvis[:, None])  # [T, NE]
        if k_ == "CSA":
            HI, cI = cfg["index_n_heads"], cfg["index_head_dim"]
            ip = a + "indexer."
            xd, cqd = x.detach(), cq.detach()
            Ki = torch.cat([compress(P, ip + "compressor.", xd[s0:s0 + ln], 4, cI, omega, r, eps) for s0, ln in segs], 0)
            qI = rope_tail((cqd @ P[ip + "wq_b.weight"].t()).view(T, HI, cI), pos[:, None], omega, r)
            lam = (xd @ P[ip + "weights_proj.weight"].t()) * (cI ** -0.5) * (HI ** -0.5)
            I = (lam[:, :, None] * torch.relu(torch.einsum("thc,sc->ths", qI, Ki))).sum(1)  # [T, NE]
            Im = I.masked_fill(~vis, float("-inf"))
            kt = torch.clamp(nvis, max=cfg["index_topk"])
            sel = (stable_topk_rank(Im) < kt[:, None]) & vis
            stats.setdefault("selected", []).append(sel)
            if cfg.get("indexer_dense_warmup", False):
                # dense warm-up (V3.2): KL over every visible entry, and the main attention uses them all
                sel = vis
            # indexer KL loss (§16.5): target from detached main q and compressed entries; masked scores get
            # their own dtype's lowest value (bf16 under autocast, where float32's would overflow)
            lt = torch.einsum("thc,sc->ths", q.detach(), Ce.detach()) / math.sqrt(c)
            Pt = torch.softmax(lt.masked_fill(~vis[:, None, :], torch.finfo(lt.dtype).min), -1).sum(1) * vis
            ps = Pt * sel
            has = sel.any(-1)
            ps = ps / ps.sum(-1, keepdim=True).clamp_min(1e-30)
            logpi = torch.log_softmax(I.masked_fill(~sel, torch.finfo(I.dtype).min), -1)
            pi = logpi.exp()
            e10 = 1e-10
            kl = ((ps + e10) * (torch.log(ps + e10) - torch.log(pi + e10))) * sel
            stats["indexer"] = stats.get("indexer", 0.0) + (kl.sum(-1) * has).sum()
            mask_c = sel
        else:
            mask_c = vis
        keys = torch.cat([kv, Ce], 0)
        mask = torch.cat([mask_w, mask_c], 1)
    s = torch.einsum("thc,ec->hte", q, keys) / math.sqrt(c)
    s = s.masked_fill(~mask[None], float("-inf"))
    sink = P[a + "attn_sink"].view(H, 1, 1).expand(H, T, 1)
    pr = torch.softmax(torch.cat([s, sink], -1), -1)[..., :-1]
    o = torch.einsum("hte,ec->thc", pr, keys)
    o = rope_tail(o, pos[:, None], omega, r, inverse=True)  # output de-rotation
    G, ro = cfg["o_groups"], cfg["o_lora_rank"]
    og = o.reshape(T, G, H * c // G)
    wa = P[a + "wo_a.weight"].view(G, ro, H * c // G)
    u = torch.einsum("tgi,gri->tgr", og, wa).reshape(T, G * ro)
    return u @ P[a + "wo_b.weight"].t()


def swiglu(x, w1, w3, w2, limit, weight=None):
    g, u = x @ w1.t(), x @ w3.t()
    if limit:
        g = torch.clamp(g, max=limit)
        u = torch.clamp(u, -limit, limit)
    h = F.silu(g) * u
    if weight is not None:
        h = h * weight[:, None]
    return h @ w2.t()


def moe(P, p, x, tok, layer, cfg, stats):
    """x [B, T, d]. Adds the sequence-balance loss (non-hash layers) and the per-expert load to stats."""
    B, T, d = x.shape
    E, k, R = cfg["n_routed_experts"], cfg["num_experts_per_tok"], cfg["routed_scaling_factor"]
    limit = cfg["swiglu_limit"]
    f = p + "ffn."
    s = x @ P[f + "gate.weight"].t()
    a = torch.sqrt(F.softplus(s))
    is_hash = layer < cfg["num_hash_layers"] and layer < cfg["num_hidden_layers"]
    if is_hash:
        I = P[f + "gate.tid2eid"][tok]
    else:
        I = torch.sort((a + P[f + "gate.bias"]).detach(), dim=-1, descending=True, stable=True).indices[..., :k]
    aI = a.gather(-1, I)
    w = R * aI / aI.sum(-1, keepdim=True)
    xf, If, wf = x.reshape(-1, d), I.reshape(-1, k), w.reshape(-1, k)
    y = torch.zeros_like(xf)
    load = []
    for e in range(E):
        tok_idx, slot = (If == e).nonzero(as_tuple=True)
        load.append(int(tok_idx.numel()))
        if tok_idx.numel() == 0:
            continue
        ep = f + f"experts.{e}."
        out = swiglu(xf[tok_idx], P[ep + "w1.weight"], P[ep + "w3.weight"], P[ep + "w2.weight"], limit,
                     wf[tok_idx, slot])
        y = y.index_add(0, tok_idx, out.to(y.dtype))  # (a no-op but under bf16 autocast)
    if f + "shared_experts.w1.weight" in P:
        sp = f + "shared_experts."
        y = y + swiglu(xf, P[sp + "w1.weight"], P[sp + "w3.weight"], P[sp + "w2.weight"],
                       limit if cfg.get("clamp_shared_expert", False) else 0)
    stats.setdefault("load", {})[p] = load
    if not is_hash:
        counts = F.one_hot(I, E).sum(-2).sum(1).to(x.dtype)  # [B, E]
        fi = counts * E / (k * T)
        Pi = (a / a.sum(-1, keepdim=True)).mean(1)
        stats["balance"] = stats.get("balance", 0.0) + cfg["seq_balance_alpha"] * (fi * Pi).sum(-1).mean()
    return y.view(B, T, d)


def block(P, p, layer, X, tok, doc, cfg, stats):
    eps = cfg["rms_norm_eps"]
    B = X.shape[0]
    y, post, M = hc_pre(P, p + "hc_attn", X, cfg)
    xa = rmsnorm(y, P[p + "attn_norm.weight"], eps)
    att_stats = {}
    out = torch.stack([attention(P, p, xa[b], doc[b], layer, cfg, att_stats) for b in range(B)])
    T = X.shape[1]
    if "indexer" in att_stats:
        stats["indexer"] = stats.get("indexer", 0.0) + att_stats["indexer"] / (B * T)
    stats.setdefault("selected", []).extend(att_stats.get("selected", []))
    X = hc_post(out, X, post, M)
    y, post, M = hc_pre(P, p + "hc_ffn", X, cfg)
    out = moe(P, p, rmsnorm(y, P[p + "ffn_norm.weight"], eps), tok, layer, cfg, stats)
    return hc_post(out, X, post, M)


def targets(tok, doc, mask, shift):
    """target[b, t] = tok[b, t+shift] when that token is a marked target in the same document, else -1."""
    B, T = tok.shape
    tgt = torch.full((B, T), -1, dtype=torch.long)
    ok = mask[:, shift:].bool() & (doc[:, shift:] == doc[:, :T - shift])
    tgt[:, :T - shift] = torch.where(ok, tok[:, shift:], torch.full_like(tok[:, shift:], -1))
    return tgt


def xent(logits, tgt):
    valid = tgt >= 0
    n = int(valid.sum())
    if n == 0:
        return logits.sum() * 0.0
    return F.cross_entropy(logits[valid], tgt[valid], reduction="sum") / n


def forward(P, cfg, tok, doc, mask):
    """Returns (logits [B,T,V], mtp_logits [B,T-1,V] or None, losses dict, stats)."""
    L, eps, n = cfg["num_hidden_layers"], cfg["rms_norm_eps"], cfg["hc_mult"]
    stats = {}
    B, T = tok.shape
    X = P["embed.weight"][tok][:, :, None, :].expand(B, T, n, -1)
    for l in range(L):
        X = block(P, f"layers.{l}.", l, X, tok, doc, cfg, stats)
    h = hc_head(P, "", X, cfg)
    logits = rmsnorm(h, P["norm.weight"], eps) @ P["head.weight"].t()
    losses = {"ce": xent(logits.reshape(B * T, -1), targets(tok, doc, mask, 1).reshape(-1))}
    mtp_logits = None
    n_mtp = cfg.get("num_nextn_predict_layers", 0)
    mtp_total = 0.0
    Xprev, tprev = X, T
    for i in range(n_mtp):
        p = f"mtp.{i}."
        Tm = tprev - 1
        e = P["embed.weight"][tok[:, i + 1:i + 1 + Tm]]
        Xm = (rmsnorm(Xprev[:, :Tm], P[p + "hnorm.weight"], eps) @ P[p + "h_proj.weight"].t()
              + (rmsnorm(e, P[p + "enorm.weight"], eps) @ P[p + "e_proj.weight"].t())[:, :, None, :])
        Xm = block(P, p, L + i, Xm, None, doc[:, :Tm], cfg, stats)
        hm = hc_head(P, p, Xm, cfg)
        ml = rmsnorm(hm, P[p + "norm.weight"], eps) @ P["head.weight"].t()
        tg = targets(tok, doc, mask, i + 2)[:, :Tm]
        mtp_total = mtp_total + xent(ml.reshape(B * Tm, -1), tg.reshape(-1))
        if i == 0:
            mtp_logits = ml
        Xprev, tprev = Xm, Tm
    zero = logits.sum() * 0.0
    losses["mtp"] = (mtp_total / n_mtp) if n_mtp else zero
    losses["balance"] = stats.get("balance", zero)
    losses["indexer"] = stats.get("indexer", zero) * cfg.get("indexer_loss_coeff", 1.0)
    losses["total"] = (losses["ce"] + cfg.get("mtp_loss_weight", 0.3) * losses["mtp"] + losses["balance"]
                       + losses["indexer"])
    return logits, mtp_logits, losses, stats
