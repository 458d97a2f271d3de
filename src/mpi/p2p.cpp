// Point-to-point bindings and request completion.
//
// Every MPI request maps onto one engine request (sends and receives; the data of
// non-contiguous datatypes goes through a packed staging buffer) or onto an AsyncOp
// (nonblocking collectives, Comm_idup). Completion is observed in request_poll(), the
// one place that turns an engine status into an MPI_Status and unpacks staged data.
#include <algorithm>
#include <climits>
#include <cstring>
#include <list>
#include <mutex>
#include <thread>
#include <vector>

#include "mpi/big_lock.hpp"
#include "mpi/datatype.hpp"
#include "mpi/mpi_internal.hpp"
#include "mpi/p2p.hpp"

namespace sluice::mpi {

// Completes `r` (status, unpacking) from its engine request's final status.
void complete_from(MPI_Request r, const Status& s);

namespace {

using detail::RequestImpl;
using detail::RequestState;

// ---- buffered sends ---------------------------------------------------------------------
// The attached buffer is carved into segments, one per pending buffered send (its packed
// data plus MPI_BSEND_OVERHEAD of accounting), first fit; a segment is freed when its
// engine send completes. MPI_Cancel of the buffered send hands the engine send to its MPI
// request (`owner`), whose completion then reports cancelled or not and frees the segment.
struct BsendSegment {
  std::size_t offset;
  std::size_t length;
  RequestImpl* req;
  uint64_t id;                  // sluice_request_s::bsend_id of the request that started it
  MPI_Request owner = nullptr;  // set by MPI_Cancel: that request completes `req`
};
struct BsendBuffer {
  std::byte* base = nullptr;
  std::size_t size = 0;
  std::list<BsendSegment> segments;  // sorted by offset
  uint64_t last_id = 0;
} g_bsend;

// Every buffered message has left: no segment but those whose cancelled send is complete and
// waits for its request's completion (which frees the segment).
bool bsend_drained() {
  return std::all_of(g_bsend.segments.begin(), g_bsend.segments.end(), [](const BsendSegment& s) {
    return s.owner && s.req->state == RequestState::complete;
  });
}

// MPI_Cancel of a buffered send (complete for MPI, its copy maybe still unsent): the engine
// send is cancelled if it can be, and the request, complete again once the outcome is known,
// reports it.
void cancel_bsend(MPI_Request r) {
  for (BsendSegment& s : g_bsend.segments) {
    if (s.id != r->bsend_id) continue;
    if (s.owner || s.req->state != RequestState::active || !engine().cancel_send(s.req)) return;
    s.owner = r;
    r->impl = s.req;
    r->done = false;
    return;
  }
  // Sent and reaped already: not cancelled.
}

// A request that took over its buffered send's segment (cancel_bsend) completed.
void release_bsend(MPI_Request r) {
  std::erase_if(g_bsend.segments, [r](const BsendSegment& s) { return s.owner == r; });
}

void delete_request(MPI_Request r);

// Requests the user freed while active: polled until complete, then deleted.
std::vector<MPI_Request> g_detached;
// Active requests whose operation advances only when tested (AsyncOp::
// needs_background_progress), tested on every progress pass.
std::vector<MPI_Request> g_background;
bool g_in_background = false;  // a callback inside a background test re-entered progress()

bool progress_background() {
  if (g_in_background) return false;
  g_in_background = true;
  bool any = false;
  // request_poll removes completed ones from g_background: iterate over a copy.
  const std::vector<MPI_Request> pending = g_background;
  for (MPI_Request r : pending) any |= request_poll(r);
  g_in_background = false;
  return any;
}

bool reap_bsends() {
  bool any = false;
  for (auto it = g_bsend.segments.begin(); it != g_bsend.segments.end();) {
    if (!it->owner && it->req->state == RequestState::complete) {
      engine().test(it->req, nullptr);
      it = g_bsend.segments.erase(it);
      any = true;
    } else {
      ++it;
    }
  }
  return any;
}

bool reap_detached() {
  bool any = false;
  for (std::size_t i = 0; i < g_detached.size();) {
    if (request_poll(g_detached[i])) {
      delete_request(g_detached[i]);
      g_detached[i] = g_detached.back();
      g_detached.pop_back();
      any = true;
    } else {
      ++i;
    }
  }
  return any;
}

// First-fit allocation of `length` bytes in the attached buffer; nullopt-like SIZE_MAX.
std::size_t bsend_alloc(std::size_t length) {
  std::size_t at = 0;
  for (auto it = g_bsend.segments.begin(); it != g_bsend.segments.end(); ++it) {
    if (it->offset - at >= length) return at;
    at = it->offset + it->length;
  }
  return g_bsend.size - at >= length ? at : SIZE_MAX;
}

// Calls that return one status leave its MPI_ERROR field alone (MPI-3.1 section 3.2.5):
// only the multiple-completion calls set it. Requests keep their own error field.
void proc_null_user_status(MPI_Status* st) {
  st->MPI_SOURCE = MPI_PROC_NULL;
  st->MPI_TAG = MPI_ANY_TAG;
  st->sluice_count = 0;
  st->sluice_cancelled = 0;
}

void proc_null_status(MPI_Status* st) {
  proc_null_user_status(st);
  st->MPI_ERROR = MPI_SUCCESS;
}

// Copies a request's status into the status of a single-completion call (error untouched).
void copy_single_status(MPI_Status* dst, const MPI_Status& src) {
  dst->MPI_SOURCE = src.MPI_SOURCE;
  dst->MPI_TAG = src.MPI_TAG;
  dst->sluice_count = src.sluice_count;
  dst->sluice_cancelled = src.sluice_cancelled;
}

// Address of the first data byte of a contiguous buffer. Integer arithmetic: with
// MPI_BOTTOM (address 0) the type's lower bound is an absolute address.
std::byte* first_byte(const void* buf, MPI_Datatype type) {
  return reinterpret_cast<std::byte*>(reinterpret_cast<std::uintptr_t>(buf) +
                                      static_cast<std::uintptr_t>(dt_true_lb(type)));
}

std::size_t bytes_of(MPI_Count count, MPI_Datatype type) {
  return static_cast<std::size_t>(count) * dt_size(type);
}

// The status of a send that completed when it started (what complete_from(r, Status{})
// leaves for a finished send).
inline void set_send_done_status(MPI_Status* st) {
  st->MPI_SOURCE = -1;
  st->MPI_TAG = -1;
  st->MPI_ERROR = MPI_SUCCESS;
  st->sluice_count = 0;
  st->sluice_cancelled = 0;
}

// The message-rate path: a standard or ready send of contiguous data to a real peer (the
// caller checked). An eager send the driver takes at once needs no engine request: it is
// complete now. Otherwise complete_from() fills the status when the engine request ends.
[[gnu::always_inline]] inline void start_plain_send(MPI_Request r, const std::byte* data,
                                                    std::size_t bytes) {
  Errc err;
  MPI_Comm comm = r->comm;
  r->active = true;
  r->impl =
      engine().isend_or_inject({data, bytes}, comm->world[r->peer], r->tag, comm->p2p_ctx, err);
  r->done = !r->impl;
  if (r->done) set_send_done_status(&r->status);
}

// The message-rate path of receives: contiguous data from a real peer or MPI_ANY_SOURCE.
[[gnu::always_inline]] inline void start_plain_recv(MPI_Request r, std::byte* data,
                                                    std::size_t bytes) {
  Errc err;
  MPI_Comm comm = r->comm;
  r->active = true;
  r->done = false;
  const int src = r->peer == MPI_ANY_SOURCE ? any_source : comm->world[r->peer];
  r->impl = engine().irecv({data, bytes}, src, r->tag, comm->p2p_ctx, err);
}

// Starts the send described by r (buf/count/type/peer/tag/mode/comm).
int start_send(MPI_Request r, const char* function) {
  if ((r->mode == SendMode::standard || r->mode == SendMode::ready) && r->peer != MPI_PROC_NULL &&
      dt_is_contiguous(r->type)) [[likely]] {
    start_plain_send(r, first_byte(r->buf, r->type), bytes_of(r->count, r->type));
    return MPI_SUCCESS;
  }
  r->active = true;
  r->done = false;
  r->status = MPI_Status{};
  if (r->peer == MPI_PROC_NULL) {
    proc_null_status(&r->status);
    r->done = true;
    return MPI_SUCCESS;
  }
  const std::size_t bytes = bytes_of(r->count, r->type);
  const std::byte* data;
  if (dt_is_contiguous(r->type)) {
    data = first_byte(r->buf, r->type);
  } else {
    r->staging.resize(bytes);
    dt_pack(r->type, r->buf, r->count, r->staging.data());
    data = r->staging.data();
  }
  const int dest = r->comm->world[r->peer];
  if (r->mode == SendMode::buffered) {
    reap_bsends();
    if (!g_bsend.base)
      return raise(r->comm, MPI_ERR_BUFFER, function, "no buffer attached (MPI_Buffer_attach)");
    const std::size_t need = bytes + MPI_BSEND_OVERHEAD;
    const std::size_t at = bsend_alloc(need);
    if (at == SIZE_MAX)
      return raisef(r->comm, MPI_ERR_BUFFER, function,
                    "attached buffer of %zu bytes has no room for %zu more", g_bsend.size, need);
    std::byte* copy = g_bsend.base + at + MPI_BSEND_OVERHEAD;
    if (bytes) std::memcpy(copy, data, bytes);
    r->staging.clear();
    Errc err;
    RequestImpl* impl = engine().isend({copy, bytes}, dest, r->tag, r->comm->p2p_ctx, false, err);
    auto pos = std::find_if(g_bsend.segments.begin(), g_bsend.segments.end(),
                            [&](const BsendSegment& s) { return s.offset > at; });
    r->bsend_id = ++g_bsend.last_id;
    g_bsend.segments.insert(pos, BsendSegment{at, need, impl, r->bsend_id});
    // The user's buffer is free again: the buffered send is complete for MPI.
    r->done = true;
    r->status.MPI_ERROR = MPI_SUCCESS;
    return MPI_SUCCESS;
  }
  Errc err;
  if (r->mode == SendMode::sync) {
    r->impl = engine().isend({data, bytes}, dest, r->tag, r->comm->p2p_ctx, true, err);
    return MPI_SUCCESS;
  }
  // An eager send the driver takes at once needs no engine request: it is complete now.
  r->impl = engine().isend_or_inject({data, bytes}, dest, r->tag, r->comm->p2p_ctx, err);
  if (!r->impl) {
    set_send_done_status(&r->status);
    if (!r->persistent && !r->staging.empty()) r->staging = {};
    r->done = true;
  }
  return MPI_SUCCESS;
}

int start_recv(MPI_Request r) {
  if (r->peer != MPI_PROC_NULL && dt_is_contiguous(r->type)) [[likely]] {
    start_plain_recv(r, first_byte(r->buf, r->type), bytes_of(r->count, r->type));
    return MPI_SUCCESS;
  }
  r->active = true;
  r->done = false;
  r->status = MPI_Status{};
  if (r->peer == MPI_PROC_NULL) {
    proc_null_status(&r->status);
    r->done = true;
    return MPI_SUCCESS;
  }
  const std::size_t bytes = bytes_of(r->count, r->type);
  std::byte* data;
  if (dt_is_contiguous(r->type)) {
    data = first_byte(r->buf, r->type);
  } else {
    r->staging.resize(bytes);
    data = r->staging.data();
  }
  const int src = r->peer == MPI_ANY_SOURCE ? any_source : r->comm->world[r->peer];
  Errc err;
  r->impl = engine().irecv({data, bytes}, src, r->tag, r->comm->p2p_ctx, err);
  return MPI_SUCCESS;
}

// Request objects are recycled: no allocation per message once warm. A pooled request is
// in the state delete_request() leaves: inactive, not persistent, no engine request, no
// AsyncOp, no datatype, empty staging; every other field is set by whoever takes it.
// An intrusive free list: taking and returning one is a few instructions.
MPI_Request g_free_requests = nullptr;
std::size_t g_free_count = 0;
constexpr std::size_t kMaxFreeRequests = 1024;

inline MPI_Request alloc_request() {
  MPI_Request r = g_free_requests;
  if (!r) [[unlikely]]
    return new sluice_request_s;
  g_free_requests = r->next_free;
  --g_free_count;
  return r;
}

inline MPI_Request new_request(sluice_request_s::Kind kind, MPI_Comm comm, const void* buf,
                               MPI_Count count, MPI_Datatype type, int peer, int tag,
                               SendMode mode) {
  MPI_Request r = alloc_request();
  r->kind = kind;
  r->comm = comm;
  r->buf = const_cast<void*>(buf);
  r->count = count;
  r->type = type;
  dt_retain(type);
  r->peer = peer;
  r->tag = tag;
  r->mode = mode;
  return r;
}

// delete_request's rare cases: a full free list, an AsyncOp or a staging buffer to drop.
[[gnu::noinline]] void delete_request_slow(MPI_Request r) {
  if (g_free_count >= kMaxFreeRequests) {
    delete r;
    return;
  }
  r->persistent = r->active = r->done = false;
  r->impl = nullptr;
  r->type = nullptr;
  r->op.reset();
  // Small staging buffers keep their capacity.
  r->staging.clear();
  if (r->staging.capacity() > 65536) r->staging.shrink_to_fit();
  r->next_free = g_free_requests;
  g_free_requests = r;
  ++g_free_count;
}

inline void delete_request(MPI_Request r) {
  dt_release(r->type);
  if (g_free_count >= kMaxFreeRequests || r->op || r->staging.capacity()) [[unlikely]] {
    delete_request_slow(r);
    return;
  }
  // Back to the pooled state (see alloc_request).
  r->persistent = r->active = r->done = false;
  r->impl = nullptr;
  r->type = nullptr;
  r->next_free = g_free_requests;
  g_free_requests = r;
  ++g_free_count;
}

[[gnu::always_inline]] inline int check_send_args(MPI_Comm comm, const void* buf, MPI_Count count,
                                                  MPI_Datatype type, int dest, int tag,
                                                  const char* function) {
  if (int rc = check_comm(comm, function)) return rc;
  if (int rc = check_count(comm, count, function)) return rc;
  if (int rc = check_type(comm, type, function)) return rc;
  if (int rc = check_buffer(comm, buf, count, type, function)) return rc;
  if (int rc = check_rank(comm, dest, false, function)) return rc;
  if (dest != MPI_PROC_NULL)
    if (int rc = check_tag(comm, tag, false, function)) return rc;
  return MPI_SUCCESS;
}

[[gnu::always_inline]] inline int check_recv_args(MPI_Comm comm, void* buf, MPI_Count count,
                                                  MPI_Datatype type, int source, int tag,
                                                  const char* function) {
  if (int rc = check_comm(comm, function)) return rc;
  if (int rc = check_count(comm, count, function)) return rc;
  if (int rc = check_type(comm, type, function)) return rc;
  if (int rc = check_buffer(comm, buf, count, type, function)) return rc;
  if (int rc = check_rank(comm, source, true, function)) return rc;
  if (source != MPI_PROC_NULL)
    if (int rc = check_tag(comm, tag, true, function)) return rc;
  return MPI_SUCCESS;
}

// Raises a failed completion through the request's communicator.
int raise_completion(MPI_Request r, const char* function) {
  const int cls = r->status.MPI_ERROR;
  if (cls == MPI_ERR_TRUNCATE)
    return raisef(r->comm, cls, function,
                  "message truncated: %lld bytes arrived for a receive buffer of %zu bytes "
                  "(source %d, tag %d)",
                  static_cast<long long>(r->status.sluice_count), bytes_of(r->count, r->type),
                  r->status.MPI_SOURCE, r->status.MPI_TAG);
  return raise(r->comm, cls, function, error_string(cls) ? error_string(cls) : "request failed");
}

bool request_inactive(MPI_Request r) {
  return !r || !r->active;
}

// Reports the completion of a done request: copies its status, releases or deactivates
// it. Returns its error class.
int report(MPI_Request* rp, MPI_Status* st) {
  MPI_Request r = *rp;
  if (st) *st = r->status;
  const int err = r->status.MPI_ERROR;
  if (r->persistent) {
    r->active = false;
    r->done = false;
  } else {
    delete_request(r);
    *rp = MPI_REQUEST_NULL;
  }
  return err;
}

// True once request_poll(r) would return true, without completing r: its engine request
// finished (an AsyncOp is tested: that is how it advances).
[[gnu::always_inline]] inline bool request_ready(MPI_Request r) {
  if (r->done) return true;
  if (r->impl) return r->impl->state == RequestState::complete;
  return request_poll(r);
}

// The completion of the message-rate path: a request whose engine request finished without
// error, not persistent, nothing staged. Fills `st` straight from the engine's status and
// releases both requests (what request_poll + report do, without the detour through
// r->status). False, with nothing done, when r needs the general path.
[[gnu::always_inline]] inline bool finish_plain(MPI_Request r, MPI_Status* st) {
  RequestImpl* impl = r->impl;
  if (!impl || impl->state != RequestState::complete || r->persistent || !r->staging.empty())
    return false;
  const Status& s = impl->status;
  if (s.error != Errc::ok || s.cancelled) return false;
  if (st) {
    st->MPI_SOURCE = r->comm->comm_rank_of(s.source);
    st->MPI_TAG = s.tag;
    st->MPI_ERROR = MPI_SUCCESS;
    st->sluice_count = static_cast<MPI_Count>(std::min(s.size, bytes_of(r->count, r->type)));
    st->sluice_cancelled = 0;
  }
  engine().reap(impl);
  r->impl = nullptr;
  delete_request(r);
  return true;
}

// Blocking completion of one request created by the calling function.
int wait_one(MPI_Request* rp, MPI_Status* st, const char* function) {
  MPI_Request r = *rp;
  MPI_Comm comm = r->comm;
  block_until([r] { return request_poll(r); });
  sluice_request_s copy_for_error;
  const bool failed = r->status.MPI_ERROR != MPI_SUCCESS;
  if (failed) {
    copy_for_error.comm = comm;
    copy_for_error.status = r->status;
    copy_for_error.count = r->count;
    copy_for_error.type = r->type;
  }
  MPI_Status completed{};
  report(rp, st ? &completed : nullptr);
  if (st) copy_single_status(st, completed);
  if (failed) return raise_completion(&copy_for_error, function);
  return MPI_SUCCESS;
}

int check_request_array(int count, MPI_Request reqs[], const char* function) {
  if (count < 0) return raisef(nullptr, MPI_ERR_COUNT, function, "invalid count %d", count);
  if (count > 0 && !reqs) return raise(nullptr, MPI_ERR_ARG, function, "array of requests is NULL");
  return MPI_SUCCESS;
}

[[gnu::always_inline]] inline int isend_common(const void* buf, MPI_Count count, MPI_Datatype type,
                                               int dest, int tag, MPI_Comm comm,
                                               MPI_Request* request, SendMode mode,
                                               const char* function) {
  if (int rc = check_send_args(comm, buf, count, type, dest, tag, function)) return rc;
  if (!request) return raise(comm, MPI_ERR_ARG, function, "request is NULL");
  MPI_Request r =
      new_request(sluice_request_s::Kind::send, comm, buf, count, type, dest, tag, mode);
  if ((mode == SendMode::standard || mode == SendMode::ready) && dest != MPI_PROC_NULL &&
      dt_is_contiguous(type)) [[likely]] {
    start_plain_send(r, first_byte(buf, type), bytes_of(count, type));
  } else if (int rc = start_send(r, function)) {
    delete_request(r);
    return rc;
  }
  *request = r;
  return MPI_SUCCESS;
}

}  // namespace

int p2p::send(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              SendMode mode, const char* function) {
  if (int rc = check_send_args(comm, buf, count, type, dest, tag, function)) return rc;
  if (dest == MPI_PROC_NULL) return MPI_SUCCESS;
  if (mode != SendMode::sync && mode != SendMode::buffered && !g_threaded &&
      dt_is_contiguous(type)) {
    // Fast path: the engine's blocking send needs no request when the data goes eagerly.
    const auto* data = first_byte(buf, type);
    Errc e = engine().send({data, bytes_of(count, type)}, comm->world[dest], tag, comm->p2p_ctx);
    if (e != Errc::ok) return raise(comm, errc_to_class(e), function, "send failed");
    return MPI_SUCCESS;
  }
  MPI_Request r =
      new_request(sluice_request_s::Kind::send, comm, buf, count, type, dest, tag, mode);
  if (int rc = start_send(r, function)) {
    delete_request(r);
    return rc;
  }
  return wait_one(&r, MPI_STATUS_IGNORE, function);
}

namespace {

int probe_status(MPI_Comm comm, const Status& s, MPI_Status* st) {
  if (st) {
    st->MPI_SOURCE = comm->comm_rank_of(s.source);
    st->MPI_TAG = s.tag;
    st->sluice_count = static_cast<MPI_Count>(s.size);
    st->sluice_cancelled = 0;
  }
  return MPI_SUCCESS;
}

int source_world(MPI_Comm comm, int source) {
  return source == MPI_ANY_SOURCE ? any_source : comm->world[source];
}

int check_probe_args(MPI_Comm comm, int source, int tag, const char* function) {
  if (int rc = check_comm(comm, function)) return rc;
  if (int rc = check_rank(comm, source, true, function)) return rc;
  if (source != MPI_PROC_NULL)
    if (int rc = check_tag(comm, tag, true, function)) return rc;
  return MPI_SUCCESS;
}

int mrecv_start(void* buf, MPI_Count count, MPI_Datatype type, MPI_Message* message,
                MPI_Request* out, const char* function) {
  if (!out) return raise(nullptr, MPI_ERR_ARG, function, "request is NULL");
  if (!message || !*message)
    return raise(nullptr, MPI_ERR_REQUEST, function, "invalid message MPI_MESSAGE_NULL");
  MPI_Message m = *message;
  if (m == MPI_MESSAGE_NO_PROC) {
    MPI_Request r = new_request(sluice_request_s::Kind::recv, MPI_COMM_SELF, buf, count, type,
                                MPI_PROC_NULL, 0, SendMode::standard);
    start_recv(r);
    *out = r;
    *message = MPI_MESSAGE_NULL;
    return MPI_SUCCESS;
  }
  MPI_Comm comm = m->comm;
  if (int rc = check_count(comm, count, function)) return rc;
  if (int rc = check_type(comm, type, function)) return rc;
  MPI_Request r = new_request(sluice_request_s::Kind::recv, comm, buf, count, type,
                              m->status.MPI_SOURCE, m->status.MPI_TAG, SendMode::standard);
  r->active = true;
  const std::size_t bytes = bytes_of(count, type);
  std::byte* data;
  if (dt_is_contiguous(type)) {
    data = first_byte(buf, type);
  } else {
    r->staging.resize(bytes);
    data = r->staging.data();
  }
  r->impl = engine().mrecv(m->msg, {data, bytes});
  delete m;
  *message = MPI_MESSAGE_NULL;
  *out = r;
  return MPI_SUCCESS;
}

}  // namespace

// ---- shared helpers ---------------------------------------------------------------------

void set_empty_status(MPI_Status* st) {
  if (!st) return;
  st->MPI_SOURCE = MPI_ANY_SOURCE;
  st->MPI_TAG = MPI_ANY_TAG;
  st->MPI_ERROR = MPI_SUCCESS;
  st->sluice_count = 0;
  st->sluice_cancelled = 0;
}

bool progress() {
  bool any = engine().progress();
  if (!g_bsend.segments.empty()) any |= reap_bsends();
  if (!g_detached.empty()) any |= reap_detached();
  if (!g_background.empty()) any |= progress_background();
  return any;
}

bool request_poll(MPI_Request r) {
  if (r->done) return true;
  if (r->kind == sluice_request_s::Kind::async) {
    if (!r->op->test()) return false;
    if (r->op->needs_background_progress()) std::erase(g_background, r);
    set_empty_status(&r->status);
    r->status.MPI_ERROR = r->op->error();
    r->op->fill_status(&r->status);
    r->done = true;
    return true;
  }
  RequestImpl* impl = r->impl;
  if (!impl || impl->state != RequestState::complete) return false;
  r->impl = nullptr;
  complete_from(r, engine().reap(impl));
  return true;
}

void complete_from(MPI_Request r, const Status& s) {
  const std::size_t capacity = bytes_of(r->count, r->type);
  const std::size_t received = std::min(s.size, capacity);
  r->status.MPI_SOURCE = r->comm->comm_rank_of(s.source);
  r->status.MPI_TAG = s.tag;
  r->status.MPI_ERROR = s.error == Errc::ok ? MPI_SUCCESS : errc_to_class(s.error);
  r->status.sluice_count = static_cast<MPI_Count>(s.cancelled ? 0 : received);
  r->status.sluice_cancelled = s.cancelled ? 1 : 0;
  if (s.error == Errc::truncated) r->status.sluice_count = static_cast<MPI_Count>(s.size);
  if (r->mode == SendMode::buffered) [[unlikely]]
    release_bsend(r);  // its cancelled (or not) buffered send: the segment is free
  if (!r->staging.empty()) [[unlikely]] {
    if (r->kind == sluice_request_s::Kind::recv && !s.cancelled)
      dt_unpack(r->type, r->staging.data(), received, r->buf, r->count);
    if (!r->persistent) r->staging = {};
  }
  r->done = true;
}

MPI_Request make_async_request(MPI_Comm comm, std::unique_ptr<AsyncOp> op) {
  MPI_Request r = alloc_request();
  r->kind = sluice_request_s::Kind::async;
  r->comm = comm;
  r->op = std::move(op);
  r->active = true;
  if (r->op->needs_background_progress()) g_background.push_back(r);
  return r;
}

detail::RequestImpl* isend_bytes(MPI_Comm comm, const void* buf, std::size_t bytes, int peer,
                                 int tag, uint32_t ctx, bool sync) {
  Errc err;
  return engine().isend({static_cast<const std::byte*>(buf), bytes}, comm->world[peer], tag, ctx,
                        sync, err);
}

detail::RequestImpl* irecv_bytes(MPI_Comm comm, void* buf, std::size_t bytes, int peer, int tag,
                                 uint32_t ctx) {
  Errc err;
  return engine().irecv({static_cast<std::byte*>(buf), bytes},
                        peer == MPI_ANY_SOURCE ? any_source : comm->world[peer], tag, ctx, err);
}

void finalize_p2p() {
  // Buffered sends and freed send requests must reach their peers; freed receives that
  // never matched are dropped.
  block_until([] {
    if (!g_bsend.segments.empty()) reap_bsends();
    if (!g_detached.empty()) reap_detached();
    return bsend_drained() && std::none_of(g_detached.begin(), g_detached.end(), [](MPI_Request r) {
             return r->kind == sluice_request_s::Kind::send;
           });
  });
  for (MPI_Request r : g_detached) {
    if (r->impl) engine().cancel(r->impl);
  }
  reap_detached();
  g_bsend = BsendBuffer{};
  while (MPI_Request r = g_free_requests) {
    g_free_requests = r->next_free;
    delete r;
  }
  g_free_count = 0;
}

}  // namespace sluice::mpi

