// Logging to stderr through spdlog: one named logger, level from --verbose/--quiet or TREX_LOG_LEVEL.
#pragma once
#include <spdlog/spdlog.h>

namespace trex::log {

void init(int verbosity = 0);  // -1 quiet (warnings+), 0 info, 1 debug, 2 trace

template <typename... Args>
void info(spdlog::format_string_t<Args...> fmt, Args&&... args) { spdlog::info(fmt, std::forward<Args>(args)...); }
template <typename... Args>
void warn(spdlog::format_string_t<Args...> fmt, Args&&... args) { spdlog::warn(fmt, std::forward<Args>(args)...); }
template <typename... Args>
void error(spdlog::format_string_t<Args...> fmt, Args&&... args) { spdlog::error(fmt, std::forward<Args>(args)...); }
template <typename... Args>
void debug(spdlog::format_string_t<Args...> fmt, Args&&... args) { spdlog::debug(fmt, std::forward<Args>(args)...); }

}  // namespace trex::log
