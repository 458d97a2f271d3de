// Intercommunicators (MPI-3.1 §6.6): Intercomm_create/merge, Comm_remote_size/group,
// Comm_dup of an intercommunicator, Comm_create_group, and the blocking collectives Barrier,
// Bcast, Allreduce, Allgather and Alltoall with the standard's root semantics.
//
// An intercommunicator is a sluice_comm_s whose `world`/`size` describe the REMOTE group, so
// point-to-point (which addresses remote ranks) needs no code of its own, and whose `inter`
// holds the local group and a hidden intracommunicator over it (`local`) for the local
// halves of the collectives. Both groups use one context pair, agreed over the union of the
// groups: every member proposes its lowest free id, the maximum wins if no member holds it
// already, else they retry above it. The two groups meet only through their leaders: over
// `peer_comm` while Intercomm_create runs, over the intercommunicator's collective context
// afterwards (local rank 0 with remote rank 0).
//
// Collectives: local reduce/gather to the leader, leaders swap, local broadcast; Alltoall is
// direct. Cross-group messages use the intercommunicator's collective context with one tag
// per collective (the members of both groups call collectives in the same order).
#include <algorithm>
#include <cstring>
#include <deque>
#include <functional>

#include "mpi/mpi_internal.hpp"

namespace sluice::mpi {

struct InterComm {
  std::vector<int> local_world;  // local rank -> world rank
  MPI_Comm local = nullptr;      // hidden intracommunicator over the local group
  uint32_t seq = 0;              // collectives started (names their tags)
  InterComm() = default;
  InterComm(const InterComm&) = delete;
  InterComm& operator=(const InterComm&) = delete;
  ~InterComm() {
    if (local) destroy_comm(local);
  }
};

namespace {

using B = std::byte;

// Sends `nmine` ints to the other group and receives `ntheirs` from it; every member of
// the local group gets the other group's values (a leader swap, then a local broadcast).
// `link` runs on the local leader only.
using LeaderLink = std::function<int(const int* mine, int nmine, int* theirs, int ntheirs)>;

int exchange_ints(MPI_Comm local, int leader, const LeaderLink& link, const int* mine, int nmine,
                  int* theirs, int ntheirs) {
  if (local->rank == leader)
    if (int rc = link(mine, nmine, theirs, ntheirs)) return rc;
  return PMPI_Bcast(theirs, ntheirs, MPI_INT, leader, local);
}

// Maximum of one int over both groups.
int union_max(MPI_Comm local, int leader, const LeaderLink& link, int& v) {
  int local_max = v;
  if (int rc = PMPI_Allreduce(&v, &local_max, 1, MPI_INT, MPI_MAX, local)) return rc;
  int remote_max = local_max;
  if (int rc = exchange_ints(local, leader, link, &local_max, 1, &remote_max, 1)) return rc;
  v = std::max(local_max, remote_max);
  return MPI_SUCCESS;
}

// A context id free on every member of both groups (see the file comment).
int agree_union_ctx(MPI_Comm local, int leader, const LeaderLink& link, uint32_t& ctx) {
  uint32_t from = 0;
  for (;;) {
    int candidate = static_cast<int>(ctx_lowest_free(from));
    if (int rc = union_max(local, leader, link, candidate)) return rc;
    const auto c = static_cast<uint32_t>(candidate);
    const bool held = ctx_try_hold(c);
    int conflict = held ? 0 : 1;
    if (int rc = union_max(local, leader, link, conflict)) {
      if (held) ctx_drop_hold(c);
      return rc;
    }
    if (!conflict) {
      ctx_claim_held(c);
      ctx = c;
      return MPI_SUCCESS;
    }
    if (held) ctx_drop_hold(c);
    from = c + 2;
  }
}

// Blocking transfers on the intercommunicator's collective context (packing non-contiguous
// types). `peer` is a remote rank.
int wait_all(std::vector<detail::RequestImpl*>& reqs) {
  block_until([&] {
    return std::all_of(reqs.begin(), reqs.end(), [](detail::RequestImpl* r) {
      return r->state == detail::RequestState::complete;
    });
  });
  int error = MPI_SUCCESS;
  for (auto* r : reqs) {
    Status st;
    engine().test(r, &st);
    if (st.error != Errc::ok && error == MPI_SUCCESS) error = errc_to_class(st.error);
  }
  reqs.clear();
  return error;
}

// Outgoing / incoming typed buffers as contiguous bytes for the engine.
struct Staged {
  std::vector<B> bytes;
  B* data = nullptr;
  std::size_t size = 0;
};

void stage_send(Staged& s, const void* buf, int count, MPI_Datatype type) {
  s.size = static_cast<std::size_t>(count) * type->size;
  if (type->contiguous) {
    s.data = static_cast<B*>(const_cast<void*>(buf)) + type->true_lb;
  } else {
    s.bytes.resize(s.size);
    dt_pack(type, buf, count, s.bytes.data());
    s.data = s.bytes.data();
  }
}

void stage_recv(Staged& s, void* buf, int count, MPI_Datatype type) {
  s.size = static_cast<std::size_t>(count) * type->size;
  if (type->contiguous) {
    s.data = static_cast<B*>(buf) + type->true_lb;
  } else {
    s.bytes.resize(s.size);
    s.data = s.bytes.data();
  }
}

void finish_recv(const Staged& s, void* buf, int count, MPI_Datatype type) {
  if (!type->contiguous) dt_unpack(type, s.bytes.data(), s.size, buf, count);
}

int next_tag(MPI_Comm inter) {
  return static_cast<int>(inter->inter->seq++ % static_cast<uint32_t>(kMgmtTagBase));
}

// The leaders' link over an existing intercommunicator (local rank 0 <-> remote rank 0).
LeaderLink inter_link(MPI_Comm inter, int tag) {
  return [inter, tag](const int* mine, int nmine, int* theirs, int ntheirs) {
    std::vector<detail::RequestImpl*> reqs;
    reqs.push_back(irecv_bytes(inter, theirs, ntheirs * sizeof(int), 0, tag, inter->coll_ctx));
    reqs.push_back(isend_bytes(inter, mine, nmine * sizeof(int), 0, tag, inter->coll_ctx));
    return wait_all(reqs);
  };
}

// A new intercommunicator to the group `remote_world` with context `ctx`.
MPI_Comm make_inter(const std::vector<int>& remote_world, uint32_t ctx, MPI_Comm local_parent,
                    MPI_Comm hidden_local, MPI_Comm errh_from) {
  MPI_Comm c = make_user_comm(remote_world, ctx, errh_from);
  auto ic = std::make_shared<InterComm>();
  ic->local_world = local_parent->world;
  ic->local = hidden_local;
  c->rank = local_parent->rank;
  c->inter = std::move(ic);
  return c;
}

int check_inter(MPI_Comm comm, const char* function) {
  if (int rc = check_comm(comm, function)) return rc;
  if (!comm->inter)
    return raisef(comm, MPI_ERR_COMM, function, "%s is not an intercommunicator", comm_label(comm));
  return MPI_SUCCESS;
}

// A buffer for `count` elements of `type` (element 0 at the returned address).
struct TypedTemp {
  std::vector<B> storage;
  void* at = nullptr;
  TypedTemp(int count, MPI_Datatype type) {
    if (count <= 0) return;
    const MPI_Aint ext = type->extent();
    const MPI_Aint span = (count - 1) * ext + dt_true_extent(type);
    storage.resize(static_cast<std::size_t>(std::max<MPI_Aint>(span, 1)));
    at = storage.data() - dt_true_lb(type);
  }
};

}  // namespace

int inter_local_size(MPI_Comm inter) {
  return static_cast<int>(inter->inter->local_world.size());
}

const std::vector<int>& inter_local_world(MPI_Comm inter) {
  return inter->inter->local_world;
}

int inter_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  InterComm& ic = *comm->inter;
  MPI_Comm hidden = nullptr;
  if (int rc = dup_hidden(ic.local, &hidden)) return raise(comm, rc, "MPI_Comm_dup", "failed");
  uint32_t ctx = 0;
  const int tag = kMgmtTagBase + static_cast<int>(comm->mgmt_seq++ % 1024u);
  if (int rc = agree_union_ctx(ic.local, 0, inter_link(comm, tag), ctx)) {
    destroy_comm(hidden);
    return raise(comm, rc, "MPI_Comm_dup", "context agreement failed");
  }
  MPI_Comm c = make_inter(comm->world, ctx, ic.local, hidden, comm);
  if (int rc = copy_attrs(comm, c)) {
    delete_attrs(c);
    destroy_comm(c);
    *newcomm = MPI_COMM_NULL;
    return raise(comm, rc, "MPI_Comm_dup", "attribute copy callback failed");
  }
  *newcomm = c;
  return MPI_SUCCESS;
}

