// Training throughput of the `bench` preset (MACHINE.md §7 MoE shape) with trex's trainer. Writes what the PyTorch
// twin (tests/reference/train/twin_train_bench.py) needs to repeat the same computation: the exact micro-batches
// it trains on (tokens, doc ids, loss mask; int32) to DUMP, the initial weights the trainer starts from (the same
// Model::init(seed), hash tables included) to DUMP.init/ (model.safetensors + config.json) and the update rule's
// settings (TrainOptions' clip and weight decay, OptimizerConfig's AdamW constants) to DUMP.recipe.json; the LR
// schedule is the trainer's own, in OUT_DIR/step-*/trainer_state.json. Then runs trex::train::train and prints its
// summary as one JSON line (per-step losses in OUT_DIR/metrics.jsonl).
// Usage: bench_train_throughput DATA OUT_DIR STEPS BATCH SEQ DUMP [fp32|bf16]
// (the last argument: matrix-product precision, TrainOptions::matmul; default fp32)
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "model/checkpoint.hpp"
#include "model/model.hpp"
#include "model/model_info.hpp"
#include "text/data_loader.hpp"
#include "text/datasets.hpp"
#include "train/trainer.hpp"

int main(int argc, char** argv) {
  if (argc != 7 && argc != 8) {
    std::fprintf(stderr, "usage: %s DATA OUT_DIR STEPS BATCH SEQ DUMP [fp32|bf16]\n", argv[0]);
    return 2;
  }
  trex::train::TrainOptions o;
  o.config = "bench";
  o.data = argv[1];
  o.out = argv[2];
  o.steps = std::atoll(argv[3]);
  o.micro_batch = std::atoll(argv[4]);
  o.seq_len = std::atoll(argv[5]);
  o.mode = "cpt";
  o.lr = 1e-3;
  o.progress = false;
  o.json = true;
  if (argc == 8) o.matmul = argv[7];
  {  // the same batches the trainer's loader yields (same seed), for the twin
    auto ds = trex::text::open_dataset(o.data, size_t(o.seq_len));
    trex::text::LoaderConfig lc;
    lc.batch_size = size_t(o.micro_batch);
    lc.seed = o.seed;
    trex::text::DataLoader loader(*ds, lc);
    trex::text::Batch b;
    std::ofstream f(argv[6], std::ios::binary);
    for (int64_t s = 0; s < o.steps; ++s) {
      loader.next(b);
      std::vector<int32_t> mask(b.loss_mask.begin(), b.loss_mask.end());
      f.write(reinterpret_cast<const char*>(b.tokens.data()), std::streamsize(b.tokens.size() * 4));
      f.write(reinterpret_cast<const char*>(b.doc_ids.data()), std::streamsize(b.doc_ids.size() * 4));
      f.write(reinterpret_cast<const char*>(mask.data()), std::streamsize(mask.size() * 4));
    }
  }
  {  // the trainer's starting point and update rule, for the twin (train_impl: load_model_config + init(seed))
    const std::string dump = argv[6];
    const auto cfg = trex::model::load_model_config(o.config);
    trex::model::Model m(cfg);
    m.init(o.seed);
    trex::model::save_weights(dump + ".init", m.store(), cfg);
    const trex::train::OptimizerConfig oc;
    nlohmann::json recipe = {{"optimizer", o.optimizer}, {"clip", o.clip}, {"weight_decay", o.weight_decay},
                             {"decay_1d", oc.decay_1d}, {"beta1", oc.beta1}, {"beta2", oc.beta2}, {"eps", oc.eps},
                             {"grad_accum", o.grad_accum}, {"seed", o.seed}, {"freeze_router", o.freeze_router},
                             {"spike_z", o.spike_z}, {"spike_min_samples", o.spike_min_samples}};
    std::ofstream(dump + ".recipe.json") << recipe.dump(2) << "\n";
  }
  std::filesystem::remove_all(o.out);
  auto s = trex::train::train(o);
  std::fflush(stdout);
  return 0;
}
