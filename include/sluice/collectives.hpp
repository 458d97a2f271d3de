// Sluice native C++ API: nonblocking collectives over all ranks of a Session.
//
//   sluice::Session s;
//   sluice::Collectives world(s);
//   std::vector<double> mine(n), all(n * s.size());
//   sluice::CollRequest r = world.igather(std::as_bytes(std::span(mine)),
//                                         std::as_writable_bytes(std::span(all)), /*root=*/0);
//   compute();                  // the progress thread (SLUICE_PROGRESS_THREAD) advances it
//   r.wait();
//
// Each operation is a schedule of sends, receives and local reductions that the engine
// advances whenever a call makes progress, or the progress thread does while the
// application computes (docs/COLLECTIVES.md). Blocking forms are the same plus wait().
// Every rank must start the collectives of one Collectives object in the same order.
// Sizes are in bytes per rank block, except reductions, whose spans hold whole arrays.
#pragma once

#include <sluice/sluice.hpp>

#include <cstdint>
#include <memory>
#include <span>

namespace sluice {

namespace detail {
struct CollectiveGroup;
}

// The element types and operations the native reductions know.
enum class Element : std::uint8_t { i32, i64, u32, u64, f32, f64 };
enum class ReduceOp : std::uint8_t { sum, prod, min, max };

// A collective in flight. Move-only. Destroying one that has not completed detaches it:
// the operation still completes in the background, its buffers must stay valid until then.
class CollRequest {
 public:
  CollRequest() = default;
  CollRequest(CollRequest&& o) noexcept : schedule_(o.schedule_), refused_(o.refused_) {
    o.schedule_ = nullptr;
    o.refused_ = Errc::ok;
  }
  CollRequest& operator=(CollRequest&& o) noexcept;
  CollRequest(const CollRequest&) = delete;
  CollRequest& operator=(const CollRequest&) = delete;
  ~CollRequest();

  bool valid() const { return schedule_ != nullptr || refused_ != Errc::ok; }
  // Advances communication; true once this collective is done (wait() then returns at once).
  bool test();
  // Waits until done and releases the request; the first error (a dead member, a bad
  // argument), Errc::ok otherwise.
  Errc wait();
  // The algorithm this collective runs, e.g. "alltoall: pairwise exchange" (for reports).
  const char* algorithm() const;

 private:
  friend class Collectives;
  explicit CollRequest(void* schedule) : schedule_(schedule) {}
  explicit CollRequest(Errc refused) : refused_(refused) {}
  void* schedule_ = nullptr;  // a coll::Schedule
  Errc refused_ = Errc::ok;   // arguments refused before anything started (wait() returns it)
};

class Collectives {
 public:
  // Context id 0x5b0000 and up are free for collectives: p2p traffic uses 0 by default and
  // the MPI layer allocates from 0 upward. Objects that coexist need different contexts.
  static constexpr ContextId default_context = 0x5b0000;

  explicit Collectives(Session& session, ContextId ctx = default_context);
  // Every collective started on this object, waited or detached, must be done by then.
  ~Collectives();
  Collectives(const Collectives&) = delete;
  Collectives& operator=(const Collectives&) = delete;

  int rank() const;
  int size() const;

  CollRequest ibarrier();
  CollRequest ibcast(std::span<std::byte> buf, int root);
  // recv: size() blocks of send.size() bytes, significant at the root only.
  CollRequest igather(std::span<const std::byte> send, std::span<std::byte> recv, int root);
  // send: size() blocks of recv.size() bytes, significant at the root only.
  CollRequest iscatter(std::span<const std::byte> send, std::span<std::byte> recv, int root);
  // recv: size() blocks of send.size() bytes.
  CollRequest iallgather(std::span<const std::byte> send, std::span<std::byte> recv);
  // send and recv: size() blocks each, block i going to / coming from rank i.
  CollRequest ialltoall(std::span<const std::byte> send, std::span<std::byte> recv);
  // recv[i] = send_0[i] op send_1[i] op ... for every element; send.size() == recv.size().
  CollRequest iallreduce(std::span<const std::byte> send, std::span<std::byte> recv, Element type,
                         ReduceOp op);
  CollRequest ireduce(std::span<const std::byte> send, std::span<std::byte> recv, Element type,
                      ReduceOp op, int root);

  // Blocking forms: start and wait.
  Errc barrier() { return ibarrier().wait(); }
  Errc allreduce(std::span<const std::byte> send, std::span<std::byte> recv, Element type,
                 ReduceOp op) {
    return iallreduce(send, recv, type, op).wait();
  }

 private:
  std::unique_ptr<detail::CollectiveGroup> group_;
};

}  // namespace sluice
