// Intercommunicators (MPI-3.1 §6.6): Intercomm_create/merge, Comm_remote_size/group, the
// communicator constructors on intercommunicators (dup, idup, split, create: comm.cpp runs
// their context agreement over both groups and builds the result with make_intercomm),
// Comm_create_group, and every collective the standard defines on intercommunicators,
// blocking, nonblocking and persistent, with the standard's root semantics.
//
// An intercommunicator is a sluice_comm_s whose `world`/`size` describe the REMOTE group, so
// point-to-point (which addresses remote ranks) needs no code of its own, and whose `inter`
// holds the local group. Both groups use one context pair, agreed over the union of the
// groups. Intercomm_create: every member proposes its lowest free id, the maximum wins if no
// member holds it already, else they retry above it; the groups meet only through their
// leaders, over `peer_comm`. Later constructors use comm.cpp's agreement, whose rounds reach
// every member of both groups over the intercommunicator's collective context.
//
// Collectives: each is a short chain of stages (InterOp), every stage one schedule of
// src/coll: an intracommunicator algorithm over the local group (reduce or gather to the
// local leader, broadcast or scatter from it) or a listed exchange with the other group
// (coll::iexchange: the leaders swap, or the root talks to the other group's leader, or, for
// Alltoall and the v and w variants, every process to every process of the other group).
// The chain is an AsyncOp: the nonblocking collective's request; the blocking collective
// waits for it; a persistent collective starts the nonblocking one at each MPI_Start. Every
// stage runs on the intercommunicator's collective context. Each collective takes four tags
// there from a sequence number both groups advance in step (MPI orders the collectives of a
// communicator the same on every member): one for the exchange, one per local stage. So
// the stages of collectives in flight together never match each other's messages, whatever
// order they start in (local and remote messages also differ by their source).
#include <algorithm>
#include <cstring>
#include <functional>

#include "coll/coll.hpp"
#include "mpi/mpi_internal.hpp"
#include "mpi/op.hpp"

namespace sluice::mpi {

struct InterComm {
  std::vector<int> local_world;  // local rank -> world rank
  uint32_t seq = 0;              // collectives started (names their tags)
  coll::Group local;             // the local group on the collective context (local stages)
  coll::Group remote;            // the remote group (exchanges; its rank is not used)
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

// Waits for engine requests (Comm_create_group's agreement).
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

int check_inter(MPI_Comm comm, const char* function) {
  if (int rc = check_comm(comm, function)) return rc;
  if (!comm->inter)
    return raisef(comm, MPI_ERR_COMM, function, "%s is not an intercommunicator", comm_label(comm));
  return MPI_SUCCESS;
}

// ---- collectives ------------------------------------------------------------------------

// One intercommunicator collective: its stages, run one after the other, and what they
// read and write (staging buffers, retained datatypes and op).
class InterOp final : public AsyncOp {
 public:
  explicit InterOp(MPI_Comm comm) : ic_(comm->inter), seq_(comm->inter->seq++) {}
  InterOp(const InterOp&) = delete;
  InterOp& operator=(const InterOp&) = delete;
  ~InterOp() override {
    if (sched_) {
      coll::wait(sched_);  // its buffers are ours
      coll::release(sched_);
    }
    release_refs();
  }

  bool test() override {
    while (!finished_) {
      if (sched_) {
        if (!coll::poll(sched_)) return false;
        const Errc e = coll::error(sched_);
        coll::release(sched_);
        sched_ = nullptr;
        if (e != Errc::ok) {
          error_ = errc_to_class(e);
          finish();
          break;
        }
      }
      if (next_ == stages_.size()) {
        finish();
        break;
      }
      sched_ = stages_[next_++]();  // nullptr: nothing to do here
    }
    return true;
  }
  int error() const override { return error_; }
  // Stages start from test(), not from a progress hook.
  bool needs_background_progress() const override { return true; }

