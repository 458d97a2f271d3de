// Sluice native one-sided API: remote memory access, remote atomics, active messages.
//
//   sluice::Session s;
//   sluice::Rma rma(s);                             // collective: every rank opens it
//   std::vector<std::uint64_t> mine(1024);
//   sluice::RegisteredMemory reg;
//   rma.register_memory(std::as_writable_bytes(std::span(mine)), reg);
//   // hand reg.remote_key() to the peers (RemoteKey::pack(), a send, RemoteKey::unpack())
//   sluice::Request r = rma.iput(bytes, peer, peer_key, /*offset=*/0);
//   s.wait(r);                                      // or rma.put(...) and later rma.flush()
//   std::uint64_t old;
//   sluice::Request a = rma.fetch_add<std::uint64_t>(peer, peer_key, 0, 1, &old);
//
// Completion. A put is complete when its data is in the target's memory; a get when the
// data is in the caller's buffer; an atomic when the old value is in *old. Request-based
// calls (iput, iget, the atomics) complete through Session::wait / test; the implicit ones
// (put, get) only through flush(), which also waits for the request-based ones and returns
// the first error of the implicit ones. Buffers must stay valid until completion.
//
// Progress. Where the driver reaches the target's memory itself (shared memory through
// CMA, the own rank) a put or get needs nothing of the target. Elsewhere (tcp, udp) and for
// every atomic and active message the target's engine carries the operation out when it
// progresses: inside any Sluice call it makes, or at any time with a progress thread
// (SLUICE_PROGRESS_THREAD=on), so a target that only computes still serves its peers.
//
// Atomics are executed by the target's engine one at a time, for every driver: they are
// atomic with respect to each other from all ranks (the target too, when it uses these
// calls on its own memory), not with respect to plain loads and stores or puts to the same
// bytes.
//
// Errors. Data-path calls never throw. An access outside the range a remote key describes
// fails at the caller with Errc::remote_access; one the target refuses (a key it never
// handed out or no longer has, a range beyond its registration) completes with
// Errc::remote_access too, and the target carries on. On shared memory (CMA) the key's
// address and length are trusted as an RDMA key would be: a key naming memory the target
// does not have fails (remote_access); deregistered memory is not detected there. With
// Firehose on (SLUICE_RMA_FIREHOSE=on, docs/RMA.md), a put or get on the packet paths into
// memory the target has unmapped since fails with remote_access instead of being written.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <type_traits>
#include <vector>

#include "sluice/sluice.hpp"

namespace sluice {

// Describes registered memory to a peer: the owner's address of its first byte, its
// length, and the owner's key for it. Trivially copyable; pack() / unpack() give its
// 24-byte wire form (little-endian host order) to send in a message.
struct RemoteKey {
  std::uint64_t addr = 0;
  std::uint64_t length = 0;
  std::uint64_t key = 0;

  static constexpr std::size_t packed_size = 24;
  std::array<std::byte, packed_size> pack() const {
    std::array<std::byte, packed_size> out;
    std::memcpy(out.data(), this, packed_size);
    return out;
  }
  static RemoteKey unpack(std::span<const std::byte, packed_size> in) {
    RemoteKey k;
    std::memcpy(&k, in.data(), packed_size);
    return k;
  }
};
static_assert(sizeof(RemoteKey) == RemoteKey::packed_size);

// Memory registered for remote access. Move-only; deregistered when destroyed (peers'
// later accesses through its key are refused). Destroy it only once the peers are done
// with it (after a barrier, or after the Rma context closed).
class RegisteredMemory {
 public:
  RegisteredMemory() = default;
  RegisteredMemory(RegisteredMemory&& o) noexcept { *this = std::move(o); }
  RegisteredMemory& operator=(RegisteredMemory&& o) noexcept;
  RegisteredMemory(const RegisteredMemory&) = delete;
  RegisteredMemory& operator=(const RegisteredMemory&) = delete;
  ~RegisteredMemory() { reset(); }
  void reset();

  bool valid() const { return id_ != 0; }
  std::span<std::byte> memory() const { return {base_, length_}; }
  RemoteKey remote_key() const {
    return RemoteKey{reinterpret_cast<std::uint64_t>(base_), length_, id_};
  }

