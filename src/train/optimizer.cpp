// AdamW and Muon on flat buffers. Muon's Newton-Schulz iterations go through nn::gemm (cblas_sgemm); the readable
// reference (plain loops) is the oracle in tests.
#include "train/optimizer.hpp"

#include <algorithm>
#include <cmath>

#include "nn/gemm.hpp"
#include "util/error.hpp"

namespace trex::train {

namespace {

struct NsCoeffs {
  double a, b, c;
};

NsCoeffs ns_coeffs(int step_index) {  // 0-based
  return step_index < 8 ? NsCoeffs{3.4445, -4.7750, 2.0315} : NsCoeffs{2.0, -1.5, 0.5};
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

OptimizerKind parse_optimizer(const std::string& name) {
  if (name == "adamw") return OptimizerKind::AdamW;
  if (name == "muon") return OptimizerKind::Muon;
  throw Error("unknown optimizer '" + name + "' (expected adamw or muon)");
}

const char* to_string(OptimizerKind k) { return k == OptimizerKind::AdamW ? "adamw" : "muon"; }

bool uses_adamw_under_muon(const TensorSlot& t) {
  if (t.ndim < 2) return true;  // norms, biases, sinks
  const std::string& n = t.name;
  return n.rfind("embed", 0) == 0 || n.find(".embed.") != std::string::npos || n == "head.weight" ||
         ends_with(n, ".head.weight") || ends_with(n, "_base") || ends_with(n, "_scale") || ends_with(n, "norm.weight") ||
         ends_with(n, "attn_sink") || ends_with(n, ".ape");
}

StateLayout::StateLayout(const std::vector<TensorSlot>& tensors, const OptimizerConfig& config) {
  for (const auto& t : tensors) {
    const bool mu = config.kind == OptimizerKind::Muon && t.trainable && !uses_adamw_under_muon(t);
    muon.push_back(mu);
    m_off.push_back(t.trainable ? m_size : -1);
    v_off.push_back(t.trainable && !mu ? v_size : -1);
    if (t.trainable) m_size += t.numel;
    if (t.trainable && !mu) v_size += t.numel;
  }
}

void StateLayout::expand(const std::vector<TensorSlot>& tensors, std::span<const float> m, std::span<const float> v,
                         std::vector<float>& flat_m, std::vector<float>& flat_v, int64_t total_numel) const {
  flat_m.assign(size_t(total_numel), 0.0f);
  flat_v.assign(size_t(total_numel), 0.0f);
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorSlot& t = tensors[i];
    if (m_off[i] >= 0) std::copy_n(m.begin() + m_off[i], t.numel, flat_m.begin() + t.offset);
    if (v_off[i] >= 0) std::copy_n(v.begin() + v_off[i], t.numel, flat_v.begin() + t.offset);
  }
}

void StateLayout::compact(const std::vector<TensorSlot>& tensors, std::span<const float> flat_m,
                          std::span<const float> flat_v, std::span<float> m, std::span<float> v) const {
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorSlot& t = tensors[i];
    if (m_off[i] >= 0) std::copy_n(flat_m.begin() + t.offset, t.numel, m.begin() + m_off[i]);
    if (v_off[i] >= 0) std::copy_n(flat_v.begin() + t.offset, t.numel, v.begin() + v_off[i]);
  }
}

Optimizer::Optimizer(std::vector<TensorSlot> tensors, int64_t total_numel, OptimizerConfig config)
    : tensors_(std::move(tensors)), cfg_(config), layout_(tensors_, cfg_) {
  int64_t biggest = 0, biggest_side = 0;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const TensorSlot& t = tensors_[i];
    if (t.offset < 0 || t.offset + t.numel > total_numel) throw Error("optimizer: tensor " + t.name + " out of range");
    if (layout_.muon[i]) {
      biggest = std::max(biggest, t.numel);
      biggest_side = std::max(biggest_side, std::min(t.rows, t.cols));
    }
  }
  m_.assign(std::size_t(layout_.m_size), 0.0f);
  v_.assign(std::size_t(layout_.v_size), 0.0f);  // AdamW second moments only
  x_.assign(std::size_t(biggest), 0.0f);
  tmp_.assign(std::size_t(biggest), 0.0f);
  a_.assign(std::size_t(biggest_side * biggest_side), 0.0f);
  b_.assign(std::size_t(biggest_side * biggest_side), 0.0f);
}

