// Family files (ordata/family_file.hpp, docs/family-files.md): the example configs/families/media_planning.toml
// draws the same instances as the built-in marketing generator (LP text, data.json, statement parts, formulas);
// every error class names FILE:LINE; randomly mutated files give a clean trex::Error or a valid spec; through the
// CLI a bad file exits non-zero with nothing written, a good one gives verified samples and the same bytes twice.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "lp/lp_format.hpp"
#include "ordata/families.hpp"
#include "ordata/family_file.hpp"
#include "run_command.hpp"
#include "temp_dir.hpp"
#include "util/error.hpp"
#include "util/rng.hpp"

namespace fs = std::filesystem;
using namespace trex::ordata;

namespace {

std::string example_path(const std::string& name) { return std::string(TREX_SOURCE_DIR) + "/configs/families/" + name; }

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// 1-based line of the first occurrence of `needle` in `text`.
int line_of(const std::string& text, const std::string& needle) {
  size_t p = text.find(needle);
  EXPECT_NE(p, std::string::npos) << needle;
  return 1 + int(std::count(text.begin(), text.begin() + std::ptrdiff_t(p), '\n'));
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  size_t p = text.find(from);
  EXPECT_NE(p, std::string::npos) << from;
  return text.replace(p, from.size(), to);
}

std::string error_of(const std::string& text) {
  try {
    parse_family_text(text, "f.toml");
  } catch (const trex::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(FamilyFile, ExampleLoads) {
  auto spec = load_family_file(example_path("media_planning.toml"));
  EXPECT_EQ(spec->name, "media_planning");
  EXPECT_EQ(spec->variants, (std::vector<std::string>{"media_mix", "reach_target"}));
  EXPECT_EQ(spec->sha256.size(), 64u);
  EXPECT_EQ(file_family_formulations(*spec).size(), 2u);
}

namespace {

// Draws the built-in structure and the file family for the same seeds over every difficulty (60 each, domains in
// turn), calls check(built-in, file) on every pair of the same variant and returns how often each variant came.
std::map<std::string, int> compare_draws(Structure st, const FamilySpec& spec, const std::function<void(const Instance&, const Instance&)>& check) {
  std::map<std::string, int> variants;
  for (int d = 0; d < kNumDifficulties; ++d)
    for (uint64_t seed = 1; seed <= 60; ++seed) {
      int domain = int(seed % uint64_t(num_domains()));
      uint64_t s = seed * 2654435761ULL + uint64_t(d);
      Instance a = generate(st, Difficulty(d), domain, s);
      Instance b = generate_from_file(spec, Difficulty(d), domain, s);
      SCOPED_TRACE("difficulty " + std::to_string(d) + " seed " + std::to_string(s));
      EXPECT_EQ(a.variant, b.variant);
      if (a.variant != b.variant) continue;
      ++variants[b.variant];
      check(a, b);
    }
  return variants;
}

// What both equivalence tests compare: the model (LP writer text), data, statement parts, narrative, objective
// formula, the first variable's domain, and the parameters' symbols, descriptions and units.
void expect_same_instance(const Instance& a, const Instance& b) {
  EXPECT_EQ(trex::lp::write_lp_string(a.model), trex::lp::write_lp_string(b.model));
  EXPECT_EQ(data_json(a).dump(), data_json(b).dump());
  EXPECT_EQ(a.intro, b.intro);
  EXPECT_EQ(a.rules, b.rules);
  EXPECT_EQ(a.goal, b.goal);
  EXPECT_EQ(a.narrative, b.narrative);
  EXPECT_EQ(a.objective_formula, b.objective_formula);
  ASSERT_EQ(a.constraints.size(), b.constraints.size());
  ASSERT_FALSE(a.vars.empty());
  ASSERT_FALSE(b.vars.empty());
  EXPECT_EQ(a.vars[0].domain, b.vars[0].domain);
  for (size_t k = 0; k < a.params.size() && k < b.params.size(); ++k) {
    EXPECT_EQ(a.params[k].symbol, b.params[k].symbol);
    EXPECT_EQ(a.params[k].description, b.params[k].description);
    EXPECT_EQ(a.params[k].unit, b.params[k].unit);
  }
}

}  // namespace

// The file family and the C++ marketing generator: same model (LP writer text), data, statement and formulas.
TEST(FamilyFile, MediaPlanningEqualsMarketingGenerator) {
  auto spec = load_family_file(example_path("media_planning.toml"));
  auto variants = compare_draws(Structure::Marketing, *spec, [](const Instance& a, const Instance& b) {
    expect_same_instance(a, b);
    ASSERT_EQ(a.constraints.size(), b.constraints.size());
    for (size_t k = 0; k < a.constraints.size(); ++k) EXPECT_EQ(a.constraints[k].formula, b.constraints[k].formula);
    EXPECT_EQ(a.vars.size(), b.vars.size());
    EXPECT_EQ(b.family_name, "media_planning");
  });
  EXPECT_EQ(variants.size(), 2u);  // both variants were compared
}

// The file family and the C++ knapsack generator: same model, data, statement and formulas.
TEST(FamilyFile, ItemSelectionEqualsKnapsackGenerator) {
  auto spec = load_family_file(example_path("item_selection.toml"));
  auto variants = compare_draws(Structure::Knapsack, *spec, [](const Instance& a, const Instance& b) {
    expect_same_instance(a, b);
    ASSERT_FALSE(a.constraints.empty());
    ASSERT_FALSE(b.constraints.empty());
    EXPECT_EQ(a.constraints[0].formula, b.constraints[0].formula);
    EXPECT_EQ(a.params.size(), b.params.size());
    EXPECT_EQ(a.sets.back().description, b.sets.back().description);
  });
  EXPECT_EQ(variants.size(), 3u);
}

// Every error class (22): the message names f.toml and the offending line.
TEST(FamilyFile, ErrorsNameFileAndLine) {
  const std::string base = read_text(example_path("media_planning.toml"));
  ASSERT_EQ(error_of(base), "");
  struct Case {
    std::string from, to, what;
  };
  const std::vector<Case> cases = {
      {"sizes = [3, 4, 6, 8]", "sizes = [3, 4, 6]", "4 sizes"},
      {"value = \"uniform_int(3, 12)\"", "value = \"uniform_int(3, 12\"", "expected ')'"},
      {"value = \"uniform_int(3, 12)\"", "value = \"uniform_int(12, 3)\"", "lo <= hi"},
      {"value = \"uniform_int(3, 12)\"", "value = \"gamma(3, 12)\"", "unknown function"},
      {"value = \"uniform_int(3, 12)\"", "value = \"uniform_int(3, 12) + q\"", "undefined name 'q'"},
      {"expr = \"sum(k in K) a[k] * n[k] >= A\"", "expr = \"sum(k in Z) a[k] * n[k] >= A\"", "unknown set 'Z'"},
      {"expr = \"sum(k in K) a[k] * n[k] >= A\"", "expr = \"sum(k in K) a[k] * n[k] * n[k] >= A\"", "not linear"},
      {"expr = \"sum(k in K) a[k] * n[k] >= A\"", "expr = \"sum(k in K) planted[k] * n[k] >= A\"", "export = false"},
      {"upper = \"u[k]\"", "upper = \"umax[k]\"", "undefined name 'umax'"},
      {"upper = \"u[k]\"", "upper = \"uniform(1, 2)\"", "not in variable bounds"},
      {"text = \"${Org} wants", "text = \"${Boss} wants", "unknown placeholder"},
      {"{Slots may be bought", "{{Slots may be bought", "do not nest"},
      {"type = \"continuous\"", "type = \"real\"", "not continuous, integer or binary"},
      {"variants = [\"media_mix\"]\nsense", "variants = [\"tv_only\"]\nsense", "unknown variant"},
      {"symbol = \"planted\"", "symbol = \"c\"  # twice", "declared twice"},
      {"decimals = 1\nvalue = \"round(r[k] * (2 - r[k] * 50 / c[k])", "value = \"round(r[k] * (2 - r[k] * 50 / c[k])",
       "decimals = 0"},
      {"name = \"media_planning\"", "name = \"marketing\"", "built-in"},
      {"labels = [\"TV\"", "labels = [\"T V\"", "not a name"},
      {"key = \"max_ads\"", "colour = \"red\"\nkey = \"max_ads\"", "unknown key 'colour'"},
      {"value = \"uniform_int(3, 12)\"", "value = \"uniform_int(3, 12) + k\"", "stands for a label"},
      {"symbol = \"n\"", "symbol = \"cost\"", "name of a data key"},
      {"symbol = \"K\"\nkey", "symbol = \"K\" = 2\nkey", "column"},  // a TOML syntax error (toml++'s line and column)
  };
  for (const auto& c : cases) {
    std::string text = replaced(base, c.from, c.to);
    std::string err = error_of(text);
    SCOPED_TRACE(c.to);
    ASSERT_FALSE(err.empty());
    EXPECT_NE(err.find(c.what), std::string::npos) << err;
    ASSERT_EQ(err.rfind("f.toml:", 0), 0u) << err;
    int line = std::stoi(err.substr(7));
    // The line named is the one edited (or the entry holding it, a few lines above).
    int edited = line_of(text, c.to.substr(0, c.to.find('\n')));
    EXPECT_LE(line, edited + 2) << err;
    EXPECT_GE(line, edited - 12) << err;
  }
}

// Random line deletions, duplications, swaps and character flips: a trex::Error or a valid spec, never a crash.
TEST(FamilyFile, FuzzedFilesFailCleanly) {
 for (const char* example : {"media_planning.toml", "item_selection.toml"}) {
  const std::string base = read_text(example_path(example));
  std::vector<std::string> lines;
  std::stringstream ss(base);
  for (std::string l; std::getline(ss, l);) lines.push_back(l);
  trex::Rng rng(2026);
  int errors = 0, valid = 0;
  const char kChars[] = "[]{}()=\"'#,.:|$*+-/<>0123456789 abcKkx_\n";
  for (int it = 0; it < 2000; ++it) {
    std::vector<std::string> m = lines;
    int edits = 1 + int(rng.uniform_int(0, 2));
    for (int e = 0; e < edits; ++e) {
      size_t i = size_t(rng.uniform_int(0, int64_t(m.size()) - 1)), j = size_t(rng.uniform_int(0, int64_t(m.size()) - 1));
      switch (rng.uniform_int(0, 3)) {
        case 0: m.erase(m.begin() + std::ptrdiff_t(i)); break;
        case 1: m.insert(m.begin() + std::ptrdiff_t(i), m[j]); break;
        case 2: std::swap(m[i], m[j]); break;
        default:
          if (!m[i].empty()) m[i][size_t(rng.uniform_int(0, int64_t(m[i].size()) - 1))] = kChars[rng.uniform_int(0, int64_t(sizeof(kChars)) - 2)];
      }
    }
    std::string text;
    for (const auto& l : m) text += l + "\n";
    try {
      auto spec = parse_family_text(text, "fuzz.toml");
      generate_from_file(*spec, Difficulty::Large, 3, uint64_t(it));
      ++valid;
    } catch (const trex::Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("fuzz.toml:", 0), 0u) << e.what();
      ++errors;
    }
  }
  EXPECT_GT(errors, 500) << example;
  EXPECT_GT(valid, 10) << example;
 }
}

// Through the CLI: a bad file is refused with FILE:LINE before anything is written; a good one gives verified
// samples (every answer LP re-solved, every program run) and the same bytes twice.
TEST(FamilyFileCli, BadFileRefusedGoodFileVerifiedAndDeterministic) {
  fs::path dir = trex::testing::fresh_temp_dir("trex_family_file_cli");
  int rc = 0;
  std::string trex = TREX_BIN_PATH;
  std::string out;
  // One error class of each stage: the TOML syntax, a file-level check, an expression, a template, a trial draw.
  const std::vector<std::pair<std::string, std::string>> edits = {{"sizes = [3, 4, 6, 8]", "sizes = [3, 4]"},
                                                                   {"key = \"channels\"", "key = \"channels\" x"},
                                                                   {"upper = \"u[k]\"", "upper = \"u[j]\""},
                                                                   {"(${list(K)}).\"\n\n[[intro]]", "(${list(Z)}).\"\n\n[[intro]]"},
                                                                   {"uniform_int(3, 12)", "uniform_int(3, 1)"}};
  for (const auto& [from, to] : edits) {
    std::string bad = replaced(read_text(example_path("media_planning.toml")), from, to);
    { std::ofstream(dir / "bad.toml") << bad; }
    out = trex::testing::run_command(trex + " synth --family " + (dir / "bad.toml").string() +
                                         " --mix structure=media_planning:1 --count 5 --seed 1 --out " + (dir / "o_bad").string(),
                                     rc);
    EXPECT_EQ(rc, 2) << out;
    EXPECT_NE(out.find("error: " + (dir / "bad.toml").string() + ":" + std::to_string(line_of(bad, to.substr(0, to.find('\n')))) + ":"),
              std::string::npos)
        << out;
    EXPECT_FALSE(fs::exists(dir / "o_bad")) << to;
  }

  std::string hashes[2];
  for (int run = 0; run < 2; ++run) {
    fs::path o = dir / ("o" + std::to_string(run));
    out = trex::testing::run_command(trex + " synth --family " + example_path("media_planning.toml") +
                                         " --mix structure=media_planning:1 --count 30 --test-count 5 --seed 11 --no-progress --json --out " +
                                         o.string(),
                                     rc);
    ASSERT_EQ(rc, 0) << out;
    auto m = trex::Json::parse(read_text((o / "manifest.json").string()));
    EXPECT_EQ(m["counts"]["sft"], 30);
    EXPECT_EQ(m["buckets"]["structure"]["media_planning"], 30);
    const auto& v = m["verification"];
    EXPECT_EQ(v["lp_answers"], v["lp_answers_resolved"]);
    EXPECT_EQ(v["code_answers"], v["code_answers_run"]);
    EXPECT_GT(v["code_answers"].get<int>(), 0);
    EXPECT_EQ(m["options"]["families"][0]["name"], "media_planning");
    hashes[run] = m["files"].dump();
  }
  EXPECT_EQ(hashes[0], hashes[1]);

  // A checkpoint written with one family file is refused with another (its SHA-256 is in the fingerprint).
  std::string edited = replaced(read_text(example_path("media_planning.toml")), "uniform_int(3, 12)", "uniform_int(3, 11)");
  { std::ofstream(dir / "edited.toml") << edited; }
  fs::path o = dir / "resume";
  std::string common = " --mix structure=media_planning:1 --count 30 --test-count 5 --seed 11 --chunk-size 10 --no-progress --out " + o.string();
  out = trex::testing::run_command(trex + " synth --family " + example_path("media_planning.toml") + common + " --interrupt-after-chunks 1", rc);
  EXPECT_EQ(rc, 3) << out;
  out = trex::testing::run_command(trex + " synth --family " + (dir / "edited.toml").string() + common, rc);
  EXPECT_NE(rc, 0);
  EXPECT_NE(out.find("different options"), std::string::npos) << out;
  fs::remove_all(dir);
}
