// Trainer checkpoint folders (see train_checkpoint.hpp).
#include "train/train_checkpoint.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "model/checkpoint.hpp"
#include "model/safetensors.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"

namespace fs = std::filesystem;

namespace trex::train {

std::string step_folder_name(int64_t step) { return fmt::format("step-{:08d}", step); }

std::filesystem::path write_checkpoint(const fs::path& out, int64_t step, const CheckpointWrite& w, int keep) {
  const std::string name = step_folder_name(step);
  const fs::path tmp = out / (".tmp-" + name), final_dir = out / name;
  std::error_code ec;
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp);
  model::SaveOptions so;
  so.tokenizer = w.tokenizer;
  model::save_weights(tmp, *w.store, *w.config, model::DType::F32, so);
  if (w.pause_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(w.pause_ms));
  std::vector<model::TensorToWrite> t(2);
  t[0] = {"m", model::DType::F32, {int64_t(w.m.size())}, std::as_bytes(w.m)};
  t[1] = {"v", model::DType::F32, {int64_t(w.v.size())}, std::as_bytes(w.v)};
  fs::create_directories(tmp / "optimizer");  // a subfolder: weight loaders glob the step folder's *.safetensors
  model::write_safetensors(tmp / "optimizer" / "optimizer.safetensors", t, {{"format", "trex-optimizer"}});
  write_file_atomic(tmp / "trainer_state.json", w.state.dump(1) + "\n");
  // Same step written again (e.g. a resumed run re-saving): replace the old folder.
  fs::remove_all(final_dir, ec);
  fs::rename(tmp, final_dir);
  write_file_atomic(out / "latest", name + "\n");

  // Keep the newest `keep` step folders (names sort by step).
  std::vector<std::string> steps;
  for (auto& e : fs::directory_iterator(out)) {
    auto n = e.path().filename().string();
    if (e.is_directory() && n.rfind("step-", 0) == 0) steps.push_back(n);
  }
  std::sort(steps.begin(), steps.end());
  for (size_t i = 0; i + size_t(std::max(keep, 1)) < steps.size(); ++i)
    if (steps[i] != name) fs::remove_all(out / steps[i], ec);
  return final_dir;
}

std::optional<fs::path> latest_checkpoint(const fs::path& out) {
  fs::path p = out / "latest";
  if (!fs::exists(p)) return std::nullopt;
  std::string name = read_file(p);
  while (!name.empty() && (name.back() == '\n' || name.back() == '\r' || name.back() == ' ')) name.pop_back();
  if (name.rfind("step-", 0) != 0 || name.find('/') != std::string::npos)
    throw Error(fmt::format("{}: does not name a step folder ('{}')", p.string(), name));
  fs::path dir = out / name;
  for (const char* f : {"model.safetensors", "config.json", "optimizer/optimizer.safetensors", "trainer_state.json"})
    if (!fs::exists(dir / f)) throw Error(fmt::format("{}: checkpoint {} lacks {}", p.string(), dir.string(), f));
  return dir;
}

void remove_partial_checkpoints(const fs::path& out) {
  if (!fs::exists(out)) return;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(out))
    if (e.path().filename().string().rfind(".tmp-step-", 0) == 0) fs::remove_all(e.path(), ec);
}

void load_optimizer_state(const fs::path& dir, std::span<float> m, std::span<float> v) {
  auto f = model::SafetensorsFile::open(dir / "optimizer" / "optimizer.safetensors");
  auto load = [&](const char* name, std::span<float> dst) {
    auto view = f.view(name);
    if (view.info->dtype != model::DType::F32 || view.bytes.size() != dst.size_bytes())
      throw Error(fmt::format("{}: optimizer tensor '{}' has {} bytes, the model needs {} (different model?)",
                              f.source(), name, view.bytes.size(), dst.size_bytes()));
    std::memcpy(dst.data(), view.bytes.data(), dst.size_bytes());
  };
  load("m", m);
  load("v", v);
}

}  // namespace trex::train
