// Internals of the MPI binding core shared by every src/mpi/ file (and the collectives'
// bindings): the objects behind the handles, error raising, blocking waits, context ids.
//
// Communicators: a group (comm rank -> world rank) plus two engine context ids, `p2p_ctx`
// for user point-to-point traffic and `coll_ctx` for collectives. On `coll_ctx`, tags
// >= kMgmtTagBase are reserved for communicator management (context agreement of
// dup/split/create); collective algorithms use tags below it.
//
// Threads: MPI_Init_thread provides up to MPI_THREAD_MULTIPLE; the lock that serializes
// calls under MULTIPLE (SLUICE_MPI_CALL, block_until) lives in big_lock.hpp.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/engine.hpp"
#include "mpi/big_lock.hpp"
#include "mpi/datatype.hpp"

// ---- handle objects ---------------------------------------------------------------------

struct sluice_errhandler_s {
  enum class Kind : uint8_t { fatal, ret, user };
  Kind kind = Kind::fatal;
  MPI_Comm_errhandler_function* fn = nullptr;
  bool predefined = false;
  int refs = 1;  // user handlers: the user's handle + every communicator using it
  MPI_Session_errhandler_function* session_fn = nullptr;  // MPI_Session_create_errhandler
};

struct sluice_group_s {
  std::vector<int> world;  // group rank -> world rank
  bool predefined = false;
  // This process's rank in the group, or MPI_UNDEFINED.
  int rank_of_self() const;
};

inline constexpr uint32_t kCommMagic = 0x534c4343;  // "SLCC"

namespace sluice::coll {
struct Group;
}
namespace sluice::mpi {
struct Topology;   // topo.cpp
struct InterComm;  // inter.cpp
}  // namespace sluice::mpi

struct sluice_comm_s {
  uint32_t magic = 0;  // kCommMagic while the communicator is valid
  int rank = 0, size = 0;
  std::vector<int> world;          // comm rank -> world rank
  std::vector<int> world_to_comm;  // world rank -> comm rank, -1 if not a member
  uint32_t p2p_ctx = 0, coll_ctx = 0;
  sluice::coll::Group* coll_group = nullptr;  // the collectives' view (coll_api.cpp), lazily
  MPI_Errhandler errh = nullptr;              // never null while valid
  std::string name;
  bool predefined = false;
  uint32_t mgmt_seq = 0;  // communicator-management operations started on this comm
  std::vector<std::pair<int, void*>> attrs;  // user attributes (keyval, value), set order
  // Cartesian / graph / distributed-graph topology (topo.cpp); dup and idup share it.
  std::shared_ptr<const sluice::mpi::Topology> topo;
  // Intercommunicators (inter.cpp): `world`, `world_to_comm` and `size` then describe the
  // REMOTE group (what point-to-point addresses), `rank` is the rank in the local group,
  // and `inter` holds the local group. Null for intracommunicators.
  std::shared_ptr<sluice::mpi::InterComm> inter;

  bool valid() const { return magic == kCommMagic; }
  // comm rank of a world rank (for MPI_SOURCE); `src` may be negative (passed through).
  int comm_rank_of(int world_rank) const {
    return world_rank >= 0 && world_rank < static_cast<int>(world_to_comm.size())
               ? world_to_comm[world_rank]
               : world_rank;
  }
};

namespace sluice::mpi {

// Something a request waits for other than one engine request: a nonblocking collective
// schedule, a nonblocking communicator duplication, ... test() advances it (without
// calling Engine::progress(); the caller does) and returns true once complete.
class AsyncOp {
 public:
  virtual ~AsyncOp() = default;
  virtual bool test() = 0;
  // Error class once complete (MPI_SUCCESS when it worked).
  virtual int error() const { return MPI_SUCCESS; }
  // True for operations that advance only when tested (not through an engine progress
  // hook): the MPI layer then tests them on every progress pass, so waiting on one request
  // still advances the others a peer may be waiting for (MPI-3.1 §3.7.4 progress rule).
  virtual bool needs_background_progress() const { return false; }
  // Once complete: fills what the operation knows of the status (set empty before, with
  // MPI_ERROR = error()); generalized requests ask the program's query function here.
  virtual void fill_status(MPI_Status* /*status*/) {}
  // MPI_Request_free on the request: its completion will not be reported.
  virtual void released() {}
  // MPI_Cancel on the request (only where cancellable(): generalized requests).
  virtual bool cancellable() const { return false; }
  // MPI_Start on a persistent request made from it (persistent collectives): starts the
  // operation again; MPI_SUCCESS or the error raised.
  virtual int start() { return MPI_ERR_REQUEST; }
  virtual int cancel() { return MPI_SUCCESS; }
};

enum class SendMode : uint8_t { standard, sync, ready, buffered };

}  // namespace sluice::mpi

