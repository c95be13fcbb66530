// ORGEval check, graph stages: the bipartite variable/row graph, MD5 Weisfeiler-Lehman refinement
// with upstream's stop rule (reference and fast path, identical output) and the sufficiency test.
#include <algorithm>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include "lp/equivalence_detail.hpp"
#include "util/error.hpp"
#include "util/hash.hpp"

namespace trex::lp::orgeval {

Graph build_graph(const CheckModel& model) {
  Graph g;
  g.num_vars = int(model.vars.size());
  g.num_rows = int(model.rows.size());
  const size_t n = size_t(g.num_nodes());
  g.colour0.reserve(n);
  for (const CheckVar& v : model.vars) g.colour0.push_back(fmt_values({v.obj, double(v.type), v.lb, v.ub}));
  for (const CheckRow& r : model.rows) g.colour0.push_back(fmt_values({r.rhs, double(r.sense)}));

  std::vector<int> degree(n, 0);
  for (size_t r = 0; r < model.rows.size(); ++r) {
    for (const Term& t : model.rows[r].terms) {
      if (t.var < 0 || t.var >= g.num_vars) throw Error("ORGEval graph: term refers to a missing variable");
      ++degree[size_t(t.var)];
      ++degree[size_t(g.num_vars) + r];
    }
  }
  g.offsets.assign(n + 1, 0);
  for (size_t i = 0; i < n; ++i) g.offsets[i + 1] = g.offsets[i] + degree[i];
  g.nbr.resize(size_t(g.offsets[n]));
  g.edge.resize(size_t(g.offsets[n]));
  std::vector<int> fill(g.offsets.begin(), g.offsets.end() - 1);
  std::unordered_map<std::string, int> edge_ids;
  std::string text;
  for (size_t r = 0; r < model.rows.size(); ++r) {
    const int row_node = g.num_vars + int(r);
    for (const Term& t : model.rows[r].terms) {
      text.clear();
      append_fmt(text, t.coef);
      auto [it, added] = edge_ids.emplace(text, int(g.edge_colours.size()));
      if (added) g.edge_colours.push_back(text);
      const int e = it->second;
      const size_t a = size_t(fill[size_t(t.var)]++), b = size_t(fill[size_t(row_node)]++);
      g.nbr[a] = row_node, g.edge[a] = e;
      g.nbr[b] = t.var, g.edge[b] = e;
    }
  }
  return g;
}

// Per-node colour strings to class ids (first appearance order).
static Colouring classes_from_strings(std::vector<std::string> colours, int rounds) {
  Colouring c;
  c.rounds = rounds;
  c.node_class.resize(colours.size());
  std::unordered_map<std::string, int> ids;
  for (size_t i = 0; i < colours.size(); ++i) {
    auto [it, added] = ids.emplace(colours[i], int(c.class_colour.size()));
    if (added) c.class_colour.push_back(colours[i]);
    c.node_class[i] = it->second;
  }
  return c;
}

Colouring wl_reference(const Graph& g) {
  const size_t n = size_t(g.num_nodes());
  if (n == 0) throw Error("ORGEval WL: the graph has no nodes (upstream fails on this case)");
  std::vector<std::string> cur = g.colour0, next(n);
  size_t k_prev = 0;  // k_0 = 0 by definition, so round 1 never stops the loop
  int rounds = 0;
  for (size_t r = 1; r <= n; ++r) {
    for (size_t v = 0; v < n; ++v) {
      std::vector<std::string> parts;
      for (int j = g.offsets[v]; j < g.offsets[v + 1]; ++j)
        parts.push_back(cur[size_t(g.nbr[size_t(j)])] + "|" + g.edge_colours[size_t(g.edge[size_t(j)])]);
      std::sort(parts.begin(), parts.end());
      std::string joined;
      for (size_t i = 0; i < parts.size(); ++i) joined += (i ? "|" : "") + parts[i];
      next[v] = md5_hex(cur[v] + "|" + joined);
    }
    cur.swap(next);
    rounds = int(r);
    const size_t k = std::unordered_set<std::string>(cur.begin(), cur.end()).size();
    if (k == k_prev) break;
    k_prev = k;
  }
  return classes_from_strings(std::move(cur), rounds);
}

Colouring WlRefiner::refine(const Graph& g) {
  const size_t n = size_t(g.num_nodes());
  if (n == 0) throw Error("ORGEval WL: the graph has no nodes (upstream fails on this case)");
  const size_t entries = g.nbr.size();
  const int64_t num_edge_colours = int64_t(g.edge_colours.size());
  thread_local Md5Hasher md5;

  Colouring cur = classes_from_strings(g.colour0, 0);
  size_t k_prev = 0;
  for (size_t r = 1; r <= n; ++r) {
    // 1. Rank the distinct neighbour strings c(nbr)|edge bytewise (equal texts share a rank).
    entry_key_.resize(entries);
    for (size_t j = 0; j < entries; ++j)
      entry_key_[j] = int64_t(cur.node_class[size_t(g.nbr[j])]) * num_edge_colours + g.edge[j];
    pair_key_.assign(entry_key_.begin(), entry_key_.end());
    std::sort(pair_key_.begin(), pair_key_.end());
    pair_key_.erase(std::unique(pair_key_.begin(), pair_key_.end()), pair_key_.end());
    const size_t pairs = pair_key_.size();
    if (pair_text_.size() < pairs) pair_text_.resize(pairs);
    for (size_t p = 0; p < pairs; ++p) {
      std::string& t = pair_text_[p];
      t = cur.class_colour[size_t(pair_key_[p] / num_edge_colours)];
      t += '|';
      t += g.edge_colours[size_t(pair_key_[p] % num_edge_colours)];
    }
    pair_order_.resize(pairs);
    std::iota(pair_order_.begin(), pair_order_.end(), 0);
    std::sort(pair_order_.begin(), pair_order_.end(),
              [&](int a, int b) { return pair_text_[size_t(a)] < pair_text_[size_t(b)]; });
    pair_rank_.resize(pairs);
    rank_text_.clear();
    for (size_t i = 0; i < pairs; ++i) {
      const int p = pair_order_[i];
      if (i == 0 || pair_text_[size_t(p)] != pair_text_[size_t(rank_text_.back())]) rank_text_.push_back(p);
      pair_rank_[size_t(p)] = int(rank_text_.size()) - 1;
    }
    entry_rank_.resize(entries);
    for (size_t j = 0; j < entries; ++j) {
      const size_t p = size_t(std::lower_bound(pair_key_.begin(), pair_key_.end(), entry_key_[j]) - pair_key_.begin());
      entry_rank_[j] = pair_rank_[p];
    }
    for (size_t v = 0; v < n; ++v) std::sort(entry_rank_.begin() + g.offsets[v], entry_rank_.begin() + g.offsets[v + 1]);

    // 2. Group nodes by signature (own class, sorted neighbour ranks): equal signature <=> equal
    //    MD5 input, so each group is hashed once.
    auto signature_less = [&](int a, int b) {
      const int ca = cur.node_class[size_t(a)], cb = cur.node_class[size_t(b)];
      if (ca != cb) return ca < cb;
      return std::lexicographical_compare(entry_rank_.begin() + g.offsets[size_t(a)],
                                          entry_rank_.begin() + g.offsets[size_t(a) + 1],
                                          entry_rank_.begin() + g.offsets[size_t(b)],
                                          entry_rank_.begin() + g.offsets[size_t(b) + 1]);
    };
    node_order_.resize(n);
    std::iota(node_order_.begin(), node_order_.end(), 0);
    std::sort(node_order_.begin(), node_order_.end(), signature_less);

    Colouring next;
    next.node_class.resize(n);
    std::unordered_map<std::string, int> ids;
    int group_class = -1;
    for (size_t i = 0; i < n; ++i) {
      const int v = node_order_[i];
      if (i == 0 || signature_less(node_order_[i - 1], v)) {
        buffer_ = cur.class_colour[size_t(cur.node_class[size_t(v)])];
        buffer_ += '|';
        for (int j = g.offsets[size_t(v)]; j < g.offsets[size_t(v) + 1]; ++j) {
          if (j > g.offsets[size_t(v)]) buffer_ += '|';
          buffer_ += pair_text_[size_t(rank_text_[size_t(entry_rank_[size_t(j)])])];
        }
        std::string hex = md5.hex(buffer_);
        auto [it, added] = ids.emplace(hex, int(next.class_colour.size()));
        if (added) next.class_colour.push_back(std::move(hex));
        group_class = it->second;
      }
      next.node_class[size_t(v)] = group_class;
    }
    next.rounds = int(r);
    cur = std::move(next);
    const size_t k = cur.class_colour.size();
    if (k == k_prev) break;
    k_prev = k;
  }
  return cur;
}

std::string sufficiency(const Graph& g, const Colouring& c) {
  const size_t n = size_t(g.num_nodes());
  std::vector<int> class_size(c.class_colour.size(), 0);
  for (int k : c.node_class) ++class_size[size_t(k)];
  if (std::all_of(class_size.begin(), class_size.end(), [](int s) { return s <= 1; }))
    return std::string(kWlDeterminable);

  // Connected components of the subgraph induced by nodes of multi-member classes (union-find).
  std::vector<int> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](int x) {
    while (parent[size_t(x)] != x) x = parent[size_t(x)] = parent[size_t(parent[size_t(x)])];
    return x;
  };
  auto multi = [&](size_t v) { return class_size[size_t(c.node_class[v])] >= 2; };
  for (size_t v = 0; v < n; ++v) {
    if (!multi(v)) continue;
    for (int j = g.offsets[v]; j < g.offsets[v + 1]; ++j) {
      const size_t w = size_t(g.nbr[size_t(j)]);
      if (multi(w)) {
        const int a = find(int(v)), b = find(int(w));
        if (a != b) parent[size_t(a)] = b;
      }
    }
  }
  std::vector<int64_t> comp_class;
  for (size_t v = 0; v < n; ++v)
    if (multi(v)) comp_class.push_back(int64_t(find(int(v))) * int64_t(c.class_colour.size()) + c.node_class[v]);
  std::sort(comp_class.begin(), comp_class.end());
  if (std::adjacent_find(comp_class.begin(), comp_class.end()) != comp_class.end())
    return std::string(kDueToDistinctness);
  return std::string(kSymmetricDecomposable);
}

}  // namespace trex::lp::orgeval