// Intercommunicator collectives (blocking).
namespace {

int inter_barrier(MPI_Comm comm) {
  InterComm& ic = *comm->inter;
  const int tag = next_tag(comm);
  if (int rc = PMPI_Barrier(ic.local)) return rc;
  if (comm->rank == 0) {
    int out = 0, in = 0;
    if (int rc = inter_link(comm, tag)(&out, 1, &in, 1))
      return raise(comm, rc, "MPI_Barrier", "failed");
  }
  return PMPI_Barrier(ic.local);
}

int inter_bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  const char* fn = "MPI_Bcast";
  if (int rc = check_count(comm, count, fn)) return rc;
  if (int rc = check_type(comm, type, fn)) return rc;
  InterComm& ic = *comm->inter;
  const int tag = next_tag(comm);
  if (root == MPI_PROC_NULL) return MPI_SUCCESS;
  std::vector<detail::RequestImpl*> reqs;
  if (root == MPI_ROOT) {  // to the other group's leader
    Staged s;
    stage_send(s, buf, count, type);
    reqs.push_back(isend_bytes(comm, s.data, s.size, 0, tag, comm->coll_ctx));
    if (int rc = wait_all(reqs)) return raise(comm, rc, fn, "send to the other group failed");
    return MPI_SUCCESS;
  }
  if (root < 0 || root >= comm->size)
    return raisef(comm, MPI_ERR_ROOT, fn,
                  "invalid root %d (MPI_ROOT, MPI_PROC_NULL or a rank of the %d-rank remote group)",
                  root, comm->size);
  if (comm->rank == 0) {
    Staged s;
    stage_recv(s, buf, count, type);
    reqs.push_back(irecv_bytes(comm, s.data, s.size, root, tag, comm->coll_ctx));
    if (int rc = wait_all(reqs)) return raise(comm, rc, fn, "receive from the root failed");
    finish_recv(s, buf, count, type);
  }
  return PMPI_Bcast(buf, count, type, 0, ic.local);
}

