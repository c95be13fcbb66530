// Logger setup: stderr sink, compact pattern.
#include "util/log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdlib>
#include <string>

namespace trex::log {

void init(int verbosity) {
  auto logger = spdlog::stderr_color_mt("trex");
  logger->set_pattern("%^[%l]%$ %v");
  spdlog::set_default_logger(logger);
  spdlog::level::level_enum level = spdlog::level::info;
  if (verbosity < 0) level = spdlog::level::warn;
  if (verbosity == 1) level = spdlog::level::debug;
  if (verbosity >= 2) level = spdlog::level::trace;
  if (const char* env = std::getenv("TREX_LOG_LEVEL")) level = spdlog::level::from_str(env);
  spdlog::set_level(level);
}

}  // namespace trex::log
