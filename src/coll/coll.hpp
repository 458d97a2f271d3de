// Collective operations as schedules progressed by the engine.
//
// Every collective builds a Schedule — rounds of sends, receives, local copies and
// reductions over buffers it owns — and starts it. One progress hook (the Runner) advances
// every active schedule whenever the engine makes progress, so nonblocking collectives move
// whenever the application calls into Sluice (and later from a progress thread). A
// blocking collective is the same schedule plus wait().
//
// Buffers are contiguous bytes: the MPI layer packs non-contiguous datatypes. This layer
// sits below MPI and knows no MPI handles.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "sluice/sluice.hpp"

namespace sluice::coll {

// The members of a communicator as this layer sees them. Keep one Group per communicator
// for its lifetime: `seq` counts the collectives started on it, and MPI's rule that every
// member calls collectives in the same order keeps it identical on all members, so it
// names each collective's tag space.
class Schedule;

// The finished schedule a group keeps so that the next identical collective (same kind,
// buffers and sizes — the common loop) reruns it instead of building it again. Owned;
// copies of a group start without one.
class ScheduleCache {
 public:
  ScheduleCache() = default;
  ScheduleCache(const ScheduleCache&) {}
  ScheduleCache& operator=(const ScheduleCache&) { return *this; }
  ~ScheduleCache();
  Schedule* kept = nullptr;
};

struct Group {
  int rank = 0;
  int size = 1;
  std::vector<int> world;  // communicator rank -> world (engine) rank
  uint32_t ctx = 0;        // context id reserved for this communicator's collectives
  uint32_t seq = 0;        // collectives started so far (advanced by every call below)
  ScheduleCache cache;     // must outlive nothing: a Group outlives its schedules
};

// inout[i] = in[i] op inout[i] for i < count. `commutative` false makes every algorithm
// apply the operator in rank order (rank 0 op rank 1 op ...), as MPI requires.
struct Reducer {
  void (*fn)(const void* in, void* inout, std::size_t count, const void* arg) = nullptr;
  const void* arg = nullptr;
  std::size_t elem_size = 1;
  bool commutative = true;
};

// Algorithm selection (docs/COLLECTIVES.md "Algorithms" lists the rules and the
// measurements behind them). Process-wide; every rank of a group must see the same values,
// and a group that keeps a schedule (Builder::rerun) reruns it whatever they are now, so
// change them only before a group's first collective (tests force algorithms this way on
// fresh groups).
struct Tuning {
  // Bcast: the root sends to every rank directly (one round) up to this many ranks.
  int bcast_linear_max_procs = 4;
  // Otherwise binomial below bcast_short bytes or below bcast_min_procs ranks, else van de
  // Geijn's scatter + ring allgather.
  std::size_t bcast_short = 12288;  // MPIR_CVAR_BCAST_SHORT_MSG_SIZE
  int bcast_min_procs = 8;          // MPIR_CVAR_BCAST_MIN_PROCS
  // Allreduce on 3..allreduce_direct_max_procs ranks (any operator): every rank sends its
  // whole vector to every other (one round) up to allreduce_all_at_once_max bytes, else a
  // direct reduce-scatter + allgather (two rounds). Two ranks and larger groups: recursive
  // doubling below allreduce_short bytes, Rabenseifner above (commutative operators).
  int allreduce_direct_max_procs = 4;
  std::size_t allreduce_all_at_once_max = 2048;
  std::size_t allreduce_short = 2048;  // MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE
  // Alltoall: Bruck up to alltoall_short bytes per block from alltoall_bruck_min_procs ranks;
  // every message at once up to alltoall_medium per block or alltoall_at_once_total bytes in
  // all (P x block); pairwise exchange above.
  std::size_t alltoall_short = 256;  // MPIR_CVAR_ALLTOALL_SHORT_MSG_SIZE
  int alltoall_bruck_min_procs = 8;
  std::size_t alltoall_medium = 32768;  // MPIR_CVAR_ALLTOALL_MEDIUM_MSG_SIZE
  std::size_t alltoall_at_once_total = std::size_t{1} << 20;
};
Tuning& tuning();

// Collectives use tags [0, kTagLimit) on the group's context; the MPI layer reserves the
// tags above for communicator management.
inline constexpr uint32_t kTagLimit = 0x3fff0000;

// Every call returns a started schedule (never nullptr); errors (bad peer, truncation,
// dead peer) surface through error() once it is done. In-place variants: pass nullptr as
// the buffer MPI would mark MPI_IN_PLACE (documented per call). Counts, displacements and
// sizes are bytes except for the reductions, whose counts are elements of the Reducer.
Schedule* ibarrier(Group& g);
Schedule* ibcast(Group& g, void* buf, std::size_t bytes, int root);
// sendbuf nullptr at the root: in place (the root's contribution is in recvbuf).
Schedule* ireduce(Group& g, const void* sendbuf, void* recvbuf, std::size_t count,
                  const Reducer& op, int root);
// sendbuf nullptr: in place.
Schedule* iallreduce(Group& g, const void* sendbuf, void* recvbuf, std::size_t count,
                     const Reducer& op);
// `bytes` per rank. sendbuf nullptr at the root: in place (already at recvbuf + root*bytes).
Schedule* igather(Group& g, const void* sendbuf, void* recvbuf, std::size_t bytes, int root);
// counts/displs (bytes) significant at the root only; sendbuf nullptr at the root: in place.
Schedule* igatherv(Group& g, const void* sendbuf, std::size_t sendbytes, void* recvbuf,
                   std::span<const std::size_t> counts, std::span<const std::size_t> displs,
                   int root);
// recvbuf nullptr at the root: in place (the root's block stays in sendbuf).
Schedule* iscatter(Group& g, const void* sendbuf, void* recvbuf, std::size_t bytes, int root);
Schedule* iscatterv(Group& g, const void* sendbuf, std::span<const std::size_t> counts,
                    std::span<const std::size_t> displs, void* recvbuf, std::size_t recvbytes,
                    int root);
// sendbuf nullptr: in place (own block already at recvbuf + rank*bytes).
Schedule* iallgather(Group& g, const void* sendbuf, void* recvbuf, std::size_t bytes);
// sendbuf nullptr: in place (own block already at recvbuf + displs[rank]).
Schedule* iallgatherv(Group& g, const void* sendbuf, std::size_t sendbytes, void* recvbuf,
                      std::span<const std::size_t> counts, std::span<const std::size_t> displs);
// `bytes` per peer. sendbuf nullptr: in place (recvbuf holds the blocks to send).
Schedule* ialltoall(Group& g, const void* sendbuf, void* recvbuf, std::size_t bytes);
// sendbuf nullptr: in place (recvbuf with rcounts/rdispls holds the blocks to send).
Schedule* ialltoallv(Group& g, const void* sendbuf, std::span<const std::size_t> scounts,
                     std::span<const std::size_t> sdispls, void* recvbuf,
                     std::span<const std::size_t> rcounts, std::span<const std::size_t> rdispls);
// counts[i] elements of the result go to rank i. sendbuf nullptr: in place (recvbuf holds
// the whole input; the result replaces its beginning).
Schedule* ireduce_scatter(Group& g, const void* sendbuf, void* recvbuf,
                          std::span<const std::size_t> counts, const Reducer& op);
Schedule* ireduce_scatter_block(Group& g, const void* sendbuf, void* recvbuf, std::size_t count,
                                const Reducer& op);
// sendbuf nullptr: in place.
Schedule* iscan(Group& g, const void* sendbuf, void* recvbuf, std::size_t count, const Reducer& op);
// sendbuf nullptr: in place. Rank 0's recvbuf is left untouched.
Schedule* iexscan(Group& g, const void* sendbuf, void* recvbuf, std::size_t count,
                  const Reducer& op);

// Point-to-point transfers the caller lists, all posted in one round (receives first):
// for exchanges no algorithm above describes, such as those between the two groups of an
// MPI intercommunicator (g.world then lists the other group; g.rank is not used). Peers
// are ranks in g.world. A zero-byte transfer still posts a message: both sides list it.
struct Transfer {
  int peer = 0;
  void* buf = nullptr;  // read for a send
  std::size_t bytes = 0;
};
Schedule* iexchange(Group& g, std::span<const Transfer> sends, std::span<const Transfer> recvs);

bool test(Schedule* s);  // advances; true once done
// True once done, without a progress pass: for callers that run the engine's progress
// themselves (each pass advances every active schedule).
bool poll(Schedule* s);
void wait(Schedule* s);         // progress (with backoff) until done
Errc error(const Schedule* s);  // first error, valid once done
// Called once, when the schedule completes (from whichever call advanced it last); set it
// right after starting, before the next call into Sluice.
void on_complete(Schedule* s, void (*fn)(void* arg, Errc err), void* arg);
// Drops the handle. A schedule still running completes in the background, then recycles.
void release(Schedule* s);
// wait + release; returns the error.
Errc finish(Schedule* s);

// A one-line description of the algorithm the schedule runs (tests, debugging).
const char* algorithm(const Schedule* s);
// Its statistics counter, less the "coll." prefix ("bcast.binomial"); "" if none.
const char* algorithm_counter(const Schedule* s);

}  // namespace sluice::coll
