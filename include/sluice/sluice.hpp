// Sluice native C++ API: point-to-point messaging with MPI matching semantics.
//
//   sluice::Session s;                       // init; finalize when it goes out of scope
//   std::vector<int> v(100);
//   if (s.rank() == 0) s.send(std::as_bytes(std::span(v)), 1, /*tag=*/7);
//   else               s.recv(std::as_writable_bytes(std::span(v)), 0, 7);
//
// Data-path calls never throw: they return an Errc or carry it in a Status. Only Session's
// constructor throws (std::runtime_error) when the process cannot join its job.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/errc.hpp"

namespace sluice {

// Errc (ok, truncated, peer_dead, invalid_argument, no_memory, cancelled, internal) and
// to_string(Errc): see sluice/errc.hpp.

inline constexpr int any_source = -1;
inline constexpr int any_tag = -1;
// Tags a user may pass are 0..max_tag; negative tags are reserved (wildcard and internal).
inline constexpr int max_tag = 0x3fffffff;

// Outcome of a completed receive (or probe): who sent it, with which tag, how many bytes
// it carried (the full message size even when truncated) and whether it succeeded.
struct Status {
  int source = -1;
  int tag = -1;
  std::size_t size = 0;
  Errc error = Errc::ok;
  bool cancelled = false;
};

namespace detail {
struct RequestImpl;
class Engine;
}  // namespace detail
class Rma;  // sluice/rma.hpp

// A nonblocking operation in flight. Move-only. Destroying a request that has not
// completed detaches it (like MPI_Request_free): the operation still completes, the
// buffer must stay valid until then.
class Request {
 public:
  Request() = default;
  Request(Request&& o) noexcept : impl_(o.impl_) { o.impl_ = nullptr; }
  Request& operator=(Request&& o) noexcept;
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  ~Request();

  bool valid() const { return impl_ != nullptr; }

 private:
  friend class Session;
  friend class Rma;
  friend class detail::Engine;
  explicit Request(detail::RequestImpl* impl) : impl_(impl) {}
  detail::RequestImpl* impl_ = nullptr;
};

// Communication context id: messages only match receives with the same id. 0 is the
// world; the MPI layer allocates one per communicator.
using ContextId = std::uint32_t;

class Session {
 public:
  // Joins the job described by the launcher's environment (sluicerun), or runs as a
  // single-rank job when started without a launcher.
  Session();
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  int rank() const;
  int size() const;

  Request isend(std::span<const std::byte> buf, int dest, int tag, ContextId ctx = 0);
  // Synchronous send: completes only once the receiver has matched it.
  Request issend(std::span<const std::byte> buf, int dest, int tag, ContextId ctx = 0);
  Request irecv(std::span<std::byte> buf, int source, int tag, ContextId ctx = 0);

  Errc send(std::span<const std::byte> buf, int dest, int tag, ContextId ctx = 0);
  Errc recv(std::span<std::byte> buf, int source, int tag, Status* status = nullptr,
            ContextId ctx = 0);

  // Probe: is a matching message waiting? Fills status (size = full message size).
  bool iprobe(int source, int tag, Status* status, ContextId ctx = 0);
  Errc probe(int source, int tag, Status* status, ContextId ctx = 0);

  // Completion. wait/test release the request (it becomes !valid()).
  Errc wait(Request& req, Status* status = nullptr);
  bool test(Request& req, Status* status = nullptr);
  // Returns the first error among the requests (Errc::ok if none); statuses may be empty.
  Errc waitall(std::span<Request> reqs, std::span<Status> statuses = {});
  // Index of a completed request, or -1 when none is valid.
  int waitany(std::span<Request> reqs, Status* status = nullptr);
  // Cancels a receive not yet matched (true; it completes with Status::cancelled). For a
  // send, true when cancellation is done or under way: withdrawn at once if nothing is on
  // the wire yet, or, when its receiver has not answered its rendezvous request (or
  // synchronous eager message), withdrawn if still unmatched there; wait() tells
  // (Status::cancelled, or a normal completion). False when it can no longer be cancelled
  // (an eager message that is out, a pushed or streaming rendezvous): it completes normally.
  bool cancel(Request& req);

  Errc barrier();

  // Ends this rank's part in the job with the others, as the destructor does (collective:
  // every rank finalizes or ends its Session). A Session that lives until exit() (a static
  // one) needs it: one destroyed while the process exits leaves the job without waiting
  // for the others, which the launcher reports as a failure. Afterwards only the
  // destructor may be called.
  void finalize();

  // Process failures (ULFM semantics). A failed peer's requests complete with
  // Errc::peer_dead; so do any-source receives and probes on a context while it has a
  // failed rank (for MPI: a member of the communicator) not yet acknowledged. Messages
  // that arrived before still match. ack_failures() acknowledges the failures known now
  // (returns their number); failed_ranks() lists them in the order they were detected.
  std::size_t ack_failures(ContextId ctx = 0);
  std::vector<int> failed_ranks() const;

  // Drive communication without waiting (useful while computing).
  void progress();

  // Name of the driver that serves `peer` ("self", "shm", ...).
  std::string_view driver_name(int peer) const;
  // Human-readable counters (per driver and protocol), as SLUICE_STATS=1 prints them.
  std::string stats_report() const;
  // The current value of a statistics counter by name ("p2p.eager.messages_sent",
  // "shm.packets_sent", "rel.retransmits_timeout"; SLUICE_STATS=json lists them all), or
  // nullopt when this rank has no such counter (e.g. the driver is not in use).
  std::optional<std::uint64_t> counter(std::string_view name) const;

 private:
  detail::Engine* engine_;
};

}  // namespace sluice
