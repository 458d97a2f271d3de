#include "output_forwarder.hpp"

#include "posix.hpp"

namespace sluicerun {

namespace {
// A "line" longer than this is forwarded in pieces rather than buffered without bound.
constexpr std::size_t max_buffered_line = 64 * 1024;
}  // namespace

void OutputForwarder::consume(std::string_view bytes) {
  partial_line_.append(bytes);
  std::size_t last_newline = partial_line_.rfind('\n');
  if (last_newline != std::string::npos) {
    emit(std::string_view(partial_line_).substr(0, last_newline + 1));
    partial_line_.erase(0, last_newline + 1);
  }
  if (partial_line_.size() >= max_buffered_line) {
    emit(partial_line_);
    partial_line_.clear();
  }
}

void OutputForwarder::finish() {
  if (!partial_line_.empty()) {
    if (!prefix_.empty()) partial_line_ += '\n';
    emit(partial_line_);
    partial_line_.clear();
  }
}

// `text` holds whole lines, or a piece of an overlong one. It goes out in one write so
// other ranks' lines cannot land inside it.
void OutputForwarder::emit(std::string_view text) {
  if (destination_gone_ || text.empty()) return;
  if (prefix_.empty()) {
    destination_gone_ = !write_all(destination_fd_, text);
    return;
  }
  std::string tagged;
  tagged.reserve(text.size() + prefix_.size() * 4);
  for (std::size_t pos = 0; pos < text.size();) {
    if (at_line_start_) tagged += prefix_;
    std::size_t newline = text.find('\n', pos);
    std::size_t end = newline == std::string_view::npos ? text.size() : newline + 1;
    tagged.append(text.substr(pos, end - pos));
    at_line_start_ = newline != std::string_view::npos;
    pos = end;
  }
  destination_gone_ = !write_all(destination_fd_, tagged);
}

}  // namespace sluicerun