// The leader sends `count` elements of `stype` at `sbuf` to the remote leader and receives
// `rcount` of `rtype` into `rbuf`.
int leader_swap(MPI_Comm comm, int tag, const void* sbuf, int scount, MPI_Datatype stype,
                void* rbuf, int rcount, MPI_Datatype rtype) {
  Staged out, in;
  stage_send(out, sbuf, scount, stype);
  stage_recv(in, rbuf, rcount, rtype);
  std::vector<detail::RequestImpl*> reqs;
  reqs.push_back(irecv_bytes(comm, in.data, in.size, 0, tag, comm->coll_ctx));
  reqs.push_back(isend_bytes(comm, out.data, out.size, 0, tag, comm->coll_ctx));
  if (int rc = wait_all(reqs)) return rc;
  finish_recv(in, rbuf, rcount, rtype);
  return MPI_SUCCESS;
}

int inter_allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                    MPI_Comm comm) {
  const char* fn = "MPI_Allreduce";
  if (int rc = check_count(comm, count, fn)) return rc;
  if (int rc = check_type(comm, type, fn)) return rc;
  if (sendbuf == MPI_IN_PLACE)
    return raise(comm, MPI_ERR_ARG, fn, "MPI_IN_PLACE is not allowed on an intercommunicator");
  InterComm& ic = *comm->inter;
  const int tag = next_tag(comm);
  // The local group's result at the leader, swapped for the remote group's, broadcast.
  TypedTemp mine(count, type);
  if (int rc = PMPI_Reduce(sendbuf, mine.at, count, type, op, 0, ic.local)) return rc;
  if (comm->rank == 0)
    if (int rc = leader_swap(comm, tag, mine.at, count, type, recvbuf, count, type))
      return raise(comm, rc, fn, "exchange between the groups failed");
  return PMPI_Bcast(recvbuf, count, type, 0, ic.local);
}

int inter_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  const char* fn = "MPI_Allgather";
  if (int rc = check_count(comm, sendcount, fn)) return rc;
  if (int rc = check_type(comm, sendtype, fn)) return rc;
  if (int rc = check_count(comm, recvcount, fn)) return rc;
  if (int rc = check_type(comm, recvtype, fn)) return rc;
  if (sendbuf == MPI_IN_PLACE)
    return raise(comm, MPI_ERR_ARG, fn, "MPI_IN_PLACE is not allowed on an intercommunicator");
  InterComm& ic = *comm->inter;
  const int tag = next_tag(comm);
  const int nlocal = inter_local_size(comm), nremote = comm->size;
  TypedTemp mine(nlocal * sendcount, sendtype);
  if (int rc = PMPI_Gather(sendbuf, sendcount, sendtype, mine.at, sendcount, sendtype, 0, ic.local))
    return rc;
  if (comm->rank == 0)
    if (int rc = leader_swap(comm, tag, mine.at, nlocal * sendcount, sendtype, recvbuf,
                             nremote * recvcount, recvtype))
      return raise(comm, rc, fn, "exchange between the groups failed");
  return PMPI_Bcast(recvbuf, nremote * recvcount, recvtype, 0, ic.local);
}

