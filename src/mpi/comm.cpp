// Communicators and groups.
//
// A communicator is a group plus a pair of engine context ids (p2p_ctx = even id,
// coll_ctx = p2p_ctx + 1). New ids are agreed over the parent communicator in rounds
// (CtxAgreement): members propose their lowest free id, take the maximum, and confirm in
// a second round that no member already uses or tentatively holds it for another
// agreement in flight (e.g. two Comm_idup pending at once on overlapping communicators);
// on a conflict they retry with higher ids. An id is never reused within a process (the
// collectives key per-communicator state by it).
#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

#include "mpi/big_lock.hpp"
#include "mpi/mpi_internal.hpp"

sluice_comm_s sluice_comm_world;
sluice_comm_s sluice_comm_self;
sluice_group_s sluice_group_empty{{}, true};

namespace sluice::mpi {
namespace {

uint32_t g_next_ctx = 4;          // 0/1: world, 2/3: self; ids below are taken
std::set<uint32_t> g_claimed;     // ids of communicators this process created
std::multiset<uint32_t> g_held;   // ids held tentatively by agreements in flight
std::set<MPI_Comm> g_user_comms;  // freed at finalize if the user did not

void fill_comm(MPI_Comm c, const std::vector<int>& world_ranks, uint32_t ctx) {
  c->world = world_ranks;
  c->size = static_cast<int>(world_ranks.size());
  c->world_to_comm.assign(engine().size(), -1);
  c->rank = MPI_UNDEFINED;
  for (int i = 0; i < c->size; ++i) {
    c->world_to_comm[world_ranks[i]] = i;
    if (world_ranks[i] == engine().rank()) c->rank = i;
  }
  c->p2p_ctx = ctx;
  c->coll_ctx = ctx + 1;
  c->coll_group = nullptr;
  c->magic = kCommMagic;
  // Which failures its any-source receives see (the world's context has every rank).
  if (c != MPI_COMM_WORLD) {
    engine().set_context_members(ctx, world_ranks);
    engine().set_context_members(ctx + 1, world_ranks);
  }
}

// The members of `comm` in agreement order: its ranks, or for an intercommunicator the
// local group's followed by the remote group's (world ranks).
std::vector<int> members_of(MPI_Comm comm) {
  if (!comm->inter) return comm->world;
  std::vector<int> all = inter_local_world(comm);
  all.insert(all.end(), comm->world.begin(), comm->world.end());
  return all;
}

// Exchanges `n` ints per member over `comm` (every member sends its block to every other,
// both groups of an intercommunicator, on coll_ctx with a management tag); complete when
// all blocks arrived.
class AllgatherInts final : public AsyncOp {
 public:
  AllgatherInts(MPI_Comm comm, std::vector<int> mine, int tag)
      : members_(members_of(comm)), n_(mine.size()) {
    const int p = size(), me = comm->rank;  // local rank: first in the order above
    all_.assign(n_ * p, 0);
    std::copy(mine.begin(), mine.end(), all_.begin() + n_ * me);
    Errc err;
    for (int r = 0; r < p; ++r) {
      if (r == me) continue;
      reqs_.push_back(
          engine().irecv({reinterpret_cast<std::byte*>(&all_[n_ * r]), n_ * sizeof(int)},
                         members_[r], tag, comm->coll_ctx, err));
    }
    send_copy_ = mine;
    for (int r = 0; r < p; ++r) {
      if (r == me) continue;
      reqs_.push_back(
          engine().isend({reinterpret_cast<const std::byte*>(send_copy_.data()), n_ * sizeof(int)},
                         members_[r], tag, comm->coll_ctx, false, err));
    }
  }
  ~AllgatherInts() override {
    for (auto* r : reqs_)
      if (r) engine().release(r);
  }
  bool test() override {
    bool all = true;
    for (auto*& r : reqs_) {
      if (!r) continue;
      if (r->state != detail::RequestState::complete) {
        all = false;
        continue;
      }
      Status st;
      engine().test(r, &st);
      if (st.error != Errc::ok && error_ == MPI_SUCCESS) error_ = errc_to_class(st.error);
      r = nullptr;
    }
    return all;
  }
  int error() const override { return error_; }
  int size() const { return static_cast<int>(members_.size()); }
  const int* block(int r) const { return &all_[n_ * r]; }

 private:
  std::vector<int> members_;
  std::size_t n_;
  std::vector<int> all_;
  std::vector<int> send_copy_;
  std::vector<detail::RequestImpl*> reqs_;
  int error_ = MPI_SUCCESS;
};

bool ctx_taken(uint32_t v) {
  return v < 4 || g_claimed.count(v) || g_held.count(v);
}

uint32_t free_ctx_from(uint32_t v) {
  v = std::max(v, g_next_ctx);
  v += v & 1u;
  while (ctx_taken(v)) v += 2;
  return v;
}

// Context-id agreement over `comm`; `extra` ints (split's color and key) travel with the
// first round and are readable through first(r) afterwards.
class CtxAgreement final : public AsyncOp {
 public:
  CtxAgreement(MPI_Comm comm, std::vector<int> extra)
      : comm_(comm), extra_(std::move(extra)), index_(comm->mgmt_seq++) {
    start_round(false, free_ctx_from(g_next_ctx));
  }
  ~CtxAgreement() override { drop_hold(); }
  CtxAgreement(const CtxAgreement&) = delete;
  CtxAgreement& operator=(const CtxAgreement&) = delete;

