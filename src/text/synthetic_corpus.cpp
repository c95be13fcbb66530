// Synthetic corpus generator (see header).
#include "text/synthetic_corpus.hpp"

#include <cmath>

#include "util/rng.hpp"

namespace trex::text {
namespace {

const char* const kSyllables[] = {"ka", "to", "ri", "men", "sa", "lo", "pro", "duc", "tion", "ca",   "pa",  "ci",
                                  "ty", "de", "mand", "sup", "ply", "cost", "ro", "ute", "ware", "house", "fac", "tor",
                                  "y",  "ma", "chine", "lab", "or", "shift", "plan", "ning", "in", "ven",  "to", "ry",
                                  "trans", "port", "as", "sign", "ment", "sched", "ule", "bud", "get", "prof", "it"};
const char* const kCjk[] = {"运筹学", "线性规划", "最优解", "目标函数", "约束条件", "整数", "变量", "工厂", "生产", "利润",
                            "成本", "需求", "最小化", "最大化", "線形計画法", "最適化", "ありがとう", "カタカナ", "問題", "制約"};
const char* const kEmoji[] = {"🙂", "🚀", "👍🏽", "❤️", "✔️", "📦", "🏭", "🚚", "👨‍👩‍👧", "🇫🇷"};
const char* const kUnits[] = {"kg", "hours", "units", "tons", "$", "km", "liters", "%"};

struct Gen {
  Rng rng;
  std::vector<std::string> lexicon;
  std::string out;

  explicit Gen(uint64_t seed) : rng(seed) {
    const size_t n_syl = sizeof(kSyllables) / sizeof(*kSyllables);
    for (int i = 0; i < 20000; ++i) {
      std::string w;
      int k = int(rng.uniform_int(1, 4));
      for (int j = 0; j < k; ++j) w += kSyllables[rng.uniform_int(0, int64_t(n_syl) - 1)];
      lexicon.push_back(std::move(w));
    }
  }
  // Zipf-like: index ~ exp(uniform * log N), many repeats of the head words.
  const std::string& word() { return lexicon[size_t(std::exp(rng.uniform() * std::log(double(lexicon.size())))) - 1]; }
  std::string number() {
    switch (rng.uniform_int(0, 4)) {
      case 0: return std::to_string(rng.uniform_int(0, 99));
      case 1: return std::to_string(rng.uniform_int(100, 9999999));
      case 2: return std::to_string(rng.uniform_int(0, 999)) + "." + std::to_string(rng.uniform_int(0, 99));
      case 3: return std::to_string(rng.uniform_int(1, 9)) + "e-" + std::to_string(rng.uniform_int(1, 9));
      default: return "-" + std::to_string(rng.uniform_int(1, 500));
    }
  }
  void sentence() {
    int n = int(rng.uniform_int(5, 18));
    for (int i = 0; i < n; ++i) {
      if (i) out += ' ';
      double u = rng.uniform();
      if (u < 0.12) out += number() + " " + kUnits[rng.uniform_int(0, 7)];
      else if (u < 0.16) out += kCjk[rng.uniform_int(0, 19)];
      else if (u < 0.17) out += kEmoji[rng.uniform_int(0, 9)];
      else {
        std::string w = word();
        if (i == 0) w[0] = char(w[0] - 'a' + 'A');
        out += w;
      }
      if (rng.bernoulli(0.08)) out += ",";
    }
    out += rng.bernoulli(0.9) ? ". " : "? ";
  }
  void problem() {
    for (int s = int(rng.uniform_int(2, 6)); s > 0; --s) sentence();
    out += "\n\nMaximize\n obj: ";
    int vars = int(rng.uniform_int(2, 6));
    for (int v = 0; v < vars; ++v) out += (v ? " + " : "") + std::to_string(rng.uniform_int(1, 60)) + " x" + std::to_string(v + 1);
    out += "\nSubject To\n";
    for (int c = int(rng.uniform_int(1, 4)); c > 0; --c) {
      out += " c" + std::to_string(c) + ": ";
      for (int v = 0; v < vars; ++v) out += (v ? " + " : "") + std::to_string(rng.uniform_int(1, 20)) + " x" + std::to_string(v + 1);
      out += " <= " + std::to_string(rng.uniform_int(10, 5000)) + "\n";
    }
    out += "End\n";
  }
  void code() {
    std::string m = word(), v = word();
    out += "import gurobipy as gp\nfrom gurobipy import GRB\n\nm = gp.Model(\"" + m + "\")\n";
    out += v + " = m.addVars(" + std::to_string(rng.uniform_int(2, 40)) + ", vtype=GRB.INTEGER, name=\"" + v + "\")\n";
    out += "m.setObjective(gp.quicksum(" + number() + " * " + v + "[i] for i in range(n)), GRB.MAXIMIZE)\n";
    out += "for i in range(n):\n    m.addConstr(" + v + "[i] <= " + number() + ")\n";
    out += "m.optimize()\nif m.status == GRB.OPTIMAL:\n\tprint(f\"{m.objVal:.4f}\")\n";
  }
  void cjk() {
    for (int i = int(rng.uniform_int(3, 12)); i > 0; --i) {
      out += kCjk[rng.uniform_int(0, 19)];
      if (rng.bernoulli(0.3)) out += number();
      out += rng.bernoulli(0.2) ? "。" : "，";
    }
  }
  std::string document() {
    out.clear();
    int parts = int(rng.uniform_int(1, 4));
    for (int p = 0; p < parts; ++p) {
      double u = rng.uniform();
      if (u < 0.45) problem();
      else if (u < 0.65) code();
      else if (u < 0.8) cjk();
      else for (int s = int(rng.uniform_int(1, 5)); s > 0; --s) sentence();
      out += rng.bernoulli(0.2) ? std::string(size_t(rng.uniform_int(1, 12)), rng.bernoulli(0.5) ? ' ' : '\n') : "\n\n";
    }
    return out;
  }
};

}  // namespace

std::vector<std::string> synthetic_corpus(uint64_t seed, size_t bytes) {
  Gen g(seed);
  std::vector<std::string> docs;
  size_t total = 0;
  while (total < bytes) {
    docs.push_back(g.document());
    total += docs.back().size();
  }
  return docs;
}

}  // namespace trex::text