int inter_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  const char* fn = "MPI_Alltoall";
  if (int rc = check_count(comm, sendcount, fn)) return rc;
  if (int rc = check_type(comm, sendtype, fn)) return rc;
  if (int rc = check_count(comm, recvcount, fn)) return rc;
  if (int rc = check_type(comm, recvtype, fn)) return rc;
  if (sendbuf == MPI_IN_PLACE)
    return raise(comm, MPI_ERR_ARG, fn, "MPI_IN_PLACE is not allowed on an intercommunicator");
  const int tag = next_tag(comm);
  const int n = comm->size;  // remote group: block j goes to / comes from remote rank j
  std::vector<Staged> out(n), in(n);
  std::vector<detail::RequestImpl*> reqs;
  const MPI_Aint sblock = static_cast<MPI_Aint>(sendcount) * sendtype->extent();
  const MPI_Aint rblock = static_cast<MPI_Aint>(recvcount) * recvtype->extent();
  for (int j = 0; j < n; ++j) {
    stage_recv(in[j], static_cast<B*>(recvbuf) + j * rblock, recvcount, recvtype);
    reqs.push_back(irecv_bytes(comm, in[j].data, in[j].size, j, tag, comm->coll_ctx));
  }
  for (int j = 0; j < n; ++j) {
    stage_send(out[j], static_cast<const B*>(sendbuf) + j * sblock, sendcount, sendtype);
    reqs.push_back(isend_bytes(comm, out[j].data, out[j].size, j, tag, comm->coll_ctx));
  }
  if (int rc = wait_all(reqs)) return raise(comm, rc, fn, "a transfer failed");
  for (int j = 0; j < n; ++j)
    finish_recv(in[j], static_cast<B*>(recvbuf) + j * rblock, recvcount, recvtype);
  return MPI_SUCCESS;
}

// Point-to-point transfers between the groups, started together, waited for together.
class Transfers {
 public:
  Transfers(MPI_Comm comm, int tag) : comm_(comm), tag_(tag) {}
  void send(int peer, const void* buf, int count, MPI_Datatype type) {
    out_.emplace_back();
    stage_send(out_.back(), buf, count, type);
    reqs_.push_back(
        isend_bytes(comm_, out_.back().data, out_.back().size, peer, tag_, comm_->coll_ctx));
  }
  void recv(int peer, void* buf, int count, MPI_Datatype type) {
    in_.emplace_back();
    stage_recv(in_.back(), buf, count, type);
    unpack_.push_back({buf, count, type});
    reqs_.push_back(
        irecv_bytes(comm_, in_.back().data, in_.back().size, peer, tag_, comm_->coll_ctx));
  }
  int wait() {
    if (int rc = wait_all(reqs_)) return rc;
    for (std::size_t i = 0; i < in_.size(); ++i)
      finish_recv(in_[i], unpack_[i].buf, unpack_[i].count, unpack_[i].type);
    return MPI_SUCCESS;
  }

 private:
  struct Target {
    void* buf;
    int count;
    MPI_Datatype type;
  };
  MPI_Comm comm_;
  int tag_;
  std::deque<Staged> out_, in_;  // a deque keeps earlier elements where they are
  std::vector<Target> unpack_;
  std::vector<detail::RequestImpl*> reqs_;
};

// The root argument of a rooted collective: MPI_ROOT, MPI_PROC_NULL or a remote rank.
int check_inter_root(MPI_Comm comm, int root, const char* fn) {
  if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < comm->size))
    return MPI_SUCCESS;
  return raisef(comm, MPI_ERR_ROOT, fn,
                "invalid root %d (MPI_ROOT, MPI_PROC_NULL or a rank of the %d-rank remote group)",
                root, comm->size);
}

