// `trex serve --ckpt DIR --port P [--host 127.0.0.1] [--api-key-env NAME] [--model-name trex] [--device cpu|cuda]`:
// the OpenAI-compatible chat server (infer/chat_server.hpp) over a trex checkpoint (infer/engine.hpp). Model calls
// are serialised by the engine; HTTP connections are handled concurrently. `--device cuda` (CUDA builds) decodes on
// the GPU model, one cached sequence per worker thread; without a usable device it is refused with the reason
// (cuda/device_select.hpp) before anything is read or bound.
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "cli/command.hpp"
#include "cli/cuda_support.hpp"
#include "infer/engine.hpp"
#include "util/error.hpp"

namespace cmd_serve {  // this file's own names (the unity build joins cli files)

using namespace trex::infer;

struct ServeOpts {
  std::string ckpt, tokenizer, host = "127.0.0.1", api_key_env, model_name = "trex", device = "cpu", matmul = "fp32";
  int port = 8000, threads = 8, max_context = 2048;
};

int run(const ServeOpts& o) {
  // before anything is read or bound; one cached sequence per HTTP worker (requests beyond them wait for one)
  const auto make_decoder = trex::cli::checked_decoder_factory(o.device, o.matmul, o.threads, "trex serve");
  ServerOptions so;
  so.host = o.host;
  so.port = o.port;
  so.model_name = o.model_name;
  so.threads = o.threads;
  if (!o.api_key_env.empty()) {
    const char* k = std::getenv(o.api_key_env.c_str());
    if (!k || !*k) throw trex::Error("serve: environment variable " + o.api_key_env + " is not set or empty");
    so.api_key = k;
  }
  std::shared_ptr<Engine> engine = Engine::load(o.ckpt, o.tokenizer, o.max_context, make_decoder);
  ChatServer server(so, std::make_shared<EngineChatGenerator>(engine));
  int port = server.bind();
  std::printf("trex serve: listening on http://%s:%d/v1 (model '%s')\n", o.host.c_str(), port, o.model_name.c_str());
  std::fflush(stdout);
  server.serve();
  return 0;
}

trex::cli::CommandRegistrar reg("serve", "OpenAI-compatible chat server for a trex checkpoint",
                                [](CLI::App& sub) -> trex::cli::Action {
  auto o = std::make_shared<ServeOpts>();
  sub.add_option("--ckpt", o->ckpt, "Checkpoint folder (as for `trex generate`)")->required();
  sub.add_option("--tokenizer", o->tokenizer, "tokenizer.json (default: in the checkpoint folder or its parent)");
  sub.add_option("--port", o->port, "TCP port (0: any free port, printed on stdout)")->check(CLI::Range(0, 65535));
  sub.add_option("--host", o->host, "Bind address (default 127.0.0.1)");
  sub.add_option("--api-key-env", o->api_key_env, "Require this environment variable's value as Bearer key");
  sub.add_option("--model-name", o->model_name, "Model id served (default trex)");
  sub.add_option("--threads", o->threads, "HTTP worker threads (default 8)")->check(CLI::Range(1, 256));
  sub.add_option("--max-context", o->max_context, "Context length in tokens (default 2048)")->check(CLI::Range(2, 1 << 20));
  trex::cli::add_decoder_options(sub, o->device, o->matmul);
  return [o] { return run(*o); };
});

}  // namespace cmd_serve
