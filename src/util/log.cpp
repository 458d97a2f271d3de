#include "util/log.hpp"

namespace sluice::util {

LogState& log_state() {
  static LogState state;
  return state;
}

void log(LogLevel lvl, const char* fmt, ...) {
  LogState& st = log_state();
  if (static_cast<int>(lvl) > static_cast<int>(st.level)) return;
  static const char* names[] = {"error", "warning", "info", "debug"};
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "sluice[%d] %s: %s\n", st.rank, names[static_cast<int>(lvl)], line);
}

}  // namespace sluice::util