struct sluice_request_s {
  enum class Kind : uint8_t { send, recv, async };
  Kind kind = Kind::send;
  bool persistent = false;
  bool active = false;  // started and its completion not yet reported
  bool done = false;    // complete; `status` valid
  MPI_Comm comm = nullptr;
  sluice::detail::RequestImpl* impl = nullptr;  // engine request while in flight
  std::unique_ptr<sluice::mpi::AsyncOp> op;     // Kind::async
  // Receives into (and sends from) non-contiguous types go through `staging`.
  std::vector<std::byte> staging;
  void* buf = nullptr;  // user buffer
  MPI_Count count = 0;
  MPI_Datatype type = nullptr;  // retained while the request exists
  // Persistent requests: the arguments Start uses.
  int peer = 0;  // comm rank, MPI_ANY_SOURCE or MPI_PROC_NULL
  int tag = 0;
  sluice::mpi::SendMode mode = sluice::mpi::SendMode::standard;
  uint64_t bsend_id = 0;  // buffered sends: the attached-buffer segment it started (MPI_Cancel)
  MPI_Status status{};
  sluice_request_s* next_free = nullptr;  // p2p.cpp's free list
};

struct sluice_message_s {
  sluice::detail::UnexpectedMsg* msg = nullptr;
  MPI_Comm comm = nullptr;
  MPI_Status status{};
};

struct sluice_info_s {
  std::vector<std::pair<std::string, std::string>> entries;  // in insertion order
  bool predefined = false;
};

namespace sluice::mpi {

// ---- state --------------------------------------------------------------------------
extern bool g_initialized;  // between MPI_Init and MPI_Finalize (env.cpp)
extern bool g_finalized;    // after MPI_Finalize (env.cpp)
inline bool initialized() {
  return g_initialized;
}
// Why a call cannot run now: "MPI was already finalized" or "MPI is not initialized".
inline const char* not_initialized_text() {
  return g_finalized ? "MPI was already finalized" : "MPI is not initialized";
}
// Aborts a call made outside MPI_Init..MPI_Finalize, saying which side it is on.
[[noreturn]] void abort_not_initialized(const char* function);

// The library runs from the first MPI_Init or MPI_Session_init to the last MPI_Finalize or
// MPI_Session_finalize (env.cpp); g_initialized says it runs. The World Model (MPI_Init ..
// MPI_Finalize, what MPI_Initialized reports) and the open sessions keep it running.
extern bool g_world_model;
extern int g_live_sessions;
// Starts the engine and the predefined communicators unless running: MPI_SUCCESS or the
// failure (printed). Aborts once the library has stopped (it does not restart).
int library_start(const char* function);
// Flushes, runs the engine's closing barrier and stops the library (MPI_Finalize's work).
void library_stop();
// Raises the thread level to `required` as far as provided; returns the level now in force.
int provide_thread_level(int required);
int thread_level();

// The tool information interface (tool.cpp): MPI_Init calls the first once the engine runs
// (the configuration in force, values written before, the counters), MPI_Finalize the second
// before the engine goes (the counters' final values stay readable).
void tool_engine_started();
void tool_engine_ending();

// ---- errors -------------------------------------------------------------------------
// Applies `comm`'s error handler (MPI_COMM_WORLD's when comm is null or invalid) to an
// error of class `errclass` raised by `function` ("MPI_Send"); `what` names the argument
// ("invalid rank 7 (communicator MPI_COMM_WORLD has 4 ranks)"). MPI_ERRORS_ARE_FATAL
// prints "MPI_Send: <what>" and aborts the job; otherwise returns errclass.
int raise(MPI_Comm comm, int errclass, const char* function, const char* what);
// The same with a printf-style message.
int raisef(MPI_Comm comm, int errclass, const char* function, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));
// Text of an error class or code (the program's own too), nullptr if `code` is not one.
const char* error_string(int code);
// The largest error class so far (MPI_LASTUSEDCODE's value), MPI_Add_error_class.
extern int g_last_used_class;
// Drops one reference to a user error handler (predefined ones are never freed).
void errh_release(MPI_Errhandler h);
// MPI error class of an engine error.
int errc_to_class(Errc e);
// Aborts the job (MPI_Abort semantics) after printing `reason` (may be empty).
[[noreturn]] void abort_job(int code, const std::string& reason);