  // A stage over the local group: `start` starts one collective schedule on it.
  void local_stage(int k, std::function<coll::Schedule*(coll::Group&)> start) {
    stages_.push_back([this, k, start = std::move(start)]() -> coll::Schedule* {
      coll::Group& g = ic_->local;
      g.seq = tag(k);
      return start(g);
    });
  }
  // The exchange with the other group: the transfers listed by send() and recv() (remote
  // ranks), all at once. Nothing to do when none was listed.
  void send(int peer, const void* buf, std::size_t bytes) {
    sends_.push_back({peer, const_cast<void*>(buf), bytes});
  }
  void recv(int peer, void* buf, std::size_t bytes) { recvs_.push_back({peer, buf, bytes}); }
  void exchange_stage() {
    stages_.push_back([this]() -> coll::Schedule* {
      if (sends_.empty() && recvs_.empty()) return nullptr;
      coll::Group& g = ic_->remote;
      g.seq = tag(0);
      return coll::iexchange(g, sends_, recvs_);
    });
  }

  // Scratch bytes owned by the operation.
  B* temp(std::size_t bytes) {
    temps_.emplace_back(new B[bytes == 0 ? 1 : bytes]);
    return temps_.back().get();
  }
  // `count` elements of `type` at `buf` as contiguous bytes: the buffer itself for a
  // contiguous type, else a staging buffer, packed now when `in`, unpacked at completion
  // when `out`.
  B* view(const void* buf, std::size_t count, MPI_Datatype type, bool in, bool out) {
    if (type->contiguous) return static_cast<B*>(const_cast<void*>(buf)) + type->true_lb;
    B* s = temp(count * type->size);
    if (in) dt_pack(type, buf, count, s);
    if (out && count > 0) {
      retain(type);
      unpacks_.push_back({type, s, const_cast<void*>(buf), count});
    }
    return s;
  }
  // The reducer for `op` over `type`; valid as long as this object.
  coll::Reducer reducer(MPI_Op op, MPI_Datatype type) {
    if (!op->predefined) {
      op_retain(op);
      op_ = op;
    }
    retain(type);
    red_.op = op;
    red_.type = type;
    PackedReduceFn direct = op_direct_kernel(op, type);
    return coll::Reducer{direct ? direct : packed_reduce_fn, &red_, type->size, op->commutative};
  }
  // Byte counts and displacements a local scatterv reads while it runs.
  std::vector<std::size_t> counts, displs;

 private:
  struct Unpack {
    MPI_Datatype type;
    const B* from;
    void* to;
    std::size_t count;
  };
  int tag(int k) const {
    return static_cast<int>((seq_ * 4u + static_cast<uint32_t>(k)) % coll::kTagLimit);
  }
  void retain(MPI_Datatype t) {
    if (t->predefined) return;
    dt_retain(t);
    types_.push_back(t);
  }
  void release_refs() {
    for (MPI_Datatype t : types_) dt_release(t);
    types_.clear();
    if (op_) op_release(op_);
    op_ = nullptr;
  }
  void finish() {
    if (error_ == MPI_SUCCESS)
      for (const Unpack& u : unpacks_)
        dt_unpack(u.type, u.from, u.count * u.type->size, u.to, u.count);
    stages_.clear();
    release_refs();
    finished_ = true;
  }

