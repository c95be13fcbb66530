// The lightning-indexer op check (indexer_cases.hpp): cuda::indexer_* (+ cuda::topk_rows) against
// nn::indexer_scores_ref / indexer_kl_ref and nn::topk_lower_index.
#include "indexer_cases.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>

#include "cuda/indexer.hpp"
#include "cuda/ops.hpp"
#include "nn/indexer.hpp"
#include "nn/ops.hpp"

namespace trex::cuda::check {

namespace {
constexpr double kU = 1.0 / 16777216.0;  // 2^-24, fp32 unit roundoff
constexpr double kEps = double(1e-10f);  // the KL's eps

Compare bitwise(const std::string& what, const void* a, const void* b, size_t n, size_t elem) {
  Compare c;
  c.what = what + " again (bitwise)";
  c.n = int64_t(n);
  for (size_t i = 0; i < n; ++i)
    if (std::memcmp(static_cast<const char*>(a) + i * elem, static_cast<const char*>(b) + i * elem, elem) != 0) ++c.bad;
  return c;
}

Compare equal_ints(const std::string& what, const std::vector<int32_t>& gpu, const std::vector<int32_t>& ref) {
  Compare c;
  c.what = what;
  c.n = int64_t(ref.size());
  if (gpu.size() != ref.size()) c.bad = c.n + 1;
  for (size_t i = 0; i < std::min(gpu.size(), ref.size()); ++i)
    if (gpu[i] != ref[i]) {
      if (c.bad == 0) c.worst = int64_t(i);
      ++c.bad;
    }
  return c;
}

double dot_d(const float* a, const float* b, int64_t n) {
  double s = 0;
  for (int64_t t = 0; t < n; ++t) s += double(a[t]) * double(b[t]);
  return s;
}
double dot_abs(const float* a, const float* b, int64_t n) {
  double s = 0;
  for (int64_t t = 0; t < n; ++t) s += std::fabs(double(a[t]) * double(b[t]));
  return s;
}
}  // namespace

nn::Indexer IndexerBatch::host(int64_t queries) const {
  nn::Indexer x;
  x.N = queries, x.HI = HI, x.cI = cI, x.NE = NE, x.smax = smax;
  x.nvis = nvis.data(), x.base = base.data(), x.qI = qI.data(), x.lam = lam.data(), x.K = K.data();
  return x;
}


// The entry grid of ratio 4 restarting per document (model::detail::Seq::build): a token at document position p sees
// floor((p + 1) / 4) entries, its document's first at base.
IndexerBatch make_indexer_batch(const std::vector<int64_t>& doc_lens, int64_t HI, int64_t cI, int64_t H, int64_t hd,
                 IndexerInputs inputs) {
  Rng rng(900 + uint64_t(HI * 3 + cI * 5 + H * 7 + hd * 11) + uint64_t(inputs) * 13 + uint64_t(doc_lens.size()));
  IndexerBatch b;
  b.HI = HI, b.cI = cI, b.H = H, b.hd = hd;
  std::vector<int64_t> doc_first;  // each document's first entry
  for (int64_t len : doc_lens) {
    doc_first.push_back(b.NE);
    for (int64_t t = 0; t < len; ++t) {
      b.base.push_back(int32_t(b.NE));
      b.nvis.push_back(int32_t((t + 1) / 4));
    }
    b.NE += len / 4;
  }
  b.N = int64_t(b.nvis.size());
  b.smax = std::max<int64_t>(1, *std::max_element(b.nvis.begin(), b.nvis.end()));
  b.qI = randn(rng, size_t(b.N * HI * cI), 1.0 / std::sqrt(double(cI)));
  b.lam = randn(rng, size_t(b.N * HI), 1.0);
  b.K = randn(rng, size_t(std::max<int64_t>(1, b.NE * cI)));
  b.q = randn(rng, size_t(b.N * H * hd), 1.5);  // main logits of spread ~1.5: Pt neither flat nor one-hot
  b.Ce = randn(rng, size_t(std::max<int64_t>(1, b.NE * hd)));
  if (inputs == IndexerInputs::dead_heads) {
    for (int64_t i = 0; i < b.N; ++i)
      for (int64_t hh = 1; hh < HI; hh += 2)
        std::fill_n(b.qI.begin() + (i * HI + hh) * cI, cI, 0.0f);
    for (size_t x = 0; x < b.lam.size(); x += 3) b.lam[x] = -std::fabs(b.lam[x]);
  } else if (inputs == IndexerInputs::ties) {
    for (size_t d = 0; d < doc_lens.size(); ++d)
      for (int64_t e = 1; e < doc_lens[d] / 4; e += 2)
        std::copy_n(b.K.begin() + (doc_first[d] + e - 1) * cI, cI, b.K.begin() + (doc_first[d] + e) * cI);
  }
  return b;
}

std::vector<Compare> compare_indexer(const IndexerBatch& b, const IndexerOutputs& o, int64_t ks, bool dense,
                                     double coeff, int64_t Nq) {
  std::vector<Compare> out;
  const int64_t N = b.N, NE = b.NE, smax = b.smax, HI = b.HI, cI = b.cI, H = b.H, hd = b.hd;
  const bool full = Nq == N;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float>& scores = o.scores;
  const std::vector<int32_t>& sel = o.sel;
  const std::vector<double>& row_loss = o.row_loss;
  const std::vector<float>&dqI = o.dqI, &dlam = o.dlam, &dK = o.dK;
  // Scores. The device's dot: 32 strided lane partials of <= ceil(cI / 32) terms, then a 5-level tree; the head
  // sum HI terms in order: |error| <= (cI + HI + 2) u Σ_h |lam_h| Σ_t |q_t k_t| (γ_n with n the longest chain, cI
  // covering the dot's); ×2.
  const nn::Indexer hx = b.host(Nq);
  std::vector<float> rscores(static_cast<size_t>(Nq * smax), nan);
  nn::indexer_scores_ref(hx, rscores.data());
  std::vector<float> got_s, ref_s;
  std::vector<double> bnd_s;
  std::vector<double> score_err(static_cast<size_t>(Nq * smax), 0.0);  // the bound per (query, entry), reused by the KL bounds
  for (int64_t i = 0; i < Nq; ++i)
    for (int64_t e = 0; e < b.nvis[size_t(i)]; ++e) {
      double mag = 0;
      for (int64_t hh = 0; hh < HI; ++hh)
        mag += std::fabs(double(b.lam[size_t(i * HI + hh)])) *
               dot_abs(b.qI.data() + (i * HI + hh) * cI, b.K.data() + (b.base[size_t(i)] + e) * cI, cI);
      const double bound = 2.0 * double(cI + HI + 2) * kU * mag + 1e-30;
      score_err[size_t(i * smax + e)] = bound;
      got_s.push_back(scores[size_t(i * smax + e)]);
      ref_s.push_back(rscores[size_t(i * smax + e)]);
      bnd_s.push_back(bound);
    }
  if (!got_s.empty()) out.push_back(compare_bound("scores (e < nvis)", got_s, ref_s, bnd_s));  // none: no entries

  // The selection: nn::topk_lower_index on the device's own scores, exactly (top-k) / every visible entry (dense).
  {
    std::vector<int32_t> want(static_cast<size_t>(N * ks), -1);
    for (int64_t i = 0; i < N; ++i) {
      const int64_t nv = b.nvis[size_t(i)], kt = std::min(ks, nv);
      int32_t* w = want.data() + i * ks;
      if (dense) {
        for (int64_t e = 0; e < nv; ++e) w[e] = int32_t(b.base[size_t(i)] + e);
      } else {
        nn::topk_lower_index(scores.data() + i * smax, nv, kt, w);
        for (int64_t j = 0; j < kt; ++j) w[j] += b.base[size_t(i)];
      }
    }
    out.push_back(equal_ints(dense ? "dense lists" : "top-k of the device scores",
                                    std::vector<int32_t>(sel.begin(), sel.begin() + long(N * ks)), want));
  }

  // The KL on the device's lists: the reference, and the bounds from its double intermediates.
  nn::IndexerKL hk;
  hk.H = H, hk.hd = hd, hk.q = b.q.data(), hk.Ce = b.Ce.data(), hk.sel = sel.data(), hk.kstride = ks, hk.coeff = coeff;
  std::vector<float> rdqI(static_cast<size_t>(Nq * HI * cI)), rdlam(static_cast<size_t>(Nq * HI)), rdK(static_cast<size_t>(std::max<int64_t>(1, NE * cI)));
  const double rloss = nn::indexer_kl_ref(hx, hk, rdqI.data(), rdlam.data(), rdK.data());
  // Bounds, per query i (kt slots, nv entries), u = 2^-24:
  //  p: each head's logit within (hd + 2) u A (A = max_e Σ|q||Ce| / sqrt(hd)), its softmax prob relatively within
  //     2 (hd + 2) u A + (nv + 4) u (the online max/sum, exp, the divide), Pt over H heads + H u, p = Pt / psum:
  //     relp = 2 (2 (hd + 2) u A + (nv + H + 8) u) + (kt + 2) u;
  //  pi: the scores within dI_e = score_err; softmax: relpi = 2 max_S dI + (kt + 8) u;
  //  dI_j = pi_j (gpi_j - Σ pi gpi), gpi = -coeff (p + eps) / (pi + eps): eD_j = (2 relpi + relp + (kt + 8) u) G_j,
  //     G_j = |pi_j| (|gpi_j| + Σ_k |pi_k gpi_k|);
  //  a ReLU flag may differ where |qk| <= 2 cI u Σ|q||k| (the dot's error): such a (j, h) term's whole size joins the
  //     bound;
  //  dlam_h = Σ_j [qk > 0] dI_j qk:           2 Σ_j (eD_j |qk| + |dI_j| cI u Σ|qk| + (kt + 2) u |dI_j qk|) (+ flags)
  //  dqI_ht = Σ_j [qk > 0] (dI_j lam_h) K_jt: 2 Σ_j (eD_j + (kt + 3) u |dI_j|) |lam_h K_jt|         (+ flags)
  //  dK_ct  = Σ_(i,j,h) [qk > 0] (dI lam_h) qI_ht over its n_c (query, head) terms:
  //                                           2 Σ (eD + (n_c + 3) u |dI|) |lam_h qI_ht|            (+ flags)
  //  loss: per slot (p + eps)(log(p + eps) - log(pi + eps)) within (p + eps)((relp + u)|log ratio| + relp + relpi)
  //     + u |term|, the query's double sum, then Σ_i on the host: 2 coeff Σ (that) + 1e-300.
  std::vector<double> bdqI(rdqI.size(), 0.0), bdlam(rdlam.size(), 0.0), bdK(rdK.size(), 0.0);
  std::vector<int64_t> nterms(static_cast<size_t>(std::max<int64_t>(1, NE)), 0);
  std::vector<double> eD_all(static_cast<size_t>(std::max<int64_t>(1, Nq * ks)), 0.0), dI_all(eD_all.size(), 0.0);
  double bloss = 0;
  const double scale = 1.0 / std::sqrt(double(hd));
  for (int64_t i = 0; i < Nq; ++i) {
    const int64_t nv = b.nvis[size_t(i)], base = b.base[size_t(i)], kt = std::min(ks, nv);
    if (kt == 0) continue;
    std::vector<double> Pt(static_cast<size_t>(nv), 0.0), lg(static_cast<size_t>(nv));
    double A = 0;
    for (int64_t hh = 0; hh < H; ++hh) {
      double mx = -1e300, sum = 0;
      for (int64_t e = 0; e < nv; ++e) {
        const float* qh = b.q.data() + (i * H + hh) * hd;
        const float* ce = b.Ce.data() + (base + e) * hd;
        lg[size_t(e)] = dot_d(qh, ce, hd) * scale;
        A = std::max(A, dot_abs(qh, ce, hd) * scale);
        mx = std::max(mx, lg[size_t(e)]);
      }
      for (int64_t e = 0; e < nv; ++e) sum += (lg[size_t(e)] = std::exp(lg[size_t(e)] - mx));
      for (int64_t e = 0; e < nv; ++e) Pt[size_t(e)] += lg[size_t(e)] / sum;
    }
    const int32_t* s = sel.data() + i * ks;
    std::vector<double> I(static_cast<size_t>(kt)), p(static_cast<size_t>(kt)), pi(static_cast<size_t>(kt)), gpi(static_cast<size_t>(kt));
    double psum = 0, mx = -1e300, zsum = 0, dmax = 0;
    for (int64_t j = 0; j < kt; ++j) {
      double acc = 0;
      for (int64_t hh = 0; hh < HI; ++hh)
        acc += double(b.lam[size_t(i * HI + hh)]) *
               std::max(dot_d(b.qI.data() + (i * HI + hh) * cI, b.K.data() + int64_t(s[j]) * cI, cI), 0.0);
      I[size_t(j)] = acc;
      psum += Pt[size_t(s[j] - base)];
      mx = std::max(mx, acc);
      dmax = std::max(dmax, score_err[size_t(i * smax + s[j] - base)]);
    }
    for (int64_t j = 0; j < kt; ++j) zsum += std::exp(I[size_t(j)] - mx);
    const double relp = 2.0 * (2.0 * double(hd + 2) * kU * A + double(nv + H + 8) * kU) + double(kt + 2) * kU;
    const double relpi = 2.0 * dmax + double(kt + 8) * kU;
    double spg = 0, dot_pg = 0;
    for (int64_t j = 0; j < kt; ++j) {
      p[size_t(j)] = Pt[size_t(s[j] - base)] / psum;
      pi[size_t(j)] = std::exp(I[size_t(j)] - mx) / zsum;
      gpi[size_t(j)] = -coeff * (p[size_t(j)] + kEps) / (pi[size_t(j)] + kEps);
      spg += std::fabs(pi[size_t(j)] * gpi[size_t(j)]);
      dot_pg += pi[size_t(j)] * gpi[size_t(j)];
      const double lr = std::log(p[size_t(j)] + kEps) - std::log(pi[size_t(j)] + kEps);
      bloss += (p[size_t(j)] + kEps) * ((relp + kU) * std::fabs(lr) + relp + relpi) +
               kU * std::fabs((p[size_t(j)] + kEps) * lr);
    }
    for (int64_t j = 0; j < kt; ++j) {
      const double dI = pi[size_t(j)] * (gpi[size_t(j)] - dot_pg);
      const double eD = (2.0 * relpi + relp + double(kt + 8) * kU) * std::fabs(pi[size_t(j)]) *
                        (std::fabs(gpi[size_t(j)]) + spg);
      eD_all[size_t(i * ks + j)] = eD, dI_all[size_t(i * ks + j)] = dI;
      const float* k = b.K.data() + int64_t(s[j]) * cI;
      for (int64_t hh = 0; hh < HI; ++hh) {
        const float* qh = b.qI.data() + (i * HI + hh) * cI;
        const double qk = dot_d(qh, k, cI), mag = dot_abs(qh, k, cI);
        const bool unsure = std::fabs(qk) <= 2.0 * double(cI) * kU * mag;
        if (qk <= 0 && !unsure) continue;
        const double lam = std::fabs(double(b.lam[size_t(i * HI + hh)]));
        ++nterms[size_t(s[j])];
        if (unsure) {  // the flag may flip: the whole term
          bdlam[size_t(i * HI + hh)] += 2.0 * std::fabs(dI * qk) + 2.0 * (eD + std::fabs(dI)) * mag;
          for (int64_t t = 0; t < cI; ++t) {
            bdqI[size_t((i * HI + hh) * cI + t)] += 2.0 * (std::fabs(dI) + eD) * lam * std::fabs(double(k[t]));
            bdK[size_t(int64_t(s[j]) * cI + t)] += 2.0 * (std::fabs(dI) + eD) * lam * std::fabs(double(qh[t]));
          }
          continue;
        }
        bdlam[size_t(i * HI + hh)] +=
            2.0 * (eD * std::fabs(qk) + std::fabs(dI) * double(cI) * kU * mag + double(kt + 2) * kU * std::fabs(dI * qk));
        for (int64_t t = 0; t < cI; ++t)
          bdqI[size_t((i * HI + hh) * cI + t)] += 2.0 * (eD + double(kt + 3) * kU * std::fabs(dI)) * lam * std::fabs(double(k[t]));
      }
    }
  }
  // dK's rounding term needs n_c (the entry's term count): a second pass over the same terms
  for (int64_t i = 0; i < Nq && full; ++i) {
    const int64_t kt = std::min(ks, int64_t(b.nvis[size_t(i)]));
    const int32_t* s = sel.data() + i * ks;
    for (int64_t j = 0; j < kt; ++j) {
      const float* k = b.K.data() + int64_t(s[j]) * cI;
      const double dI = dI_all[size_t(i * ks + j)], eD = eD_all[size_t(i * ks + j)];
      for (int64_t hh = 0; hh < HI; ++hh) {
        const float* qh = b.qI.data() + (i * HI + hh) * cI;
        const double qk = dot_d(qh, k, cI), mag = dot_abs(qh, k, cI);
        if (qk <= 0 || std::fabs(qk) <= 2.0 * double(cI) * kU * mag) continue;  // dead, or counted whole above
        const double lam = std::fabs(double(b.lam[size_t(i * HI + hh)]));
        const double n_c = double(nterms[size_t(s[j])]);
        for (int64_t t = 0; t < cI; ++t)
          bdK[size_t(int64_t(s[j]) * cI + t)] += 2.0 * (eD + (n_c + 3.0) * kU * std::fabs(dI)) * lam * std::fabs(double(qh[t]));
      }
    }
  }
  for (auto* v : {&bdqI, &bdlam, &bdK})
    for (double& x : *v) x += 1e-30;
  double dev_loss = 0;  // the prefix's rows, in row order (sum_row_losses' order), times coeff
  for (int64_t i = 0; i < Nq; ++i) dev_loss += row_loss[size_t(i)];
  dev_loss *= coeff;
  // the loss in double: compared in double (the float copies above only carry it to the report)
  {
    Compare c;
    c.what = "loss (double, prefix rows)";
    c.n = 1;
    const double allowed = 2.0 * coeff * bloss + 1e-300;
    c.max_abs = std::fabs(dev_loss - rloss);
    c.worst_ratio = c.max_abs / allowed;
    c.bad = c.max_abs <= allowed ? 0 : 1;
    out.push_back(c);
  }
  out.push_back(compare_bound("dqI", std::vector<float>(dqI.begin(), dqI.begin() + long(rdqI.size())), rdqI, bdqI));
  out.push_back(compare_bound("dlam", std::vector<float>(dlam.begin(), dlam.begin() + long(rdlam.size())), rdlam, bdlam));
  if (full && NE > 0) out.push_back(compare_bound("dK (unselected entries exactly 0)", dK, rdK, bdK));

  return out;
}

OpReport check_indexer(Harness& h, const std::vector<int64_t>& doc_lens, int64_t HI, int64_t cI, int64_t H,
                       int64_t hd, int64_t topk, bool dense, IndexerInputs inputs, int64_t ref_queries) {
  static const char* input_names[] = {"random", "dead-heads", "ties"};
  OpReport rep;
  rep.op = "indexer";
  const IndexerBatch b = make_indexer_batch(doc_lens, HI, cI, H, hd, inputs);
  const int64_t N = b.N, NE = b.NE, smax = b.smax, ks = dense ? smax : topk;
  rep.shape = "N=" + std::to_string(N) + " HI=" + std::to_string(HI) + " cI=" + std::to_string(cI) +
              " H=" + std::to_string(H) + " hd=" + std::to_string(hd) + " NE=" + std::to_string(NE) +
              " smax=" + std::to_string(smax) + (dense ? " dense" : " topk=" + std::to_string(topk)) +
              " docs=" + std::to_string(doc_lens.size()) + " inputs=" + input_names[int(inputs)];
  const int64_t Nq = ref_queries > 0 ? std::min(ref_queries, N) : N;
  const double coeff = 0.3 / double(N);  // the model's indexer_loss_coeff / (B T) scale

  DeviceBuffer gnvis = h.upload(b.nvis), gbase = h.upload(b.base), gqI = h.upload(b.qI), glam = h.upload(b.lam),
               gK = h.upload(b.K), gq = h.upload(b.q), gCe = h.upload(b.Ce);
  DeviceBuffer gscores(size_t(N * smax) * 4), gsel(size_t(std::max<int64_t>(1, N * ks)) * 4),
      gloss(size_t(N) * 8), gdqI(size_t(N * HI * cI) * 4), gdlam(size_t(N * HI) * 4),
      gdK(static_cast<size_t>(std::max<int64_t>(1, NE * cI)) * 4);
  DeviceIndexer ix;
  ix.N = N, ix.HI = HI, ix.cI = cI, ix.NE = NE, ix.smax = smax;
  ix.nvis = gnvis.as<int32_t>(), ix.base = gbase.as<int32_t>(), ix.qI = gqI.as<float>(), ix.lam = glam.as<float>();
  ix.K = gK.as<float>();
  DeviceIndexerKL kl;
  kl.H = H, kl.hd = hd, kl.q = gq.as<float>(), kl.Ce = gCe.as<float>(), kl.sel = gsel.as<int32_t>(), kl.kstride = ks;
  kl.coeff = coeff;
  const size_t need = indexer_kl_scratch_bytes(ix, kl);
  std::unique_ptr<DeviceArena> own;
  if (h.scratch().capacity() - h.scratch().used_bytes() < need + DeviceArena::kAlign)
    own = std::make_unique<DeviceArena>(need + DeviceArena::kAlign, "indexer check scratch");
  DeviceArena& scratch = own ? *own : h.scratch();
  // every output NaN first (the scores past nvis stay NaN: topk_rows must not read them)
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto nan_fill = [&] {
    h.stream().synchronize();
    const std::vector<float> ns(static_cast<size_t>(N * smax), nan), nq(static_cast<size_t>(N * HI * cI), nan),
        nl(static_cast<size_t>(N * HI), nan), nk(static_cast<size_t>(std::max<int64_t>(1, NE * cI)), nan);
    const std::vector<double> nr(static_cast<size_t>(N), std::numeric_limits<double>::quiet_NaN());
    const std::vector<int32_t> nsel(static_cast<size_t>(std::max<int64_t>(1, N * ks)), -7);
    gscores.upload(ns.data(), ns.size() * 4), gdqI.upload(nq.data(), nq.size() * 4);
    gdlam.upload(nl.data(), nl.size() * 4), gdK.upload(nk.data(), nk.size() * 4);
    gloss.upload(nr.data(), nr.size() * 8), gsel.upload(nsel.data(), nsel.size() * 4);
  };
  auto run = [&] {
    indexer_scores(ix, gscores.as<float>(), h.stream());
    if (dense)
      indexer_dense_sel(ix, gsel.as<int32_t>(), h.stream());
    else
      topk_rows(gscores.as<float>(), N, smax, smax, gnvis.as<int32_t>(), gbase.as<int32_t>(), topk,
                gsel.as<int32_t>(), h.stream());
    indexer_kl(ix, kl, gscores.as<float>(), gloss.as<double>(), gdqI.as<float>(), gdlam.as<float>(),
               gdK.as<float>(), scratch, h.stream());
  };
  nan_fill();
  run();
  const std::vector<float> scores = h.download<float>(gscores, size_t(N * smax));
  const std::vector<int32_t> sel = h.download<int32_t>(gsel, size_t(std::max<int64_t>(1, N * ks)));
  const std::vector<double> row_loss = h.download<double>(gloss, size_t(N));
  const std::vector<float> dqI = h.download<float>(gdqI, size_t(N * HI * cI)), dlam = h.download<float>(gdlam, size_t(N * HI));
  const std::vector<float> dK = h.download<float>(gdK, size_t(std::max<int64_t>(1, NE * cI)));

  const IndexerOutputs got{scores, sel, row_loss, dqI, dlam, dK};
  for (Compare& c : compare_indexer(b, got, ks, dense, coeff, Nq)) rep.checks.push_back(std::move(c));
  {  // sum_row_losses: the rows summed in row order on the host
    double rows = 0;
    for (double v : row_loss) rows += v;
    const double host_sum = sum_row_losses(gloss.as<double>(), N, h.stream());
    rep.checks.push_back(bitwise("sum_row_losses vs the row-order sum", &host_sum, &rows, 1, 8));
  }
  // a second call: the same bits everywhere (no atomics; fixed orders)
  nan_fill();
  run();
  {
    const std::vector<float> s2 = h.download<float>(gscores, size_t(N * smax));
    std::vector<float> a1, a2;  // the written scores only (the rest stays NaN)
    for (int64_t i = 0; i < N; ++i)
      for (int64_t e = 0; e < b.nvis[size_t(i)]; ++e)
        a1.push_back(scores[size_t(i * smax + e)]), a2.push_back(s2[size_t(i * smax + e)]);
    if (!a1.empty())  // none written when no query sees an entry (a check over nothing does not pass)
      rep.checks.push_back(bitwise("scores", a1.data(), a2.data(), a1.size(), 4));
    const std::vector<int32_t> sel2 = h.download<int32_t>(gsel, sel.size());
    rep.checks.push_back(bitwise("sel", sel.data(), sel2.data(), sel.size(), 4));
    const std::vector<double> l2 = h.download<double>(gloss, size_t(N));
    rep.checks.push_back(bitwise("row_loss", row_loss.data(), l2.data(), l2.size(), 8));
    const std::vector<float> q2 = h.download<float>(gdqI, dqI.size()), m2 = h.download<float>(gdlam, dlam.size()),
                             k2 = h.download<float>(gdK, dK.size());
    rep.checks.push_back(bitwise("dqI", dqI.data(), q2.data(), q2.size(), 4));
    rep.checks.push_back(bitwise("dlam", dlam.data(), m2.data(), m2.size(), 4));
    if (NE > 0) rep.checks.push_back(bitwise("dK", dK.data(), k2.data(), size_t(NE * cI), 4));
  }
  if (h.perf()) {
    rep.ms = h.time_ms(run);  // scores + top-k + KL forward and backward
    int64_t vis = 0, slots = 0;
    for (int64_t i = 0; i < N; ++i) vis += b.nvis[size_t(i)], slots += std::min<int64_t>(ks, b.nvis[size_t(i)]);
    // scores 2 HI cI per visible entry; Pt 2 passes x 2 H hd per visible entry; qk recomputed twice (dqI, dK) and
    // the dqI and dK updates: 4 x 2 HI cI per slot
    rep.flops = 2.0 * double(HI * cI) * double(vis) + 4.0 * double(H * hd) * double(vis) + 8.0 * double(HI * cI) * double(slots);
    // at least: qI, q read, dqI written; K and Ce read, dK written; the scores written and read
    rep.bytes = 4.0 * (2.0 * double(N * HI * cI) + double(N * H * hd) + 2.0 * double(NE * cI) + double(NE * hd) +
                       2.0 * double(vis));
  }
  return rep;
}

}  // namespace trex::cuda::check