int inter_reduce(const InterArgs& a, MPI_Comm comm) {
  const char* fn = "MPI_Reduce";
  if (int rc = check_inter_root(comm, a.root, fn)) return rc;
  const int tag = next_tag(comm);
  if (a.root == MPI_PROC_NULL) return MPI_SUCCESS;
  Transfers t(comm, tag);
  if (a.root == MPI_ROOT) {  // the other group's result, from its leader
    t.recv(0, a.recvbuf, a.count, a.type);
  } else {
    TypedTemp mine(a.count, a.type);
    if (int rc = PMPI_Reduce(a.sendbuf, mine.at, a.count, a.type, a.op, 0, comm->inter->local))
      return rc;
    if (comm->rank != 0) return MPI_SUCCESS;
    t.send(a.root, mine.at, a.count, a.type);
    if (int rc = t.wait()) return raise(comm, rc, fn, "send to the root failed");
    return MPI_SUCCESS;
  }
  if (int rc = t.wait()) return raise(comm, rc, fn, "receive from the other group failed");
  return MPI_SUCCESS;
}

int inter_gather(const InterArgs& a, MPI_Comm comm) {
  const char* fn = "MPI_Gather";
  if (int rc = check_inter_root(comm, a.root, fn)) return rc;
  const int tag = next_tag(comm);
  if (a.root == MPI_PROC_NULL) return MPI_SUCCESS;
  Transfers t(comm, tag);
  if (a.root == MPI_ROOT) {
    t.recv(0, a.recvbuf, comm->size * a.recvcount, a.recvtype);
    if (int rc = t.wait()) return raise(comm, rc, fn, "receive from the other group failed");
    return MPI_SUCCESS;
  }
  const int nlocal = inter_local_size(comm);
  TypedTemp mine(nlocal * a.count, a.type);
  if (int rc =
          PMPI_Gather(a.sendbuf, a.count, a.type, mine.at, a.count, a.type, 0, comm->inter->local))
    return rc;
  if (comm->rank != 0) return MPI_SUCCESS;
  t.send(a.root, mine.at, nlocal * a.count, a.type);
  if (int rc = t.wait()) return raise(comm, rc, fn, "send to the root failed");
  return MPI_SUCCESS;
}

int inter_scatter(const InterArgs& a, MPI_Comm comm) {
  const char* fn = "MPI_Scatter";
  if (int rc = check_inter_root(comm, a.root, fn)) return rc;
  const int tag = next_tag(comm);
  if (a.root == MPI_PROC_NULL) return MPI_SUCCESS;
  Transfers t(comm, tag);
  if (a.root == MPI_ROOT) {
    t.send(0, a.sendbuf, comm->size * a.count, a.type);
    if (int rc = t.wait()) return raise(comm, rc, fn, "send to the other group failed");
    return MPI_SUCCESS;
  }
  const int nlocal = inter_local_size(comm);
  TypedTemp all(nlocal * a.recvcount, a.recvtype);
  if (comm->rank == 0) {
    t.recv(a.root, all.at, nlocal * a.recvcount, a.recvtype);
    if (int rc = t.wait()) return raise(comm, rc, fn, "receive from the root failed");
  }
  return PMPI_Scatter(all.at, a.recvcount, a.recvtype, a.recvbuf, a.recvcount, a.recvtype, 0,
                      comm->inter->local);
}

// Gatherv / Scatterv: the root talks to every process of the other group directly.
int inter_gatherv(const InterArgs& a, MPI_Comm comm, bool scatter) {
  const char* fn = scatter ? "MPI_Scatterv" : "MPI_Gatherv";
  if (int rc = check_inter_root(comm, a.root, fn)) return rc;
  Transfers t(comm, next_tag(comm));
  if (a.root == MPI_PROC_NULL) return MPI_SUCCESS;
  if (a.root == MPI_ROOT) {
    for (int j = 0; j < comm->size; ++j) {
      if (scatter) {
        t.send(j, static_cast<const B*>(a.sendbuf) + a.sdispls[j] * a.type->extent(),
               a.sendcounts[j], a.type);
      } else {
        t.recv(j, static_cast<B*>(a.recvbuf) + a.rdispls[j] * a.recvtype->extent(), a.recvcounts[j],
               a.recvtype);
      }
    }
  } else if (scatter) {
    t.recv(a.root, a.recvbuf, a.recvcount, a.recvtype);
  } else {
    t.send(a.root, a.sendbuf, a.count, a.type);
  }
  if (int rc = t.wait()) return raise(comm, rc, fn, "a transfer failed");
  return MPI_SUCCESS;
}