  std::shared_ptr<InterComm> ic_;  // outlives a communicator freed while this runs
  uint32_t seq_;
  std::vector<std::function<coll::Schedule*()>> stages_;
  std::size_t next_ = 0;
  coll::Schedule* sched_ = nullptr;  // the stage running
  std::vector<coll::Transfer> sends_, recvs_;
  std::vector<std::unique_ptr<B[]>> temps_;
  std::vector<Unpack> unpacks_;
  std::vector<MPI_Datatype> types_;
  MPI_Op op_ = nullptr;  // retained user op
  PackedReducer red_;
  int error_ = MPI_SUCCESS;
  bool finished_ = false;
};

const char* collective_name(InterCollective which, bool nonblocking) {
  switch (which) {
    case InterCollective::barrier:
      return nonblocking ? "MPI_Ibarrier" : "MPI_Barrier";
    case InterCollective::bcast:
      return nonblocking ? "MPI_Ibcast" : "MPI_Bcast";
    case InterCollective::allreduce:
      return nonblocking ? "MPI_Iallreduce" : "MPI_Allreduce";
    case InterCollective::allgather:
      return nonblocking ? "MPI_Iallgather" : "MPI_Allgather";
    case InterCollective::alltoall:
      return nonblocking ? "MPI_Ialltoall" : "MPI_Alltoall";
    case InterCollective::reduce:
      return nonblocking ? "MPI_Ireduce" : "MPI_Reduce";
    case InterCollective::gather:
      return nonblocking ? "MPI_Igather" : "MPI_Gather";
    case InterCollective::gatherv:
      return nonblocking ? "MPI_Igatherv" : "MPI_Gatherv";
    case InterCollective::scatter:
      return nonblocking ? "MPI_Iscatter" : "MPI_Scatter";
    case InterCollective::scatterv:
      return nonblocking ? "MPI_Iscatterv" : "MPI_Scatterv";
    case InterCollective::allgatherv:
      return nonblocking ? "MPI_Iallgatherv" : "MPI_Allgatherv";
    case InterCollective::alltoallv:
      return nonblocking ? "MPI_Ialltoallv" : "MPI_Alltoallv";
    case InterCollective::alltoallw:
      return nonblocking ? "MPI_Ialltoallw" : "MPI_Alltoallw";
    case InterCollective::reduce_scatter_block:
      return nonblocking ? "MPI_Ireduce_scatter_block" : "MPI_Reduce_scatter_block";
    case InterCollective::reduce_scatter:
      return nonblocking ? "MPI_Ireduce_scatter" : "MPI_Reduce_scatter";
  }
  return "an intercommunicator collective";
}

// The root argument of a rooted collective: MPI_ROOT, MPI_PROC_NULL or a remote rank.
int check_inter_root(MPI_Comm comm, int root, const char* fn) {
  if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < comm->size))
    return MPI_SUCCESS;
  return raisef(comm, MPI_ERR_ROOT, fn,
                "invalid root %d (MPI_ROOT, MPI_PROC_NULL or a rank of the %d-rank remote group)",
                root, comm->size);
}

int check_side(MPI_Comm comm, int count, MPI_Datatype type, const char* fn) {
  if (int rc = check_count(comm, count, fn)) return rc;
  return check_type(comm, type, fn);
}

int check_op(MPI_Comm comm, MPI_Op op, MPI_Datatype type, const char* fn) {
  if (!op) return raise(comm, MPI_ERR_OP, fn, "invalid operation MPI_OP_NULL");
  if (op_check(op, type) != MPI_SUCCESS)
    return raise(comm, MPI_ERR_OP, fn, "operation not defined for this datatype");
  return MPI_SUCCESS;
}

int check_vector(MPI_Comm comm, int n, const int counts[], const int displs[], const char* fn) {
  if (!counts || (n > 0 && !displs))
    return raise(comm, MPI_ERR_ARG, fn, "null counts or displacements array");
  for (int i = 0; i < n; ++i)
    if (counts[i] < 0)
      return raisef(comm, MPI_ERR_COUNT, fn, "invalid count %d for rank %d", counts[i], i);
  return MPI_SUCCESS;
}

std::size_t bytes_of(int count, MPI_Datatype type) {
  return static_cast<std::size_t>(count) * type->size;
}
const B* at(const void* buf, int displ, MPI_Aint unit) {
  return static_cast<const B*>(buf) + static_cast<MPI_Aint>(displ) * unit;
}