// Argument checks: MPI_SUCCESS or the raised error (through comm's handler). The checks
// are inline and the raising is out of line, so a valid call costs a few compares.
namespace check_failed {  // the error paths of the checks below (errors.cpp)
[[gnu::cold]] int comm(MPI_Comm comm, const char* function);
[[gnu::cold]] int count(MPI_Comm comm, MPI_Count count, const char* function);
[[gnu::cold]] int type(MPI_Comm comm, MPI_Datatype type, const char* function);
[[gnu::cold]] int rank(MPI_Comm comm, int rank, const char* function);
[[gnu::cold]] int tag(MPI_Comm comm, int tag, const char* function);
[[gnu::cold]] int root(MPI_Comm comm, int root, const char* function);
[[gnu::cold]] int buffer(MPI_Comm comm, const void* buf, MPI_Count count, MPI_Datatype type,
                         const char* function);
}  // namespace check_failed

// Also checks that MPI is initialized.
inline int check_comm(MPI_Comm comm, const char* function) {
  if (g_initialized && comm && comm->valid()) [[likely]]
    return MPI_SUCCESS;
  return check_failed::comm(comm, function);
}
// Counts are MPI_Count throughout: the int bindings and their MPI-4.0 _c forms share the code.
inline int check_count(MPI_Comm comm, MPI_Count count, const char* function) {
  if (count >= 0) [[likely]]
    return MPI_SUCCESS;
  return check_failed::count(comm, count, function);
}
// A NULL buffer with a non-zero count (MPI_ERR_BUFFER), unless the datatype holds no data
// or is built from absolute addresses (MPI_BOTTOM is address 0). Checked after the type.
inline int check_buffer(MPI_Comm comm, const void* buf, MPI_Count count, MPI_Datatype type,
                        const char* function) {
  if (buf || count == 0) [[likely]]
    return MPI_SUCCESS;
  return check_failed::buffer(comm, buf, count, type, function);
}
inline int check_type(MPI_Comm comm, MPI_Datatype type, const char* function) {
  if (type && (type->predefined || type->committed)) [[likely]]
    return MPI_SUCCESS;
  return check_failed::type(comm, type, function);
}
// A comm rank for a send (allow_proc_null) or receive (also MPI_ANY_SOURCE).
inline int check_rank(MPI_Comm comm, int rank, bool allow_any, const char* function) {
  if ((rank >= 0 && rank < comm->size) || rank == MPI_PROC_NULL ||
      (allow_any && rank == MPI_ANY_SOURCE)) [[likely]]
    return MPI_SUCCESS;
  return check_failed::rank(comm, rank, function);
}
inline int check_tag(MPI_Comm comm, int tag, bool allow_any, const char* function) {
  if ((tag >= 0 && tag <= sluice::max_tag) || (allow_any && tag == MPI_ANY_TAG)) [[likely]]
    return MPI_SUCCESS;
  return check_failed::tag(comm, tag, function);
}
inline int check_root(MPI_Comm comm, int root, const char* function) {
  if (root >= 0 && root < comm->size) [[likely]]
    return MPI_SUCCESS;
  return check_failed::root(comm, root, function);
}
const char* comm_label(MPI_Comm comm);  // "MPI_COMM_WORLD", a name, or "communicator"

// ---- thread safety, progress and blocking: big_lock.hpp (SLUICE_MPI_CALL, block_until) --

// ---- requests ------------------------------------------------------------------------
// A request wrapping an AsyncOp (nonblocking collectives): active until op->test().
MPI_Request make_async_request(MPI_Comm comm, std::unique_ptr<AsyncOp> op);
// True once the request completed (fills req->status, unpacks staged receives). Does not
// call Engine::progress().
bool request_poll(MPI_Request req);
// Sets an "empty" status (MPI-3.1 §3.7.3).
void set_empty_status(MPI_Status* st);

// ---- point-to-point on a communicator, for internal use (collectives may use these) ---
// Start an engine send/recv of contiguous bytes to/from comm rank `peer` on `ctx`.
detail::RequestImpl* isend_bytes(MPI_Comm comm, const void* buf, std::size_t bytes, int peer,
                                 int tag, uint32_t ctx, bool sync = false);
detail::RequestImpl* irecv_bytes(MPI_Comm comm, void* buf, std::size_t bytes, int peer, int tag,
                                 uint32_t ctx);