  bool test() override {
    while (!done_) {
      if (!round_->test()) return false;
      if (round_->error() != MPI_SUCCESS) {
        error_ = round_->error();
        drop_hold();
        done_ = true;
        break;
      }
      const std::size_t n = extra_.size();
      bool conflict_anywhere = false;
      uint32_t highest = 0;
      for (int r = 0; r < round_->size(); ++r) {
        conflict_anywhere |= round_->block(r)[n] != 0;
        highest = std::max(highest, static_cast<uint32_t>(round_->block(r)[n + 1]));
      }
      if (!first_) first_ = std::move(round_);
      if (rounds_ > 1 && !conflict_anywhere) {
        // Everyone accepted the candidate: it is ours on every member.
        drop_hold();
        g_claimed.insert(candidate_);
        g_next_ctx = std::max(g_next_ctx, candidate_ + 2);
        done_ = true;
        break;
      }
      drop_hold();
      candidate_ = highest;
      const bool conflict = ctx_taken(candidate_);
      if (!conflict) {
        g_held.insert(candidate_);
        holding_ = true;
      }
      start_round(conflict, conflict ? free_ctx_from(candidate_ + 2) : candidate_);
    }
    return true;
  }
  int error() const override { return error_; }
  uint32_t ctx() const { return candidate_; }
  const int* first(int r) const { return first_->block(r); }
  int members() const { return first_->size(); }

 private:
  void start_round(bool conflict, uint32_t proposal) {
    std::vector<int> mine = extra_;
    mine.push_back(conflict ? 1 : 0);
    mine.push_back(static_cast<int>(proposal));
    // Tags: one block of 64 per agreement on this communicator (the same on every member,
    // since members create communicators on it in the same order), one tag per round.
    const int tag = kMgmtTagBase + static_cast<int>((index_ % 1024u) * 64u + std::min(rounds_, 63));
    if (round_ && !first_) first_ = std::move(round_);
    round_ = std::make_unique<AllgatherInts>(comm_, std::move(mine), tag);
    ++rounds_;
  }
  void drop_hold() {
    if (!holding_) return;
    g_held.erase(g_held.find(candidate_));
    holding_ = false;
  }

  MPI_Comm comm_;
  std::vector<int> extra_;
  uint32_t index_;
  int rounds_ = 0;
  std::unique_ptr<AllgatherInts> round_;
  std::unique_ptr<AllgatherInts> first_;  // round 0 (carries `extra`)
  uint32_t candidate_ = 0;
  bool holding_ = false;
  bool done_ = false;
  int error_ = MPI_SUCCESS;
};

// Blocking agreement; returns MPI_SUCCESS or an error class.
int agree(MPI_Comm comm, std::vector<int> extra, std::unique_ptr<CtxAgreement>& out) {
  out = std::make_unique<CtxAgreement>(comm, std::move(extra));
  CtxAgreement* op = out.get();
  block_until([op] { return op->test(); });
  return op->error();
}

MPI_Comm new_comm(const std::vector<int>& world_ranks, uint32_t ctx, MPI_Comm parent) {
  MPI_Comm c = make_comm(world_ranks, ctx, parent);
  g_user_comms.insert(c);
  return c;
}

int check_group(MPI_Group g, const char* function) {
  if (!initialized()) abort_not_initialized(function);
  if (!g) return raise(nullptr, MPI_ERR_GROUP, function, "invalid group MPI_GROUP_NULL");
  return MPI_SUCCESS;
}

MPI_Group new_group(std::vector<int> world) {
  auto* g = new sluice_group_s;
  g->world = std::move(world);
  return g;
}

int compare_lists(const std::vector<int>& a, const std::vector<int>& b) {
  if (a == b) return MPI_IDENT;
  if (a.size() != b.size()) return MPI_UNEQUAL;
  std::vector<int> sa = a, sb = b;
  std::sort(sa.begin(), sa.end());
  std::sort(sb.begin(), sb.end());
  return sa == sb ? MPI_SIMILAR : MPI_UNEQUAL;
}

// Nonblocking duplication: the agreement runs as the request progresses.
class IdupOp final : public AsyncOp {
 public:
  IdupOp(MPI_Comm parent, MPI_Comm* out)
      : parent_(parent),
        out_(out),
        agreement_(std::make_unique<CtxAgreement>(parent, std::vector<int>{})) {}
  bool test() override {
    if (done_) return true;
    if (!agreement_->test()) return false;
    done_ = true;
    if (agreement_->error() == MPI_SUCCESS) {
      if (parent_->inter) {
        *out_ = make_intercomm(inter_local_world(parent_), parent_->rank, parent_->world,
                               agreement_->ctx(), parent_);
      } else {
        *out_ = new_comm(parent_->world, agreement_->ctx(), parent_);
        (*out_)->topo = parent_->topo;  // a duplicate keeps the topology (MPI-3.1 §7.4)
      }
      copy_error_ = copy_attrs(parent_, *out_);
    }
    return true;
  }
  int error() const override {
    return agreement_->error() != MPI_SUCCESS ? agreement_->error() : copy_error_;
  }
  bool needs_background_progress() const override { return true; }