std::span<float> Optimizer::moment(std::size_t i, int which) {
  const int64_t at = which == 0 ? layout_.m_off[i] : layout_.v_off[i];
  if (at < 0) return {};
  return std::span<float>(which == 0 ? m_ : v_).subspan(size_t(at), size_t(tensors_[i].numel));
}

void Optimizer::step(std::span<float> params, std::span<const float> grads, double lr, float grad_scale) {
  ++t_;
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    const TensorSlot& t = tensors_[i];
    if (!t.trainable) continue;
    float* p = params.data() + t.offset;
    const float* g = grads.data() + t.offset;
    if (layout_.muon[i])
      muon_tensor(i, p, g, grad_scale, lr);
    else
      adamw_tensor(i, p, g, grad_scale, lr);
  }
}

void Optimizer::adamw_tensor(std::size_t idx, float* p, const float* g, float gs, double lr) {
  const TensorSlot& t = tensors_[idx];
  const double b1 = cfg_.beta1, b2 = cfg_.beta2;
  const double bc1 = 1.0 - std::pow(b1, double(t_)), bc2 = 1.0 - std::pow(b2, double(t_));
  const double wd = (t.ndim >= 2 || cfg_.decay_1d) ? cfg_.weight_decay : 0.0;
  float* m = m_.data() + layout_.m_off[idx];
  float* v = v_.data() + layout_.v_off[idx];
  const float decay = float(1.0 - lr * wd);
  const float fb1 = float(b1), fb2 = float(b2);
  const float step = float(lr / bc1), inv_sqrt_bc2 = float(1.0 / std::sqrt(bc2)), eps = float(cfg_.eps);
  // element-wise: the threads' split changes no result
#pragma omp parallel for simd schedule(static) if (t.numel > (int64_t(1) << 16))
  for (int64_t i = 0; i < t.numel; ++i) {
    float gi = g[i] * gs;
    m[i] = fb1 * m[i] + (1.0f - fb1) * gi;
    v[i] = fb2 * v[i] + (1.0f - fb2) * gi * gi;
    float denom = std::sqrt(v[i]) * inv_sqrt_bc2 + eps;
    p[i] = p[i] * decay - step * m[i] / denom;
  }
}