// Allgatherv, Alltoallv, Alltoallw: every process with every process of the other group.
int inter_direct(const InterArgs& a, MPI_Comm comm, InterCollective which) {
  const char* fn = which == InterCollective::allgatherv  ? "MPI_Allgatherv"
                   : which == InterCollective::alltoallv ? "MPI_Alltoallv"
                                                         : "MPI_Alltoallw";
  if (a.sendbuf == MPI_IN_PLACE)
    return raise(comm, MPI_ERR_ARG, fn, "MPI_IN_PLACE is not allowed on an intercommunicator");
  Transfers t(comm, next_tag(comm));
  for (int j = 0; j < comm->size; ++j) {
    switch (which) {
      case InterCollective::allgatherv:
        t.recv(j, static_cast<B*>(a.recvbuf) + a.rdispls[j] * a.recvtype->extent(), a.recvcounts[j],
               a.recvtype);
        break;
      case InterCollective::alltoallv:
        t.recv(j, static_cast<B*>(a.recvbuf) + a.rdispls[j] * a.recvtype->extent(), a.recvcounts[j],
               a.recvtype);
        break;
      default:
        t.recv(j, static_cast<B*>(a.recvbuf) + a.rdispls[j], a.recvcounts[j], a.recvtypes[j]);
        break;
    }
  }
  for (int j = 0; j < comm->size; ++j) {
    switch (which) {
      case InterCollective::allgatherv:
        t.send(j, a.sendbuf, a.count, a.type);
        break;
      case InterCollective::alltoallv:
        t.send(j, static_cast<const B*>(a.sendbuf) + a.sdispls[j] * a.type->extent(),
               a.sendcounts[j], a.type);
        break;
      default:
        t.send(j, static_cast<const B*>(a.sendbuf) + a.sdispls[j], a.sendcounts[j], a.sendtypes[j]);
        break;
    }
  }
  if (int rc = t.wait()) return raise(comm, rc, fn, "a transfer failed");
  return MPI_SUCCESS;
}

// MPI-4.0 §6.10.2: each group's vectors (the sum of its recvcounts elements, or n *
// recvcount for the block variant, n its own size; the count is the same in both groups)
// are reduced at the leader, swapped for the other group's result, which is scattered
// locally by recvcounts.
int inter_reduce_scatter(const InterArgs& a, MPI_Comm comm, bool block) {
  const char* fn = block ? "MPI_Reduce_scatter_block" : "MPI_Reduce_scatter";
  if (a.sendbuf == MPI_IN_PLACE)
    return raise(comm, MPI_ERR_ARG, fn, "MPI_IN_PLACE is not allowed on an intercommunicator");
  const int tag = next_tag(comm);
  const int n = inter_local_size(comm);
  std::vector<int> counts(n, a.recvcount), displs(n, 0);
  if (!block) counts.assign(a.recvcounts, a.recvcounts + n);
  int count = 0;
  for (int i = 0; i < n; ++i) {
    displs[i] = count;
    count += counts[i];
  }
  MPI_Comm local = comm->inter->local;
  TypedTemp mine(count, a.type), theirs(count, a.type);
  if (int rc = PMPI_Reduce(a.sendbuf, mine.at, count, a.type, a.op, 0, local)) return rc;
  if (comm->rank == 0)
    if (int rc = leader_swap(comm, tag, mine.at, count, a.type, theirs.at, count, a.type))
      return raise(comm, rc, fn, "exchange between the groups failed");
  return PMPI_Scatterv(theirs.at, counts.data(), displs.data(), a.type, a.recvbuf,
                       counts[comm->rank], a.type, 0, local);
}

}  // namespace

// Entry points for coll_api.cpp: the collectives it routes here for intercommunicators.
int inter_collective(MPI_Comm comm, InterCollective which, const InterArgs& a) {
  SLUICE_MPI_CALL;
  if (int rc = check_comm(comm, "an intercommunicator collective")) return rc;
  switch (which) {
    case InterCollective::barrier:
      return inter_barrier(comm);
    case InterCollective::bcast:
      return inter_bcast(a.recvbuf, a.count, a.type, a.root, comm);
    case InterCollective::allreduce:
      return inter_allreduce(a.sendbuf, a.recvbuf, a.count, a.type, a.op, comm);
    case InterCollective::allgather:
      return inter_allgather(a.sendbuf, a.count, a.type, a.recvbuf, a.recvcount, a.recvtype, comm);
    case InterCollective::alltoall:
      return inter_alltoall(a.sendbuf, a.count, a.type, a.recvbuf, a.recvcount, a.recvtype, comm);
    case InterCollective::reduce:
      return inter_reduce(a, comm);
    case InterCollective::gather:
      return inter_gather(a, comm);
    case InterCollective::scatter:
      return inter_scatter(a, comm);
    case InterCollective::gatherv:
      return inter_gatherv(a, comm, false);
    case InterCollective::scatterv:
      return inter_gatherv(a, comm, true);
    case InterCollective::allgatherv:
    case InterCollective::alltoallv:
    case InterCollective::alltoallw:
      return inter_direct(a, comm, which);
    case InterCollective::reduce_scatter_block:
      return inter_reduce_scatter(a, comm, true);
    case InterCollective::reduce_scatter:
      return inter_reduce_scatter(a, comm, false);
  }
  return MPI_ERR_INTERN;
}

}  // namespace sluice::mpi

