// The synth pipeline: candidate generation on threads, ordered acceptance, chunk checkpoints, exports.
#include "ordata/synth.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <optional>
#include <set>
#include <thread>
#include <unordered_set>

#include "ordata/answers.hpp"
#include "ordata/cpt.hpp"
#include "ordata/dedup.hpp"
#include "ordata/domains.hpp"
#include "ordata/families.hpp"
#include "ordata/phrasing.hpp"
#include "ordata/gates.hpp"
#include "ordata/render.hpp"
#include "ordata/variety.hpp"
#include "ordata/verify.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/hash.hpp"
#include "util/jsonl.hpp"
#include "util/progress.hpp"
#include "util/timer.hpp"

namespace fs = std::filesystem;

namespace trex::ordata {

namespace {

constexpr uint64_t kTestSalt = 0x7e57c0de5eed5a17ULL;
const char* kPartialDir = ".synth-partial";

template <size_t N>
int pick_weighted(Rng& rng, const std::array<double, N>& w) {
  double total = 0;
  for (double v : w) total += v;
  double r = rng.uniform() * total;
  for (size_t i = 0; i < N; ++i) {
    if (r < w[i]) return int(i);
    r -= w[i];
  }
  for (size_t i = N; i-- > 0;)
    if (w[i] > 0) return int(i);
  return 0;
}

int pick_weighted(Rng& rng, const std::vector<double>& w) {
  double total = 0;
  for (double v : w) total += v;
  double r = rng.uniform() * total;
  for (size_t i = 0; i < w.size(); ++i) {
    if (r < w[i]) return int(i);
    r -= w[i];
  }
  for (size_t i = w.size(); i-- > 0;)
    if (w[i] > 0) return int(i);
  return 0;
}

// The structure weights followed by the family files' weights.
std::vector<double> structure_weights(const Mix& mix) {
  std::vector<double> w(mix.structure.begin(), mix.structure.end());
  w.insert(w.end(), mix.file_family.begin(), mix.file_family.end());
  return w;
}

std::vector<std::string> file_family_names(const SynthOptions& o) {
  std::vector<std::string> names;
  for (const auto& f : o.families) names.push_back(f->name);
  return names;
}

// One processed candidate; `reason` non-empty when it was rejected before the ordered filters.
struct Candidate {
  std::string reason;
  std::string structure;  // drawn, also for rejected candidates (the per-family rejection counts)
  Json record;            // sft record (train) or test record (test)
  std::string cpt[2];     // model report, modeling rationale
  std::string param_sig, sol_sig;
  TokenSet tokens;
  std::vector<uint64_t> signature;
  Json files = Json::object();  // DPS attachments
  std::string reference_code;   // code_only test items: the program reading data.json
  bool lp_checked = false;      // the answer's LP was re-read and re-solved
  bool code_run = false;        // the answer's program was run (whatever came of it)
  bool code_checked = false;    // ... and printed the verified objective
  bool code_same_model = false; // ... its one solve was of the verified model itself (names aside)
  bool slack_family = false;          // a constraint family binds nowhere at the optimum (counted, not rejected)
  int narrative = -1;                 // the generator's draws of its prose (the manifest's variety counts)
  std::vector<PhraseUse> phrasing;
  std::string statement;              // the problem statement as exported (its n-gram diversity)
  double solve_ms = 0, check_ms = 0, code_ms = 0;
};

// Testing aid (--corrupt-code-every): the program's objective becomes 2 * objective + 1, a wrong answer
// the code check must catch.
std::string corrupt_program(const std::string& code) {
  const std::string at = "\nmodel.optimize()\n";
  size_t p = code.find(at);
  if (p == std::string::npos) throw Error("synth: --corrupt-code-every: no model.optimize() line in a generated program");
  return code.substr(0, p + 1) + "model.setObjective(2 * model.getObjective() + 1, model.ModelSense)" + code.substr(p);
}

// With an LLM: the prose of the statement (all of it for DP; intro, rules and goal for DT/DPS, whose
// data section stays verbatim after it) is paraphrased; a rejected paraphrase keeps the template text.
// Returns the rejection reason ("" when the paraphrase was taken).
std::string paraphrase_statement(const Paraphraser& para, const Instance& inst, Mode mode, uint64_t seed, RenderedProblem& problem) {
  bool dp = mode == Mode::DP;
  std::string original = dp ? problem.text : problem.intro + "\n\n" + problem.rules + "\n\n" + problem.goal;
  std::vector<std::string> names;
  if (dp)
    for (const auto& set : inst.sets)
      for (const auto& e : set.elements)
        if (original.find(readable(e)) != std::string::npos) names.push_back(readable(e));
  ParaphraseResult r = para.paraphrase(original, names, seed);
  if (!r.reason.empty()) return r.reason;
  problem.text = dp ? r.text : r.text + "\n\n" + problem.data_section;
  return "";
}

Candidate make_candidate(const SynthOptions& o, const Paraphraser* para, CodeRunner& runner, bool test, int64_t k) {
  Candidate c;
  uint64_t stream = test ? (o.seed ^ kTestSalt) : o.seed;
  Rng rng = Rng::derive(stream, uint64_t(k));
  const Mix& mix = test && o.test_mix ? *o.test_mix : o.mix;
  // Family files extend the structure draw (one draw over built-in and file weights; without files the same draw).
  int pick = mix.file_family.empty() ? pick_weighted(rng, mix.structure) : pick_weighted(rng, structure_weights(mix));
  const FamilySpec* file_family = pick >= kNumStructures ? o.families[size_t(pick - kNumStructures)].get() : nullptr;
  Structure st = file_family ? Structure::GenericLpMip : Structure(pick);
  c.structure = file_family ? file_family->name : to_string(st);
  Difficulty diff = Difficulty(pick_weighted(rng, mix.difficulty));
  int domain = pick_weighted(rng, mix.domain);
  Mode mode = Mode(pick_weighted(rng, mix.mode));
  Task task = test ? o.test_task : Task(pick_weighted(rng, mix.task));
  uint64_t inst_seed = rng.next_u64();
  Rng text_rng(rng.next_u64());
  Instance inst = file_family ? generate_from_file(*file_family, diff, domain, inst_seed) : generate(st, diff, domain, inst_seed);
  c.narrative = inst.narrative;
  c.phrasing = inst.phrasing;
  Verification v = verify_instance(inst);
  c.solve_ms = v.seconds * 1e3;
  if (!v.accepted) {
    c.reason = v.reject_reason;
    return c;
  }
  Timer check_timer;
  std::optional<Flaw> flaw;
  if (task == Task::Repair) {
    flaw = make_flaw(inst, v, text_rng);
    if (!flaw) {
      c.reason = "repair_unobservable";
      return c;
    }
  }
  RenderedProblem problem = render_problem(inst, mode, text_rng);
  std::optional<std::string> llm_rejection;
  if (para) llm_rejection = paraphrase_statement(*para, inst, mode, inst_seed, problem);
  TaskSample sample = build_task(inst, v, problem, task, flaw, text_rng);
  if (o.corrupt_code_every > 0 && k % o.corrupt_code_every == 0 && !sample.answer_code.empty()) {
    std::string bad_code = corrupt_program(sample.answer_code);
    size_t p = sample.assistant.find(sample.answer_code);
    sample.assistant.replace(p, sample.answer_code.size(), bad_code);
    sample.answer_code = bad_code;
  }
  std::string bad = check_answer(sample, v.objective);
  c.check_ms = check_timer.millis();
  if (!bad.empty()) {
    c.reason = bad;
    return c;
  }
  c.lp_checked = !sample.answer_lp.empty();
  c.slack_family = !slack_family_reason(inst, v.x).empty();
  std::string id = fmt::format("{}-{}-{:07d}", test ? "test" : "train", o.seed, k);
  const auto& dom = domains()[size_t(domain)];
  Json meta = Json::object();
  meta["mode"] = to_string(mode);
  meta["domain"] = dom.name;
  meta["structure"] = c.structure;
  // A test item of a structure the training mix leaves out (--test-mix): it measures transfer across families.
  if (test && structure_weights(o.mix)[size_t(pick)] == 0) meta["held_out_structure"] = true;
  meta["difficulty"] = to_string(diff);
  meta["data_interface"] = data_interface(mode);
  meta["answer_style"] = answer_style(task);
  meta["task"] = to_string(task);
  meta["objective"] = v.objective;
  meta["seed"] = inst_seed;
  meta["variant"] = inst.variant;
  meta["status"] = lp::to_string(v.status);
  meta["sense"] = inst.sense == lp::ObjSense::Minimize ? "minimize" : "maximize";
  meta["num_vars"] = inst.model.num_vars();
  meta["num_rows"] = inst.model.num_rows();
  meta["num_integer_vars"] = inst.model.num_integer_vars();
  if (flaw) meta["flaw"] = flaw->kind;
  if (llm_rejection) {
    meta["statement"] = llm_rejection->empty() ? "llm" : "template";
    if (!llm_rejection->empty()) meta["llm_rejection"] = *llm_rejection;
  }
  // Attachments are written for DPS problems and for code-only tasks (their program reads them); read
  // back by the reference reader they must give exactly the instance data.
  std::vector<DataFile> files;
  if (mode == Mode::DPS || task == Task::CodeOnly) {
    files = answer_files(inst, problem);
    std::string bad_files = check_data_files(files, problem.data);
    if (!bad_files.empty()) {
      c.reason = bad_files;
      return c;
    }
    meta["data_files"] = to_string(layout_of(files));
    for (const auto& f : files) c.files[f.name] = f.content;
    // The eval harness gives a code answer its item's data as data.json only: CSV layouts can't be test items.
    if (test && task == Task::CodeOnly) {
      if (layout_of(files) != DataLayout::JsonOnly) {
        c.reason = "test_code_needs_json_only";
        return c;
      }
      c.reference_code = sample.answer_code;  // python_program(inst, problem.data, &files), checked below
    }
  }

  Json sft = Json::object();
  sft["id"] = id;
  sft["messages"] = Json::array({Json{{"role", "user"}, {"content", sample.user}}, Json{{"role", "assistant"}, {"content", sample.assistant}}});
  sft["metadata"] = meta;
  std::string gate = quality_gate(sft, file_family_names(o));
  if (!gate.empty()) {
    c.reason = "gate_" + gate;
    return c;
  }
  // The code answer, taken from the answer text the way the tests and the eval extract it, is run through
  // the gurobipy-compatible layer: code-only programs in a folder holding the sample's files, full-model
  // programs (data embedded) in an empty one.
  if (!sample.answer_code.empty()) {
    if (extract_python_block(sample.assistant) != sample.answer_code) {
      c.reason = "answer_code_not_extractable";
      return c;
    }
    CodeRun run;
    KnownSolve known{&inst.model, &v.x, o.code_reuse_verified_solve};
    std::string bad_code = check_code_answer(runner, sample.answer_code, task == Task::CodeOnly ? files : std::vector<DataFile>{},
                                             v.objective, &run, &known);
    c.code_run = true;
    c.code_same_model = run.solves == 1 && run.same_model == 1;
    c.code_ms = run.seconds * 1e3;
    if (!bad_code.empty()) {
      c.reason = bad_code;
      return c;
    }
    c.code_checked = true;
  }
  if (test) {
    Json t = Json::object();
    t["id"] = id;
    t["problem"] = sample.user;
    t["answer"] = v.objective;
    t["lp_file"] = "test_lp/" + id + ".lp";
    t["reference_lp"] = sample.answer_lp.empty() ? reference_lp(inst) : sample.answer_lp;
    t["data"] = problem.data;
    if (task == Task::CodeOnly) t["reference_code"] = c.reference_code;  // what `trex eval --oracle` runs
    t["statement"] = problem.text;
    t["metadata"] = meta;
    c.record = std::move(t);
  } else {
    c.record = std::move(sft);
    c.cpt[0] = cpt_document(inst, v, problem, CptKind::ModelReport, text_rng);
    c.cpt[1] = cpt_document(inst, v, problem, CptKind::ModelingRationale, text_rng);
  }
  c.param_sig = parameter_signature(inst);
  c.sol_sig = solution_signature(inst, v);
  c.statement = problem.text;
  c.tokens = token_set(sample.user);
  c.signature = minhash(c.tokens);
  return c;
}

// Ordered acceptance state shared by the train and test phases.
struct State {
  NearDuplicateIndex index;
  std::unordered_set<std::string> param_sigs, sol_sigs;
  std::vector<Json> train, test;           // accepted records (chunk-file form)
  std::map<std::string, int64_t> rejections;
  // Per structure: candidates used and their rejection reasons (the manifest's "families" section).
  std::map<std::string, std::map<std::string, int64_t>> family_rejections;
  std::map<std::string, int64_t> family_candidates;
  int64_t candidates = 0;
  int64_t programs_run = 0;  // code answers run over the candidates used (accepted or rejected)
  explicit State(double threshold) : index(threshold) {}
};

// Applies one accepted item (from a fresh candidate or a chunk file) to the state.
void admit(State& s, const Json& item, bool test, const TokenSet* tokens, const std::vector<uint64_t>* sig) {
  s.param_sigs.insert(item["param_sig"].get<std::string>());
  s.sol_sigs.insert(item["sol_sig"].get<std::string>());
  if (tokens) {
    s.index.add(*tokens, *sig);
  } else {
    const Json& rec = item["record"];
    std::string user = test ? rec["problem"].get<std::string>() : rec["messages"][0]["content"].get<std::string>();
    TokenSet t = token_set(user);
    s.index.add(t, minhash(t));
  }
  (test ? s.test : s.train).push_back(item);
}

std::string fingerprint(const SynthOptions& o) {
  std::string f = fmt::format("{}|seed={}|count={}|test={}|test_task={}|mix={}|jaccard={}|chunk={}", kSynthVersion,
                              o.seed, o.count, o.test_count, to_string(o.test_task), mix_to_string(o.mix),
                              o.jaccard_threshold, o.chunk_size);
  if (o.test_mix) f += "|test_mix=" + mix_to_string(*o.test_mix);
  for (const auto& fam : o.families) f += "|family=" + fam->name + ":" + fam->sha256;
  if (o.llm.enabled()) f += fmt::format("|llm={}|model={}|temperature={}", o.llm.base_url, o.llm.model, o.llm.temperature);
  if (o.corrupt_code_every > 0) f += fmt::format("|corrupt_code_every={}", o.corrupt_code_every);
  return f;
}

LlmOptions resolved_llm(const SynthOptions& o) {
  LlmOptions l = o.llm;
  if (l.cache_dir.empty()) l.cache_dir = o.out / "llm_cache";
  return l;
}

CodeRunnerConfig code_runner_config(const SynthOptions& o) {
  CodeRunnerConfig c = default_code_runner_config();
  c.time_limit_s = o.code_time_limit;
  return c;
}

std::string chunk_path_name(bool test, int64_t c) { return fmt::format("{}-{:05d}.jsonl", test ? "test" : "train", c); }

// Processes one chunk of candidates on the worker threads, then accepts in order.
// Returns the chunk file text (accepted items + a trailing stats line).
std::string run_chunk(const SynthOptions& o, const Paraphraser* para, std::vector<std::unique_ptr<CodeRunner>>& runners, State& s,
                      bool test, int64_t chunk, int64_t target) {
  int64_t first = chunk * o.chunk_size;
  std::vector<Candidate> cands(size_t(o.chunk_size));
  int nthreads = int(runners.size());
  std::vector<std::thread> pool;
  std::vector<std::string> errors(static_cast<size_t>(nthreads));
  for (int t = 0; t < nthreads; ++t)
    pool.emplace_back([&, t] {
      try {
        for (int64_t i = t; i < o.chunk_size; i += nthreads)
          cands[size_t(i)] = make_candidate(o, para, *runners[size_t(t)], test, first + i);
      } catch (const std::exception& e) {
        errors[size_t(t)] = e.what();
      }
    });
  for (auto& th : pool) th.join();
  for (const auto& e : errors)
    if (!e.empty()) throw Error("synth: candidate generation failed: " + e);

  std::string text;
  std::map<std::string, int64_t> rej, fam_used;
  std::map<std::string, std::map<std::string, int64_t>> fam_rej;
  int64_t used = 0, programs = 0;
  auto& accepted = test ? s.test : s.train;
  for (auto& c : cands) {
    if (int64_t(accepted.size()) >= target) break;
    ++used;
    ++fam_used[c.structure];
    programs += c.code_run;
    std::string reason = c.reason;
    if (reason.empty() && s.param_sigs.count(c.param_sig)) reason = "duplicate_parameters";
    if (reason.empty() && s.sol_sigs.count(c.sol_sig)) reason = "duplicate_solution";
    if (reason.empty() && s.index.is_near_duplicate(c.tokens, c.signature)) reason = "near_duplicate";
    if (!reason.empty()) {
      ++rej[reason];
      ++fam_rej[c.structure][reason];
      continue;
    }
    Json item = Json::object();
    item["record"] = std::move(c.record);
    if (!test) item["cpt"] = Json::array({c.cpt[0], c.cpt[1]});
    item["param_sig"] = c.param_sig;
    item["sol_sig"] = c.sol_sig;
    item["files"] = std::move(c.files);
    item["checks"] = {{"lp", c.lp_checked}, {"code", c.code_checked}, {"code_same_model", c.code_same_model}};
    item["solve_ms"] = c.solve_ms;
    item["check_ms"] = c.check_ms;
    item["code_ms"] = c.code_ms;
    item["narrative"] = c.narrative;
    if (c.slack_family) item["slack_family"] = true;
    Json uses = Json::array();
    for (const auto& u : c.phrasing) uses.push_back(Json::array({u.groups, u.choice}));
    item["phrasing"] = std::move(uses);
    if (!test) item["statement"] = std::move(c.statement);  // test records carry it already
    text += item.dump() + "\n";
    admit(s, item, test, &c.tokens, &c.signature);
  }
  for (const auto& [k, v] : rej) s.rejections[k] += v;
  for (const auto& [f, n] : fam_used) s.family_candidates[f] += n;
  for (const auto& [f, r] : fam_rej)
    for (const auto& [k, v] : r) s.family_rejections[f][k] += v;
  s.candidates += used;
  s.programs_run += programs;
  Json stats = Json::object();
  stats["chunk_stats"] = true;
  stats["candidates"] = used;
  stats["programs_run"] = programs;
  stats["rejections"] = rej;
  stats["family_candidates"] = fam_used;
  stats["family_rejections"] = fam_rej;
  text += stats.dump() + "\n";
  return text;
}

// Loads a chunk file written earlier; false when it does not exist.
bool load_chunk(const fs::path& path, State& s, bool test) {
  if (!fs::exists(path)) return false;
  JsonlReader reader(path);
  bool saw_stats = false;
  while (auto rec = reader.next()) {
    if (rec->contains("chunk_stats")) {
      s.candidates += (*rec)["candidates"].get<int64_t>();
      s.programs_run += (*rec)["programs_run"].get<int64_t>();
      for (auto it = (*rec)["rejections"].begin(); it != (*rec)["rejections"].end(); ++it) s.rejections[it.key()] += it.value().get<int64_t>();
      for (auto it = (*rec)["family_candidates"].begin(); it != (*rec)["family_candidates"].end(); ++it)
        s.family_candidates[it.key()] += it.value().get<int64_t>();
      for (auto f = (*rec)["family_rejections"].begin(); f != (*rec)["family_rejections"].end(); ++f)
        for (auto it = f.value().begin(); it != f.value().end(); ++it) s.family_rejections[f.key()][it.key()] += it.value().get<int64_t>();
      saw_stats = true;
    } else {
      admit(s, *rec, test, nullptr, nullptr);
    }
  }
  if (!saw_stats) throw Error(SourceLocation{path.string(), 0, 0}, "chunk checkpoint has no stats line (corrupt); delete the folder to restart");
  return true;
}

// Files inside a temporary folder that is renamed into place as a whole: no per-file fsync needed.
void write_plain(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  if (!out) throw Error(SourceLocation{path.string(), 0, 0}, "cannot write file");
}

void count_bucket(Json& b, const char* group, const std::string& name) {
  if (!b.contains(group)) b[group] = Json::object();
  b[group][name] = b[group].value(name, int64_t(0)) + 1;
}

}  // namespace

Mix default_mix() {
  Mix m;
  // The ten classic structures only (what `trex run` trains on); the later families are opt-in.
  m.structure.fill(0.0);
  for (int i = 0; i < kNumClassicStructures; ++i) m.structure[size_t(i)] = 1.0;
  m.mode.fill(1.0);
  m.difficulty = {0.35, 0.3, 0.2, 0.15};
  m.task.fill(1.0);
  m.domain.assign(size_t(num_domains()), 1.0);
  return m;
}

void apply_mix(const std::string& spec, Mix& mix) { apply_mix(spec, mix, {}); }

void apply_test_mix(const std::string& spec, Mix& test_mix, const std::vector<std::string>& file_families) {
  if (spec.rfind("task=", 0) == 0) throw Error("synth: --test-mix '" + spec + "': the test items' task is set by --test-task");
  apply_mix(spec, test_mix, file_families);
}

void apply_mix(const std::string& spec, Mix& mix, const std::vector<std::string>& file_families) {
  if (mix.file_family.size() != file_families.size()) mix.file_family.assign(file_families.size(), 1.0);
  mix.file_family_names = file_families;
  size_t eq = spec.find('=');
  if (eq == std::string::npos) throw Error("--mix '" + spec + "': expected KEY=NAME:WEIGHT,... (KEY: structure, mode, difficulty, task, domain)");
  std::string key = spec.substr(0, eq), rest = spec.substr(eq + 1);
  std::vector<std::pair<std::string, double>> items;
  size_t pos = 0;
  while (pos <= rest.size()) {
    size_t comma = rest.find(',', pos);
    std::string item = rest.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    size_t colon = item.find(':');
    if (colon == std::string::npos) throw Error("--mix '" + spec + "': item '" + item + "' is not NAME:WEIGHT");
    std::string name = item.substr(0, colon), w = item.substr(colon + 1);
    double weight;
    try {
      size_t used = 0;
      weight = std::stod(w, &used);
      if (used != w.size()) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      throw Error("--mix '" + spec + "': weight '" + w + "' is not a number");
    }
    if (!(weight >= 0) || !std::isfinite(weight)) throw Error("--mix '" + spec + "': weight of '" + name + "' must be >= 0");
    items.push_back({name, weight});
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  auto fill = [&](auto& arr, auto parse_fn) {
    std::vector<double> w(arr.size(), 0.0);
    double total = 0;
    for (const auto& [name, weight] : items) {
      // structure=all:W / classic:W set every structure / the ten classic ones; later items override.
      if (key == "structure" && (name == "all" || name == "classic")) {
        int n = name == "all" ? int(arr.size()) : kNumClassicStructures;  // all: the family files too
        for (int i = 0; i < n; ++i) total += weight - w[size_t(i)], w[size_t(i)] = weight;
        continue;
      }
      int idx = parse_fn(name);
      if (idx < 0) throw Error("--mix '" + spec + "': unknown " + key + " '" + name + "'");
      total += weight - w[size_t(idx)];
      w[size_t(idx)] = weight;
    }
    if (total <= 0) throw Error("--mix '" + spec + "': all weights are zero");
    for (size_t i = 0; i < arr.size(); ++i) arr[i] = w[i];
  };
  if (key == "structure" && !file_families.empty()) {
    // Built-in structures and the family files as one group (index kNumStructures + i: file i).
    std::vector<double> all = structure_weights(mix);
    fill(all, [&](const std::string& n) {
      Structure s;
      if (parse(n, s)) return int(s);
      for (size_t i = 0; i < file_families.size(); ++i)
        if (file_families[i] == n) return kNumStructures + int(i);
      return -1;
    });
    std::copy(all.begin(), all.begin() + kNumStructures, mix.structure.begin());
    std::copy(all.begin() + kNumStructures, all.end(), mix.file_family.begin());
  } else if (key == "structure") fill(mix.structure, [](const std::string& n) { Structure s; return parse(n, s) ? int(s) : -1; });
  else if (key == "mode") fill(mix.mode, [](const std::string& n) { Mode s; return parse(n, s) ? int(s) : -1; });
  else if (key == "difficulty") fill(mix.difficulty, [](const std::string& n) { Difficulty s; return parse(n, s) ? int(s) : -1; });
  else if (key == "task") fill(mix.task, [](const std::string& n) { Task s; return parse(n, s) ? int(s) : -1; });
  else if (key == "domain")
    fill(mix.domain, [](const std::string& n) {
      for (int i = 0; i < num_domains(); ++i)
        if (domains()[size_t(i)].name == n) return i;
      return -1;
    });
  else throw Error("--mix '" + spec + "': unknown key '" + key + "' (structure, mode, difficulty, task, domain)");
}

std::string mix_to_string(const Mix& m) {
  std::string s;
  auto group = [&](const char* key, const auto& arr, auto name_of) {
    s += std::string(s.empty() ? "" : ";") + key + "=";
    for (size_t i = 0; i < arr.size(); ++i) s += fmt::format("{}{}:{:g}", i ? "," : "", name_of(i), arr[i]);
  };
  // Structures after the classic ten are listed only when selected, so a mix of the ten reads (and
  // fingerprints) as it did before they existed.
  s += "structure=";
  for (size_t i = 0; i < m.structure.size(); ++i)
    if (i < size_t(kNumClassicStructures) || m.structure[i] != 0)
      s += fmt::format("{}{}:{:g}", i ? "," : "", to_string(Structure(i)), m.structure[i]);
  for (size_t i = 0; i < m.file_family.size(); ++i)
    s += fmt::format(",{}:{:g}", i < m.file_family_names.size() ? m.file_family_names[i] : "file" + std::to_string(i), m.file_family[i]);
  group("mode", m.mode, [](size_t i) { return std::string(to_string(Mode(i))); });
  group("difficulty", m.difficulty, [](size_t i) { return std::string(to_string(Difficulty(i))); });
  group("task", m.task, [](size_t i) { return std::string(to_string(Task(i))); });
  group("domain", m.domain, [](size_t i) { return domains()[i].name; });
  return s;
}

void validate(const SynthOptions& o) {
  if (o.count < 1) throw Error("synth: --count must be >= 1");
  if (o.test_count < 0) throw Error("synth: --test-count must be >= 0");
  if (o.test_task != Task::LpStructure && o.test_task != Task::CodeOnly)
    throw Error(std::string("synth: --test-task must be lp_structure or code_only, not ") + to_string(o.test_task));
  if (o.threads < 1 || o.threads > 256) throw Error("synth: --threads must be in 1..256");
  if (o.chunk_size < 1) throw Error("synth: chunk size must be >= 1");
  if (!(o.jaccard_threshold > 0 && o.jaccard_threshold <= 1)) throw Error("synth: --jaccard must be in (0, 1]");
  if (o.out.empty()) throw Error("synth: --out is required");
  if (fs::exists(o.out) && !fs::is_directory(o.out)) throw Error("synth: --out '" + o.out.string() + "' exists and is not a folder");
  if (o.mix.domain.size() != size_t(num_domains())) throw Error("synth: domain mix has the wrong size");
  if (o.test_mix && o.test_mix->domain.size() != size_t(num_domains())) throw Error("synth: test domain mix has the wrong size");
  if (o.mix.file_family.size() != o.families.size() || (o.test_mix && o.test_mix->file_family.size() != o.families.size()))
    throw Error("synth: the family-file weights do not match the loaded family files");
  if (!(o.code_time_limit > 0)) throw Error("synth: --code-time-limit must be > 0");
  if (o.corrupt_code_every < 0) throw Error("synth: --corrupt-code-every must be >= 0");
  bool code_answers = o.mix.task[size_t(Task::FullModel)] > 0 || o.mix.task[size_t(Task::CodeOnly)] > 0 ||
                      (o.test_count > 0 && o.test_task == Task::CodeOnly);
  if (code_answers) check_code_runner_config(code_runner_config(o));
  if (o.llm.enabled()) {
    if (o.llm.max_tries < 1 || o.llm.max_tries > 20) throw Error("synth: --llm-max-tries must be in 1..20");
    if (!(o.llm.timeout_s > 0)) throw Error("synth: --llm-timeout must be > 0");
    if (!(o.llm.temperature >= 0 && o.llm.temperature <= 2)) throw Error("synth: --llm-temperature must be in [0, 2]");
    if (o.llm.model.empty()) throw Error("synth: --llm-model must not be empty");
    try {
      Paraphraser check(resolved_llm(o));
    } catch (const Error& e) {
      throw Error(std::string("synth: --llm-base-url: ") + e.what());
    }
  }
  fs::path partial = o.out / kPartialDir / "state.json";
  if (fs::exists(partial)) {
    Json st = parse_json_file(partial);
    if (st.value("fingerprint", "") != fingerprint(o))
      throw Error(SourceLocation{partial.string(), 0, 0},
                  "an interrupted run with different options is in this folder; rerun with the same options to resume, or delete " +
                      (o.out / kPartialDir).string());
  }
}

SynthSummary run_synth(const SynthOptions& o) {
  validate(o);
  Timer timer;
  SynthSummary sum;
  fs::create_directories(o.out / kPartialDir);
  fs::path partial = o.out / kPartialDir;
  if (!fs::exists(partial / "state.json")) {
    Json st = Json::object();
    st["fingerprint"] = fingerprint(o);
    write_file_atomic(partial / "state.json", st.dump(2) + "\n");
  }
  State s(o.jaccard_threshold);
  std::optional<Paraphraser> para;
  if (o.llm.enabled()) para.emplace(resolved_llm(o));
  // One code-answer runner per worker thread; each starts its Python worker on its first program.
  std::vector<std::unique_ptr<CodeRunner>> runners;
  for (int t = 0; t < o.threads; ++t) runners.push_back(std::make_unique<CodeRunner>(code_runner_config(o)));
  ProgressBar bar("synth", o.count + o.test_count, o.progress);
  int64_t written = 0;
  for (int phase = 0; phase < 2; ++phase) {
    bool test = phase == 1;
    int64_t target = test ? o.test_count : o.count;
    auto& acc = test ? s.test : s.train;
    int64_t max_chunks = (target * 20 + 2000) / o.chunk_size + 1;
    for (int64_t c = 0; int64_t(acc.size()) < target; ++c) {
      if (c >= max_chunks)
        throw Error(fmt::format("synth: only {} of {} {} samples after {} candidates; too many rejections", acc.size(), target,
                                test ? "test" : "training", c * o.chunk_size));
      fs::path cp = partial / chunk_path_name(test, c);
      if (load_chunk(cp, s, test)) {
        ++sum.resumed_chunks;
      } else {
        if (o.interrupt_after_chunks >= 0 && written >= o.interrupt_after_chunks) {
          sum.interrupted = true;
          sum.sft = int64_t(s.train.size());
          sum.seconds = timer.seconds();
          return sum;
        }
        write_file_atomic(cp, run_chunk(o, para ? &*para : nullptr, runners, s, test, c, target));
        ++written;
      }
      bar.update(int64_t(s.train.size() + s.test.size()));
    }
  }
  bar.finish();

  // Exports.
  Json buckets = Json::object(), test_buckets = Json::object();
  std::string sft_text, cpt_text, test_text, timing_text;
  int64_t kinds[2] = {0, 0};
  auto count_llm = [&](const Json& meta) {
    if (!meta.contains("statement")) return;
    if (meta["statement"] == "llm") ++sum.paraphrased;
    else ++sum.llm_rejections[meta["llm_rejection"].get<std::string>()];
  };
  // What was verified, counted over the exported items: answers with an LP block (re-read and re-solved),
  // answers carrying a program (full model, code only, code-only test items) and those whose program ran
  // through the layer and printed the verified objective (every one, or the run would have rejected it).
  int64_t lp_answers = 0, lp_checked = 0, code_same_model = 0;
  auto count_checks = [&](const Json& item) {
    const Json& rec = item["record"];
    std::string task = rec["metadata"]["task"].get<std::string>();
    if (task == "full_model" || task == "code_only") ++sum.code_answers;
    if (task != "code_only") ++lp_answers;
    sum.code_answers_run += item["checks"]["code"].get<bool>();
    lp_checked += item["checks"]["lp"].get<bool>();
    code_same_model += item["checks"]["code_same_model"].get<bool>();
  };
  VarietyCounter variety;
  for (size_t i = 0; i < s.train.size(); ++i) {
    const Json& item = s.train[i];
    const Json& rec = item["record"];
    sft_text += rec.dump() + "\n";
    variety.add(rec["metadata"]["structure"].get<std::string>(), rec["metadata"], item, item.value("statement", ""));
    int kind = int(i % 2);
    ++kinds[kind];
    Json cpt = Json::object();
    cpt["text"] = item["cpt"][size_t(kind)];
    cpt["id"] = "cpt-" + rec["id"].get<std::string>();
    cpt["source_id"] = rec["id"];
    cpt["kind"] = to_string(CptKind(kind));
    cpt_text += cpt.dump() + "\n";
    for (const char* g : {"structure", "mode", "difficulty", "task", "domain", "variant", "answer_style", "data_files", "statement"})
      if (rec["metadata"].contains(g)) count_bucket(buckets, g, rec["metadata"][g].get<std::string>());
    count_llm(rec["metadata"]);
    count_checks(item);
    timing_text += Json{{"id", rec["id"]}, {"solve_ms", item["solve_ms"]}, {"check_ms", item["check_ms"]}, {"code_ms", item["code_ms"]}}.dump() + "\n";
  }
  for (const auto& item : s.test) {
    const Json& rec = item["record"];
    test_text += rec.dump() + "\n";
    for (const char* g : {"structure", "mode", "difficulty", "domain", "variant", "data_files", "statement"})
      if (rec["metadata"].contains(g)) count_bucket(test_buckets, g, rec["metadata"][g].get<std::string>());
    count_llm(rec["metadata"]);
    count_checks(item);
    timing_text += Json{{"id", rec["id"]}, {"solve_ms", item["solve_ms"]}, {"check_ms", item["check_ms"]}, {"code_ms", item["code_ms"]}}.dump() + "\n";
  }

  // files/ (DPS attachments) and test_lp/ (reference LPs) are built in temporary folders, then renamed.
  auto build_dir = [&](const std::string& name, auto fill) {
    fs::path tmp = o.out / (name + ".tmp"), dst = o.out / name;
    fs::remove_all(tmp);
    fs::create_directories(tmp);
    fill(tmp);
    fs::remove_all(dst);
    fs::rename(tmp, dst);
  };
  build_dir("files", [&](const fs::path& dir) {
    for (const auto* list : {&s.train, &s.test})
      for (const auto& item : *list) {
        if (item["files"].empty()) continue;
        fs::path d = dir / item["record"]["id"].get<std::string>();
        fs::create_directories(d);
        for (auto it = item["files"].begin(); it != item["files"].end(); ++it) write_plain(d / it.key(), it.value().get<std::string>());
      }
  });
  build_dir("test_lp", [&](const fs::path& dir) {
    for (const auto& item : s.test)
      write_plain(dir / (item["record"]["id"].get<std::string>() + ".lp"), item["record"]["reference_lp"].get<std::string>());
  });

  Json manifest = Json::object();
  manifest["version"] = kSynthVersion;
  manifest["seed"] = o.seed;
  manifest["seeds"] = {{"train_stream", o.seed}, {"test_stream", o.seed ^ kTestSalt},
                       {"note", "candidate k uses Rng::derive(stream, k); train and test streams differ"}};
  manifest["options"] = {{"count", o.count},          {"test_count", o.test_count},
                         {"test_task", to_string(o.test_task)}, {"mix", mix_to_string(o.mix)},
                         {"jaccard_threshold", o.jaccard_threshold}, {"chunk_size", o.chunk_size}};
  if (o.test_mix) manifest["options"]["test_mix"] = mix_to_string(*o.test_mix);
  for (const auto& fam : o.families)
    manifest["options"]["families"].push_back({{"name", fam->name}, {"file", fam->file}, {"sha256", fam->sha256}});
  manifest["counts"] = {{"sft", s.train.size()}, {"cpt", s.train.size()}, {"test", s.test.size()}, {"candidates", s.candidates}};
  manifest["cpt_kinds"] = {{"model_report", kinds[0]}, {"modeling_rationale", kinds[1]}};
  manifest["buckets"] = buckets;
  manifest["test_buckets"] = test_buckets;
  manifest["rejections"] = s.rejections;
  // Per structure: exported samples and their variety (SFT items), test items, candidates used and rejections.
  Json families = variety.to_json();
  for (const auto& [f, n] : s.family_candidates) {
    Json& j = families[f];
    if (!j.contains("samples")) j["samples"] = 0;
    j["candidates"] = n;
    j["rejections"] = s.family_rejections.count(f) ? Json(s.family_rejections.at(f)) : Json::object();
  }
  const Json test_structures = test_buckets.value("structure", Json::object());
  for (auto it = test_structures.begin(); it != test_structures.end(); ++it) families[it.key()]["test"] = it.value();
  manifest["families"] = families;
  manifest["families_note"] =
      "per structure over the exported SFT items: variants, domains and narrative scenarios drawn; sentence_templates: the generator's "
      "phrasing templates drawn (told apart by their {a|b} groups), phrasings: their distinct alternatives drawn; distinct_n: distinct "
      "n-grams / all n-grams of the statements, numbers masked (lower with more samples); candidates and rejections cover train and "
      "test candidates";
  manifest["verification"] = {
      {"lp_answers", lp_answers},
      {"lp_answers_resolved", lp_checked},
      {"code_answers", sum.code_answers},
      {"code_answers_run", sum.code_answers_run},
      {"code_answers_same_model", code_same_model},
      {"programs_run", s.programs_run},
      {"note", "over the exported SFT and test items: lp_answers_resolved of lp_answers answer LPs re-read and solved with CBC, "
               "code_answers_run of code_answers programs run through the gurobipy-compatible layer, both reproducing the "
               "verified objective; code_answers_same_model of them built exactly the verified model (names aside), whose solve is "
               "answered with the verified CBC solution unless --code-solve-always; programs_run counts every program run, "
               "rejected candidates included"}};
  if (o.llm.enabled()) {
    Json llm = Json::object();
    llm["base_url"] = o.llm.base_url;
    llm["model"] = o.llm.model;
    llm["temperature"] = o.llm.temperature;
    llm["paraphrased"] = sum.paraphrased;
    llm["template_fallbacks"] = sum.llm_rejections;
    llm["note"] = "counts over the exported SFT and test items; a rejected paraphrase keeps the template statement";
    manifest["llm"] = llm;
  }
  manifest["files"] = {{"sft.jsonl", sha256_hex(sft_text)}, {"cpt.jsonl", sha256_hex(cpt_text)}, {"test.jsonl", sha256_hex(test_text)}};
  write_file_atomic(o.out / "sft.jsonl", sft_text);
  write_file_atomic(o.out / "cpt.jsonl", cpt_text);
  write_file_atomic(o.out / "test.jsonl", test_text);
  write_file_atomic(o.out / "timings.jsonl", timing_text);
  write_file_atomic(o.out / "manifest.json", manifest.dump(2) + "\n");
  fs::remove_all(partial);

  sum.sft = int64_t(s.train.size());
  sum.cpt = int64_t(s.train.size());
  sum.test = int64_t(s.test.size());
  sum.candidates = s.candidates;
  sum.rejections = s.rejections;
  sum.seconds = timer.seconds();
  return sum;
}

}  // namespace trex::ordata