// Builds the stages of one collective (after checking its arguments).
int setup(InterOp& op, MPI_Comm comm, InterCollective which, const InterArgs& a, const char* fn) {
  using IC = InterCollective;
  const int me = comm->rank, nlocal = inter_local_size(comm), nremote = comm->size;
  const bool leader = me == 0;
  if (which != IC::barrier && which != IC::bcast &&
      (a.sendbuf == MPI_IN_PLACE || a.recvbuf == MPI_IN_PLACE))
    return raise(comm, MPI_ERR_ARG, fn, "MPI_IN_PLACE is not allowed on an intercommunicator");
  switch (which) {
    case IC::barrier: {
      op.local_stage(1, [](coll::Group& g) { return coll::ibarrier(g); });
      if (leader) {
        op.send(0, nullptr, 0);
        op.recv(0, nullptr, 0);
      }
      op.exchange_stage();
      op.local_stage(2, [](coll::Group& g) { return coll::ibarrier(g); });
      return MPI_SUCCESS;
    }
    case IC::bcast: {  // the root's buffer to the other group's leader, broadcast there
      if (int rc = check_inter_root(comm, a.root, fn)) return rc;
      if (a.root == MPI_PROC_NULL) return MPI_SUCCESS;
      if (int rc = check_side(comm, a.count, a.type, fn)) return rc;
      const std::size_t bytes = bytes_of(a.count, a.type);
      if (a.root == MPI_ROOT) {
        op.send(0, op.view(a.recvbuf, a.count, a.type, true, false), bytes);
        op.exchange_stage();
        return MPI_SUCCESS;
      }
      B* buf = op.view(a.recvbuf, a.count, a.type, false, true);
      if (leader) op.recv(a.root, buf, bytes);
      op.exchange_stage();
      op.local_stage(1, [buf, bytes](coll::Group& g) { return coll::ibcast(g, buf, bytes, 0); });
      return MPI_SUCCESS;
    }
    case IC::reduce:
    case IC::allreduce: {  // reduced at the local leader, sent to the root / swapped
      const bool all = which == IC::allreduce;
      if (!all) {
        if (int rc = check_inter_root(comm, a.root, fn)) return rc;
        if (a.root == MPI_PROC_NULL) return MPI_SUCCESS;
      }
      if (int rc = check_side(comm, a.count, a.type, fn)) return rc;
      if (int rc = check_op(comm, a.op, a.type, fn)) return rc;
      const std::size_t bytes = bytes_of(a.count, a.type);
      if (!all && a.root == MPI_ROOT) {
        op.recv(0, op.view(a.recvbuf, a.count, a.type, false, true), bytes);
        op.exchange_stage();
        return MPI_SUCCESS;
      }
      const coll::Reducer red = op.reducer(a.op, a.type);
      const B* mine = op.view(a.sendbuf, a.count, a.type, true, false);
      B* sum = leader ? op.temp(bytes) : nullptr;
      const std::size_t count = static_cast<std::size_t>(a.count);
      op.local_stage(1, [mine, sum, count, red](coll::Group& g) {
        return coll::ireduce(g, mine, sum, count, red, 0);
      });
      B* result = all ? op.view(a.recvbuf, a.count, a.type, false, true) : nullptr;
      if (leader) op.send(all ? 0 : a.root, sum, bytes);
      if (leader && all) op.recv(0, result, bytes);
      op.exchange_stage();
      if (all)
        op.local_stage(
            2, [result, bytes](coll::Group& g) { return coll::ibcast(g, result, bytes, 0); });
      return MPI_SUCCESS;
    }
    case IC::gather:
    case IC::allgather: {  // gathered at the local leader, sent to the root / swapped
      const bool all = which == IC::allgather;
      if (!all) {
        if (int rc = check_inter_root(comm, a.root, fn)) return rc;
        if (a.root == MPI_PROC_NULL) return MPI_SUCCESS;
      }
      if (all || a.root == MPI_ROOT)
        if (int rc = check_side(comm, a.recvcount, a.recvtype, fn)) return rc;
      const std::size_t theirs = bytes_of(nremote * a.recvcount, a.recvtype);
      if (!all && a.root == MPI_ROOT) {
        op.recv(0, op.view(a.recvbuf, nremote * a.recvcount, a.recvtype, false, true), theirs);
        op.exchange_stage();
        return MPI_SUCCESS;
      }
      if (int rc = check_side(comm, a.count, a.type, fn)) return rc;
      const std::size_t block = bytes_of(a.count, a.type);
      const B* mine = op.view(a.sendbuf, a.count, a.type, true, false);
      B* ours = leader ? op.temp(nlocal * block) : nullptr;
      op.local_stage(1, [mine, ours, block](coll::Group& g) {
        return coll::igather(g, mine, ours, block, 0);
      });
      B* result =
          all ? op.view(a.recvbuf, nremote * a.recvcount, a.recvtype, false, true) : nullptr;
      if (leader) op.send(all ? 0 : a.root, ours, nlocal * block);
      if (leader && all) op.recv(0, result, theirs);
      op.exchange_stage();
      if (all)
        op.local_stage(
            2, [result, theirs](coll::Group& g) { return coll::ibcast(g, result, theirs, 0); });
      return MPI_SUCCESS;
    }
    case IC::scatter: {  // the root's blocks to the other group's leader, scattered there
      if (int rc = check_inter_root(comm, a.root, fn)) return rc;
      if (a.root == MPI_PROC_NULL) return MPI_SUCCESS;
      if (a.root == MPI_ROOT) {
        if (int rc = check_side(comm, a.count, a.type, fn)) return rc;
        op.send(0, op.view(a.sendbuf, nremote * a.count, a.type, true, false),
                bytes_of(nremote * a.count, a.type));
        op.exchange_stage();
        return MPI_SUCCESS;
      }
      if (int rc = check_side(comm, a.recvcount, a.recvtype, fn)) return rc;
      const std::size_t block = bytes_of(a.recvcount, a.recvtype);
      B* all = leader ? op.temp(nlocal * block) : nullptr;
      B* mine = op.view(a.recvbuf, a.recvcount, a.recvtype, false, true);
      if (leader) op.recv(a.root, all, nlocal * block);
      op.exchange_stage();
      op.local_stage(
          1, [all, mine, block](coll::Group& g) { return coll::iscatter(g, all, mine, block, 0); });
      return MPI_SUCCESS;
    }
    case IC::gatherv:
    case IC::scatterv: {  // the root with every process of the other group
      const bool scatter = which == IC::scatterv;
      if (int rc = check_inter_root(comm, a.root, fn)) return rc;
      if (a.root == MPI_PROC_NULL) return MPI_SUCCESS;
      if (a.root == MPI_ROOT) {
        if (scatter) {
          if (int rc = check_type(comm, a.type, fn)) return rc;
          if (int rc = check_vector(comm, nremote, a.sendcounts, a.sdispls, fn)) return rc;
          for (int j = 0; j < nremote; ++j)
            op.send(j,
                    op.view(at(a.sendbuf, a.sdispls[j], a.type->extent()), a.sendcounts[j], a.type,
                            true, false),
                    bytes_of(a.sendcounts[j], a.type));
        } else {
          if (int rc = check_type(comm, a.recvtype, fn)) return rc;
          if (int rc = check_vector(comm, nremote, a.recvcounts, a.rdispls, fn)) return rc;
          for (int j = 0; j < nremote; ++j)
            op.recv(j,
                    op.view(at(a.recvbuf, a.rdispls[j], a.recvtype->extent()), a.recvcounts[j],
                            a.recvtype, false, true),
                    bytes_of(a.recvcounts[j], a.recvtype));
        }
      } else if (scatter) {
        if (int rc = check_side(comm, a.recvcount, a.recvtype, fn)) return rc;
        op.recv(a.root, op.view(a.recvbuf, a.recvcount, a.recvtype, false, true),
                bytes_of(a.recvcount, a.recvtype));
      } else {
        if (int rc = check_side(comm, a.count, a.type, fn)) return rc;
        op.send(a.root, op.view(a.sendbuf, a.count, a.type, true, false),
                bytes_of(a.count, a.type));
      }
      op.exchange_stage();
      return MPI_SUCCESS;
    }
    case IC::allgatherv:
    case IC::alltoall:
    case IC::alltoallv:
    case IC::alltoallw: {  // every process with every process of the other group
      if (which == IC::allgatherv || which == IC::alltoall) {
        if (int rc = check_side(comm, a.count, a.type, fn)) return rc;
        if (which == IC::alltoall)
          if (int rc = check_side(comm, a.recvcount, a.recvtype, fn)) return rc;
      }
      if (which == IC::allgatherv || which == IC::alltoallv) {
        if (int rc = check_type(comm, a.recvtype, fn)) return rc;
        if (int rc = check_vector(comm, nremote, a.recvcounts, a.rdispls, fn)) return rc;
      }
      if (which == IC::alltoallv) {
        if (int rc = check_type(comm, a.type, fn)) return rc;
        if (int rc = check_vector(comm, nremote, a.sendcounts, a.sdispls, fn)) return rc;
      }
      if (which == IC::alltoallw) {
        if (int rc = check_vector(comm, nremote, a.sendcounts, a.sdispls, fn)) return rc;
        if (int rc = check_vector(comm, nremote, a.recvcounts, a.rdispls, fn)) return rc;
        if (!a.sendtypes || !a.recvtypes)
          return raise(comm, MPI_ERR_TYPE, fn, "null datatype array");
        for (int j = 0; j < nremote; ++j) {
          if (int rc = check_type(comm, a.sendtypes[j], fn)) return rc;
          if (int rc = check_type(comm, a.recvtypes[j], fn)) return rc;
        }
      }
      const B* mine =
          which == IC::allgatherv ? op.view(a.sendbuf, a.count, a.type, true, false) : nullptr;
      for (int j = 0; j < nremote; ++j) {
        switch (which) {
          case IC::allgatherv:
            op.recv(j,
                    op.view(at(a.recvbuf, a.rdispls[j], a.recvtype->extent()), a.recvcounts[j],
                            a.recvtype, false, true),
                    bytes_of(a.recvcounts[j], a.recvtype));
            op.send(j, mine, bytes_of(a.count, a.type));
            break;
          case IC::alltoall:
            op.recv(j,
                    op.view(at(a.recvbuf, j * a.recvcount, a.recvtype->extent()), a.recvcount,
                            a.recvtype, false, true),
                    bytes_of(a.recvcount, a.recvtype));
            op.send(
                j,
                op.view(at(a.sendbuf, j * a.count, a.type->extent()), a.count, a.type, true, false),
                bytes_of(a.count, a.type));
            break;
          case IC::alltoallv:
            op.recv(j,
                    op.view(at(a.recvbuf, a.rdispls[j], a.recvtype->extent()), a.recvcounts[j],
                            a.recvtype, false, true),
                    bytes_of(a.recvcounts[j], a.recvtype));
            op.send(j,
                    op.view(at(a.sendbuf, a.sdispls[j], a.type->extent()), a.sendcounts[j], a.type,
                            true, false),
                    bytes_of(a.sendcounts[j], a.type));
            break;
          default:  // alltoallw: byte displacements, a datatype per peer
            op.recv(j,
                    op.view(at(a.recvbuf, a.rdispls[j], 1), a.recvcounts[j], a.recvtypes[j], false,
                            true),
                    bytes_of(a.recvcounts[j], a.recvtypes[j]));
            op.send(j,
                    op.view(at(a.sendbuf, a.sdispls[j], 1), a.sendcounts[j], a.sendtypes[j], true,
                            false),
                    bytes_of(a.sendcounts[j], a.sendtypes[j]));
            break;
        }
      }
      op.exchange_stage();
      return MPI_SUCCESS;
    }
    case IC::reduce_scatter:
    case IC::reduce_scatter_block: {
      // MPI-4.0 §6.10.2: each group's vectors (the sum of its recvcounts elements, or n *
      // recvcount for the block variant, n its own size; the total is the same in both
      // groups) are reduced at the leader, swapped for the other group's result, which is
      // scattered locally by recvcounts.
      const bool block = which == IC::reduce_scatter_block;
      if (int rc = check_type(comm, a.type, fn)) return rc;
      if (int rc = check_op(comm, a.op, a.type, fn)) return rc;
      if (block) {
        if (int rc = check_count(comm, a.recvcount, fn)) return rc;
      } else {
        if (!a.recvcounts) return raise(comm, MPI_ERR_COUNT, fn, "null recvcounts array");
        for (int i = 0; i < nlocal; ++i)
          if (a.recvcounts[i] < 0)
            return raisef(comm, MPI_ERR_COUNT, fn, "invalid count %d for rank %d", a.recvcounts[i],
                          i);
      }
      const std::size_t esize = a.type->size;
      op.counts.resize(nlocal);
      op.displs.resize(nlocal);
      std::size_t total = 0;
      for (int i = 0; i < nlocal; ++i) {
        const std::size_t n = static_cast<std::size_t>(block ? a.recvcount : a.recvcounts[i]);
        op.counts[i] = n * esize;
        op.displs[i] = total * esize;
        total += n;
      }
      const int mycount = block ? a.recvcount : a.recvcounts[me];
      const coll::Reducer red = op.reducer(a.op, a.type);
      const B* mine = op.view(a.sendbuf, total, a.type, true, false);
      B* sum = leader ? op.temp(total * esize) : nullptr;
      B* theirs = leader ? op.temp(total * esize) : nullptr;
      B* result = op.view(a.recvbuf, mycount, a.type, false, true);
      op.local_stage(1, [mine, sum, total, red](coll::Group& g) {
        return coll::ireduce(g, mine, sum, total, red, 0);
      });
      if (leader) {
        op.send(0, sum, total * esize);
        op.recv(0, theirs, total * esize);
      }
      op.exchange_stage();
      const std::size_t mybytes = static_cast<std::size_t>(mycount) * esize;
      op.local_stage(2, [&op, theirs, result, mybytes](coll::Group& g) {
        return coll::iscatterv(g, theirs, op.counts, op.displs, result, mybytes, 0);
      });
      return MPI_SUCCESS;
    }
  }
  return MPI_ERR_INTERN;
}