using namespace sluice::mpi;

extern "C" {

int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                          int remote_leader, int tag, MPI_Comm* newintercomm) {
  SLUICE_MPI_CALL;
  const char* fn = "MPI_Intercomm_create";
  if (int rc = check_comm(local_comm, fn)) return rc;
  if (local_comm->inter) return reject_inter(local_comm, fn);
  if (local_leader < 0 || local_leader >= local_comm->size)
    return raisef(local_comm, MPI_ERR_RANK, fn, "invalid local_leader %d (%s has %d ranks)",
                  local_leader, comm_label(local_comm), local_comm->size);
  const bool leader = local_comm->rank == local_leader;
  if (leader) {
    if (int rc = check_comm(peer_comm, fn)) return rc;
    if (int rc = check_rank(peer_comm, remote_leader, false, fn)) return rc;
    if (remote_leader == MPI_PROC_NULL)
      return raise(peer_comm, MPI_ERR_RANK, fn, "remote_leader is MPI_PROC_NULL");
    if (int rc = check_tag(peer_comm, tag, false, fn)) return rc;
  }
  // The leaders swap over peer_comm with the user's tag (as the standard says).
  LeaderLink link = [peer_comm, remote_leader, tag](const int* mine, int nmine, int* theirs,
                                                    int ntheirs) {
    return PMPI_Sendrecv(mine, nmine, MPI_INT, remote_leader, tag, theirs, ntheirs, MPI_INT,
                         remote_leader, tag, peer_comm, MPI_STATUS_IGNORE);
  };
  // The other group's members (world ranks), its size first.
  const int nlocal = local_comm->size;
  int nremote = 0;
  if (int rc = exchange_ints(local_comm, local_leader, link, &nlocal, 1, &nremote, 1)) return rc;
  std::vector<int> remote(nremote);
  if (int rc = exchange_ints(local_comm, local_leader, link, local_comm->world.data(), nlocal,
                             remote.data(), nremote))
    return rc;
  for (int w : remote)
    if (local_comm->comm_rank_of(w) >= 0)
      return raisef(local_comm, MPI_ERR_COMM, fn,
                    "world rank %d is in both groups (the groups must be disjoint)", w);
  MPI_Comm hidden = nullptr;
  if (int rc = dup_hidden(local_comm, &hidden)) return raise(local_comm, rc, fn, "failed");
  uint32_t ctx = 0;
  if (int rc = agree_union_ctx(local_comm, local_leader, link, ctx)) {
    destroy_comm(hidden);
    return raise(local_comm, rc, fn, "context agreement failed");
  }
  *newintercomm = make_inter(remote, ctx, local_comm, hidden, local_comm);
  return MPI_SUCCESS;
}

int PMPI_Comm_remote_size(MPI_Comm comm, int* size) {
  SLUICE_MPI_CALL;
  if (int rc = check_inter(comm, "MPI_Comm_remote_size")) return rc;
  *size = comm->size;
  return MPI_SUCCESS;
}

int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group* group) {
  SLUICE_MPI_CALL;
  if (int rc = check_inter(comm, "MPI_Comm_remote_group")) return rc;
  auto* g = new sluice_group_s;
  g->world = comm->world;
  *group = g;
  return MPI_SUCCESS;
}

