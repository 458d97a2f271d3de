#include "core/rma_copy.hpp"

#include <cstring>

#include "core/engine.hpp"

namespace sluice::detail {

CopyAssist::CopyAssist(Engine& e)
    : min_(e.config().get_size("WIN_ASSIST")), chunk_(e.config().get_size("WIN_ASSIST_CHUNK")) {
  util::StatsRegistry& reg = e.stats_registry();
  using util::Unit;
  reg.add("win", "assist_ops", Unit::count, &stats_.ops,
          "gets and puts on shared windows split with the copy helper thread (WIN_ASSIST)");
  reg.add("win", "assist_helped_ops", Unit::count, &stats_.helped_ops,
          "of those, the ones the helper copied a part of");
  reg.add("win", "assist_helped_bytes", Unit::bytes, &stats_.helped_bytes,
          "bytes the helper copied");
}

CopyAssist::~CopyAssist() = default;

void CopyAssist::copy_large(std::byte* dst, const std::byte* src, std::size_t n) {
  start_helper();
  if (!helper_) {
    std::memcpy(dst, src, n);
    return;
  }
  const uint64_t helped = helper_->copy(dst, src, n, chunk_);
  ++stats_.ops;
  stats_.helped_ops += helped > 0;
  stats_.helped_bytes += helped;
}

void CopyAssist::start_helper() {
  if (started_ || min_ == 0) return;
  started_ = true;
  helper_ = mem::CopyHelper::start();
}

CopyAssist& Engine::copy_assist() {
  if (!copy_assist_) copy_assist_ = std::make_unique<CopyAssist>(*this);
  return *copy_assist_;
}

}  // namespace sluice::detail