int run_collective(MPI_Comm comm, InterCollective which, const InterArgs& a, bool nonblocking,
                   MPI_Request* request) {
  const char* fn = collective_name(which, nonblocking);
  if (int rc = check_comm(comm, fn)) return rc;
  if (!comm->inter) return raisef(comm, MPI_ERR_COMM, fn, "not an intercommunicator");
  if (nonblocking && !request) return raise(comm, MPI_ERR_ARG, fn, "request is NULL");
  // Constructed first: every member takes the collective's tags, even one with nothing to do.
  auto op = std::make_unique<InterOp>(comm);
  if (int rc = setup(*op, comm, which, a, fn)) return rc;
  op->test();  // starts the first stage
  if (nonblocking) {
    *request = make_async_request(comm, std::move(op));
    return MPI_SUCCESS;
  }
  InterOp* o = op.get();
  block_until([o] { return o->test(); });
  if (o->error() != MPI_SUCCESS) {
    const char* what = error_string(o->error());
    return raisef(comm, o->error(), fn, "collective failed: %s", what ? what : "error");
  }
  return MPI_SUCCESS;
}

}  // namespace

int inter_local_size(MPI_Comm inter) {
  return static_cast<int>(inter->inter->local_world.size());
}

const std::vector<int>& inter_local_world(MPI_Comm inter) {
  return inter->inter->local_world;
}