using namespace sluice::mpi;
using sluice::Errc;
using sluice::Status;
namespace detail = sluice::detail;

extern "C" {

// ---- blocking sends and receives --------------------------------------------------------

int PMPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  SLUICE_MPI_CALL;
  return p2p::send(buf, count, datatype, dest, tag, comm, SendMode::standard, "MPI_Send");
}

int PMPI_Ssend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm) {
  SLUICE_MPI_CALL;
  return p2p::send(buf, count, datatype, dest, tag, comm, SendMode::sync, "MPI_Ssend");
}

int PMPI_Rsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm) {
  SLUICE_MPI_CALL;
  // A ready send may be a standard send (MPI-3.1 §3.4): the receive is already posted.
  return p2p::send(buf, count, datatype, dest, tag, comm, SendMode::ready, "MPI_Rsend");
}

int PMPI_Bsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm) {
  SLUICE_MPI_CALL;
  return p2p::send(buf, count, datatype, dest, tag, comm, SendMode::buffered, "MPI_Bsend");
}

static int buffer_attach(void* buffer, MPI_Count size, const char* fn) {
  if (!initialized()) abort_not_initialized(fn);
  if (g_bsend.base) return raise(nullptr, MPI_ERR_BUFFER, fn, "a buffer is already attached");
  if (size < 0 || (size > 0 && !buffer))
    return raisef(nullptr, MPI_ERR_BUFFER, fn, "invalid buffer (size %lld)", size);
  g_bsend.base = static_cast<std::byte*>(buffer);
  g_bsend.size = static_cast<std::size_t>(size);
  return MPI_SUCCESS;
}

