// Schedules: the representation every collective algorithm compiles to, and the Runner
// that advances them from the engine's progress loop.
//
// A schedule is a list of rounds. Starting a round executes its operations in order:
// local copies and reductions run at once, sends and receives are posted. The round is
// over when all of its messages have completed; then the next one starts. So a reduction
// placed in round k+1 may read what round k received.
//
// Every message of one schedule carries the same tag (derived from the group's sequence
// number): MPI's non-overtaking rule orders messages between a pair of ranks, and every
// algorithm posts the messages of a pair in the same order on both sides, so no per-round
// tags are needed and the full tag range separates concurrent collectives.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "coll/coll.hpp"
#include "core/engine.hpp"

namespace sluice::coll {

enum class OpKind : uint8_t { send, recv, copy, reduce };

struct Op {
  OpKind kind;
  int peer = -1;                   // world rank (send, recv)
  const std::byte* src = nullptr;  // send, copy, reduce (in)
  std::byte* dst = nullptr;        // recv, copy, reduce (inout)
  std::size_t n = 0;               // bytes; elements for reduce
};

class Runner;

class Schedule {
 public:
  Schedule() = default;
  Schedule(const Schedule&) = delete;
  Schedule& operator=(const Schedule&) = delete;

  bool done() const { return state_ == State::done; }
  Errc error() const { return error_; }
  const char* algorithm() const { return algorithm_; }

 private:
  friend class Builder;
  friend class Runner;
  friend void coll::on_complete(Schedule*, void (*)(void*, Errc), void*);
  friend void coll::release(Schedule*);
  friend bool coll::test(Schedule*);
  friend bool coll::poll(Schedule*);
  friend void coll::wait(Schedule*);

  enum class State : uint8_t { idle, active, done };

  void reset();
  void prepare_rerun();
  // Runs rounds until one waits for messages; true if anything moved.
  bool advance(detail::Engine& e);
  void start_round(detail::Engine& e);
  // The engine learned of failures since the last look: if one is a member, stop the
  // schedule with peer_dead (see fail_for_dead_member).
  [[gnu::noinline]] void check_failures(detail::Engine& e);
  // Cancels the posted receives and abandons the sends that wait for a peer's answer;
  // what is left (transfers under way, sends queued for the driver) completes on its own
  // and is waited for, so no buffer is touched after the schedule is done.
  void fail_for_dead_member(detail::Engine& e);

  std::vector<Op> ops_;
  std::vector<uint32_t> round_end_;  // ops_ index one past each round's last op
  std::vector<detail::RequestImpl*> pending_;
  // The group's world ranks: a collective fails on every member once any member is known
  // dead, not only on those that exchange messages with it (their partners would stop and
  // leave them waiting). A copy, so a schedule never outlives what it reads.
  std::vector<int> members_;
  std::size_t failures_seen_ = 0;  // Engine::failed_ranks() already checked against members_
  // Temporary buffers: a retained arena (reused by the next schedule built in this object)
  // plus blocks for whatever does not fit.
  std::unique_ptr<std::byte[]> arena_;
  std::size_t arena_cap_ = 0;
  std::size_t arena_used_ = 0;
  std::size_t temp_wanted_ = 0;  // bytes asked for by the last build
  std::vector<std::unique_ptr<std::byte[]>> extra_;
  Reducer reducer_;
  uint32_t ctx_ = 0;
  int tag_ = 0;
  std::size_t next_round_ = 0;
  State state_ = State::idle;
  bool detached_ = false;
  // Large sends may take the single-copy get (SLUICE_RNDV_COLL_GET_MAX): off where one rank
  // receives from many (gather), which the get would leave doing every copy alone.
  bool single_copy_ = true;
  Errc error_ = Errc::ok;
  const char* algorithm_ = "";
  void (*on_done_)(void*, Errc) = nullptr;
  void* on_done_arg_ = nullptr;
  Runner* runner_ = nullptr;  // the pool it came from (and returns to)
  // Reuse: the shape it was built for (Builder::Key) and the group that may keep it.
  std::array<uint64_t, 7> key_{};
  bool keyed_ = false;
  Group* group_ = nullptr;
  Schedule* prev_ = nullptr;  // the Runner's list of active schedules
  Schedule* next_ = nullptr;
};

// Compiles one collective into a Schedule taken from the Runner's pool. Peers are
// communicator ranks; the builder maps them to world ranks.
class Builder {
 public:
  // Everything that decides a schedule's operations besides the group: kind, buffers,
  // sizes, root, reducer shape. With a key, a finished schedule of the same key kept by
  // the group is rerun instead of built (reused() is then true: start() at once).
  using Key = std::array<uint64_t, 7>;
  Builder(Group& g, const char* algorithm, const Key* key = nullptr);
  bool reused() const { return reused_; }
  // The fast path of reuse, tried before constructing a Builder: when the group keeps a
  // finished schedule built for `key`, starts it again (with `red`, if given, as its
  // reducer: the MPI layer's reducer argument lives in the caller's frame) and returns it;
  // else nullptr.
  static Schedule* rerun(Group& g, const Key& key, const Reducer* red = nullptr);
  Builder(const Builder&) = delete;
  Builder& operator=(const Builder&) = delete;
  ~Builder();