 private:
  friend class Rma;
  std::byte* base_ = nullptr;
  std::size_t length_ = 0;
  std::uint64_t id_ = 0;
};

class AmToken;
// An active message handler: runs on the target inside its engine's progress (the
// application's thread in a Sluice call, or the progress thread). `args` are the sender's
// 64-bit arguments; `payload` is empty (short), a buffer holding a copy of the data, valid
// during the call (medium), or the data where it was deposited in the target's registered
// memory (long). A handler must not block nor start operations other than one reply
// through its token (it may read and write memory, and record what arrived).
using AmHandler = std::function<void(AmToken& token, std::span<const std::uint64_t> args,
                                     std::span<std::byte> payload)>;

// Names the message a handler runs for; replies go back to its source. A reply's handler
// cannot reply again; a request's handler replies at most once.
class AmToken {
 public:
  int source() const { return source_; }
  bool is_reply() const { return reply_; }
  Errc reply_short(unsigned handler, std::span<const std::uint64_t> args = {});
  Errc reply_medium(unsigned handler, std::span<const std::uint64_t> args,
                    std::span<const std::byte> payload);
  Errc reply_long(unsigned handler, std::span<const std::uint64_t> args,
                  std::span<const std::byte> payload, const RemoteKey& dest, std::uint64_t offset);

 private:
  friend class Rma;
  AmToken(int source, bool reply) : source_(source), reply_(reply) {}
  Errc may_reply();
  int source_;
  bool reply_;
  bool replied_ = false;
};

template <class T>
concept RmaAtomicInt = std::same_as<T, std::int32_t> || std::same_as<T, std::uint32_t> ||
    std::same_as<T, std::int64_t> || std::same_as<T, std::uint64_t>;

// A one-sided communication context over a Session's ranks. Opening and closing it are
// collective (every rank, same order). One per process at a time; destroy it before the
// Session. Thread-safe like Session (serialized by the engine lock).
class Rma {
 public:
  // Throws std::runtime_error when no Session is open or another Rma is. `handlers`:
  // the active message handler table, indexed by handler number (up to 256 entries; every
  // rank registers the same table).
  explicit Rma(Session& session, std::vector<AmHandler> handlers = {});
  // Completes this rank's operations (flush), then waits for every rank to do the same, so
  // that no peer still targets this rank's memory.
  ~Rma();
  Rma(const Rma&) = delete;
  Rma& operator=(const Rma&) = delete;

  Session& session() { return session_; }

  // Registers `memory` for remote access by every rank (out: its RAII handle).
  Errc register_memory(std::span<std::byte> memory, RegisteredMemory& out);

  // Nonblocking, completed by Session::wait / test.
  Request iput(std::span<const std::byte> src, int target, const RemoteKey& key,
               std::uint64_t offset);
  Request iget(std::span<std::byte> dst, int target, const RemoteKey& key, std::uint64_t offset);
  // Implicit: completed by flush(). Returns argument errors at once.
  Errc put(std::span<const std::byte> src, int target, const RemoteKey& key, std::uint64_t offset);
  Errc get(std::span<std::byte> dst, int target, const RemoteKey& key, std::uint64_t offset);
  // Waits until every operation this rank started towards `target` (any_source: towards
  // every rank) is complete; returns the first error among the implicit ones.
  Errc flush(int target = any_source);

  // Remote atomics on the aligned T at `offset` in the target's memory; the old value goes
  // to *old (may be null).
  template <RmaAtomicInt T>
  Request fetch_add(int target, const RemoteKey& key, std::uint64_t offset, T value, T* old) {
    return atomic(0, sizeof(T), target, key, offset, static_cast<std::uint64_t>(value), 0, old);
  }
  // Stores `desired` if the value equals `expected`; *old receives the value found.
  template <RmaAtomicInt T>
  Request compare_swap(int target, const RemoteKey& key, std::uint64_t offset, T expected,
                       T desired, T* old) {
    return atomic(1, sizeof(T), target, key, offset, static_cast<std::uint64_t>(desired),
                  static_cast<std::uint64_t>(expected), old);
  }
  template <RmaAtomicInt T>
  Request swap(int target, const RemoteKey& key, std::uint64_t offset, T value, T* old) {
    return atomic(2, sizeof(T), target, key, offset, static_cast<std::uint64_t>(value), 0, old);
  }

  // Active messages (GASNet's request calls). Each returns once its arguments and payload
  // may be reused; the handler runs later at the target. Up to 16 arguments.
  Errc am_short(int target, unsigned handler, std::span<const std::uint64_t> args = {});
  // The payload (up to max_medium) is copied into a buffer the handler is given.
  Errc am_medium(int target, unsigned handler, std::span<const std::uint64_t> args,
                 std::span<const std::byte> payload);
  // The payload is deposited at `offset` in the target's memory `dest` before the handler
  // runs (any size).
  Errc am_long(int target, unsigned handler, std::span<const std::uint64_t> args,
               std::span<const std::byte> payload, const RemoteKey& dest, std::uint64_t offset);
  // The largest medium payload towards `target` with `nargs` arguments (one packet of its
  // driver).
  std::size_t max_medium(int target, std::size_t nargs = 0) const;

 private:
  Request atomic(int op, unsigned width, int target, const RemoteKey& key, std::uint64_t offset,
                 std::uint64_t operand, std::uint64_t compare, void* old);
  Errc check_target(int target) const;
  Session& session_;
  std::vector<AmHandler> handlers_;
};

}  // namespace sluice