int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newintracomm) {
  SLUICE_MPI_CALL;
  const char* fn = "MPI_Intercomm_merge";
  if (int rc = check_inter(intercomm, fn)) return rc;
  InterComm& ic = *intercomm->inter;
  const int tag = kMgmtTagBase + static_cast<int>(intercomm->mgmt_seq++ % 1024u);
  const LeaderLink link = inter_link(intercomm, tag);
  // The group that passed high = false comes first; on a tie, the group holding the lower
  // world rank among the two groups' rank 0s.
  int mine = high ? 1 : 0, theirs = 0;
  if (int rc = exchange_ints(ic.local, 0, link, &mine, 1, &theirs, 1))
    return raise(intercomm, rc, fn, "exchange failed");
  const bool local_first = mine != theirs ? mine < theirs : ic.local_world[0] < intercomm->world[0];
  std::vector<int> world = local_first ? ic.local_world : intercomm->world;
  const std::vector<int>& second = local_first ? intercomm->world : ic.local_world;
  world.insert(world.end(), second.begin(), second.end());
  uint32_t ctx = 0;
  if (int rc = agree_union_ctx(ic.local, 0, link, ctx))
    return raise(intercomm, rc, fn, "context agreement failed");
  *newintracomm = make_user_comm(world, ctx, intercomm);
  return MPI_SUCCESS;
}

int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  SLUICE_MPI_CALL;
  const char* fn = "MPI_Comm_create_group";
  if (int rc = check_comm(comm, fn)) return rc;
  if (comm->inter) return reject_inter(comm, fn);
  if (!group) return raise(comm, MPI_ERR_GROUP, fn, "invalid group MPI_GROUP_NULL");
  if (int rc = check_tag(comm, tag, false, fn)) return rc;
  const int me = group->rank_of_self();
  if (me == MPI_UNDEFINED) {
    *newcomm = MPI_COMM_NULL;  // only the group's members call it; be lenient with others
    return MPI_SUCCESS;
  }
  std::vector<int> ranks;  // comm ranks of the members, in group order
  for (int w : group->world) {
    const int r = comm->comm_rank_of(w);
    if (r < 0)
      return raisef(comm, MPI_ERR_GROUP, fn, "group contains world rank %d, which is not in %s", w,
                    comm_label(comm));
    ranks.push_back(r);
  }
  // Only the members take part, so the agreement runs over point-to-point among them on
  // comm's collective context, tags from kCreateGroupTagBase (one per user tag): the
  // maximum of each round is gathered at group rank 0 and sent back.
  const int ctag = kCreateGroupTagBase + (tag & 0xffffff);
  auto group_max = [&](int& v) {
    std::vector<sluice::detail::RequestImpl*> reqs;
    const int n = static_cast<int>(ranks.size());
    if (me == 0) {
      std::vector<int> all(n, v);
      for (int i = 1; i < n; ++i)
        reqs.push_back(irecv_bytes(comm, &all[i], sizeof(int), ranks[i], ctag, comm->coll_ctx));
      if (int rc = wait_all(reqs)) return rc;
      v = *std::max_element(all.begin(), all.end());
      for (int i = 1; i < n; ++i)
        reqs.push_back(isend_bytes(comm, &v, sizeof(int), ranks[i], ctag, comm->coll_ctx));
      return wait_all(reqs);
    }
    const int out = v;
    reqs.push_back(isend_bytes(comm, &out, sizeof(int), ranks[0], ctag, comm->coll_ctx));
    reqs.push_back(irecv_bytes(comm, &v, sizeof(int), ranks[0], ctag, comm->coll_ctx));
    return wait_all(reqs);
  };
  uint32_t from = 0;
  for (;;) {
    int candidate = static_cast<int>(ctx_lowest_free(from));
    if (int rc = group_max(candidate)) return raise(comm, rc, fn, "exchange failed");
    const auto c = static_cast<uint32_t>(candidate);
    const bool held = ctx_try_hold(c);
    int conflict = held ? 0 : 1;
    if (int rc = group_max(conflict)) {
      if (held) ctx_drop_hold(c);
      return raise(comm, rc, fn, "exchange failed");
    }
    if (!conflict) {
      ctx_claim_held(c);
      *newcomm = make_user_comm(group->world, c, comm);
      return MPI_SUCCESS;
    }
    if (held) ctx_drop_hold(c);
    from = c + 2;
  }
}

}  // extern "C"

// The MPI_ names: weak, so a profiling library defining them comes first (MPI-3.1
// §14.2); it reaches these definitions as PMPI_.
#pragma weak MPI_Intercomm_create = PMPI_Intercomm_create
#pragma weak MPI_Comm_remote_size = PMPI_Comm_remote_size
#pragma weak MPI_Comm_remote_group = PMPI_Comm_remote_group
#pragma weak MPI_Intercomm_merge = PMPI_Intercomm_merge
#pragma weak MPI_Comm_create_group = PMPI_Comm_create_group
