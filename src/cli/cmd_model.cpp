// `trex model info CONFIG [--json] [--seq-len N ...]`: parameter counts and FLOPs per token of a preset or
// a Hugging Face config.json (conventions in model/model_info.hpp, docs/model-info.md).
#include <cstdio>
#include <memory>

#include "cli/command.hpp"
#include "model/model_info.hpp"

namespace cmd_model {  // this file's own names (the unity build joins cli files)

struct InfoOpts {
  std::string config;
  bool json = false;
  std::vector<int64_t> seq_lens;
};

int run_info(const InfoOpts& o) {
  auto cfg = trex::model::load_model_config(o.config);
  std::vector<int64_t> seqs = o.seq_lens;
  if (seqs.empty()) seqs = {4096, 32768, 131072};
  if (o.json)
    std::printf("%s\n", trex::model::model_info_json(cfg, seqs).dump(2).c_str());
  else
    std::printf("%s", trex::model::model_info_text(cfg, seqs).c_str());
  return 0;
}

trex::cli::CommandRegistrar reg("model", "Model tools: size and FLOPs (info)", [](CLI::App& sub) -> trex::cli::Action {
  sub.require_subcommand(1);
  auto info = std::make_shared<InfoOpts>();
  CLI::App* ic = sub.add_subcommand("info", "Total/active parameters and FLOPs per token of a config");
  ic->add_option("CONFIG", info->config, "Preset name (tiny, bench, small) or path to a config.json")->required();
  ic->add_flag("--json", info->json, "Machine-readable output");
  ic->add_option("--seq-len", info->seq_lens, "Sequence lengths for FLOPs per token (default 4096 32768 131072)")
      ->check(CLI::PositiveNumber);
  return [info, ic]() -> int {
    if (ic->parsed()) return run_info(*info);
    return 2;
  };
});

}  // namespace cmd_model
