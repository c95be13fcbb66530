// Trainer checkpoints on disk. OUT/step-00000042/ holds model.safetensors + config.json (F32 weights, the
// model module's format), optimizer/optimizer.safetensors (flat moments "m" and "v") and trainer_state.json (step,
// data-loader position, spike-guard window, metrics so far, the options that must match on resume).
// A checkpoint is written into OUT/.tmp-step-00000042/ and renamed into place when complete; OUT/latest
// (the folder name, written atomically) is updated last, then folders beyond the newest `keep` are removed.
// A crash at any point leaves `latest` naming a complete checkpoint.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "model/config.hpp"
#include "model/params.hpp"

namespace trex::train {

std::string step_folder_name(int64_t step);  // "step-00000042"

struct CheckpointWrite {
  const model::ParamStore* store = nullptr;
  const model::ModelConfig* config = nullptr;
  std::span<const float> m, v;  // optimizer state
  nlohmann::json state;         // trainer_state.json
  int pause_ms = 0;             // test hook: sleep after the weights are written (kill-during-write test)
  std::filesystem::path tokenizer;  // tokenizer.json placed in the folder (Hugging Face model folder); empty: none
};

// Writes OUT/step-<step>/ atomically, points OUT/latest at it, keeps the newest `keep` (>= 1).
std::filesystem::path write_checkpoint(const std::filesystem::path& out, int64_t step, const CheckpointWrite& w,
                                       int keep);

// The folder OUT/latest names, or nullopt when there is none. Throws when `latest` names a missing folder.
std::optional<std::filesystem::path> latest_checkpoint(const std::filesystem::path& out);

// Removes OUT/.tmp-step-* left by an interrupted write.
void remove_partial_checkpoints(const std::filesystem::path& out);

// Loads the optimizer moments of a checkpoint folder into m and v (sizes must match).
void load_optimizer_state(const std::filesystem::path& dir, std::span<float> m, std::span<float> v);

}  // namespace trex::train
