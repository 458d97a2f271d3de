// Minimal leveled logging to stderr, prefixed with the rank. Never on a hot path.
#pragma once

#include <cstdarg>
#include <cstdio>

namespace sluice::util {

enum class LogLevel { error = 0, warn = 1, info = 2, debug = 3 };

struct LogState {
  LogLevel level = LogLevel::warn;
  int rank = -1;
};
LogState& log_state();

void log(LogLevel lvl, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace sluice::util