 private:
  int copy_error_ = MPI_SUCCESS;
  MPI_Comm parent_;
  MPI_Comm* out_;
  std::unique_ptr<CtxAgreement> agreement_;
  bool done_ = false;
};

// MPI_Comm_create on an intercommunicator (MPI-3.1 §6.4.2): each group passes a subgroup of
// its own group; the result connects the two subgroups, MPI_COMM_NULL for the processes
// outside them and for everyone when either is empty. Each member's rank in its subgroup
// (-1 outside) travels with the agreement, which orders the other side's subgroup.
int create_inter(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  const char* fn = "MPI_Comm_create";
  const std::vector<int>& local_world = inter_local_world(comm);
  bool valid = true;
  for (int w : group->world)
    valid &= std::find(local_world.begin(), local_world.end(), w) != local_world.end();
  const int mine = valid ? group->rank_of_self() : MPI_UNDEFINED;
  std::unique_ptr<CtxAgreement> ag;
  if (int rc = agree(comm, {mine == MPI_UNDEFINED ? -1 : mine}, ag))
    return raise(comm, rc, fn, "exchange failed");
  *newcomm = MPI_COMM_NULL;
  if (!valid)
    return raise(comm, MPI_ERR_GROUP, fn,
                 "group is not a subgroup of the intercommunicator's local group");
  const int nlocal = static_cast<int>(local_world.size());
  std::vector<std::pair<int, int>> remote;  // (rank in its subgroup, world rank)
  for (int r = nlocal; r < ag->members(); ++r)
    if (ag->first(r)[0] >= 0) remote.emplace_back(ag->first(r)[0], comm->world[r - nlocal]);
  std::sort(remote.begin(), remote.end());
  if (mine == MPI_UNDEFINED || remote.empty()) return MPI_SUCCESS;
  std::vector<int> remote_world;
  for (auto [k, w] : remote) remote_world.push_back(w);
  *newcomm = make_intercomm(group->world, mine, remote_world, ag->ctx(), comm);
  return MPI_SUCCESS;
}

}  // namespace

int sluice_group_s_rank_of_self(const sluice_group_s* g) {
  auto it = std::find(g->world.begin(), g->world.end(), engine().rank());
  return it == g->world.end() ? MPI_UNDEFINED : static_cast<int>(it - g->world.begin());
}

MPI_Comm make_comm(const std::vector<int>& world_ranks, uint32_t p2p_ctx, MPI_Comm parent) {
  auto* c = new sluice_comm_s;
  fill_comm(c, world_ranks, p2p_ctx);
  c->errh = parent ? parent->errh : MPI_ERRORS_ARE_FATAL;
  if (!c->errh->predefined) ++c->errh->refs;
  return c;
}

void init_predefined_comms() {
  const int n = engine().size();
  std::vector<int> all(n);
  std::iota(all.begin(), all.end(), 0);
  for (MPI_Comm c : {MPI_COMM_WORLD, MPI_COMM_SELF}) {
    c->errh = MPI_ERRORS_ARE_FATAL;
    c->predefined = true;
    c->mgmt_seq = 0;
  }
  fill_comm(MPI_COMM_WORLD, all, 0);
  MPI_COMM_WORLD->name = "MPI_COMM_WORLD";
  fill_comm(MPI_COMM_SELF, {engine().rank()}, 2);
  MPI_COMM_SELF->name = "MPI_COMM_SELF";
  g_next_ctx = 4;
  g_claimed = {0, 2};
  g_held.clear();
}

void destroy_comm(MPI_Comm c) {
  engine().forget_context(c->p2p_ctx);
  engine().forget_context(c->coll_ctx);
  c->magic = 0;
  errh_release(c->errh);
  g_user_comms.erase(c);
  delete c;
}

void finalize_comms() {
  while (!g_user_comms.empty()) {
    delete_attrs(*g_user_comms.begin());
    destroy_comm(*g_user_comms.begin());
  }
  for (MPI_Comm c : {MPI_COMM_WORLD, MPI_COMM_SELF}) {
    errh_release(c->errh);
    c->errh = MPI_ERRORS_ARE_FATAL;
    c->magic = 0;
  }
}

// ---- for agreements outside this file (inter.cpp) -----------------------------------------

uint32_t ctx_lowest_free(uint32_t from) {
  return free_ctx_from(from);
}

bool ctx_try_hold(uint32_t v) {
  if (ctx_taken(v)) return false;
  g_held.insert(v);
  return true;
}

void ctx_drop_hold(uint32_t v) {
  g_held.erase(g_held.find(v));
}

void ctx_claim_held(uint32_t v) {
  ctx_drop_hold(v);
  g_claimed.insert(v);
  g_next_ctx = std::max(g_next_ctx, v + 2);
}

MPI_Comm make_user_comm(const std::vector<int>& world_ranks, uint32_t ctx, MPI_Comm parent) {
  return new_comm(world_ranks, ctx, parent);
}

int dup_hidden(MPI_Comm comm, MPI_Comm* out) {
  std::unique_ptr<CtxAgreement> ag;
  if (int rc = agree(comm, {}, ag)) return rc;
  *out = make_comm(comm->world, ag->ctx(), comm);
  return MPI_SUCCESS;
}

int agree_context(MPI_Comm comm, const std::vector<int>& extra, uint32_t* ctx,
                  std::vector<int>* gathered) {
  std::unique_ptr<CtxAgreement> ag;
  if (int rc = agree(comm, extra, ag)) return rc;
  *ctx = ag->ctx();
  if (gathered) {
    gathered->clear();
    for (int r = 0; r < ag->members(); ++r)
      gathered->insert(gathered->end(), ag->first(r), ag->first(r) + extra.size());
  }
  return MPI_SUCCESS;
}

int reject_inter(MPI_Comm comm, const char* function) {
  return raisef(comm, MPI_ERR_COMM, function, "%s is an intercommunicator (not supported here)",
                comm_label(comm));
}

}  // namespace sluice::mpi