// Blocks until every message in the buffer has been sent; the size is that of the buffer.
static int buffer_detach(void* buffer_addr, MPI_Count* size, const char* fn) {
  if (!initialized()) abort_not_initialized(fn);
  if (!buffer_addr || !size) return raise(nullptr, MPI_ERR_ARG, fn, "buffer_addr or size is NULL");
  block_until([] {
    reap_bsends();
    return bsend_drained();
  });
  *static_cast<void**>(buffer_addr) = g_bsend.base;
  *size = static_cast<MPI_Count>(g_bsend.size);
  g_bsend.base = nullptr;
  g_bsend.size = 0;
  return MPI_SUCCESS;
}

int PMPI_Buffer_attach(void* buffer, int size) {
  SLUICE_MPI_CALL;
  return buffer_attach(buffer, size, "MPI_Buffer_attach");
}

int PMPI_Buffer_detach(void* buffer_addr, int* size) {
  SLUICE_MPI_CALL;
  if (!size) return raise(nullptr, MPI_ERR_ARG, "MPI_Buffer_detach", "size is NULL");
  MPI_Count n = 0;
  if (int rc = buffer_detach(buffer_addr, &n, "MPI_Buffer_detach")) return rc;
  // A buffer attached with MPI_Buffer_attach_c may not fit the int (detached all the same).
  if (n > INT_MAX)
    return raisef(nullptr, MPI_ERR_VALUE_TOO_LARGE, "MPI_Buffer_detach",
                  "the detached buffer has %lld bytes (use MPI_Buffer_detach_c)", n);
  *size = static_cast<int>(n);
  return MPI_SUCCESS;
}