MPI_Comm make_intercomm(const std::vector<int>& local_world, int local_rank,
                        const std::vector<int>& remote_world, uint32_t ctx, MPI_Comm errh_from) {
  MPI_Comm c = make_user_comm(remote_world, ctx, errh_from);
  auto ic = std::make_shared<InterComm>();
  ic->local_world = local_world;
  ic->local.rank = local_rank;
  ic->local.size = static_cast<int>(local_world.size());
  ic->local.world = local_world;
  ic->local.ctx = c->coll_ctx;
  ic->remote.rank = 0;
  ic->remote.size = static_cast<int>(remote_world.size());
  ic->remote.world = remote_world;
  ic->remote.ctx = c->coll_ctx;
  c->rank = local_rank;
  c->inter = std::move(ic);
  return c;
}

int inter_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  uint32_t ctx = 0;
  if (int rc = agree_context(comm, {}, &ctx, nullptr))
    return raise(comm, rc, "MPI_Comm_dup", "context agreement failed");
  MPI_Comm c = make_intercomm(comm->inter->local_world, comm->rank, comm->world, ctx, comm);
  if (int rc = copy_attrs(comm, c)) {
    delete_attrs(c);
    destroy_comm(c);
    *newcomm = MPI_COMM_NULL;
    return raise(comm, rc, "MPI_Comm_dup", "attribute copy callback failed");
  }
  *newcomm = c;
  return MPI_SUCCESS;
}