int sluice_group_s::rank_of_self() const {
  return sluice::mpi::sluice_group_s_rank_of_self(this);
}

using namespace sluice::mpi;

extern "C" {

int PMPI_Comm_size(MPI_Comm comm, int* size) {
  SLUICE_MPI_CALL;
  if (int rc = check_comm(comm, "MPI_Comm_size")) return rc;
  *size = comm->inter ? inter_local_size(comm) : comm->size;
  return MPI_SUCCESS;
}

int PMPI_Comm_rank(MPI_Comm comm, int* rank) {
  SLUICE_MPI_CALL;
  if (int rc = check_comm(comm, "MPI_Comm_rank")) return rc;
  *rank = comm->rank;
  return MPI_SUCCESS;
}

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  SLUICE_MPI_CALL;
  if (int rc = check_comm(comm, "MPI_Comm_dup")) return rc;
  if (comm->inter) return inter_dup(comm, newcomm);
  std::unique_ptr<CtxAgreement> ag;
  if (int rc = agree(comm, {}, ag))
    return raise(comm, rc, "MPI_Comm_dup", "context agreement failed");
  MPI_Comm c = new_comm(comm->world, ag->ctx(), comm);
  c->topo = comm->topo;  // a duplicate keeps the topology (MPI-3.1 §7.4)
  if (int rc = copy_attrs(comm, c)) {
    delete_attrs(c);
    destroy_comm(c);
    *newcomm = MPI_COMM_NULL;
    return raise(comm, rc, "MPI_Comm_dup", "attribute copy callback failed");
  }
  *newcomm = c;
  return MPI_SUCCESS;
}

int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  SLUICE_MPI_CALL;
  // No communicator hint changes what Sluice does, so the hints are not kept (MPI-3.1
  // §6.4.4 lets an implementation ignore them); MPI_Comm_get_info reports none.
  return PMPI_Comm_dup(comm, newcomm);
}

int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info) {
  SLUICE_MPI_CALL;
  if (int rc = check_comm(comm, "MPI_Comm_set_info")) return rc;
  if (!info) return raise(comm, MPI_ERR_INFO, "MPI_Comm_set_info", "invalid info MPI_INFO_NULL");
  return MPI_SUCCESS;  // hints ignored (see MPI_Comm_dup_with_info)
}

int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info* info_used) {
  SLUICE_MPI_CALL;
  if (int rc = check_comm(comm, "MPI_Comm_get_info")) return rc;
  return PMPI_Info_create(info_used);  // no hint is in use
}

int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  SLUICE_MPI_CALL;
  if (int rc = check_comm(comm, "MPI_Comm_idup")) return rc;
  *newcomm = MPI_COMM_NULL;
  *request = make_async_request(comm, std::make_unique<IdupOp>(comm, newcomm));
  return MPI_SUCCESS;
}

