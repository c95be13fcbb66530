// Pipeline stage balance (see stage_plan.hpp).
#include "dist/stage_plan.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "model/model_info.hpp"
#include "util/error.hpp"

namespace trex::dist {

namespace {

void check(const std::vector<double>& layer_cost, int stages) {
  if (stages < 1) throw Error("pipeline: the number of stages must be >= 1");
  if (int64_t(layer_cost.size()) < stages)
    throw Error(fmt::format("pipeline: {} stages need at least {} layers, the model has {}", stages, stages,
                            layer_cost.size()));
}

StagePlan make_plan(const std::vector<double>& c, double extra, std::vector<int64_t> first) {
  StagePlan p;
  p.first = std::move(first);
  const int S = int(p.first.size()) - 1;
  for (int s = 0; s < S; ++s) {
    double x = s == S - 1 ? extra : 0.0;
    for (int64_t l = p.first[size_t(s)]; l < p.first[size_t(s) + 1]; ++l) x += c[size_t(l)];
    p.cost.push_back(x);
  }
  return p;
}

}  // namespace

double StagePlan::max_cost() const { return cost.empty() ? 0.0 : *std::max_element(cost.begin(), cost.end()); }

std::string StagePlan::str() const {
  std::string layers, costs;
  for (int s = 0; s < stages(); ++s) {
    const int64_t a = first[size_t(s)], b = first[size_t(s) + 1] - 1;
    layers += (s ? " | " : "") + (a == b ? fmt::format("{}", a) : fmt::format("{}-{}", a, b));
    costs += fmt::format("{}{:.2f}", s ? " | " : "", cost[size_t(s)] / 1e6);
  }
  return "layers " + layers + " + head, MTP (forward " + costs + " MFLOP/token)";
}

StagePlan plan_stages(const std::vector<double>& c, double extra, int S) {
  check(c, S);
  const int64_t L = int64_t(c.size());
  std::vector<double> prefix(size_t(L) + 1, 0.0);
  for (int64_t l = 0; l < L; ++l) prefix[size_t(l) + 1] = prefix[size_t(l)] + c[size_t(l)];
  const double inf = std::numeric_limits<double>::infinity();
  // best[s][l]: minimal max cost of layers [0, l) in s stages (the last stage's extra added at s == S).
  std::vector<std::vector<double>> best(size_t(S) + 1, std::vector<double>(size_t(L) + 1, inf));
  std::vector<std::vector<int64_t>> cut(size_t(S) + 1, std::vector<int64_t>(size_t(L) + 1, -1));
  best[0][0] = 0;
  for (int s = 1; s <= S; ++s)
    for (int64_t l = s; l <= L; ++l)
      for (int64_t k = s - 1; k < l; ++k) {
        if (best[size_t(s) - 1][size_t(k)] == inf) continue;
        const double stage = prefix[size_t(l)] - prefix[size_t(k)] + (s == S ? extra : 0.0);
        const double v = std::max(best[size_t(s) - 1][size_t(k)], stage);
        if (v < best[size_t(s)][size_t(l)]) best[size_t(s)][size_t(l)] = v, cut[size_t(s)][size_t(l)] = k;
      }
  std::vector<int64_t> first(size_t(S) + 1);
  first[size_t(S)] = L;
  for (int s = S, l = int(L); s > 0; --s) {
    l = int(cut[size_t(s)][size_t(l)]);
    first[size_t(s) - 1] = l;
  }
  return make_plan(c, extra, std::move(first));
}

StagePlan plan_stages_exhaustive(const std::vector<double>& c, double extra, int S) {
  check(c, S);
  const int64_t L = int64_t(c.size());
  std::vector<int64_t> first(size_t(S) + 1), best_first;
  double best = std::numeric_limits<double>::infinity();
  // Enumerate cut points 0 = first[0] < first[1] < ... < first[S] = L.
  auto rec = [&](auto&& self, int s) -> void {
    if (s == S) {
      first[size_t(S)] = L;
      const double m = make_plan(c, extra, first).max_cost();
      if (m < best) best = m, best_first = first;
      return;
    }
    for (int64_t k = first[size_t(s) - 1] + 1; k <= L - (S - s); ++k) {
      first[size_t(s)] = k;
      self(self, s + 1);
    }
  };
  first[0] = 0;
  rec(rec, 1);
  return make_plan(c, extra, best_first);
}

StagePlan plan_stages(const model::ModelConfig& cfg, int64_t seq_len, int stages) {
  const auto f = model::block_forward_flops(cfg, seq_len);
  return plan_stages(f.layers, f.head, stages);
}

}  // namespace trex::dist