  int rank() const { return rank_; }
  int size() const { return size_; }
  void set_reducer(const Reducer& r) { s_->reducer_ = r; }
  void set_algorithm(const char* a) { s_->algorithm_ = a; }
  // Sends keep the pipelined copy for large messages (the sender then shares the copying).
  void prefer_pipeline() { s_->single_copy_ = false; }
  const Reducer& reducer() const { return s_->reducer_; }

  // Scratch memory owned by the schedule, 64-byte aligned, uninitialised.
  std::byte* temp(std::size_t bytes);

  // Zero-byte sends and receives are skipped: callers only pass sizes both sides agree on.
  void send(int peer, const void* buf, std::size_t bytes);
  void recv(int peer, void* buf, std::size_t bytes);
  // Zero-byte messages that are posted (synchronisation only).
  void send_signal(int peer);
  void recv_signal(int peer);
  void copy(const void* src, void* dst, std::size_t bytes);     // overlap-safe; no-op if src==dst
  void reduce(const void* in, void* inout, std::size_t count);  // inout = in op inout
  void end_round();

  // Starts the schedule and hands it over.
  Schedule* start();

 private:
  detail::EngineGuard guard_;  // building posts to the engine: hold off its progress thread
  Runner* rn_;
  Schedule* s_;
  // The group's kept schedule if it was built for `key` under `rn`, reset for a rerun.
  static Schedule* take_kept(Group& g, const Key& key, Runner* rn);
  // Gives `s` the group's next tag (and context).
  static void assign_tag(Schedule* s, Group& g);

  bool reused_ = false;
  detail::Engine* e_;
  const std::vector<int>& world_;
  int rank_;
  int size_;
};

// The one progress hook of the collectives: advances every active schedule and keeps the
// pool of finished ones for reuse (their vectors and arenas stay allocated).
class Runner final : public detail::ProgressHook {
 public:
  // For the current engine. A new Session gets a fresh runner; schedules left running in
  // the previous one (an erroneous program) are abandoned.
  static Runner& instance() {
    detail::Engine* e = detail::current_engine();
    if (current_ && current_->engine_ == e) [[likely]]
      return *current_;
    return replace(e);
  }

  detail::Engine& engine() { return *engine_; }
  Schedule* acquire();
  void activate(Schedule* s);  // s has posted its first round and is not done
  void recycle(Schedule* s);
  // A finished, released schedule: kept by its group for reuse when it has a key, else
  // recycled.
  void retire(Schedule* s);
  // Advances one schedule; on completion unlinks it, runs its callback and recycles it if
  // its handle was dropped. True if anything moved.
  bool step(Schedule* s);
  bool progress() override;
  bool busy() const override { return head_ != nullptr; }
  // A schedule finished recently: keep the progress thread listening for the next one.
  bool linger() const override;

 private:
  explicit Runner(detail::Engine* e) : engine_(e) {}
  [[gnu::noinline]] static Runner& replace(detail::Engine* e);
  static inline Runner* current_ = nullptr;  // owned by replace()
  void unlink(Schedule* s);
  void completed(Schedule* s);

  detail::Engine* engine_;
  Schedule* head_ = nullptr;
  bool hooked_ = false;
  uint64_t last_done_ns_ = 0;  // when the last schedule completed (util::now_ns)
  uint32_t idle_passes_ = 0;   // progress passes with no active schedule (unhook after many)
  std::vector<std::unique_ptr<Schedule>> free_;
};

}  // namespace sluice::coll