// MPI-4.0 §7.4.2. The hints are not kept (as for MPI_Comm_dup_with_info). MPI_INFO_NULL is
// accepted as no hints, as MPICH and Open MPI do.
int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm,
                             MPI_Request* request) {
  SLUICE_MPI_CALL;
  (void)info;
  if (int rc = check_comm(comm, "MPI_Comm_idup_with_info")) return rc;
  return PMPI_Comm_idup(comm, newcomm, request);
}

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  SLUICE_MPI_CALL;
  if (int rc = check_comm(comm, "MPI_Comm_split")) return rc;
  // A bad color still takes part in the exchange (as MPI_UNDEFINED), so the other members
  // do not wait forever when the error handler returns.
  const bool bad_color = color < 0 && color != MPI_UNDEFINED;
  if (bad_color) color = MPI_UNDEFINED;
  std::unique_ptr<CtxAgreement> ag;
  if (int rc = agree(comm, {color, key}, ag))
    return raise(comm, rc, "MPI_Comm_split", "exchange failed");
  const uint32_t ctx = ag->ctx();
  if (bad_color) {
    *newcomm = MPI_COMM_NULL;
    return raisef(comm, MPI_ERR_ARG, "MPI_Comm_split",
                  "invalid color (negative, not MPI_UNDEFINED)");
  }
  if (color == MPI_UNDEFINED) {
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  // Members of my color ordered by (key, rank in comm); on an intercommunicator, in each
  // group (MPI-3.1 §6.4.2: those of a color that has no member in the other group get
  // MPI_COMM_NULL).
  const std::vector<int> all = members_of(comm);
  auto pick = [&](int begin, int end) {
    std::vector<std::tuple<int, int>> members;
    for (int r = begin; r < end; ++r)
      if (ag->first(r)[0] == color) members.emplace_back(ag->first(r)[1], r);
    std::sort(members.begin(), members.end());
    std::vector<int> world;
    for (auto [k, r] : members) world.push_back(all[r]);
    return world;
  };
  if (!comm->inter) {
    *newcomm = new_comm(pick(0, comm->size), ctx, comm);
    return MPI_SUCCESS;
  }
  const int nlocal = inter_local_size(comm);
  const std::vector<int> local = pick(0, nlocal), remote = pick(nlocal, ag->members());
  if (remote.empty()) {
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  const int me =
      static_cast<int>(std::find(local.begin(), local.end(), engine().rank()) - local.begin());
  *newcomm = make_intercomm(local, me, remote, ctx, comm);
  return MPI_SUCCESS;
}

int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm) {
  SLUICE_MPI_CALL;
  if (int rc = check_comm(comm, "MPI_Comm_split_type")) return rc;
  if (comm->inter) return reject_inter(comm, "MPI_Comm_split_type");
  // Shared-memory domain: the lowest comm rank on this host (whichever driver serves it).
  auto host_color = [comm] {
    for (int r = 0; r < comm->size; ++r)
      if (engine().same_host(comm->world[r])) return r;
    return static_cast<int>(MPI_UNDEFINED);
  };
  int color = MPI_UNDEFINED;
  if (split_type == MPI_COMM_TYPE_SHARED) {
    color = host_color();
  } else if (split_type == MPI_COMM_TYPE_HW_GUIDED) {
    // MPI-4.0 §7.4.2: the level named by the info key mpi_hw_resource_type; the one Sluice
    // knows is the standard's "mpi_shared_memory" (the host). Any other value, or no key:
    // MPI_COMM_NULL (the standard's answer for a level not supported).
    char level[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0;
    if (info) PMPI_Info_get(info, "mpi_hw_resource_type", MPI_MAX_INFO_VAL, level, &flag);
    if (flag && std::strcmp(level, "mpi_shared_memory") == 0) color = host_color();
  } else if (split_type == MPI_COMM_TYPE_HW_UNGUIDED) {
    // A level strictly smaller than comm: the host if comm spans several, else none
    // (MPI_COMM_NULL); the level chosen goes back in info's mpi_hw_resource_type.
    const int c = host_color();
    int local = 0;
    for (int r = 0; r < comm->size; ++r) local += engine().same_host(comm->world[r]) ? 1 : 0;
    int proper = local < comm->size ? 1 : 0, all_proper = 0;
    // Every process must agree: one host spanning all of comm means no smaller level.
    if (int rc = PMPI_Allreduce(&proper, &all_proper, 1, MPI_INT, MPI_MIN, comm)) return rc;
    if (all_proper) {
      color = c;
      if (info && !info->predefined)
        PMPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory");
    }
  } else if (split_type != MPI_UNDEFINED) {
    return raisef(comm, MPI_ERR_ARG, "MPI_Comm_split_type", "invalid split_type %d", split_type);
  }
  return PMPI_Comm_split(comm, color, key, newcomm);
}

int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  SLUICE_MPI_CALL;
  if (int rc = check_comm(comm, "MPI_Comm_create")) return rc;
  if (!group) return raise(comm, MPI_ERR_GROUP, "MPI_Comm_create", "invalid group MPI_GROUP_NULL");
  if (comm->inter) return create_inter(comm, group, newcomm);
  std::unique_ptr<CtxAgreement> ag;
  if (int rc = agree(comm, {}, ag)) return raise(comm, rc, "MPI_Comm_create", "exchange failed");
  const uint32_t ctx = ag->ctx();
  for (int w : group->world)
    if (comm->comm_rank_of(w) < 0) {
      *newcomm = MPI_COMM_NULL;
      return raisef(comm, MPI_ERR_GROUP, "MPI_Comm_create",
                    "group contains world rank %d, which is not in %s", w, comm_label(comm));
    }
  *newcomm =
      group->rank_of_self() == MPI_UNDEFINED ? MPI_COMM_NULL : new_comm(group->world, ctx, comm);
  return MPI_SUCCESS;
}

