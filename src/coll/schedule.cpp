#include "coll/schedule.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "util/cpu.hpp"

namespace sluice::coll {

namespace {

constexpr std::size_t kAlign = 64;
// A recycled schedule keeps an arena as large as its last build needed, up to this size,
// so repeated collectives of the same shape allocate nothing.
constexpr std::size_t kArenaMax = std::size_t{1} << 20;
// Finished schedules kept for reuse.
constexpr std::size_t kPoolMax = 64;
// How long after a schedule completed the progress thread keeps listening in the doorbell
// rather than parking: a loop of nonblocking collectives then costs no wake-up per start
// (posting to a parked thread wakes it, and on a core shared with the computation each
// wake-up is a context switch there and back, ~10 us on this VM, as long as a 64 KiB
// collective).
constexpr uint64_t kLingerNs = 5'000'000;

std::byte* align_up(std::byte* p) {
  auto v = reinterpret_cast<std::uintptr_t>(p);
  return reinterpret_cast<std::byte*>((v + kAlign - 1) & ~(kAlign - 1));
}
// Inline word compare (std::array's operator== calls memcmp).
bool same_key(const Builder::Key& a, const Builder::Key& b) {
  uint64_t diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= a[i] ^ b[i];
  return diff == 0;
}

std::size_t round_up(std::size_t n) {
  return (n + kAlign - 1) & ~(kAlign - 1);
}

}  // namespace

// ---- Schedule -------------------------------------------------------------------------

void Schedule::reset() {
  ops_.clear();
  round_end_.clear();
  pending_.clear();
  extra_.clear();
  if (temp_wanted_ > arena_cap_ && temp_wanted_ <= kArenaMax) {
    arena_cap_ = temp_wanted_;
    arena_.reset(new std::byte[arena_cap_ + kAlign]);
  }
  arena_used_ = 0;
  temp_wanted_ = 0;
  reducer_ = Reducer{};
  keyed_ = false;
  single_copy_ = true;
  group_ = nullptr;
  next_round_ = 0;
  state_ = State::idle;
  detached_ = false;
  error_ = Errc::ok;
  algorithm_ = nullptr;
  on_done_ = nullptr;
  on_done_arg_ = nullptr;
  prev_ = next_ = nullptr;
  failures_seen_ = 0;
}

void Schedule::prepare_rerun() {
  next_round_ = 0;
  state_ = State::idle;
  detached_ = false;
  error_ = Errc::ok;
  on_done_ = nullptr;
  on_done_arg_ = nullptr;
  prev_ = next_ = nullptr;
}

ScheduleCache::~ScheduleCache() {
  delete kept;
}

void Schedule::start_round(detail::Engine& e) {
  const std::size_t begin = next_round_ == 0 ? 0 : round_end_[next_round_ - 1];
  const std::size_t end = round_end_[next_round_];
  ++next_round_;
  for (std::size_t i = begin; i < end; ++i) {
    const Op& op = ops_[i];
    Errc err = Errc::ok;
    switch (op.kind) {
      case OpKind::send:
        // An eager send the driver takes at once leaves nothing to wait for.
        if (detail::RequestImpl* r =
                e.isend_or_inject({op.src, op.n}, op.peer, tag_, ctx_, err, single_copy_))
          pending_.push_back(r);
        break;
      case OpKind::recv:
        pending_.push_back(e.irecv({op.dst, op.n}, op.peer, tag_, ctx_, err));
        break;
      case OpKind::copy:
        std::memmove(op.dst, op.src, op.n);
        break;
      case OpKind::reduce:
        reducer_.fn(op.src, op.dst, op.n, reducer_.arg);
        break;
    }
  }
}

void Schedule::check_failures(detail::Engine& e) {
  const std::vector<int>& failed = e.failed_ranks();
  for (; failures_seen_ < failed.size(); ++failures_seen_) {
    if (std::find(members_.begin(), members_.end(), failed[failures_seen_]) == members_.end())
      continue;
    failures_seen_ = failed.size();
    fail_for_dead_member(e);
    return;
  }
}

void Schedule::fail_for_dead_member(detail::Engine& e) {
  if (error_ == Errc::ok) error_ = Errc::peer_dead;
  for (std::size_t i = 0; i < pending_.size();) {
    detail::RequestImpl* r = pending_[i];
    if (e.cancel(r)) {
      e.wait(r, nullptr);  // complete now: frees it
    } else if (!e.abandon(r)) {
      ++i;
      continue;
    }
    pending_[i] = pending_.back();
    pending_.pop_back();
  }
}

bool Schedule::advance(detail::Engine& e) {
  if (state_ != State::active) return false;
  // One compare while no rank has failed.
  if (e.failed_ranks().size() != failures_seen_) [[unlikely]]
    check_failures(e);
  bool moved = false;
  for (;;) {
    for (std::size_t i = 0; i < pending_.size();) {
      detail::RequestImpl* r = pending_[i];
      if (r->state != detail::RequestState::complete) {
        ++i;
        continue;
      }
      // Complete, so wait() only collects the status and frees the request.
      Errc err = e.wait(r, nullptr);
      if (err != Errc::ok && error_ == Errc::ok) error_ = err;
      pending_[i] = pending_.back();
      pending_.pop_back();
      moved = true;
    }
    if (!pending_.empty()) return moved;
    // A failed message stops the schedule once its round has drained: later rounds would
    // wait for data that will not come.
    if (error_ != Errc::ok || next_round_ == round_end_.size()) {
      state_ = State::done;
      return true;
    }
    start_round(e);
    moved = true;
  }
}

// ---- Builder --------------------------------------------------------------------------

Schedule* Builder::take_kept(Group& g, const Key& key, Runner* rn) {
  Schedule* kept = g.cache.kept;
  if (!kept || kept->runner_ != rn || !same_key(kept->key_, key)) return nullptr;
  g.cache.kept = nullptr;
  kept->prepare_rerun();
  return kept;
}

void Builder::assign_tag(Schedule* s, Group& g) {
  s->ctx_ = g.ctx;
  s->tag_ = static_cast<int>(g.seq % kTagLimit);
  ++g.seq;
}

Schedule* Builder::rerun(Group& g, const Key& key, const Reducer* red) {
  detail::EngineGuard guard;  // starting posts to the engine: hold off its progress thread
  if (!detail::current_engine()) return nullptr;  // the constructor reports it
  Runner& rn = Runner::instance();
  Schedule* s = take_kept(g, key, &rn);
  if (!s) return nullptr;
  if (red) s->reducer_ = *red;
  s->group_ = &g;
  assign_tag(s, g);
  s->state_ = Schedule::State::active;
  if (s->algorithm_) ++s->algorithm_->started;
  s->advance(rn.engine());
  if (!s->done()) rn.activate(s);
  return s;
}

Builder::Builder(Group& g, Algorithm& algorithm, const Key* key)
    : e_(detail::current_engine()), world_(g.world), rank_(g.rank), size_(g.size) {
  if (!e_) {
    std::fprintf(stderr, "sluice: collective called without an active Session\n");
    std::abort();
  }
  rn_ = &Runner::instance();
  if (key && (s_ = take_kept(g, *key, rn_))) {
    reused_ = true;
  } else {
    s_ = rn_->acquire();
    s_->algorithm_ = &algorithm;
    s_->keyed_ = key != nullptr;
    if (key) s_->key_ = *key;
    s_->members_.assign(g.world.begin(), g.world.end());
  }
  s_->group_ = key ? &g : nullptr;
  assign_tag(s_, g);
}

Builder::~Builder() {
  if (s_) rn_->recycle(s_);  // never started (exception while building)
}

std::byte* Builder::temp(std::size_t bytes) {
  const std::size_t n = round_up(bytes == 0 ? 1 : bytes);
  s_->temp_wanted_ += n;
  if (s_->arena_ && s_->arena_used_ + n <= s_->arena_cap_) {
    std::byte* p = align_up(s_->arena_.get()) + s_->arena_used_;
    s_->arena_used_ += n;
    return p;
  }
  s_->extra_.emplace_back(new std::byte[n + kAlign]);
  return align_up(s_->extra_.back().get());
}

void Builder::send(int peer, const void* buf, std::size_t bytes) {
  if (bytes == 0) return;
  s_->ops_.push_back(
      {OpKind::send, world_[peer], static_cast<const std::byte*>(buf), nullptr, bytes});
}

void Builder::recv(int peer, void* buf, std::size_t bytes) {
  if (bytes == 0) return;
  s_->ops_.push_back({OpKind::recv, world_[peer], nullptr, static_cast<std::byte*>(buf), bytes});
}

void Builder::send_signal(int peer) {
  s_->ops_.push_back({OpKind::send, world_[peer], nullptr, nullptr, 0});
}

void Builder::recv_signal(int peer) {
  s_->ops_.push_back({OpKind::recv, world_[peer], nullptr, nullptr, 0});
}

void Builder::copy(const void* src, void* dst, std::size_t bytes) {
  if (bytes == 0 || src == dst) return;
  s_->ops_.push_back(
      {OpKind::copy, -1, static_cast<const std::byte*>(src), static_cast<std::byte*>(dst), bytes});
}

void Builder::reduce(const void* in, void* inout, std::size_t count) {
  if (count == 0) return;
  s_->ops_.push_back({OpKind::reduce, -1, static_cast<const std::byte*>(in),
                      static_cast<std::byte*>(inout), count});
}

void Builder::end_round() {
  const uint32_t begin = s_->round_end_.empty() ? 0 : s_->round_end_.back();
  if (s_->ops_.size() > begin) s_->round_end_.push_back(static_cast<uint32_t>(s_->ops_.size()));
}

Schedule* Builder::start() {
  end_round();
  Schedule* s = s_;
  s_ = nullptr;
  s->state_ = Schedule::State::active;
  if (s->algorithm_) ++s->algorithm_->started;
  s->advance(*e_);
  if (!s->done()) rn_->activate(s);
  return s;
}

// ---- Runner ---------------------------------------------------------------------------

Runner& Runner::replace(detail::Engine* e) {
  static std::unique_ptr<Runner> runner;
  runner.reset(new Runner(e));
  if (e) register_algorithm_stats(e->stats_registry());
  current_ = runner.get();
  return *runner;
}

Schedule* Runner::acquire() {
  Schedule* s;
  if (free_.empty()) {
    s = new Schedule;
  } else {
    s = free_.back().release();
    free_.pop_back();
  }
  s->runner_ = this;
  return s;
}

void Runner::recycle(Schedule* s) {
  s->reset();
  if (free_.size() < kPoolMax)
    free_.emplace_back(s);
  else
    delete s;
}

void Runner::retire(Schedule* s) {
  Group* g = s->group_;
  if (!s->keyed_ || !g || s->error_ != Errc::ok || s->temp_wanted_ > kArenaMax) {
    recycle(s);
    return;
  }
  Schedule* old = g->cache.kept;
  g->cache.kept = s;
  if (!old) return;
  if (old->runner_ == this)
    recycle(old);
  else
    delete old;  // built under an earlier Session
}

void Runner::activate(Schedule* s) {
  s->prev_ = nullptr;
  s->next_ = head_;
  if (head_) head_->prev_ = s;
  head_ = s;
  if (!hooked_) {
    engine_->add_progress_hook(this);
    hooked_ = true;
  }
}

bool Runner::linger() const {
  return hooked_ && util::now_ns() - last_done_ns_ < kLingerNs;
}

void Runner::unlink(Schedule* s) {
  if (s->prev_)
    s->prev_->next_ = s->next_;
  else
    head_ = s->next_;
  if (s->next_) s->next_->prev_ = s->prev_;
  s->prev_ = s->next_ = nullptr;
}

void Runner::completed(Schedule* s) {
  last_done_ns_ = util::now_ns();
  unlink(s);
  if (s->on_done_) s->on_done_(s->on_done_arg_, s->error_);
  if (s->detached_) recycle(s);
}

bool Runner::step(Schedule* s) {
  if (s->state_ != Schedule::State::active) return false;
  bool moved = s->advance(*engine_);
  if (s->done()) completed(s);
  return moved;
}

bool Runner::progress() {
  bool moved = false;
  for (Schedule* s = head_; s;) {
    Schedule* next = s->next_;
    moved |= step(s);
    s = next;
  }
  // Idle for a while: leave the engine's loop until the next collective starts. Not at
  // once: back-to-back collectives would add and remove the hook every call.
  if (head_) {
    idle_passes_ = 0;
  } else if (hooked_ && ++idle_passes_ > 4096) {
    engine_->remove_progress_hook(this);
    hooked_ = false;
  }
  return moved;
}

// ---- public handle functions --------------------------------------------------------------

bool test(Schedule* s) {
  detail::EngineGuard guard;
  if (s->done()) return true;
  Runner& rn = *s->runner_;
  rn.step(s);
  if (s->done()) return true;
  rn.engine().progress();
  return s->done();
}

bool poll(Schedule* s) {
  // Every engine progress pass steps the active schedules (the Runner is a progress hook),
  // so a caller that runs progress itself only needs to look (under the engine lock: the
  // progress thread may be completing it).
  detail::EngineGuard guard;
  return s->done();
}

void wait(Schedule* s) {
  detail::EngineGuard guard;
  if (s->done()) return;
  Runner& rn = *s->runner_;
  rn.step(s);
  if (s->done()) return;
  detail::Engine& e = rn.engine();
  auto bo = e.make_backoff();
  while (!s->done()) {
    if (e.progress())  // the Runner's hook advances s
      bo.reset();
    else
      bo.pause();
  }
}

Errc error(const Schedule* s) {
  return s->error();
}

void on_complete(Schedule* s, void (*fn)(void*, Errc), void* arg) {
  detail::EngineGuard guard;
  if (s->done()) {
    fn(arg, s->error_);
    return;
  }
  s->on_done_ = fn;
  s->on_done_arg_ = arg;
}

void release(Schedule* s) {
  detail::EngineGuard guard;
  if (s->done())
    s->runner_->retire(s);
  else
    s->detached_ = true;
}

Errc finish(Schedule* s) {
  detail::EngineGuard guard;
  wait(s);
  Errc e = s->error();
  release(s);
  return e;
}

const char* algorithm(const Schedule* s) {
  return s->algorithm();
}

const char* algorithm_counter(const Schedule* s) {
  return s->algorithm_counter();
}

}  // namespace sluice::coll
