// Forwards one rank's stdout or stderr to the launcher's, a whole line at a time, so lines
// of different ranks never interleave mid-line.
#pragma once

#include <string>
#include <string_view>

namespace sluicerun {

class OutputForwarder {
 public:
  // `prefix` (e.g. "[3] ") starts every forwarded line; empty passes bytes unmodified.
  OutputForwarder(int destination_fd, std::string prefix)
      : destination_fd_(destination_fd), prefix_(std::move(prefix)) {}

  // Takes bytes read from the rank; writes out every complete line.
  void consume(std::string_view bytes);
  // At end of stream: writes a trailing partial line (ended with a newline only when
  // prefixing, so untagged output stays byte-exact).
  void finish();

 private:
  void emit(std::string_view text);

  int destination_fd_;
  std::string prefix_;
  std::string partial_line_;  // bytes after the last newline
  bool at_line_start_ = true;
  bool destination_gone_ = false;
};

}  // namespace sluicerun