int PMPI_Comm_free(MPI_Comm* comm) {
  SLUICE_MPI_CALL;
  if (!comm) return raise(nullptr, MPI_ERR_COMM, "MPI_Comm_free", "null communicator pointer");
  if (int rc = check_comm(*comm, "MPI_Comm_free")) return rc;
  if ((*comm)->predefined)
    return raisef(*comm, MPI_ERR_COMM, "MPI_Comm_free", "cannot free %s", comm_label(*comm));
  const int rc = delete_attrs(*comm);
  destroy_comm(*comm);
  *comm = MPI_COMM_NULL;
  if (rc != MPI_SUCCESS)
    return raise(MPI_COMM_WORLD, rc, "MPI_Comm_free", "attribute delete callback failed");
  return MPI_SUCCESS;
}

int MPIX_Comm_failure_ack(MPI_Comm comm) {
  SLUICE_MPI_CALL;
  if (int rc = check_comm(comm, "MPIX_Comm_failure_ack")) return rc;
  engine().ack_failures(comm->p2p_ctx);
  return MPI_SUCCESS;
}

int MPIX_Comm_failure_get_acked(MPI_Comm comm, MPI_Group* failedgrp) {
  SLUICE_MPI_CALL;
  if (int rc = check_comm(comm, "MPIX_Comm_failure_get_acked")) return rc;
  if (!failedgrp)
    return raise(comm, MPI_ERR_ARG, "MPIX_Comm_failure_get_acked", "null group pointer");
  // The acknowledged prefix of the failures, restricted to the communicator's members.
  const std::vector<int>& failed = engine().failed_ranks();
  const std::size_t acked = engine().acked_failures(comm->p2p_ctx);
  std::vector<int> w;
  for (std::size_t i = 0; i < acked && i < failed.size(); ++i)
    if (comm->comm_rank_of(failed[i]) >= 0) w.push_back(failed[i]);
  *failedgrp = w.empty() ? MPI_GROUP_EMPTY : new_group(std::move(w));
  return MPI_SUCCESS;
}

int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result) {
  SLUICE_MPI_CALL;
  if (int rc = check_comm(comm1, "MPI_Comm_compare")) return rc;
  if (int rc = check_comm(comm2, "MPI_Comm_compare")) return rc;
  if (comm1 == comm2) {
    *result = MPI_IDENT;
    return MPI_SUCCESS;
  }
  const int g = compare_lists(comm1->world, comm2->world);
  *result = g == MPI_IDENT ? MPI_CONGRUENT : g;
  return MPI_SUCCESS;
}

int PMPI_Comm_group(MPI_Comm comm, MPI_Group* group) {
  SLUICE_MPI_CALL;
  if (int rc = check_comm(comm, "MPI_Comm_group")) return rc;
  *group = new_group(comm->inter ? inter_local_world(comm) : comm->world);
  return MPI_SUCCESS;
}

int PMPI_Comm_test_inter(MPI_Comm comm, int* flag) {
  SLUICE_MPI_CALL;
  if (int rc = check_comm(comm, "MPI_Comm_test_inter")) return rc;
  *flag = comm->inter != nullptr;
  return MPI_SUCCESS;
}