void Optimizer::muon_tensor(std::size_t idx, float* p, const float* g, float gs, double lr) {
  const TensorSlot& t = tensors_[idx];
  float* m = m_.data() + layout_.m_off[idx];
  const float mu = float(cfg_.muon_momentum);
  const int64_t n = t.numel;
  for (int64_t i = 0; i < n; ++i) m[i] = mu * m[i] + g[i] * gs;
  float* x = x_.data();
  if (cfg_.muon_nesterov)
    for (int64_t i = 0; i < n; ++i) x[i] = mu * m[i] + g[i] * gs;
  else
    std::copy(m, m + n, x);
  // Work on the wide orientation (rows <= cols).
  int64_t r = t.rows, c = t.cols;
  bool transposed = r > c;
  if (transposed) {
    float* tp = tmp_.data();
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < c; ++j) tp[j * r + i] = x[i * c + j];
    std::copy(tp, tp + n, x);
    std::swap(r, c);
  }
  double norm = 0.0;
  for (int64_t i = 0; i < n; ++i) norm += double(x[i]) * double(x[i]);
  const float inv = float(1.0 / (std::sqrt(norm) + 1e-7));
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
  float* A = a_.data();
  float* B = b_.data();
  float* y = tmp_.data();
  for (int s = 0; s < cfg_.muon_ns_steps; ++s) {
    NsCoeffs k = ns_coeffs(s);
    // A = X X^T (r x r); B = b A + c A A; Y = a X + B X.
    // nn::gemm: cblas_sgemm spread over the OpenMP threads (the model's single thread pool, nn/gemm.hpp)
    nn::gemm(false, true, r, r, c, 1.0f, x, c, x, c, 0.0f, A, r);
    std::copy(A, A + r * r, B);
    nn::gemm(false, false, r, r, r, float(k.c), A, r, A, r, float(k.b), B, r);
    std::copy(x, x + n, y);
    nn::gemm(false, false, r, c, r, 1.0f, B, r, x, c, float(k.a), y, c);
    std::copy(y, y + n, x);
  }
  const float scale = float(std::sqrt(double(std::max(t.rows, t.cols))) * cfg_.muon_scale);
  const float decay = float(1.0 - lr * cfg_.muon_weight_decay);
  const float flr = float(lr);
  if (transposed) {
    for (int64_t i = 0; i < t.rows; ++i)
      for (int64_t j = 0; j < t.cols; ++j) {
        int64_t k = i * t.cols + j;
        p[k] = p[k] * decay - flr * scale * x[j * t.rows + i];
      }
  } else {
    for (int64_t i = 0; i < n; ++i) p[i] = p[i] * decay - flr * scale * x[i];
  }
}

void newton_schulz_reference(std::vector<float>& xin, int64_t rows, int64_t cols, int steps) {
  bool transposed = rows > cols;
  int64_t r = transposed ? cols : rows, c = transposed ? rows : cols;
  std::vector<double> x(std::size_t(r * c));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      double v = xin[std::size_t(i * cols + j)];
      if (transposed)
        x[std::size_t(j * c + i)] = v;
      else
        x[std::size_t(i * c + j)] = v;
    }
  double norm = 0;
  for (double v : x) norm += v * v;
  norm = std::sqrt(norm) + 1e-7;
  for (double& v : x) v /= norm;
  for (int s = 0; s < steps; ++s) {
    NsCoeffs k = ns_coeffs(s);
    std::vector<double> A(std::size_t(r * r), 0.0), B(std::size_t(r * r), 0.0), y(x.size(), 0.0);
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < r; ++j)
        for (int64_t l = 0; l < c; ++l) A[std::size_t(i * r + j)] += x[std::size_t(i * c + l)] * x[std::size_t(j * c + l)];
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < r; ++j) {
        double aa = 0;
        for (int64_t l = 0; l < r; ++l) aa += A[std::size_t(i * r + l)] * A[std::size_t(l * r + j)];
        B[std::size_t(i * r + j)] = k.b * A[std::size_t(i * r + j)] + k.c * aa;
      }
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < c; ++j) {
        double bx = 0;
        for (int64_t l = 0; l < r; ++l) bx += B[std::size_t(i * r + l)] * x[std::size_t(l * c + j)];
        y[std::size_t(i * c + j)] = k.a * x[std::size_t(i * c + j)] + bx;
      }
    x.swap(y);
  }
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      xin[std::size_t(i * cols + j)] = float(transposed ? x[std::size_t(j * c + i)] : x[std::size_t(i * c + j)]);
}

double lr_at(int64_t step, int64_t warmup_steps, int64_t total_steps, double max_lr, double min_lr) {
  if (warmup_steps > 0 && step < warmup_steps) return max_lr * double(step + 1) / double(warmup_steps);
  if (step >= total_steps) return min_lr;
  int64_t decay_steps = total_steps - warmup_steps;
  if (decay_steps <= 0) return max_lr;
  double progress = double(step - warmup_steps) / double(decay_steps);
  return min_lr + 0.5 * (max_lr - min_lr) * (1.0 + std::cos(3.14159265358979323846 * progress));
}

}  // namespace trex::train
