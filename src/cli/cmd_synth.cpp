// `trex synth`: solver-verified OR data (SFT conversations, CPT documents, held-out test set);
// `trex synth --list-families`: the problem families, their generators and what each bucket produces.
#include <algorithm>
#include <cstdio>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <memory>
#include <set>

#include "cli/command.hpp"
#include "ordata/domains.hpp"
#include "ordata/families.hpp"
#include "ordata/family_file.hpp"
#include "ordata/synth.hpp"
#include "ordata/verify.hpp"
#include "util/error.hpp"
#include "util/jsonl.hpp"

namespace cmd_synth {  // this file's own names (the unity build joins cli files)

struct Opts {
  trex::ordata::SynthOptions synth;
  std::string out;
  std::vector<std::string> mix, test_mix;
  bool no_progress = false, json = false, code_solve_always = false;
  std::string llm_cache;
  std::string test_task = "lp_structure";
  bool list_families = false;
  std::vector<std::string> family_files;
  int list_draws = 6;
};

// --list-families: every structure with its generators (variant, task family, formulation), whether
// the default mix draws it, and per difficulty bucket what `draws` instances (seeds 1..draws, domains
// in turn) measure: variables, rows and integer variables (min-max) and how many CBC verified.
int list_families(const Opts& o) {
  using namespace trex::ordata;
  if (o.list_draws < 1 || o.list_draws > 1000) throw trex::Error("synth: --list-draws must be in 1..1000");
  trex::Json all = trex::Json::array();
  std::set<std::string> task_families;
  int generators = 0;
  std::string text;
  for (int si = 0; si < kNumStructures; ++si) {
    Structure st = Structure(si);
    const FamilyInfo& info = family_info(st);
    trex::Json fam = {{"structure", to_string(st)}, {"default_mix", info.classic}, {"modes", {"DP", "DT", "DPS"}},
                      {"tasks", {"full_model", "code_only", "lp_structure", "repair"}}};
    text += fmt::format("{} ({})\n", to_string(st), info.classic ? "default mix" : "opt-in: --mix structure=" + std::string(to_string(st)) + ":W");
    trex::Json gens = trex::Json::array();
    for (const auto& g : info.generators) {
      gens.push_back({{"variant", g.variant}, {"task_family", g.task_family}, {"formulation", g.formulation}});
      task_families.insert(g.task_family);
      ++generators;
      text += fmt::format("  {:<20} [{}] {}\n", g.variant, g.task_family, g.formulation);
    }
    fam["generators"] = gens;
    text += "  representations DP, DT, DPS; tasks full_model, code_only, lp_structure, repair\n";
    text += fmt::format("  {:<11} {:>6} {:>9} {:>9} {:>9} {:>9}  variants drawn\n", "bucket", "draws", "verified", "vars", "rows", "integer");
    trex::Json buckets = trex::Json::object();
    for (int d = 0; d < kNumDifficulties; ++d) {
      int vmin = 1 << 30, vmax = 0, rmin = 1 << 30, rmax = 0, imin = 1 << 30, imax = 0, verified = 0;
      std::map<std::string, int> variants;
      for (int k = 1; k <= o.list_draws; ++k) {
        Instance in = generate(st, Difficulty(d), (k - 1) % num_domains(), uint64_t(k) * 1000003ULL + uint64_t(d));
        int nv = in.model.num_vars(), nr = in.model.num_rows(), ni = in.model.num_integer_vars();
        vmin = std::min(vmin, nv), vmax = std::max(vmax, nv), rmin = std::min(rmin, nr), rmax = std::max(rmax, nr);
        imin = std::min(imin, ni), imax = std::max(imax, ni);
        verified += verify_instance(in).accepted;
        ++variants[in.variant];
      }
      auto range = [](int a, int b) { return a == b ? std::to_string(a) : fmt::format("{}-{}", a, b); };
      std::string vs;
      for (const auto& [v, n] : variants) vs += fmt::format("{}{} {}", vs.empty() ? "" : ", ", v, n);
      text += fmt::format("  {:<11} {:>6} {:>9} {:>9} {:>9} {:>9}  {}\n", to_string(Difficulty(d)), o.list_draws, verified,
                          range(vmin, vmax), range(rmin, rmax), range(imin, imax), vs);
      buckets[to_string(Difficulty(d))] = {{"draws", o.list_draws}, {"verified", verified}, {"vars", {vmin, vmax}},
                                           {"rows", {rmin, rmax}}, {"integer_vars", {imin, imax}}, {"variants", variants}};
    }
    fam["buckets"] = buckets;
    all.push_back(fam);
  }
  // Family files (--family): their generators (one per variant) and the same per-bucket draws.
  for (const auto& spec : o.synth.families) {
    trex::Json fam = {{"structure", spec->name}, {"default_mix", false}, {"family_file", spec->file}};
    text += fmt::format("{} (family file {}: --mix structure={}:W)\n", spec->name, spec->file, spec->name);
    std::vector<std::string> forms = file_family_formulations(*spec);
    std::vector<std::string> variants = spec->variants.empty() ? std::vector<std::string>{spec->name} : spec->variants;
    trex::Json gens = trex::Json::array();
    for (size_t i = 0; i < variants.size(); ++i) {
      std::string f = i < forms.size() ? forms[i] : "";
      gens.push_back({{"variant", variants[i]}, {"task_family", spec->task_family}, {"formulation", f}});
      task_families.insert(spec->task_family);
      ++generators;
      text += fmt::format("  {:<20} [{}] {}\n", variants[i], spec->task_family, f);
    }
    fam["generators"] = gens;
    trex::Json buckets = trex::Json::object();
    for (int d = 0; d < kNumDifficulties; ++d) {
      int verified = 0, vmin = 1 << 30, vmax = 0;
      for (int k = 1; k <= o.list_draws; ++k) {
        Instance in = generate_from_file(*spec, Difficulty(d), (k - 1) % num_domains(), uint64_t(k) * 1000003ULL + uint64_t(d));
        vmin = std::min(vmin, in.model.num_vars()), vmax = std::max(vmax, in.model.num_vars());
        verified += verify_instance(in).accepted;
      }
      text += fmt::format("  {:<11} draws {} verified {} vars {}-{}\n", to_string(Difficulty(d)), o.list_draws, verified, vmin, vmax);
      buckets[to_string(Difficulty(d))] = {{"draws", o.list_draws}, {"verified", verified}, {"vars", {vmin, vmax}}};
    }
    fam["buckets"] = buckets;
    all.push_back(fam);
  }
  if (o.json) {
    std::printf("%s\n", trex::Json{{"structures", all}, {"generators", generators}, {"task_families", task_families}}.dump().c_str());
  } else {
    std::printf("%s", text.c_str());
    std::printf("%s\n", fmt::format("{} structures, {} generators, {} task families ({})", all.size(), generators,
                                    task_families.size(), fmt::join(task_families, ", "))
                            .c_str());
  }
  return 0;
}

// --family FILE...: loads and checks every family file (errors name the file and line) before anything else;
// each file family gets weight 1 in the structure mix unless a --mix structure=... group sets it.
void load_families(Opts& o) {
  for (const auto& f : o.family_files) {
    auto spec = trex::ordata::load_family_file(f);
    for (const auto& other : o.synth.families)
      if (other->name == spec->name) throw trex::Error(f + ":" + std::to_string(spec->line_of_name) + ": family '" + spec->name + "' is loaded twice");
    o.synth.families.push_back(spec);
  }
  std::vector<std::string> names;
  for (const auto& f : o.synth.families) names.push_back(f->name);
  o.synth.mix.file_family.assign(names.size(), 1.0);
  o.synth.mix.file_family_names = names;
}

int run(Opts& o) {
  load_families(o);
  if (o.list_families) return list_families(o);
  if (o.out.empty() || o.synth.count < 0) throw trex::Error("synth: --count, --seed and --out are required (unless --list-families)");
  o.synth.out = o.out;
  o.synth.progress = !o.no_progress;
  o.synth.code_reuse_verified_solve = !o.code_solve_always;
  if (!o.llm_cache.empty()) o.synth.llm.cache_dir = o.llm_cache;
  for (const auto& m : o.mix) trex::ordata::apply_mix(m, o.synth.mix, o.synth.mix.file_family_names);
  // The test mix starts from the training mix; each --test-mix group replaces that group (the task is --test-task's).
  if (!o.test_mix.empty()) {
    o.synth.test_mix = o.synth.mix;
    for (const auto& m : o.test_mix) trex::ordata::apply_test_mix(m, *o.synth.test_mix, o.synth.mix.file_family_names);
  }
  if (!trex::ordata::parse(o.test_task, o.synth.test_task))
    throw trex::Error("synth: unknown --test-task '" + o.test_task + "' (lp_structure or code_only)");
  auto sum = trex::ordata::run_synth(o.synth);
  if (sum.interrupted) {
    std::fprintf(stderr, "synth: stopped after the requested number of chunks; rerun the same command to resume\n");
    return 3;
  }
  if (o.json) {
    trex::Json j = {{"sft", sum.sft}, {"cpt", sum.cpt}, {"test", sum.test}, {"candidates", sum.candidates},
                    {"resumed_chunks", sum.resumed_chunks}, {"rejections", sum.rejections}, {"seconds", sum.seconds},
                    {"code_answers", sum.code_answers}, {"code_answers_run", sum.code_answers_run}};
    if (o.synth.llm.enabled()) j["llm"] = {{"paraphrased", sum.paraphrased}, {"template_fallbacks", sum.llm_rejections}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("%s\n", fmt::format("synth: {} SFT samples, {} CPT documents, {} test items from {} candidates in {:.1f} s -> {}",
                                    sum.sft, sum.cpt, sum.test, sum.candidates, sum.seconds, o.out)
                            .c_str());
    std::printf("%s\n", fmt::format("synth: {} of {} code answers run through the gurobipy layer reproduced the verified objective",
                                    sum.code_answers_run, sum.code_answers)
                            .c_str());
    if (o.synth.llm.enabled()) {
      int64_t fallbacks = 0;
      for (const auto& [reason, n] : sum.llm_rejections) fallbacks += n;
      std::printf("%s\n", fmt::format("synth: LLM paraphrases taken for {} items, {} kept the template statement (see manifest.json)",
                                      sum.paraphrased, fallbacks)
                              .c_str());
    }
  }
  return 0;
}

trex::cli::CommandRegistrar reg("synth", "Generate solver-verified OR data: sft.jsonl, cpt.jsonl, test.jsonl, manifest.json",
                                [](CLI::App& sub) -> trex::cli::Action {
                                  auto o = std::make_shared<Opts>();
                                  o->synth.count = -1;  // required unless --list-families (checked in run)
                                  sub.add_option("--count", o->synth.count, "Number of SFT samples (each with one CPT document)");
                                  auto* seed = sub.add_option("--seed", o->synth.seed, "Run seed (same seed, same bytes)");
                                  sub.add_option("--out", o->out, "Output folder");
                                  sub.add_flag("--list-families", o->list_families,
                                               "Print every problem family and generator (task family, formulation) with what each "
                                               "difficulty bucket produces, then exit");
                                  sub.add_option("--list-draws", o->list_draws, "Instances built and verified per bucket by --list-families")
                                      ->capture_default_str();
                                  sub.add_option("--family", o->family_files,
                                                 "Add the problem family of this family file (docs/family-files.md), repeatable; "
                                                 "its name is a structure for --mix (default weight 1)");
                                  sub.add_option("--test-count", o->synth.test_count, "Held-out test items (different seeds)")
                                      ->capture_default_str();
                                  sub.add_option("--test-task", o->test_task,
                                                 "Task of the test items: lp_structure (LP-file answer) or code_only "
                                                 "(a program reading data.json)")
                                      ->capture_default_str();
                                  sub.add_option("--mix", o->mix,
                                                 "Bucket weights, repeatable: KEY=NAME:W,... with KEY structure|mode|difficulty|task|domain");
                                  sub.add_option("--test-mix", o->test_mix,
                                                 "Bucket weights of the test items, repeatable, over the training mix: e.g. "
                                                 "structure=knapsack:1 with --mix structure=all:1,knapsack:0 tests a held-out family");
                                  sub.add_option("--threads", o->synth.threads, "Worker threads")->capture_default_str();
                                  sub.add_option("--jaccard", o->synth.jaccard_threshold, "Near-duplicate threshold")->capture_default_str();
                                  sub.add_option("--chunk-size", o->synth.chunk_size, "Candidates per checkpoint chunk")->capture_default_str();
                                  sub.add_option("--interrupt-after-chunks", o->synth.interrupt_after_chunks,
                                                 "Testing aid: stop resumably after writing N chunk checkpoints");
                                  sub.add_option("--code-time-limit", o->synth.code_time_limit,
                                                 "Wall-clock limit in seconds of one code answer run through the gurobipy layer")
                                      ->capture_default_str();
                                  sub.add_flag("--code-solve-always", o->code_solve_always,
                                               "Solve every code answer's model with CBC, also when it is the verified model "
                                               "(reference path; same outputs, slower)");
                                  sub.add_option("--corrupt-code-every", o->synth.corrupt_code_every,
                                                 "Testing aid: give every N-th candidate a wrong code answer (the check must reject it)");
                                  sub.add_option("--llm-base-url", o->synth.llm.base_url,
                                                 "Paraphrase statements through this OpenAI-compatible endpoint (e.g. http://127.0.0.1:8000/v1)");
                                  sub.add_option("--llm-model", o->synth.llm.model, "Model name sent to the LLM endpoint")->capture_default_str();
                                  sub.add_option("--llm-api-key-env", o->synth.llm.api_key_env,
                                                 "Environment variable holding the API key (never logged; empty: none)")
                                      ->capture_default_str();
                                  sub.add_option("--llm-temperature", o->synth.llm.temperature, "Sampling temperature of the paraphrases")
                                      ->capture_default_str();
                                  sub.add_option("--llm-max-tries", o->synth.llm.max_tries, "Tries per request (retries on errors/5xx)")
                                      ->capture_default_str();
                                  sub.add_option("--llm-timeout", o->synth.llm.timeout_s, "Read timeout per request, seconds")
                                      ->capture_default_str();
                                  sub.add_option("--llm-cache", o->llm_cache, "Response cache folder (default OUT/llm_cache)");
                                  sub.add_flag("--no-progress", o->no_progress, "No progress bar");
                                  sub.add_flag("--json", o->json, "Print the summary as JSON");
                                  return [o, seed] {
                                    if (!o->list_families && seed->count() == 0) throw trex::Error("synth: --seed is required");
                                    return run(*o);
                                  };
                                });

}  // namespace cmd_synth