int PMPI_Comm_set_name(MPI_Comm comm, const char* comm_name) {
  SLUICE_MPI_CALL;
  if (int rc = check_comm(comm, "MPI_Comm_set_name")) return rc;
  if (!comm_name) return raise(comm, MPI_ERR_ARG, "MPI_Comm_set_name", "null name");
  comm->name.assign(comm_name, strnlen(comm_name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}

int PMPI_Comm_get_name(MPI_Comm comm, char* comm_name, int* resultlen) {
  SLUICE_MPI_CALL;
  if (int rc = check_comm(comm, "MPI_Comm_get_name")) return rc;
  std::snprintf(comm_name, MPI_MAX_OBJECT_NAME, "%s", comm->name.c_str());
  *resultlen = static_cast<int>(std::strlen(comm_name));
  return MPI_SUCCESS;
}

// ---- groups ------------------------------------------------------------------------------

int PMPI_Group_size(MPI_Group group, int* size) {
  SLUICE_MPI_CALL;
  if (int rc = check_group(group, "MPI_Group_size")) return rc;
  *size = static_cast<int>(group->world.size());
  return MPI_SUCCESS;
}

int PMPI_Group_rank(MPI_Group group, int* rank) {
  SLUICE_MPI_CALL;
  if (int rc = check_group(group, "MPI_Group_rank")) return rc;
  *rank = group->rank_of_self();
  return MPI_SUCCESS;
}

static int check_rank_list(MPI_Group group, int n, const int ranks[], const char* function) {
  const int size = static_cast<int>(group->world.size());
  if (n < 0 || n > size)
    return raisef(nullptr, MPI_ERR_ARG, function, "invalid n %d (group has %d ranks)", n, size);
  std::vector<bool> seen(size, false);
  for (int i = 0; i < n; ++i) {
    if (ranks[i] < 0 || ranks[i] >= size)
      return raisef(nullptr, MPI_ERR_RANK, function, "invalid rank %d (group has %d ranks)",
                    ranks[i], size);
    if (seen[ranks[i]])
      return raisef(nullptr, MPI_ERR_RANK, function, "rank %d listed twice", ranks[i]);
    seen[ranks[i]] = true;
  }
  return MPI_SUCCESS;
}

int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  SLUICE_MPI_CALL;
  if (int rc = check_group(group, "MPI_Group_incl")) return rc;
  if (int rc = check_rank_list(group, n, ranks, "MPI_Group_incl")) return rc;
  std::vector<int> w;
  for (int i = 0; i < n; ++i) w.push_back(group->world[ranks[i]]);
  *newgroup = n == 0 ? MPI_GROUP_EMPTY : new_group(std::move(w));
  return MPI_SUCCESS;
}

int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  SLUICE_MPI_CALL;
  if (int rc = check_group(group, "MPI_Group_excl")) return rc;
  if (int rc = check_rank_list(group, n, ranks, "MPI_Group_excl")) return rc;
  std::vector<bool> drop(group->world.size(), false);
  for (int i = 0; i < n; ++i) drop[ranks[i]] = true;
  std::vector<int> w;
  for (std::size_t i = 0; i < group->world.size(); ++i)
    if (!drop[i]) w.push_back(group->world[i]);
  *newgroup = w.empty() ? MPI_GROUP_EMPTY : new_group(std::move(w));
  return MPI_SUCCESS;
}

// Expands (first, last, stride) triplets into ranks; MPI_SUCCESS or the raised error.
static int expand_ranges(MPI_Group group, int n, int ranges[][3], std::vector<int>& out,
                         const char* function) {
  const int size = static_cast<int>(group->world.size());
  if (n < 0) return raisef(nullptr, MPI_ERR_ARG, function, "invalid n %d", n);
  for (int i = 0; i < n; ++i) {
    const int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
    if (stride == 0 || first < 0 || first >= size || last < 0 || last >= size ||
        (stride > 0 && first > last) || (stride < 0 && first < last))
      return raisef(nullptr, MPI_ERR_RANK, function,
                    "invalid range (%d, %d, %d) for a group of %d ranks", first, last, stride,
                    size);
    for (int r = first; stride > 0 ? r <= last : r >= last; r += stride) out.push_back(r);
  }
  return MPI_SUCCESS;
}

int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  SLUICE_MPI_CALL;
  if (int rc = check_group(group, "MPI_Group_range_incl")) return rc;
  std::vector<int> ranks;
  if (int rc = expand_ranges(group, n, ranges, ranks, "MPI_Group_range_incl")) return rc;
  return PMPI_Group_incl(group, static_cast<int>(ranks.size()), ranks.data(), newgroup);
}

int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  SLUICE_MPI_CALL;
  if (int rc = check_group(group, "MPI_Group_range_excl")) return rc;
  std::vector<int> ranks;
  if (int rc = expand_ranges(group, n, ranges, ranks, "MPI_Group_range_excl")) return rc;
  return PMPI_Group_excl(group, static_cast<int>(ranks.size()), ranks.data(), newgroup);
}

static bool contains(const std::vector<int>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  SLUICE_MPI_CALL;
  if (int rc = check_group(group1, "MPI_Group_union")) return rc;
  if (int rc = check_group(group2, "MPI_Group_union")) return rc;
  std::vector<int> w = group1->world;
  for (int x : group2->world)
    if (!contains(group1->world, x)) w.push_back(x);
  *newgroup = w.empty() ? MPI_GROUP_EMPTY : new_group(std::move(w));
  return MPI_SUCCESS;
}