// Inlined into both bindings: MPI_Recv's fast path stays as it was.
[[gnu::always_inline]] static inline int recv_common(void* buf, MPI_Count count,
                                                     MPI_Datatype datatype, int source, int tag,
                                                     MPI_Comm comm, MPI_Status* status,
                                                     const char* fn) {
  if (int rc = check_recv_args(comm, buf, count, datatype, source, tag, fn)) return rc;
  if (source != MPI_PROC_NULL && dt_is_contiguous(datatype)) {
    // Fast path: one engine request, no MPI request object.
    const std::size_t bytes = bytes_of(count, datatype);
    Errc err;
    RequestImpl* impl = engine().irecv({first_byte(buf, datatype), bytes},
                                       source_world(comm, source), tag, comm->p2p_ctx, err);
    block_until([impl] { return impl->state == RequestState::complete; });
    Status s;
    engine().test(impl, &s);
    if (status) {
      status->MPI_SOURCE = comm->comm_rank_of(s.source);
      status->MPI_TAG = s.tag;
      status->sluice_count = static_cast<MPI_Count>(s.size);
      status->sluice_cancelled = 0;
    }
    if (s.error == Errc::ok) return MPI_SUCCESS;
    if (s.error == Errc::truncated)
      return raisef(comm, MPI_ERR_TRUNCATE, fn,
                    "message truncated: %zu bytes arrived for a receive buffer of %zu bytes "
                    "(source %d, tag %d)",
                    s.size, bytes, comm->comm_rank_of(s.source), s.tag);
    return raise(comm, errc_to_class(s.error), fn, "receive failed");
  }
  MPI_Request r = new_request(sluice_request_s::Kind::recv, comm, buf, count, datatype, source, tag,
                              SendMode::standard);
  start_recv(r);
  return wait_one(&r, status, fn);
}

int PMPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Status* status) {
  SLUICE_MPI_CALL;
  return recv_common(buf, count, datatype, source, tag, comm, status, "MPI_Recv");
}

// ---- nonblocking ---------------------------------------------------------------------------

int PMPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  SLUICE_MPI_CALL;
  return isend_common(buf, count, datatype, dest, tag, comm, request, SendMode::standard,
                      "MPI_Isend");
}

int PMPI_Issend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request* request) {
  SLUICE_MPI_CALL;
  return p2p::isend(buf, count, datatype, dest, tag, comm, request, SendMode::sync, "MPI_Issend");
}

int PMPI_Irsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request* request) {
  SLUICE_MPI_CALL;
  return p2p::isend(buf, count, datatype, dest, tag, comm, request, SendMode::ready, "MPI_Irsend");
}

int PMPI_Ibsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request* request) {
  SLUICE_MPI_CALL;
  return p2p::isend(buf, count, datatype, dest, tag, comm, request, SendMode::buffered,
                    "MPI_Ibsend");
}

[[gnu::always_inline]] static inline int irecv_common(void* buf, MPI_Count count,
                                                      MPI_Datatype datatype, int source, int tag,
                                                      MPI_Comm comm, MPI_Request* request,
                                                      const char* fn) {
  if (int rc = check_recv_args(comm, buf, count, datatype, source, tag, fn)) return rc;
  if (!request) return raise(comm, MPI_ERR_ARG, fn, "request is NULL");
  MPI_Request r = new_request(sluice_request_s::Kind::recv, comm, buf, count, datatype, source, tag,
                              SendMode::standard);
  if (source != MPI_PROC_NULL && dt_is_contiguous(datatype)) [[likely]]
    start_plain_recv(r, first_byte(buf, datatype), bytes_of(count, datatype));
  else
    start_recv(r);
  *request = r;
  return MPI_SUCCESS;
}

int PMPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
               MPI_Request* request) {
  SLUICE_MPI_CALL;
  return irecv_common(buf, count, datatype, source, tag, comm, request, "MPI_Irecv");
}

