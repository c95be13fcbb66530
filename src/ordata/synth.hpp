// `trex synth` driver: draws candidates (buckets from the mix, instance seed from the run seed and
// the candidate index), verifies, renders, answers and checks them on worker threads chunk by chunk,
// then accepts them in candidate order (duplicate signatures, near-duplicate filter), checkpoints
// every chunk under DIR/.synth-partial/ and finally writes sft.jsonl, cpt.jsonl, test.jsonl,
// manifest.json, timings.jsonl and files/ atomically. With --llm-base-url the statements are
// paraphrased by an LLM (ordata/paraphrase.hpp; responses cached in OUT/llm_cache). Same options => same bytes (timings.jsonl
// aside: it holds wall-clock solve times); an interrupted run resumes from its last chunk.
#pragma once
#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ordata/code_check.hpp"
#include "ordata/family_file.hpp"
#include "ordata/paraphrase.hpp"
#include "ordata/vocab.hpp"

namespace trex::ordata {

struct Mix {
  std::array<double, kNumStructures> structure;
  std::array<double, kNumModes> mode;
  std::array<double, kNumDifficulties> difficulty;
  std::array<double, kNumTasks> task;
  std::vector<double> domain;
  // Weights of the run's family files (SynthOptions::families, in --family order); empty without them.
  std::vector<double> file_family;
  std::vector<std::string> file_family_names;
};
Mix default_mix();
// "KEY=NAME:W,NAME:W" with KEY in structure|mode|difficulty|task|domain; names not listed get 0.
// Throws trex::Error on unknown keys/names, negative weights or an all-zero group.
void apply_mix(const std::string& spec, Mix& mix);
// The same with the run's family files: their names are structures too (index i: mix.file_family[i]).
void apply_mix(const std::string& spec, Mix& mix, const std::vector<std::string>& file_families);
// A --test-mix group: apply_mix, except that `task=` is refused (the test items' task is --test-task's).
void apply_test_mix(const std::string& spec, Mix& test_mix, const std::vector<std::string>& file_families = {});
std::string mix_to_string(const Mix& mix);

struct SynthOptions {
  int64_t count = 1000;
  int64_t test_count = 100;
  // Task of the held-out items: lp_structure (an LP-file answer, the default) or code_only (a program reading the
  // item's data as data.json, B4O-Feasible style). Other tasks are refused.
  Task test_task = Task::LpStructure;
  uint64_t seed = 1;
  std::filesystem::path out;
  int threads = 2;
  Mix mix = default_mix();
  // Family files (--family FILE, family_file.hpp) drawn like structures with the weights mix.file_family.
  std::vector<std::shared_ptr<const FamilySpec>> families;
  // The held-out items' mix (--test-mix); unset: the training mix. A structure with weight 0 in `mix` drawn
  // here is a held-out family (its test items say so: metadata.held_out_structure).
  std::optional<Mix> test_mix;
  double jaccard_threshold = 0.9;
  int64_t chunk_size = 250;
  bool progress = true;
  int64_t interrupt_after_chunks = -1;  // testing aid: stop (resumably) after writing this many chunk files
  LlmOptions llm;                       // optional paraphrasing of the statements (--llm-base-url)
  // Every code answer (full model, code only, code-only test items) is run through the gurobipy-compatible
  // layer (ordata/code_check.hpp); this is the wall-clock limit of one program.
  double code_time_limit = 60.0;
  // A program whose model is the verified model (names aside) gets the verified CBC solution as its solve
  // result (ordata/code_check.hpp, KnownSolve); false: every program's model is solved with CBC again (the
  // reference path; same outputs).
  bool code_reuse_verified_solve = true;
  int64_t corrupt_code_every = 0;  // testing aid: candidates k with k % N == 0 get a wrong code answer (0: none)
};

struct SynthSummary {
  int64_t sft = 0, cpt = 0, test = 0, candidates = 0, resumed_chunks = 0;
  std::map<std::string, int64_t> rejections;
  int64_t code_answers = 0, code_answers_run = 0;  // exported items carrying a program / whose program was run and matched
  int64_t paraphrased = 0;                        // exported items whose statement is the LLM's
  std::map<std::string, int64_t> llm_rejections;  // exported items that fell back to the template, by reason
  double seconds = 0.0;
  bool interrupted = false;
};

// Validates options (throws trex::Error before anything is written).
void validate(const SynthOptions& o);
SynthSummary run_synth(const SynthOptions& o);

constexpr const char* kSynthVersion = "trex-synth/2";

}  // namespace trex::ordata
