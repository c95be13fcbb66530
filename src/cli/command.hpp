// Subcommand registry: each cli/cmd_*.cpp defines one static CommandRegistrar, so adding a subcommand
// never touches main.cpp. setup() declares the options on the CLI11 subcommand and returns the action.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace trex::cli {

using Action = std::function<int()>;  // exit code: 0 ok, 1 negative answer (e.g. not equivalent), 2 error
using Setup = std::function<Action(CLI::App&)>;

struct CommandSpec {
  std::string name, description;
  Setup setup;
};

std::vector<CommandSpec>& command_registry();

struct CommandRegistrar {
  CommandRegistrar(std::string name, std::string description, Setup setup) {
    command_registry().push_back({std::move(name), std::move(description), std::move(setup)});
  }
};

}  // namespace trex::cli