int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  SLUICE_MPI_CALL;
  if (int rc = check_group(group1, "MPI_Group_intersection")) return rc;
  if (int rc = check_group(group2, "MPI_Group_intersection")) return rc;
  std::vector<int> w;
  for (int x : group1->world)
    if (contains(group2->world, x)) w.push_back(x);
  *newgroup = w.empty() ? MPI_GROUP_EMPTY : new_group(std::move(w));
  return MPI_SUCCESS;
}

int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  SLUICE_MPI_CALL;
  if (int rc = check_group(group1, "MPI_Group_difference")) return rc;
  if (int rc = check_group(group2, "MPI_Group_difference")) return rc;
  std::vector<int> w;
  for (int x : group1->world)
    if (!contains(group2->world, x)) w.push_back(x);
  *newgroup = w.empty() ? MPI_GROUP_EMPTY : new_group(std::move(w));
  return MPI_SUCCESS;
}

int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                               int ranks2[]) {
  SLUICE_MPI_CALL;
  if (int rc = check_group(group1, "MPI_Group_translate_ranks")) return rc;
  if (int rc = check_group(group2, "MPI_Group_translate_ranks")) return rc;
  const int size1 = static_cast<int>(group1->world.size());
  if (n < 0) return raisef(nullptr, MPI_ERR_ARG, "MPI_Group_translate_ranks", "invalid n %d", n);
  for (int i = 0; i < n; ++i) {
    const int r = ranks1[i];
    if (r == MPI_PROC_NULL) {
      ranks2[i] = MPI_PROC_NULL;
      continue;
    }
    if (r < 0 || r >= size1)
      return raisef(nullptr, MPI_ERR_RANK, "MPI_Group_translate_ranks",
                    "invalid rank %d (group1 has %d ranks)", r, size1);
    auto it = std::find(group2->world.begin(), group2->world.end(), group1->world[r]);
    ranks2[i] =
        it == group2->world.end() ? MPI_UNDEFINED : static_cast<int>(it - group2->world.begin());
  }
  return MPI_SUCCESS;
}

int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int* result) {
  SLUICE_MPI_CALL;
  if (int rc = check_group(group1, "MPI_Group_compare")) return rc;
  if (int rc = check_group(group2, "MPI_Group_compare")) return rc;
  *result = compare_lists(group1->world, group2->world);
  return MPI_SUCCESS;
}

int PMPI_Group_free(MPI_Group* group) {
  SLUICE_MPI_CALL;
  if (!group) return raise(nullptr, MPI_ERR_GROUP, "MPI_Group_free", "null group pointer");
  if (int rc = check_group(*group, "MPI_Group_free")) return rc;
  if (!(*group)->predefined) delete *group;
  *group = MPI_GROUP_NULL;
  return MPI_SUCCESS;
}

}  // extern "C"

// The MPI_ names: weak, so a profiling library defining them comes first (MPI-3.1
// §14.2); it reaches these definitions as PMPI_.
#pragma weak MPI_Comm_size = PMPI_Comm_size
#pragma weak MPI_Comm_rank = PMPI_Comm_rank
#pragma weak MPI_Comm_dup = PMPI_Comm_dup
#pragma weak MPI_Comm_dup_with_info = PMPI_Comm_dup_with_info
#pragma weak MPI_Comm_set_info = PMPI_Comm_set_info
#pragma weak MPI_Comm_get_info = PMPI_Comm_get_info
#pragma weak MPI_Comm_idup = PMPI_Comm_idup
#pragma weak MPI_Comm_idup_with_info = PMPI_Comm_idup_with_info
#pragma weak MPI_Comm_split = PMPI_Comm_split
#pragma weak MPI_Comm_split_type = PMPI_Comm_split_type
#pragma weak MPI_Comm_create = PMPI_Comm_create
#pragma weak MPI_Comm_free = PMPI_Comm_free
#pragma weak MPI_Comm_compare = PMPI_Comm_compare
#pragma weak MPI_Comm_group = PMPI_Comm_group
#pragma weak MPI_Comm_test_inter = PMPI_Comm_test_inter
#pragma weak MPI_Comm_set_name = PMPI_Comm_set_name
#pragma weak MPI_Comm_get_name = PMPI_Comm_get_name
#pragma weak MPI_Group_size = PMPI_Group_size
#pragma weak MPI_Group_rank = PMPI_Group_rank
#pragma weak MPI_Group_incl = PMPI_Group_incl
#pragma weak MPI_Group_excl = PMPI_Group_excl
#pragma weak MPI_Group_range_incl = PMPI_Group_range_incl
#pragma weak MPI_Group_range_excl = PMPI_Group_range_excl
#pragma weak MPI_Group_union = PMPI_Group_union
#pragma weak MPI_Group_intersection = PMPI_Group_intersection
#pragma weak MPI_Group_difference = PMPI_Group_difference
#pragma weak MPI_Group_translate_ranks = PMPI_Group_translate_ranks
#pragma weak MPI_Group_compare = PMPI_Group_compare
#pragma weak MPI_Group_free = PMPI_Group_free