static int sendrecv_common(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                           int dest, int sendtag, void* recvbuf, MPI_Count recvcount,
                           MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                           MPI_Status* status, const char* fn) {
  if (int rc = check_send_args(comm, sendbuf, sendcount, sendtype, dest, sendtag, fn)) return rc;
  if (int rc = check_recv_args(comm, recvbuf, recvcount, recvtype, source, recvtag, fn)) return rc;
  MPI_Request rr = new_request(sluice_request_s::Kind::recv, comm, recvbuf, recvcount, recvtype,
                               source, recvtag, SendMode::standard);
  start_recv(rr);
  MPI_Request sr = new_request(sluice_request_s::Kind::send, comm, sendbuf, sendcount, sendtype,
                               dest, sendtag, SendMode::standard);
  start_send(sr, fn);
  const int e1 = wait_one(&sr, MPI_STATUS_IGNORE, fn);
  const int e2 = wait_one(&rr, status, fn);
  return e1 != MPI_SUCCESS ? e1 : e2;
}

int PMPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Status* status) {
  SLUICE_MPI_CALL;
  return sendrecv_common(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                         source, recvtag, comm, status, "MPI_Sendrecv");
}

static int sendrecv_replace_common(void* buf, MPI_Count count, MPI_Datatype datatype, int dest,
                                   int sendtag, int source, int recvtag, MPI_Comm comm,
                                   MPI_Status* status, const char* fn) {
  if (int rc = check_send_args(comm, buf, count, datatype, dest, sendtag, fn)) return rc;
  if (int rc = check_recv_args(comm, buf, count, datatype, source, recvtag, fn)) return rc;
  // The outgoing data is packed first, so the receive may overwrite the buffer.
  std::vector<std::byte> packed(bytes_of(count, datatype));
  dt_pack(datatype, buf, count, packed.data());
  MPI_Request rr = new_request(sluice_request_s::Kind::recv, comm, buf, count, datatype, source,
                               recvtag, SendMode::standard);
  start_recv(rr);
  int e1 = MPI_SUCCESS;
  if (dest != MPI_PROC_NULL) {
    detail::RequestImpl* s =
        isend_bytes(comm, packed.data(), packed.size(), dest, sendtag, comm->p2p_ctx);
    block_until([s] { return s->state == detail::RequestState::complete; });
    Status st;
    engine().test(s, &st);
    if (st.error != Errc::ok) e1 = raise(comm, errc_to_class(st.error), fn, "send failed");
  }
  const int e2 = wait_one(&rr, status, fn);
  return e1 != MPI_SUCCESS ? e1 : e2;
}

int PMPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  SLUICE_MPI_CALL;
  return sendrecv_replace_common(buf, count, datatype, dest, sendtag, source, recvtag, comm, status,
                                 "MPI_Sendrecv_replace");
}

}  // extern "C"

namespace {

// MPI-4.0 §3.10: a send and a receive started together, completed as one request whose
// status is the receive's. The two are ordinary requests; freed with the pair (still in
// flight: handed to the detached list, like MPI_Request_free does).
class SendrecvOp final : public AsyncOp {
 public:
  SendrecvOp(MPI_Request send, MPI_Request recv) : send_(send), recv_(recv) {}
  ~SendrecvOp() override {
    for (MPI_Request r : {send_, recv_}) {
      if (!r->active || request_poll(r)) {
        delete_request(r);
      } else {
        r->persistent = false;
        g_detached.push_back(r);
      }
    }
  }
  SendrecvOp(const SendrecvOp&) = delete;
  SendrecvOp& operator=(const SendrecvOp&) = delete;
  bool test() override {
    const bool sent = request_poll(send_);
    return request_poll(recv_) && sent;
  }
  int error() const override {
    return send_->status.MPI_ERROR != MPI_SUCCESS ? send_->status.MPI_ERROR
                                                  : recv_->status.MPI_ERROR;
  }
  void fill_status(MPI_Status* status) override {
    const int err = status->MPI_ERROR;
    *status = recv_->status;
    status->MPI_ERROR = err;
  }

 private:
  MPI_Request send_, recv_;
};

// Starts the pair (a standard-mode send cannot fail to start: errors come with completion).
MPI_Request start_sendrecv(MPI_Comm comm, MPI_Request send, MPI_Request recv, const char* fn) {
  start_recv(recv);
  start_send(send, fn);
  return make_async_request(comm, std::make_unique<SendrecvOp>(send, recv));
}

}  // namespace

extern "C" {

static int isendrecv_common(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                            int dest, int sendtag, void* recvbuf, MPI_Count recvcount,
                            MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                            MPI_Request* request, const char* fn) {
  if (int rc = check_send_args(comm, sendbuf, sendcount, sendtype, dest, sendtag, fn)) return rc;
  if (int rc = check_recv_args(comm, recvbuf, recvcount, recvtype, source, recvtag, fn)) return rc;
  if (!request) return raise(comm, MPI_ERR_ARG, fn, "request is NULL");
  MPI_Request rr = new_request(sluice_request_s::Kind::recv, comm, recvbuf, recvcount, recvtype,
                               source, recvtag, SendMode::standard);
  MPI_Request sr = new_request(sluice_request_s::Kind::send, comm, sendbuf, sendcount, sendtype,
                               dest, sendtag, SendMode::standard);
  *request = start_sendrecv(comm, sr, rr, fn);
  return MPI_SUCCESS;
}

int PMPI_Isendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                   void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                   MPI_Comm comm, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return isendrecv_common(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                          source, recvtag, comm, request, "MPI_Isendrecv");
}

static int isendrecv_replace_common(void* buf, MPI_Count count, MPI_Datatype datatype, int dest,
                                    int sendtag, int source, int recvtag, MPI_Comm comm,
                                    MPI_Request* request, const char* fn) {
  if (int rc = check_send_args(comm, buf, count, datatype, dest, sendtag, fn)) return rc;
  if (int rc = check_recv_args(comm, buf, count, datatype, source, recvtag, fn)) return rc;
  if (!request) return raise(comm, MPI_ERR_ARG, fn, "request is NULL");
  const std::size_t bytes = bytes_of(count, datatype);
  // The outgoing data is packed first (the receive may overwrite the buffer before the send
  // has read it); the send request owns the copy in its staging.
  MPI_Request sr =
      new_request(sluice_request_s::Kind::send, comm, nullptr, static_cast<MPI_Count>(bytes),
                  MPI_BYTE, dest, sendtag, SendMode::standard);
  sr->staging.resize(bytes);
  dt_pack(datatype, buf, count, sr->staging.data());
  sr->buf = sr->staging.data();
  MPI_Request rr = new_request(sluice_request_s::Kind::recv, comm, buf, count, datatype, source,
                               recvtag, SendMode::standard);
  *request = start_sendrecv(comm, sr, rr, fn);
  return MPI_SUCCESS;
}

int PMPI_Isendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                           int source, int recvtag, MPI_Comm comm, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return isendrecv_replace_common(buf, count, datatype, dest, sendtag, source, recvtag, comm,
                                  request, "MPI_Isendrecv_replace");
}

// ---- probes --------------------------------------------------------------------------------

int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  SLUICE_MPI_CALL;
  if (int rc = check_probe_args(comm, source, tag, "MPI_Iprobe")) return rc;
  if (!flag) return raise(comm, MPI_ERR_ARG, "MPI_Iprobe", "flag is NULL");
  if (source == MPI_PROC_NULL) {
    *flag = 1;
    if (status) proc_null_user_status(status);
    return MPI_SUCCESS;
  }
  Status s;
  const int src = source_world(comm, source);
  *flag = engine().iprobe(src, tag, comm->p2p_ctx, &s) ? 1 : 0;
  if (*flag) return probe_status(comm, s, status);
  // ULFM: a probe that could only be answered by a failed process reports it.
  if (Errc e = engine().probe_failure(src, comm->p2p_ctx); e != Errc::ok)
    return raise(comm, errc_to_class(e), "MPI_Iprobe", "probe failed");
  return MPI_SUCCESS;
}

int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  SLUICE_MPI_CALL;
  if (int rc = check_probe_args(comm, source, tag, "MPI_Probe")) return rc;
  if (source == MPI_PROC_NULL) {
    if (status) proc_null_user_status(status);
    return MPI_SUCCESS;
  }
  Status s;
  const int src = source_world(comm, source);
  Errc failed = Errc::ok;
  block_until([&] {
    if (!g_bsend.segments.empty()) reap_bsends();
    if (engine().iprobe(src, tag, comm->p2p_ctx, &s)) return true;
    failed = engine().probe_failure(src, comm->p2p_ctx);  // would wait forever
    return failed != Errc::ok;
  });
  if (failed != Errc::ok) return raise(comm, errc_to_class(failed), "MPI_Probe", "probe failed");
  return probe_status(comm, s, status);
}

int PMPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
                 MPI_Status* status) {
  SLUICE_MPI_CALL;
  if (int rc = check_probe_args(comm, source, tag, "MPI_Improbe")) return rc;
  if (!flag || !message) return raise(comm, MPI_ERR_ARG, "MPI_Improbe", "flag or message is NULL");
  if (source == MPI_PROC_NULL) {
    *flag = 1;
    *message = MPI_MESSAGE_NO_PROC;
    if (status) proc_null_user_status(status);
    return MPI_SUCCESS;
  }
  Status s;
  detail::UnexpectedMsg* u = engine().mprobe(source_world(comm, source), tag, comm->p2p_ctx, &s);
  *flag = u != nullptr;
  if (!u) return MPI_SUCCESS;
  auto* m = new sluice_message_s;
  m->msg = u;
  m->comm = comm;
  m->status.MPI_ERROR = MPI_SUCCESS;
  probe_status(comm, s, &m->status);
  if (status) copy_single_status(status, m->status);
  *message = m;
  return MPI_SUCCESS;
}

int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  SLUICE_MPI_CALL;
  if (int rc = check_probe_args(comm, source, tag, "MPI_Mprobe")) return rc;
  if (!message) return raise(comm, MPI_ERR_ARG, "MPI_Mprobe", "message is NULL");
  int flag = 0;
  Errc failed = Errc::ok;
  block_until([&] {
    PMPI_Improbe(source, tag, comm, &flag, message, status);
    if (flag != 0 || source == MPI_PROC_NULL) return true;
    failed = engine().probe_failure(source_world(comm, source), comm->p2p_ctx);
    return failed != Errc::ok;
  });
  if (failed != Errc::ok) return raise(comm, errc_to_class(failed), "MPI_Mprobe", "probe failed");
  return MPI_SUCCESS;
}

int PMPI_Mrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message,
               MPI_Status* status) {
  SLUICE_MPI_CALL;
  MPI_Request r;
  if (int rc = mrecv_start(buf, count, datatype, message, &r, "MPI_Mrecv")) return rc;
  return wait_one(&r, status, "MPI_Mrecv");
}

int PMPI_Imrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message,
                MPI_Request* request) {
  SLUICE_MPI_CALL;
  return mrecv_start(buf, count, datatype, message, request, "MPI_Imrecv");
}

// ---- completion ------------------------------------------------------------------------------

int PMPI_Wait(MPI_Request* request, MPI_Status* status) {
  SLUICE_MPI_CALL;
  if (!request) return raise(nullptr, MPI_ERR_ARG, "MPI_Wait", "request is NULL");
  if (request_inactive(*request)) {
    set_empty_status(status);
    return MPI_SUCCESS;
  }
  return wait_one(request, status, "MPI_Wait");
}

int PMPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  SLUICE_MPI_CALL;
  if (!request) return raise(nullptr, MPI_ERR_ARG, "MPI_Test", "request is NULL");
  if (!flag) return raise(nullptr, MPI_ERR_ARG, "MPI_Test", "flag is NULL");
  MPI_Request r = *request;
  if (request_inactive(r)) {
    *flag = 1;
    set_empty_status(status);
    return MPI_SUCCESS;
  }
  if (!request_poll(r)) {
    progress();
    if (!request_poll(r)) {
      *flag = 0;
      return MPI_SUCCESS;
    }
  }
  *flag = 1;
  return wait_one(request, status, "MPI_Test");  // already complete: reports and releases
}

int PMPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[]) {
  SLUICE_MPI_CALL;
  if (int rc = check_request_array(count, reqs, "MPI_Waitall")) return rc;
  // Each pass resumes at the first request not yet complete, completing and reporting
  // requests in order as they are found complete (one pass over the array when they all
  // are): O(count) checks in all, not per pass, and one backoff for the whole wait.
  // Operations that advance only when tested are driven by progress() itself
  // (g_background), so stopping at a pending request starves nothing. Errors are raised
  // once all are complete.
  int first_error = MPI_SUCCESS, first_index = -1;
  MPI_Comm comm = nullptr;
  int next = 0;
  block_until([&] {
    for (; next < count; ++next) {
      MPI_Status* st = statuses ? &statuses[next] : nullptr;
      MPI_Request r = reqs[next];
      if (request_inactive(r)) {
        set_empty_status(st);
        continue;
      }
      if (!r->done) {
        if (!request_ready(r)) return false;
        if (finish_plain(r, st)) {
          reqs[next] = MPI_REQUEST_NULL;
          continue;
        }
        request_poll(r);
      }
      MPI_Comm c = r->comm;
      const int err = report(&reqs[next], st);
      if (err != MPI_SUCCESS && first_index < 0) {
        first_error = err;
        first_index = next;
        comm = c;
      }
    }
    return true;
  });
  if (first_index >= 0)
    return raisef(comm, MPI_ERR_IN_STATUS, "MPI_Waitall", "request %d failed: %s", first_index,
                  error_string(first_error) ? error_string(first_error) : "error");
  return MPI_SUCCESS;
}

int PMPI_Testall(int count, MPI_Request reqs[], int* flag, MPI_Status statuses[]) {
  SLUICE_MPI_CALL;
  if (int rc = check_request_array(count, reqs, "MPI_Testall")) return rc;
  if (!flag) return raise(nullptr, MPI_ERR_ARG, "MPI_Testall", "flag is NULL");
  auto all_done = [&] {
    for (int i = 0; i < count; ++i)
      if (!request_inactive(reqs[i]) && !request_poll(reqs[i])) return false;
    return true;
  };
  if (!all_done()) {
    progress();
    if (!all_done()) {
      *flag = 0;
      return MPI_SUCCESS;
    }
  }
  *flag = 1;
  return PMPI_Waitall(count, reqs, statuses);
}

// Index of the first done active request, MPI_UNDEFINED if none is active, -1 if some are
// active but none done.
static int find_done(int count, MPI_Request reqs[]) {
  bool any_active = false;
  for (int i = 0; i < count; ++i) {
    if (request_inactive(reqs[i])) continue;
    any_active = true;
    if (request_poll(reqs[i])) return i;
  }
  return any_active ? -1 : MPI_UNDEFINED;
}

int PMPI_Waitany(int count, MPI_Request reqs[], int* index, MPI_Status* status) {
  SLUICE_MPI_CALL;
  if (int rc = check_request_array(count, reqs, "MPI_Waitany")) return rc;
  if (!index) return raise(nullptr, MPI_ERR_ARG, "MPI_Waitany", "index is NULL");
  int i = -1;
  block_until([&] { return (i = find_done(count, reqs)) != -1; });
  *index = i;
  if (i == MPI_UNDEFINED) {
    set_empty_status(status);
    return MPI_SUCCESS;
  }
  return wait_one(&reqs[i], status, "MPI_Waitany");
}

