// trex entry point: global flags, subcommand dispatch, and the one place errors become exit codes.
#include <algorithm>
#include <cstdio>
#include <map>

#include "cli/command.hpp"
#include "util/error.hpp"
#include "util/log.hpp"

namespace trex::cli {
std::vector<CommandSpec>& command_registry() {
  static std::vector<CommandSpec> registry;
  return registry;
}
}  // namespace trex::cli

int main(int argc, char** argv) {
  using namespace trex::cli;
  CLI::App app{"trex: post-training of DeepSeek-V4-style MoE models, specialised for Operations Research"};
  app.set_version_flag("--version", std::string("trex ") + TREX_VERSION);
  app.require_subcommand(1);
  int verbosity = 0;
  app.add_flag("-v,--verbose", verbosity, "More log output (repeat for trace)");
  bool quiet = false;
  app.add_flag("-q,--quiet", quiet, "Only warnings and errors on stderr");

  auto& registry = command_registry();
  std::sort(registry.begin(), registry.end(), [](auto& a, auto& b) { return a.name < b.name; });
  std::map<CLI::App*, Action> actions;
  for (auto& spec : registry) {
    CLI::App* sub = app.add_subcommand(spec.name, spec.description);
    actions[sub] = spec.setup(*sub);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  trex::log::init(quiet ? -1 : verbosity);
  for (auto& [sub, action] : actions) {
    if (!sub->parsed()) continue;
    try {
      return action();
    } catch (const trex::Error& e) {
      std::fprintf(stderr, "error: %s\n", e.what());
      return 2;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: %s\n", e.what());
      return 2;
    }
  }
  return 2;
}