int inter_collective(MPI_Comm comm, InterCollective which, const InterArgs& a) {
  SLUICE_MPI_CALL;
  return run_collective(comm, which, a, false, nullptr);
}

int inter_icollective(MPI_Comm comm, InterCollective which, const InterArgs& a,
                      MPI_Request* request) {
  SLUICE_MPI_CALL;
  return run_collective(comm, which, a, true, request);
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
  uint32_t ctx = 0;
  if (int rc = agree_union_ctx(local_comm, local_leader, link, ctx))
    return raise(local_comm, rc, fn, "context agreement failed");
  *newintercomm = make_intercomm(local_comm->world, local_comm->rank, remote, ctx, local_comm);
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
  // The group that passed high = false comes first; on a tie, the group holding the lower
  // world rank among the two groups' rank 0s. Every member's `high` travels with the
  // context agreement (local group first); the leaders' count.
  std::vector<int> highs;
  uint32_t ctx = 0;
  if (int rc = agree_context(intercomm, {high ? 1 : 0}, &ctx, &highs))
    return raise(intercomm, rc, fn, "context agreement failed");
  const int mine = highs[0], theirs = highs[ic.local_world.size()];
  const bool local_first = mine != theirs ? mine < theirs : ic.local_world[0] < intercomm->world[0];
  std::vector<int> world = local_first ? ic.local_world : intercomm->world;
  const std::vector<int>& second = local_first ? intercomm->world : ic.local_world;
  world.insert(world.end(), second.begin(), second.end());
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