int PMPI_Testany(int count, MPI_Request reqs[], int* index, int* flag, MPI_Status* status) {
  SLUICE_MPI_CALL;
  if (int rc = check_request_array(count, reqs, "MPI_Testany")) return rc;
  if (!index || !flag) return raise(nullptr, MPI_ERR_ARG, "MPI_Testany", "index or flag is NULL");
  int i = find_done(count, reqs);
  if (i == -1) {
    progress();
    i = find_done(count, reqs);
  }
  if (i == -1) {
    *flag = 0;
    *index = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  *flag = 1;
  *index = i;
  if (i == MPI_UNDEFINED) {
    set_empty_status(status);
    return MPI_SUCCESS;
  }
  return wait_one(&reqs[i], status, "MPI_Testany");
}

// Reports every done request; returns false if none was active.
static int collect_some(int count, MPI_Request reqs[], int* outcount, int indices[],
                        MPI_Status statuses[], const char* function) {
  int n = 0;
  int first_error = MPI_SUCCESS, first_index = -1;
  MPI_Comm comm = nullptr;
  for (int i = 0; i < count; ++i) {
    if (request_inactive(reqs[i]) || !request_poll(reqs[i])) continue;
    MPI_Status* st = statuses ? &statuses[n] : nullptr;
    MPI_Comm c = reqs[i]->comm;
    const int err = report(&reqs[i], st);
    if (err != MPI_SUCCESS && first_index < 0) {
      first_error = err;
      first_index = i;
      comm = c;
    }
    indices[n++] = i;
  }
  *outcount = n;
  if (first_index >= 0)
    return raisef(comm, MPI_ERR_IN_STATUS, function, "request %d failed: %s", first_index,
                  error_string(first_error) ? error_string(first_error) : "error");
  return MPI_SUCCESS;
}

int PMPI_Waitsome(int incount, MPI_Request reqs[], int* outcount, int indices[],
                  MPI_Status statuses[]) {
  SLUICE_MPI_CALL;
  if (int rc = check_request_array(incount, reqs, "MPI_Waitsome")) return rc;
  if (!outcount || (incount > 0 && !indices))
    return raise(nullptr, MPI_ERR_ARG, "MPI_Waitsome", "outcount or indices is NULL");
  int i = -1;
  block_until([&] { return (i = find_done(incount, reqs)) != -1; });
  if (i == MPI_UNDEFINED) {
    *outcount = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  return collect_some(incount, reqs, outcount, indices, statuses, "MPI_Waitsome");
}

int PMPI_Testsome(int incount, MPI_Request reqs[], int* outcount, int indices[],
                  MPI_Status statuses[]) {
  SLUICE_MPI_CALL;
  if (int rc = check_request_array(incount, reqs, "MPI_Testsome")) return rc;
  if (!outcount || (incount > 0 && !indices))
    return raise(nullptr, MPI_ERR_ARG, "MPI_Testsome", "outcount or indices is NULL");
  int i = find_done(incount, reqs);
  if (i == -1) {
    progress();
    i = find_done(incount, reqs);
  }
  if (i == MPI_UNDEFINED) {
    *outcount = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  if (i == -1) {
    *outcount = 0;
    return MPI_SUCCESS;
  }
  return collect_some(incount, reqs, outcount, indices, statuses, "MPI_Testsome");
}

int PMPI_Request_free(MPI_Request* request) {
  SLUICE_MPI_CALL;
  if (!request) return raise(nullptr, MPI_ERR_ARG, "MPI_Request_free", "request is NULL");
  if (!*request)
    return raise(nullptr, MPI_ERR_REQUEST, "MPI_Request_free", "invalid request MPI_REQUEST_NULL");
  MPI_Request r = *request;
  *request = MPI_REQUEST_NULL;
  if (r->kind == sluice_request_s::Kind::async) r->op->released();
  if (!r->active || request_poll(r)) {
    delete_request(r);
    return MPI_SUCCESS;
  }
  // Still in flight: completes in the background, then is deleted.
  r->persistent = false;
  g_detached.push_back(r);
  return MPI_SUCCESS;
}

int PMPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  SLUICE_MPI_CALL;
  if (!flag) return raise(nullptr, MPI_ERR_ARG, "MPI_Request_get_status", "flag is NULL");
  if (request_inactive(request)) {
    *flag = 1;
    set_empty_status(status);
    return MPI_SUCCESS;
  }
  if (!request_poll(request)) progress();
  *flag = request_poll(request) ? 1 : 0;
  if (*flag && status) *status = request->status;
  return MPI_SUCCESS;
}

int PMPI_Cancel(MPI_Request* request) {
  SLUICE_MPI_CALL;
  if (!request) return raise(nullptr, MPI_ERR_ARG, "MPI_Cancel", "request is NULL");
  if (!*request)
    return raise(nullptr, MPI_ERR_REQUEST, "MPI_Cancel", "invalid request MPI_REQUEST_NULL");
  MPI_Request r = *request;
  if (r->kind == sluice_request_s::Kind::async) {
    if (r->op->cancellable()) return r->op->cancel();  // generalized requests
    return raise(r->comm, MPI_ERR_REQUEST, "MPI_Cancel",
                 "nonblocking collective and communicator operations cannot be cancelled");
  }
  if (!r->active) return MPI_SUCCESS;
  // A buffered send is complete for MPI once copied; its copy may still be withdrawn.
  if (r->done) {
    if (r->kind == sluice_request_s::Kind::send && r->mode == SendMode::buffered && r->bsend_id)
      cancel_bsend(r);
    return MPI_SUCCESS;
  }
  // Receives not yet matched are cancelled now. Sends (Engine::cancel): withdrawn now when
  // nothing is on the wire; an rts or synchronous eager message the receiver has not
  // answered is withdrawn if still unmatched there (the completion says which); an eager
  // message that is out cannot be recalled and completes normally (MPI-3.1 §3.8.4).
  if (!r->impl) return MPI_SUCCESS;
  if (r->kind == sluice_request_s::Kind::send)
    engine().cancel_send(r->impl);
  else
    engine().cancel(r->impl);
  return MPI_SUCCESS;
}

int PMPI_Test_cancelled(const MPI_Status* status, int* flag) {
  SLUICE_MPI_CALL;
  if (!status)
    return raise(nullptr, MPI_ERR_ARG, "MPI_Test_cancelled", "status is NULL (MPI_STATUS_IGNORE)");
  if (!flag) return raise(nullptr, MPI_ERR_ARG, "MPI_Test_cancelled", "flag is NULL");
  *flag = status->sluice_cancelled ? 1 : 0;
  return MPI_SUCCESS;
}

int PMPI_Status_set_cancelled(MPI_Status* status, int flag) {
  SLUICE_MPI_CALL;
  if (!status)
    return raise(nullptr, MPI_ERR_ARG, "MPI_Status_set_cancelled",
                 "status is NULL (MPI_STATUS_IGNORE)");
  status->sluice_cancelled = flag ? 1 : 0;
  return MPI_SUCCESS;
}

// The status functions: MPI_STATUS_IGNORE is no status to read or write.
static int check_status_args(const void* status, const void* out, MPI_Datatype datatype,
                             const char* function) {
  if (!status) return raise(nullptr, MPI_ERR_ARG, function, "status is NULL (MPI_STATUS_IGNORE)");
  if (!out) return raise(nullptr, MPI_ERR_ARG, function, "count is NULL");
  return check_type(nullptr, datatype, function);
}

// Whole elements of `datatype` the status holds, or MPI_UNDEFINED (a partial one).
static MPI_Count status_count(const MPI_Status* status, MPI_Datatype datatype) {
  const auto size = static_cast<MPI_Count>(dt_size(datatype));
  const MPI_Count bytes = status->sluice_count;
  if (size == 0) return 0;
  return bytes % size ? MPI_UNDEFINED : bytes / size;
}

// A count for an int out-parameter: MPI_UNDEFINED when it does not fit (MPI-4.0 §3.2.5).
static int int_count(MPI_Count c) {
  return c > INT_MAX ? MPI_UNDEFINED : static_cast<int>(c);
}

int PMPI_Get_count(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  SLUICE_MPI_CALL;
  if (int rc = check_status_args(status, count, datatype, "MPI_Get_count")) return rc;
  *count = int_count(status_count(status, datatype));
  return MPI_SUCCESS;
}

static int get_elements(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count,
                        const char* function) {
  if (int rc = check_status_args(status, count, datatype, function)) return rc;
  const std::size_t n = dt_elements(datatype, static_cast<std::size_t>(status->sluice_count));
  *count = n == SIZE_MAX ? MPI_UNDEFINED : static_cast<MPI_Count>(n);
  return MPI_SUCCESS;
}

int PMPI_Get_elements_x(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count) {
  SLUICE_MPI_CALL;
  return get_elements(status, datatype, count, "MPI_Get_elements_x");
}

int PMPI_Get_elements(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  SLUICE_MPI_CALL;
  if (!count) return raise(nullptr, MPI_ERR_ARG, "MPI_Get_elements", "count is NULL");
  MPI_Count c;
  if (int rc = get_elements(status, datatype, &c, "MPI_Get_elements")) return rc;
  *count = int_count(c);
  return MPI_SUCCESS;
}

static int set_elements(MPI_Status* status, MPI_Datatype datatype, MPI_Count count,
                        const char* function) {
  if (!status) return raise(nullptr, MPI_ERR_ARG, function, "status is NULL (MPI_STATUS_IGNORE)");
  if (int rc = check_type(nullptr, datatype, function)) return rc;
  if (count < 0) return raisef(nullptr, MPI_ERR_COUNT, function, "invalid count %lld", count);
  // Elements -> bytes, assuming the basic elements of the type are of equal size.
  const std::size_t per = dt_basic_count(datatype);
  status->sluice_count =
      per == 0 ? 0
               : count * static_cast<MPI_Count>(dt_size(datatype)) / static_cast<MPI_Count>(per);
  return MPI_SUCCESS;
}

int PMPI_Status_set_elements(MPI_Status* status, MPI_Datatype datatype, int count) {
  SLUICE_MPI_CALL;
  return set_elements(status, datatype, count, "MPI_Status_set_elements");
}

int PMPI_Status_set_elements_x(MPI_Status* status, MPI_Datatype datatype, MPI_Count count) {
  SLUICE_MPI_CALL;
  return set_elements(status, datatype, count, "MPI_Status_set_elements_x");
}

// ---- persistent requests -------------------------------------------------------------------

static int persistent_init(const void* buf, MPI_Count count, MPI_Datatype type, int peer, int tag,
                           MPI_Comm comm, MPI_Request* request, sluice_request_s::Kind kind,
                           SendMode mode, const char* function) {
  const int rc =
      kind == sluice_request_s::Kind::send
          ? check_send_args(comm, buf, count, type, peer, tag, function)
          : check_recv_args(comm, const_cast<void*>(buf), count, type, peer, tag, function);
  if (rc) return rc;
  if (!request) return raise(comm, MPI_ERR_ARG, function, "request is NULL");
  MPI_Request r = new_request(kind, comm, buf, count, type, peer, tag, mode);
  r->persistent = true;
  *request = r;
  return MPI_SUCCESS;
}

int PMPI_Send_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_init(buf, count, datatype, dest, tag, comm, request,
                         sluice_request_s::Kind::send, SendMode::standard, "MPI_Send_init");
}

int PMPI_Ssend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_init(buf, count, datatype, dest, tag, comm, request,
                         sluice_request_s::Kind::send, SendMode::sync, "MPI_Ssend_init");
}