// ---- communicators -----------------------------------------------------------------
inline constexpr int kMgmtTagBase = 0x3fff0000;
// Neighbourhood collectives (topo.cpp) use coll_ctx tags from here up, above every
// management tag and every user tag.
inline constexpr int kNeighborTagBase = 0x40000000;
// MPI_Comm_create_group's agreement (inter.cpp): coll_ctx tags from here up, one per user tag.
inline constexpr int kCreateGroupTagBase = 0x48000000;
// Builds a communicator over `world_ranks` (this process must be a member) with the
// given context pair; errhandler inherited from `parent`.
MPI_Comm make_comm(const std::vector<int>& world_ranks, uint32_t p2p_ctx, MPI_Comm parent);
void init_predefined_comms();
void destroy_comm(MPI_Comm comm);
// User attributes: copied by Comm_dup/idup (copy callbacks), deleted (delete callbacks)
// when a communicator is freed and, for MPI_COMM_SELF first, at MPI_Finalize.
int copy_attrs(MPI_Comm from, MPI_Comm to);
int delete_attrs(MPI_Comm comm);
// Datatype attributes (type_attr.cpp): copied by Type_dup, deleted by Type_free.
int type_copy_attrs(MPI_Datatype from, MPI_Datatype to);
int type_delete_attrs(MPI_Datatype type);
// A user attribute for Comm_get_attr: MPI_SUCCESS (flag set), or -1 for an unknown keyval.
int get_user_attr(MPI_Comm comm, int keyval, void* attribute_val, int* flag);

// Context ids for agreements run outside comm.cpp (over two groups, or a group that is not
// a communicator yet): the lowest id from `from` up this process can propose; hold one
// while the others check theirs (false if it is taken or held here); drop the hold, or
// turn it into a claim once every member accepted.
uint32_t ctx_lowest_free(uint32_t from);
bool ctx_try_hold(uint32_t ctx);
void ctx_drop_hold(uint32_t ctx);
void ctx_claim_held(uint32_t ctx);
// A user communicator (freed at finalize if the user does not) over `world_ranks`.
MPI_Comm make_user_comm(const std::vector<int>& world_ranks, uint32_t ctx, MPI_Comm parent);
// A duplicate of `comm` the library owns (not a user communicator: whoever made it frees it
// with destroy_comm). Collective over comm.
int dup_hidden(MPI_Comm comm, MPI_Comm* out);
// Context-id agreement over every member of `comm` (both groups of an intercommunicator),
// blocking: MPI_SUCCESS (the id in *ctx) or an error class. Each member's `extra` ints travel
// with it; `gathered` (if not null) receives them, extra.size() per member, in member order:
// comm's ranks, or for an intercommunicator the local group's then the remote group's.
int agree_context(MPI_Comm comm, const std::vector<int>& extra, uint32_t* ctx,
                  std::vector<int>* gathered);

// ---- intercommunicators (inter.cpp) ----------------------------------------------------
int inter_local_size(MPI_Comm inter);
const std::vector<int>& inter_local_world(MPI_Comm inter);
int inter_dup(MPI_Comm inter, MPI_Comm* newcomm);
// A user intercommunicator between `local_world` (this process at `local_rank`) and
// `remote_world` on the context pair `ctx`; error handler from `errh_from`.
MPI_Comm make_intercomm(const std::vector<int>& local_world, int local_rank,
                        const std::vector<int>& remote_world, uint32_t ctx, MPI_Comm errh_from);
// Raises MPI_ERR_COMM: `function` does not take intercommunicators.
int reject_inter(MPI_Comm comm, const char* function);
// The collectives the standard defines on intercommunicators; coll_api.cpp routes them here
// (blocking and nonblocking) and rejects the others (check_intra: Scan, Exscan).
enum class InterCollective : uint8_t {
  barrier,
  bcast,
  allreduce,
  allgather,
  alltoall,
  reduce,
  gather,
  gatherv,
  scatter,
  scatterv,
  allgatherv,
  alltoallv,
  alltoallw,
  reduce_scatter_block,
  reduce_scatter,
};
// The MPI arguments (send side: count/type; v and w variants: the arrays).
struct InterArgs {
  const void* sendbuf = nullptr;
  void* recvbuf = nullptr;
  int count = 0;                // the count (bcast, reduce, allreduce) or the sendcount
  MPI_Datatype type = nullptr;  // the datatype or the sendtype
  int recvcount = 0;
  MPI_Datatype recvtype = nullptr;
  MPI_Op op = nullptr;
  int root = 0;
  const int* sendcounts = nullptr;
  const int* sdispls = nullptr;
  const int* recvcounts = nullptr;
  const int* rdispls = nullptr;
  const MPI_Datatype* sendtypes = nullptr;  // alltoallw (byte displacements)
  const MPI_Datatype* recvtypes = nullptr;
};
int inter_collective(MPI_Comm comm, InterCollective which, const InterArgs& args);
// The nonblocking form: the request completes with the collective.
int inter_icollective(MPI_Comm comm, InterCollective which, const InterArgs& args,
                      MPI_Request* request);
// MPI_SUCCESS for an intracommunicator (or an invalid handle, which the caller's own check
// reports); MPI_ERR_COMM raised for an intercommunicator.
inline int check_intra(MPI_Comm comm, const char* function) {
  if (!comm || !comm->inter) [[likely]]
    return MPI_SUCCESS;
  return reject_inter(comm, function);
}

}  // namespace sluice::mpi