int PMPI_Bsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_init(buf, count, datatype, dest, tag, comm, request,
                         sluice_request_s::Kind::send, SendMode::buffered, "MPI_Bsend_init");
}

int PMPI_Rsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_init(buf, count, datatype, dest, tag, comm, request,
                         sluice_request_s::Kind::send, SendMode::ready, "MPI_Rsend_init");
}

int PMPI_Recv_init(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                   MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_init(buf, count, datatype, source, tag, comm, request,
                         sluice_request_s::Kind::recv, SendMode::standard, "MPI_Recv_init");
}

int PMPI_Start(MPI_Request* request) {
  SLUICE_MPI_CALL;
  if (!request) return raise(nullptr, MPI_ERR_ARG, "MPI_Start", "request is NULL");
  if (!*request || !(*request)->persistent)
    return raise(nullptr, MPI_ERR_REQUEST, "MPI_Start", "not a persistent request");
  MPI_Request r = *request;
  if (r->active)
    return raise(r->comm, MPI_ERR_REQUEST, "MPI_Start", "persistent request is already active");
  if (r->kind == sluice_request_s::Kind::async) {  // a persistent collective
    if (int rc = r->op->start()) return rc;
    r->active = true;
    r->done = false;
    return MPI_SUCCESS;
  }
  if (r->kind == sluice_request_s::Kind::send) return start_send(r, "MPI_Start");
  return start_recv(r);
}

int PMPI_Startall(int count, MPI_Request reqs[]) {
  SLUICE_MPI_CALL;
  if (int rc = check_request_array(count, reqs, "MPI_Startall")) return rc;
  for (int i = 0; i < count; ++i)
    if (int rc = PMPI_Start(&reqs[i])) return rc;
  return MPI_SUCCESS;
}

}  // extern "C"

// ---- the MPI_Count implementations (p2p.hpp) --------------------------------------------------
// One out-of-line copy of each operation for the large-count entry points (p2p_large.cpp).

namespace sluice::mpi {

int p2p::recv(void* buf, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Status* status, const char* function) {
  return recv_common(buf, count, type, source, tag, comm, status, function);
}

int p2p::isend(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
               MPI_Comm comm, MPI_Request* request, SendMode mode, const char* function) {
  return isend_common(buf, count, type, dest, tag, comm, request, mode, function);
}

int p2p::irecv(void* buf, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
               MPI_Request* request, const char* function) {
  return irecv_common(buf, count, type, source, tag, comm, request, function);
}

int p2p::sendrecv(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                  int sendtag, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                  int source, int recvtag, MPI_Comm comm, MPI_Status* status,
                  const char* function) {
  return sendrecv_common(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                         source, recvtag, comm, status, function);
}

int p2p::sendrecv_replace(void* buf, MPI_Count count, MPI_Datatype type, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm, MPI_Status* status,
                          const char* function) {
  return sendrecv_replace_common(buf, count, type, dest, sendtag, source, recvtag, comm, status,
                                 function);
}

int p2p::isendrecv(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                   int sendtag, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                   int source, int recvtag, MPI_Comm comm, MPI_Request* request,
                   const char* function) {
  return isendrecv_common(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                          source, recvtag, comm, request, function);
}

int p2p::isendrecv_replace(void* buf, MPI_Count count, MPI_Datatype type, int dest, int sendtag,
                           int source, int recvtag, MPI_Comm comm, MPI_Request* request,
                           const char* function) {
  return isendrecv_replace_common(buf, count, type, dest, sendtag, source, recvtag, comm, request,
                                  function);
}

int p2p::mrecv(void* buf, MPI_Count count, MPI_Datatype type, MPI_Message* message,
               MPI_Status* status, const char* function) {
  MPI_Request r;
  if (int rc = mrecv_start(buf, count, type, message, &r, function)) return rc;
  return wait_one(&r, status, function);
}

int p2p::imrecv(void* buf, MPI_Count count, MPI_Datatype type, MPI_Message* message,
                MPI_Request* request, const char* function) {
  return mrecv_start(buf, count, type, message, request, function);
}

int p2p::buffer_attach(void* buffer, MPI_Count size, const char* function) {
  return ::buffer_attach(buffer, size, function);
}

int p2p::buffer_detach(void* buffer_addr, MPI_Count* size, const char* function) {
  return ::buffer_detach(buffer_addr, size, function);
}

int p2p::persistent_init(const void* buf, MPI_Count count, MPI_Datatype type, int peer, int tag,
                         MPI_Comm comm, MPI_Request* request, sluice_request_s::Kind kind,
                         SendMode mode, const char* function) {
  return ::persistent_init(buf, count, type, peer, tag, comm, request, kind, mode, function);
}

int p2p::get_count(const MPI_Status* status, MPI_Datatype type, MPI_Count* count,
                   const char* function) {
  if (int rc = check_status_args(status, count, type, function)) return rc;
  *count = status_count(status, type);
  return MPI_SUCCESS;
}

int p2p::get_elements(const MPI_Status* status, MPI_Datatype type, MPI_Count* count,
                      const char* function) {
  return ::get_elements(status, type, count, function);
}

}  // namespace sluice::mpi

// The MPI_ names: weak, so a profiling library defining them comes first (MPI-3.1
// §14.2); it reaches these definitions as PMPI_.
#pragma weak MPI_Send = PMPI_Send
#pragma weak MPI_Isendrecv = PMPI_Isendrecv
#pragma weak MPI_Isendrecv_replace = PMPI_Isendrecv_replace
#pragma weak MPI_Ssend = PMPI_Ssend
#pragma weak MPI_Rsend = PMPI_Rsend
#pragma weak MPI_Bsend = PMPI_Bsend
#pragma weak MPI_Buffer_attach = PMPI_Buffer_attach
#pragma weak MPI_Buffer_detach = PMPI_Buffer_detach
#pragma weak MPI_Recv = PMPI_Recv
#pragma weak MPI_Isend = PMPI_Isend
#pragma weak MPI_Issend = PMPI_Issend
#pragma weak MPI_Irsend = PMPI_Irsend
#pragma weak MPI_Ibsend = PMPI_Ibsend
#pragma weak MPI_Irecv = PMPI_Irecv
#pragma weak MPI_Sendrecv = PMPI_Sendrecv
#pragma weak MPI_Sendrecv_replace = PMPI_Sendrecv_replace
#pragma weak MPI_Iprobe = PMPI_Iprobe
#pragma weak MPI_Probe = PMPI_Probe
#pragma weak MPI_Improbe = PMPI_Improbe
#pragma weak MPI_Mprobe = PMPI_Mprobe
#pragma weak MPI_Mrecv = PMPI_Mrecv
#pragma weak MPI_Imrecv = PMPI_Imrecv
#pragma weak MPI_Wait = PMPI_Wait
#pragma weak MPI_Test = PMPI_Test
#pragma weak MPI_Waitall = PMPI_Waitall
#pragma weak MPI_Testall = PMPI_Testall
#pragma weak MPI_Waitany = PMPI_Waitany
#pragma weak MPI_Testany = PMPI_Testany
#pragma weak MPI_Waitsome = PMPI_Waitsome
#pragma weak MPI_Testsome = PMPI_Testsome
#pragma weak MPI_Request_free = PMPI_Request_free
#pragma weak MPI_Request_get_status = PMPI_Request_get_status
#pragma weak MPI_Cancel = PMPI_Cancel
#pragma weak MPI_Test_cancelled = PMPI_Test_cancelled
#pragma weak MPI_Status_set_cancelled = PMPI_Status_set_cancelled
#pragma weak MPI_Get_count = PMPI_Get_count
#pragma weak MPI_Get_elements_x = PMPI_Get_elements_x
#pragma weak MPI_Get_elements = PMPI_Get_elements
#pragma weak MPI_Status_set_elements = PMPI_Status_set_elements
#pragma weak MPI_Status_set_elements_x = PMPI_Status_set_elements_x
#pragma weak MPI_Send_init = PMPI_Send_init
#pragma weak MPI_Ssend_init = PMPI_Ssend_init
#pragma weak MPI_Bsend_init = PMPI_Bsend_init
#pragma weak MPI_Rsend_init = PMPI_Rsend_init
#pragma weak MPI_Recv_init = PMPI_Recv_init
#pragma weak MPI_Start = PMPI_Start
#pragma weak MPI_Startall = PMPI_Startall
