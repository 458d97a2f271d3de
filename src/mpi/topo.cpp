// Process topologies (MPI-3.1 chapter 7): Cartesian, graph and distributed-graph
// communicators, and the neighbourhood collectives over them.
//
// A topology communicator is an ordinary communicator (made by Comm_split or Comm_dup on
// the old one; `reorder` is ignored, so ranks keep their order) with a shared, immutable
// Topology attached; Comm_dup/idup share it.
//
// Neighbourhood collectives are point-to-point on the communicator's collective context
// with tags from kNeighborTagBase up (above every tag the collectives and the communicator
// management use). Per pair of processes, messages on one tag arrive in the order sent and
// receives match in the order posted, so consecutive neighbourhood collectives (blocking or
// not) and repeated edges of a graph pair up in list order. Cartesian neighbours get one
// tag per dimension and direction of travel: the block a process sends to its +1
// neighbour in dimension d is the one that neighbour receives as its -1 block, also when
// both neighbours are the same process (a periodic dimension of size 1 or 2), which MPI-4.0
// spells out and a single tag would get wrong.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "mpi/mpi_internal.hpp"

int sluice_mpi_unweighted_marker;
int sluice_mpi_weights_empty_marker;

namespace sluice::mpi {

struct Topology {
  int kind = MPI_UNDEFINED;  // MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH
  // MPI_CART
  std::vector<int> dims, periods;
  // MPI_GRAPH: neighbours of node i are edges[index[i-1] .. index[i])
  std::vector<int> index, edges;
  // MPI_DIST_GRAPH: this process's in- and out-edges
  std::vector<int> sources, destinations, source_weights, dest_weights;
  bool weighted = false;
};

namespace {

using B = std::byte;

// ---- Cartesian arithmetic ----------------------------------------------------------------

// Row-major: the last dimension varies fastest.
void cart_coords_of(const Topology& t, int rank, int* coords) {
  for (int d = static_cast<int>(t.dims.size()) - 1; d >= 0; --d) {
    coords[d] = rank % t.dims[d];
    rank /= t.dims[d];
  }
}

// MPI_PROC_NULL when a coordinate leaves a non-periodic dimension.
int cart_rank_of(const Topology& t, const int* coords) {
  int rank = 0;
  for (std::size_t d = 0; d < t.dims.size(); ++d) {
    int c = coords[d];
    if (c < 0 || c >= t.dims[d]) {
      if (!t.periods[d]) return MPI_PROC_NULL;
      c = ((c % t.dims[d]) + t.dims[d]) % t.dims[d];
    }
    rank = rank * t.dims[d] + c;
  }
  return rank;
}

// The rank `disp` steps from `rank` along dimension `dim`.
int cart_step(const Topology& t, int rank, int dim, int disp) {
  std::vector<int> c(t.dims.size());
  cart_coords_of(t, rank, c.data());
  c[dim] += disp;
  return cart_rank_of(t, c.data());
}

// ---- neighbour lists -----------------------------------------------------------------------

struct Neighbor {
  int rank;  // comm rank or MPI_PROC_NULL
  int tag;   // on coll_ctx
};

// The processes this one receives from (`in`) and sends to (`out`), in buffer order
// (MPI-3.1 §7.6).
void neighbors_of(MPI_Comm comm, std::vector<Neighbor>& in, std::vector<Neighbor>& out) {
  const Topology& t = *comm->topo;
  const int me = comm->rank;
  in.clear();
  out.clear();
  switch (t.kind) {
    case MPI_CART:
      for (int d = 0; d < static_cast<int>(t.dims.size()); ++d) {
        const int lower = cart_step(t, me, d, -1), upper = cart_step(t, me, d, +1);
        // Tag by direction of travel: 2d moving down, 2d+1 moving up.
        const int down = kNeighborTagBase + 2 * d, up = down + 1;
        in.push_back({lower, up});  // the lower neighbour sent it upwards
        in.push_back({upper, down});
        out.push_back({lower, down});
        out.push_back({upper, up});
      }
      return;
    case MPI_GRAPH: {
      const int first = me == 0 ? 0 : t.index[me - 1];
      for (int e = first; e < t.index[me]; ++e) {
        in.push_back({t.edges[e], kNeighborTagBase});
        out.push_back({t.edges[e], kNeighborTagBase});
      }
      return;
    }
    case MPI_DIST_GRAPH:
      for (int s : t.sources) in.push_back({s, kNeighborTagBase});
      for (int d : t.destinations) out.push_back({d, kNeighborTagBase});
      return;
    default:
      return;
  }
}

// ---- one neighbourhood collective in flight --------------------------------------------

class NeighborOp final : public AsyncOp {
 public:
  explicit NeighborOp(MPI_Comm comm) : comm_(comm) {}
  NeighborOp(const NeighborOp&) = delete;
  NeighborOp& operator=(const NeighborOp&) = delete;
  ~NeighborOp() override {
    for (auto* r : reqs_)
      if (r) engine().release(r);
    for (MPI_Datatype t : types_) dt_release(t);
  }

  // `count` elements of `type` at `buf` to comm rank `peer`.
  void send(int peer, int tag, const void* buf, MPI_Count count, MPI_Datatype type) {
    if (peer == MPI_PROC_NULL) return;
    const std::size_t bytes = static_cast<std::size_t>(count) * type->size;
    const B* from;
    if (type->contiguous) {
      from = static_cast<const B*>(buf) + type->true_lb;
    } else {
      staging_.emplace_back(bytes);
      dt_pack(type, buf, static_cast<std::size_t>(count), staging_.back().data());
      from = staging_.back().data();
    }
    reqs_.push_back(isend_bytes(comm_, from, bytes, peer, tag, comm_->coll_ctx));
  }
  void recv(int peer, int tag, void* buf, MPI_Count count, MPI_Datatype type) {
    if (peer == MPI_PROC_NULL) return;
    const std::size_t bytes = static_cast<std::size_t>(count) * type->size;
    B* to;
    if (type->contiguous) {
      to = static_cast<B*>(buf) + type->true_lb;
    } else {
      staging_.emplace_back(bytes);
      to = staging_.back().data();
      retain(type);
      unpacks_.push_back({type, to, buf, static_cast<std::size_t>(count)});
    }
    reqs_.push_back(irecv_bytes(comm_, to, bytes, peer, tag, comm_->coll_ctx));
  }

  bool test() override {
    if (finished_) return true;
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
    if (!all) return false;
    if (error_ == MPI_SUCCESS)
      for (const Unpack& u : unpacks_)
        dt_unpack(u.type, u.from, u.count * u.type->size, u.to, u.count);
    finished_ = true;
    return true;
  }
  int error() const override { return error_; }

 private:
  struct Unpack {
    MPI_Datatype type;
    const B* from;
    void* to;
    std::size_t count;
  };
  void retain(MPI_Datatype t) {
    if (t->predefined) return;
    dt_retain(t);
    types_.push_back(t);
  }

  MPI_Comm comm_;
  std::vector<detail::RequestImpl*> reqs_;
  std::vector<std::vector<B>> staging_;  // moving the outer vector keeps the inner buffers
  std::vector<Unpack> unpacks_;
  std::vector<MPI_Datatype> types_;  // retained derived types
  bool finished_ = false;
  int error_ = MPI_SUCCESS;
};

// Runs `op` to completion (blocking form) or hands it to a request (I-form).
int finish(MPI_Comm comm, std::unique_ptr<NeighborOp> op, MPI_Request* request,
           const char* function) {
  if (request) {
    *request = make_async_request(comm, std::move(op));
    return MPI_SUCCESS;
  }
  NeighborOp* p = op.get();
  block_until([p] { return p->test(); });
  if (int rc = p->error()) return raise(comm, rc, function, "a neighbour transfer failed");
  return MPI_SUCCESS;
}

// ---- argument checks -----------------------------------------------------------------------

int check_topo(MPI_Comm comm, int kind, const char* function) {
  if (int rc = check_comm(comm, function)) return rc;
  if (!comm->topo)
    return raisef(comm, MPI_ERR_TOPOLOGY, function, "%s has no topology", comm_label(comm));
  if (kind != MPI_UNDEFINED && comm->topo->kind != kind)
    return raisef(comm, MPI_ERR_TOPOLOGY, function, "%s has a different kind of topology",
                  comm_label(comm));
  return MPI_SUCCESS;
}

int check_rank_in(MPI_Comm comm, int rank, const char* function) {
  if (rank >= 0 && rank < comm->size) return MPI_SUCCESS;
  return raisef(comm, MPI_ERR_RANK, function, "invalid rank %d (%s has %d ranks)", rank,
                comm_label(comm), comm->size);
}

int check_buffer(MPI_Comm comm, MPI_Count count, MPI_Datatype type, const char* function) {
  if (int rc = check_count(comm, count, function)) return rc;
  return check_type(comm, type, function);
}

// Checks the common arguments of a neighbourhood collective and lists the neighbours.
int neighbor_prologue(MPI_Comm comm, std::vector<Neighbor>& in, std::vector<Neighbor>& out,
                      const char* function) {
  if (int rc = check_topo(comm, MPI_UNDEFINED, function)) return rc;
  neighbors_of(comm, in, out);
  return MPI_SUCCESS;
}

inline const B* at(const void* buf, MPI_Aint offset) {
  return static_cast<const B*>(buf) + offset;
}
inline B* at(void* buf, MPI_Aint offset) {
  return static_cast<B*>(buf) + offset;
}

// Counts are MPI_Count and the v/w arrays templates (int, or MPI_Count and MPI_Aint for the
// MPI-4.0 _c forms): the int bindings and the _c ones share these.
int allgather(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
              MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request,
              const char* function) {
  SLUICE_MPI_CALL;
  std::vector<Neighbor> in, out;
  if (int rc = neighbor_prologue(comm, in, out, function)) return rc;
  if (int rc = check_buffer(comm, sendcount, sendtype, function)) return rc;
  if (int rc = check_buffer(comm, recvcount, recvtype, function)) return rc;
  auto op = std::make_unique<NeighborOp>(comm);
  const MPI_Aint block = static_cast<MPI_Aint>(recvcount) * recvtype->extent();
  for (std::size_t i = 0; i < in.size(); ++i)
    op->recv(in[i].rank, in[i].tag, at(recvbuf, i * block), recvcount, recvtype);
  for (const Neighbor& n : out) op->send(n.rank, n.tag, sendbuf, sendcount, sendtype);
  return finish(comm, std::move(op), request, function);
}

template <class C, class D>
int allgatherv(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
               const C recvcounts[], const D displs[], MPI_Datatype recvtype, MPI_Comm comm,
               MPI_Request* request, const char* function) {
  SLUICE_MPI_CALL;
  std::vector<Neighbor> in, out;
  if (int rc = neighbor_prologue(comm, in, out, function)) return rc;
  if (int rc = check_buffer(comm, sendcount, sendtype, function)) return rc;
  if (int rc = check_type(comm, recvtype, function)) return rc;
  for (std::size_t i = 0; i < in.size(); ++i)
    if (int rc = check_count(comm, recvcounts[i], function)) return rc;
  auto op = std::make_unique<NeighborOp>(comm);
  const MPI_Aint ext = recvtype->extent();
  for (std::size_t i = 0; i < in.size(); ++i)
    op->recv(in[i].rank, in[i].tag, at(recvbuf, static_cast<MPI_Aint>(displs[i]) * ext),
             recvcounts[i], recvtype);
  for (const Neighbor& n : out) op->send(n.rank, n.tag, sendbuf, sendcount, sendtype);
  return finish(comm, std::move(op), request, function);
}

int alltoall(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
             MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request,
             const char* function) {
  SLUICE_MPI_CALL;
  std::vector<Neighbor> in, out;
  if (int rc = neighbor_prologue(comm, in, out, function)) return rc;
  if (int rc = check_buffer(comm, sendcount, sendtype, function)) return rc;
  if (int rc = check_buffer(comm, recvcount, recvtype, function)) return rc;
  auto op = std::make_unique<NeighborOp>(comm);
  const MPI_Aint rblock = static_cast<MPI_Aint>(recvcount) * recvtype->extent();
  const MPI_Aint sblock = static_cast<MPI_Aint>(sendcount) * sendtype->extent();
  for (std::size_t i = 0; i < in.size(); ++i)
    op->recv(in[i].rank, in[i].tag, at(recvbuf, i * rblock), recvcount, recvtype);
  for (std::size_t i = 0; i < out.size(); ++i)
    op->send(out[i].rank, out[i].tag, at(sendbuf, i * sblock), sendcount, sendtype);
  return finish(comm, std::move(op), request, function);
}

// v (displacements in extents of one type) and w (byte displacements, a type per block).
template <class C, class D>
int alltoallvw(const void* sendbuf, const C sendcounts[], const D* sdispls_v,
               const MPI_Aint* sdispls_w, const MPI_Datatype* sendtypes, void* recvbuf,
               const C recvcounts[], const D* rdispls_v, const MPI_Aint* rdispls_w,
               const MPI_Datatype* recvtypes, bool w, MPI_Comm comm, MPI_Request* request,
               const char* function) {
  SLUICE_MPI_CALL;
  std::vector<Neighbor> in, out;
  if (int rc = neighbor_prologue(comm, in, out, function)) return rc;
  auto stype = [&](std::size_t i) { return sendtypes[w ? i : 0]; };
  auto rtype = [&](std::size_t i) { return recvtypes[w ? i : 0]; };
  for (std::size_t i = 0; i < out.size(); ++i)
    if (int rc = check_buffer(comm, sendcounts[i], stype(i), function)) return rc;
  for (std::size_t i = 0; i < in.size(); ++i)
    if (int rc = check_buffer(comm, recvcounts[i], rtype(i), function)) return rc;
  auto op = std::make_unique<NeighborOp>(comm);
  for (std::size_t i = 0; i < in.size(); ++i) {
    const MPI_Aint off =
        w ? rdispls_w[i] : static_cast<MPI_Aint>(rdispls_v[i]) * rtype(i)->extent();
    op->recv(in[i].rank, in[i].tag, at(recvbuf, off), recvcounts[i], rtype(i));
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    const MPI_Aint off =
        w ? sdispls_w[i] : static_cast<MPI_Aint>(sdispls_v[i]) * stype(i)->extent();
    op->send(out[i].rank, out[i].tag, at(sendbuf, off), sendcounts[i], stype(i));
  }
  return finish(comm, std::move(op), request, function);
}

// ---- creating topology communicators ---------------------------------------------------------

// The members of `comm_old` with rank < n form the new communicator, in the same order.
int first_n(MPI_Comm comm_old, int n, std::shared_ptr<const Topology> topo, MPI_Comm* out) {
  MPI_Comm c = MPI_COMM_NULL;
  if (int rc =
          PMPI_Comm_split(comm_old, comm_old->rank < n ? 0 : MPI_UNDEFINED, comm_old->rank, &c))
    return rc;
  if (c != MPI_COMM_NULL) c->topo = std::move(topo);
  *out = c;
  return MPI_SUCCESS;
}

int check_dims(MPI_Comm comm, int ndims, const int dims[], const char* function, int& product) {
  if (ndims < 0) return raisef(comm, MPI_ERR_DIMS, function, "invalid ndims %d", ndims);
  long long p = 1;
  for (int d = 0; d < ndims; ++d) {
    if (dims[d] <= 0)
      return raisef(comm, MPI_ERR_DIMS, function, "invalid dims[%d] = %d", d, dims[d]);
    p *= dims[d];
    if (p > comm->size)
      return raisef(comm, MPI_ERR_DIMS, function, "the grid has more than the %d processes of %s",
                    comm->size, comm_label(comm));
  }
  product = static_cast<int>(p);
  return MPI_SUCCESS;
}

std::shared_ptr<Topology> make_cart(int ndims, const int dims[], const int periods[]) {
  auto t = std::make_shared<Topology>();
  t->kind = MPI_CART;
  t->dims.assign(dims, dims + ndims);
  for (int d = 0; d < ndims; ++d) t->periods.push_back(periods[d] ? 1 : 0);
  return t;
}

int check_graph(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                const char* function) {
  if (nnodes < 0 || nnodes > comm->size)
    return raisef(comm, MPI_ERR_ARG, function, "invalid nnodes %d (%s has %d ranks)", nnodes,
                  comm_label(comm), comm->size);
  int prev = 0;
  for (int i = 0; i < nnodes; ++i) {
    if (index[i] < prev)
      return raisef(comm, MPI_ERR_ARG, function, "index[%d] = %d decreases", i, index[i]);
    prev = index[i];
  }
  for (int e = 0; e < prev; ++e)
    if (edges[e] < 0 || edges[e] >= nnodes)
      return raisef(comm, MPI_ERR_ARG, function, "edges[%d] = %d is not a node", e, edges[e]);
  return MPI_SUCCESS;
}

int check_neighbor_ranks(MPI_Comm comm, int n, const int ranks[], const char* what,
                         const char* function) {
  if (n < 0) return raisef(comm, MPI_ERR_ARG, function, "invalid %s degree %d", what, n);
  for (int i = 0; i < n; ++i)
    if (ranks[i] < 0 || ranks[i] >= comm->size)
      return raisef(comm, MPI_ERR_RANK, function, "invalid %s rank %d (%s has %d ranks)", what,
                    ranks[i], comm_label(comm), comm->size);
  return MPI_SUCCESS;
}

bool is_unweighted(const int* w) {
  return w == MPI_UNWEIGHTED;
}

std::vector<int> weights_of(const int* w, int n) {
  if (w == MPI_UNWEIGHTED || w == MPI_WEIGHTS_EMPTY || n == 0) return std::vector<int>(n, 1);
  return std::vector<int>(w, w + n);
}

void copy_out(const std::vector<int>& from, int max, int* to) {
  const int n = std::min<int>(max, static_cast<int>(from.size()));
  if (n > 0) std::memcpy(to, from.data(), n * sizeof(int));
}

}  // namespace
}  // namespace sluice::mpi

using namespace sluice::mpi;

extern "C" {

// ---- Cartesian ---------------------------------------------------------------------------------

int PMPI_Dims_create(int nnodes, int ndims, int dims[]) {
  SLUICE_MPI_CALL;
  if (nnodes <= 0 || ndims < 0)
    return raisef(nullptr, MPI_ERR_ARG, "MPI_Dims_create", "invalid nnodes %d or ndims %d", nnodes,
                  ndims);
  int fixed = 1, free_dims = 0;
  for (int d = 0; d < ndims; ++d) {
    if (dims[d] < 0)
      return raisef(nullptr, MPI_ERR_DIMS, "MPI_Dims_create", "invalid dims[%d] = %d", d, dims[d]);
    if (dims[d] > 0)
      fixed *= dims[d];
    else
      ++free_dims;
  }
  if (nnodes % fixed != 0)
    return raisef(nullptr, MPI_ERR_DIMS, "MPI_Dims_create",
                  "nnodes %d is not a multiple of the fixed dimensions' product %d", nnodes, fixed);
  if (free_dims == 0) {
    if (fixed != nnodes)
      return raisef(nullptr, MPI_ERR_DIMS, "MPI_Dims_create",
                    "the fixed dimensions' product %d is not nnodes %d", fixed, nnodes);
    return MPI_SUCCESS;
  }
  // As balanced as possible (MPI-3.1 section 7.5.2): of the non-increasing factorisations
  // of nnodes / fixed into free_dims factors, the one whose largest and smallest factors are
  // closest (a greedy split of the primes is not: 72 in 2-d gave 12 x 6, not 9 x 8).
  const int total = nnodes / fixed;
  std::vector<int> divisors;  // of total, largest first: every factor is one
  for (int f = 1; static_cast<long long>(f) * f <= total; ++f)
    if (total % f == 0) {
      divisors.push_back(f);
      if (f != total / f) divisors.push_back(total / f);
    }
  std::sort(divisors.begin(), divisors.end(), std::greater<int>());
  std::vector<int> free(free_dims, 1), current(free_dims, 1);
  long long best_spread = -1;
  auto search = [&](auto&& self, int rest, int slot, int upper) -> void {
    if (slot == free_dims - 1) {
      if (rest > upper) return;
      current[slot] = rest;
      const long long spread = static_cast<long long>(current[0]) - rest;
      // Ties go to the larger smallest factors, smallest first (43 x 9 x 8 x 6 before
      // 43 x 12 x 6 x 6; 51 x 40 x 35 before 50 x 42 x 34), as MPICH chooses.
      auto closer = [&] {
        for (int i = free_dims - 1; i > 0; --i)
          if (current[i] != free[i]) return current[i] > free[i];
        return false;
      };
      if (best_spread < 0 || spread < best_spread || (spread == best_spread && closer())) {
        best_spread = spread;
        free = current;
      }
      return;
    }
    const int left = free_dims - slot;  // factors still to place, this one included
    for (int f : divisors) {
      if (f > upper || f > rest || rest % f != 0) continue;
      long long power = 1;  // f is the largest factor left, so f^left >= rest
      for (int k = 0; k < left && power < rest; ++k) power *= f;
      if (power < rest) break;  // and so for every smaller f
      // The smallest factor will be at most f: no better than the best found, nor below.
      if (slot > 0 && best_spread >= 0 && current[0] - f > best_spread) break;
      current[slot] = f;
      self(self, rest / f, slot + 1, f);
    }
  };
  search(search, total, 0, total);
  for (int d = 0, k = 0; d < ndims; ++d)
    if (dims[d] == 0) dims[d] = free[k++];
  return MPI_SUCCESS;
}

int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                     int reorder, MPI_Comm* comm_cart) {
  SLUICE_MPI_CALL;
  (void)reorder;  // ranks keep their order (allowed: reordering is a hint)
  if (int rc = check_comm(comm_old, "MPI_Cart_create")) return rc;
  int product = 1;
  if (int rc = check_dims(comm_old, ndims, dims, "MPI_Cart_create", product)) return rc;
  return first_n(comm_old, product, make_cart(ndims, dims, periods), comm_cart);
}

int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int* newrank) {
  SLUICE_MPI_CALL;
  (void)periods;
  if (int rc = check_comm(comm, "MPI_Cart_map")) return rc;
  int product = 1;
  if (int rc = check_dims(comm, ndims, dims, "MPI_Cart_map", product)) return rc;
  *newrank = comm->rank < product ? comm->rank : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

int PMPI_Cartdim_get(MPI_Comm comm, int* ndims) {
  SLUICE_MPI_CALL;
  if (int rc = check_topo(comm, MPI_CART, "MPI_Cartdim_get")) return rc;
  *ndims = static_cast<int>(comm->topo->dims.size());
  return MPI_SUCCESS;
}

int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]) {
  SLUICE_MPI_CALL;
  if (int rc = check_topo(comm, MPI_CART, "MPI_Cart_get")) return rc;
  const Topology& t = *comm->topo;
  const int n = static_cast<int>(t.dims.size());
  if (maxdims < n)
    return raisef(comm, MPI_ERR_ARG, "MPI_Cart_get", "maxdims %d < ndims %d", maxdims, n);
  std::vector<int> c(n);
  cart_coords_of(t, comm->rank, c.data());
  copy_out(t.dims, n, dims);
  copy_out(t.periods, n, periods);
  copy_out(c, n, coords);
  return MPI_SUCCESS;
}

int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]) {
  SLUICE_MPI_CALL;
  if (int rc = check_topo(comm, MPI_CART, "MPI_Cart_coords")) return rc;
  if (int rc = check_rank_in(comm, rank, "MPI_Cart_coords")) return rc;
  const Topology& t = *comm->topo;
  const int n = static_cast<int>(t.dims.size());
  if (maxdims < n)
    return raisef(comm, MPI_ERR_ARG, "MPI_Cart_coords", "maxdims %d < ndims %d", maxdims, n);
  cart_coords_of(t, rank, coords);
  return MPI_SUCCESS;
}

int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int* rank) {
  SLUICE_MPI_CALL;
  if (int rc = check_topo(comm, MPI_CART, "MPI_Cart_rank")) return rc;
  const Topology& t = *comm->topo;
  const int r = cart_rank_of(t, coords);
  if (r == MPI_PROC_NULL)
    return raise(comm, MPI_ERR_ARG, "MPI_Cart_rank",
                 "a coordinate is outside a non-periodic dimension");
  *rank = r;
  return MPI_SUCCESS;
}

int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int* rank_source, int* rank_dest) {
  SLUICE_MPI_CALL;
  if (int rc = check_topo(comm, MPI_CART, "MPI_Cart_shift")) return rc;
  const Topology& t = *comm->topo;
  if (direction < 0 || direction >= static_cast<int>(t.dims.size()))
    return raisef(comm, MPI_ERR_ARG, "MPI_Cart_shift", "invalid direction %d (%zu dimensions)",
                  direction, t.dims.size());
  *rank_source = cart_step(t, comm->rank, direction, -disp);
  *rank_dest = cart_step(t, comm->rank, direction, disp);
  return MPI_SUCCESS;
}

int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  SLUICE_MPI_CALL;
  if (int rc = check_topo(comm, MPI_CART, "MPI_Cart_sub")) return rc;
  const Topology& t = *comm->topo;
  const int n = static_cast<int>(t.dims.size());
  std::vector<int> c(n);
  cart_coords_of(t, comm->rank, c.data());
  // Color: the coordinates in the dropped dimensions; key: the rank, which orders the
  // members of a sub-grid row-major in the kept dimensions.
  int color = 0;
  std::vector<int> dims, periods;
  for (int d = 0; d < n; ++d) {
    if (remain_dims[d]) {
      dims.push_back(t.dims[d]);
      periods.push_back(t.periods[d]);
    } else {
      color = color * t.dims[d] + c[d];
    }
  }
  // No dimension left (or a zero-dimensional grid already): the result is a zero-dimensional
  // grid, whose size is the empty product, 1. As MPI_Cart_create with ndims = 0, it holds
  // the first process only and the others get MPI_COMM_NULL (MPICH's answer; Open MPI gives
  // every process its own one-process grid).
  if (dims.empty()) color = comm->rank == 0 ? 0 : MPI_UNDEFINED;
  MPI_Comm sub = MPI_COMM_NULL;
  if (int rc = PMPI_Comm_split(comm, color, comm->rank, &sub)) return rc;
  if (sub != MPI_COMM_NULL)
    sub->topo = make_cart(static_cast<int>(dims.size()), dims.data(), periods.data());
  *newcomm = sub;
  return MPI_SUCCESS;
}

// ---- graphs
// ----------------------------------------------------------------------------------------

int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
                      int reorder, MPI_Comm* comm_graph) {
  SLUICE_MPI_CALL;
  (void)reorder;
  if (int rc = check_comm(comm_old, "MPI_Graph_create")) return rc;
  if (int rc = check_graph(comm_old, nnodes, index, edges, "MPI_Graph_create")) return rc;
  auto t = std::make_shared<Topology>();
  t->kind = MPI_GRAPH;
  t->index.assign(index, index + nnodes);
  if (nnodes > 0) t->edges.assign(edges, edges + index[nnodes - 1]);
  // An empty graph gives MPI_COMM_NULL everywhere (first_n with n = 0).
  return first_n(comm_old, nnodes, std::move(t), comm_graph);
}

int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int* newrank) {
  SLUICE_MPI_CALL;
  if (int rc = check_comm(comm, "MPI_Graph_map")) return rc;
  if (int rc = check_graph(comm, nnodes, index, edges, "MPI_Graph_map")) return rc;
  *newrank = comm->rank < nnodes ? comm->rank : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

int PMPI_Graphdims_get(MPI_Comm comm, int* nnodes, int* nedges) {
  SLUICE_MPI_CALL;
  if (int rc = check_topo(comm, MPI_GRAPH, "MPI_Graphdims_get")) return rc;
  *nnodes = static_cast<int>(comm->topo->index.size());
  *nedges = static_cast<int>(comm->topo->edges.size());
  return MPI_SUCCESS;
}

int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]) {
  SLUICE_MPI_CALL;
  if (int rc = check_topo(comm, MPI_GRAPH, "MPI_Graph_get")) return rc;
  copy_out(comm->topo->index, maxindex, index);
  copy_out(comm->topo->edges, maxedges, edges);
  return MPI_SUCCESS;
}

int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int* nneighbors) {
  SLUICE_MPI_CALL;
  if (int rc = check_topo(comm, MPI_GRAPH, "MPI_Graph_neighbors_count")) return rc;
  if (int rc = check_rank_in(comm, rank, "MPI_Graph_neighbors_count")) return rc;
  const Topology& t = *comm->topo;
  *nneighbors = t.index[rank] - (rank == 0 ? 0 : t.index[rank - 1]);
  return MPI_SUCCESS;
}

int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]) {
  SLUICE_MPI_CALL;
  if (int rc = check_topo(comm, MPI_GRAPH, "MPI_Graph_neighbors")) return rc;
  if (int rc = check_rank_in(comm, rank, "MPI_Graph_neighbors")) return rc;
  const Topology& t = *comm->topo;
  const int first = rank == 0 ? 0 : t.index[rank - 1];
  const int n = std::min(maxneighbors, t.index[rank] - first);
  for (int i = 0; i < n; ++i) neighbors[i] = t.edges[first + i];
  return MPI_SUCCESS;
}

// ---- distributed graphs -----------------------------------------------------------------------

int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                    const int sourceweights[], int outdegree,
                                    const int destinations[], const int destweights[],
                                    MPI_Info info, int reorder, MPI_Comm* comm_dist_graph) {
  SLUICE_MPI_CALL;
  (void)info;
  (void)reorder;
  const char* fn = "MPI_Dist_graph_create_adjacent";
  if (int rc = check_comm(comm_old, fn)) return rc;
  if (comm_old->inter) return reject_inter(comm_old, fn);
  if (int rc = check_neighbor_ranks(comm_old, indegree, sources, "source", fn)) return rc;
  if (int rc = check_neighbor_ranks(comm_old, outdegree, destinations, "destination", fn))
    return rc;
  auto t = std::make_shared<Topology>();
  t->kind = MPI_DIST_GRAPH;
  t->sources.assign(sources, sources + indegree);
  t->destinations.assign(destinations, destinations + outdegree);
  t->weighted = !is_unweighted(sourceweights) && !is_unweighted(destweights);
  t->source_weights = weights_of(sourceweights, indegree);
  t->dest_weights = weights_of(destweights, outdegree);
  MPI_Comm c = MPI_COMM_NULL;
  if (int rc = PMPI_Comm_dup(comm_old, &c)) return rc;
  c->topo = std::move(t);
  *comm_dist_graph = c;
  return MPI_SUCCESS;
}

int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                           const int destinations[], const int weights[], MPI_Info info,
                           int reorder, MPI_Comm* comm_dist_graph) {
  SLUICE_MPI_CALL;
  (void)info;
  (void)reorder;
  const char* fn = "MPI_Dist_graph_create";
  if (int rc = check_comm(comm_old, fn)) return rc;
  if (comm_old->inter) return reject_inter(comm_old, fn);
  if (int rc = check_neighbor_ranks(comm_old, n, sources, "source", fn)) return rc;
  const int p = comm_old->size;
  // Every edge (s, d, w) given here goes to s (an out-edge) and to d (an in-edge): one
  // all-to-all of counts and one of triples over the old communicator.
  std::vector<std::vector<int>> to(p);
  int total = 0;
  for (int i = 0; i < n; ++i) {
    if (degrees[i] < 0)
      return raisef(comm_old, MPI_ERR_ARG, fn, "invalid degrees[%d] = %d", i, degrees[i]);
    if (int rc =
            check_neighbor_ranks(comm_old, degrees[i], destinations + total, "destination", fn))
      return rc;
    for (int k = 0; k < degrees[i]; ++k, ++total) {
      const int s = sources[i], d = destinations[total];
      const int w = is_unweighted(weights) || weights == MPI_WEIGHTS_EMPTY ? 1 : weights[total];
      for (int owner : {s, d}) {
        to[owner].insert(to[owner].end(), {s, d, w});
        if (s == d) break;  // a self-loop is both edges of one owner: send it once
      }
    }
  }
  std::vector<int> sendcounts(p), recvcounts(p), sdispls(p), rdispls(p);
  std::vector<int> flat;
  for (int r = 0; r < p; ++r) {
    sdispls[r] = static_cast<int>(flat.size());
    sendcounts[r] = static_cast<int>(to[r].size());
    flat.insert(flat.end(), to[r].begin(), to[r].end());
  }
  // Whether the edges carry weights: MPI_UNWEIGHTED on any process means none do.
  int weighted_here = is_unweighted(weights) ? 0 : 1, weighted_all = 1;
  if (int rc = PMPI_Allreduce(&weighted_here, &weighted_all, 1, MPI_INT, MPI_MIN, comm_old))
    return rc;
  if (int rc =
          PMPI_Alltoall(sendcounts.data(), 1, MPI_INT, recvcounts.data(), 1, MPI_INT, comm_old))
    return rc;
  int rtotal = 0;
  for (int r = 0; r < p; ++r) {
    rdispls[r] = rtotal;
    rtotal += recvcounts[r];
  }
  std::vector<int> edges(std::max(rtotal, 1));
  if (int rc = PMPI_Alltoallv(flat.data(), sendcounts.data(), sdispls.data(), MPI_INT, edges.data(),
                              recvcounts.data(), rdispls.data(), MPI_INT, comm_old))
    return rc;
  auto t = std::make_shared<Topology>();
  t->kind = MPI_DIST_GRAPH;
  t->weighted = weighted_all != 0;
  const int me = comm_old->rank;
  // Edges in the order of the contributing ranks, each contributor's in its order.
  for (int e = 0; e < rtotal; e += 3) {
    const int s = edges[e], d = edges[e + 1], w = edges[e + 2];
    if (s == me) {
      t->destinations.push_back(d);
      t->dest_weights.push_back(w);
    }
    if (d == me) {
      t->sources.push_back(s);
      t->source_weights.push_back(w);
    }
  }
  MPI_Comm c = MPI_COMM_NULL;
  if (int rc = PMPI_Comm_dup(comm_old, &c)) return rc;
  c->topo = std::move(t);
  *comm_dist_graph = c;
  return MPI_SUCCESS;
}

int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int* indegree, int* outdegree, int* weighted) {
  SLUICE_MPI_CALL;
  if (int rc = check_topo(comm, MPI_DIST_GRAPH, "MPI_Dist_graph_neighbors_count")) return rc;
  const Topology& t = *comm->topo;
  *indegree = static_cast<int>(t.sources.size());
  *outdegree = static_cast<int>(t.destinations.size());
  *weighted = t.weighted;
  return MPI_SUCCESS;
}

int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                              int maxoutdegree, int destinations[], int destweights[]) {
  SLUICE_MPI_CALL;
  if (int rc = check_topo(comm, MPI_DIST_GRAPH, "MPI_Dist_graph_neighbors")) return rc;
  const Topology& t = *comm->topo;
  copy_out(t.sources, maxindegree, sources);
  copy_out(t.destinations, maxoutdegree, destinations);
  if (t.weighted && sourceweights != MPI_UNWEIGHTED)
    copy_out(t.source_weights, maxindegree, sourceweights);
  if (t.weighted && destweights != MPI_UNWEIGHTED)
    copy_out(t.dest_weights, maxoutdegree, destweights);
  return MPI_SUCCESS;
}

int PMPI_Topo_test(MPI_Comm comm, int* status) {
  SLUICE_MPI_CALL;
  if (int rc = check_comm(comm, "MPI_Topo_test")) return rc;
  *status = comm->topo ? comm->topo->kind : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

// ---- neighbourhood collectives -------------------------------------------------------------

int PMPI_Neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr,
                   "MPI_Neighbor_allgather");
}

int PMPI_Ineighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request* request) {
  return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
                   "MPI_Ineighbor_allgather");
}

int PMPI_Neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm) {
  return allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                    nullptr, "MPI_Neighbor_allgatherv");
}

int PMPI_Ineighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                              void* recvbuf, const int recvcounts[], const int displs[],
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                    request, "MPI_Ineighbor_allgatherv");
}

int PMPI_Neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr,
                  "MPI_Neighbor_alltoall");
}

int PMPI_Ineighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request* request) {
  return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
                  "MPI_Ineighbor_alltoall");
}

int PMPI_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  return alltoallvw(sendbuf, sendcounts, sdispls, nullptr, &sendtype, recvbuf, recvcounts, rdispls,
                    nullptr, &recvtype, false, comm, nullptr, "MPI_Neighbor_alltoallv");
}

int PMPI_Ineighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request* request) {
  return alltoallvw(sendbuf, sendcounts, sdispls, nullptr, &sendtype, recvbuf, recvcounts, rdispls,
                    nullptr, &recvtype, false, comm, request, "MPI_Ineighbor_alltoallv");
}

int PMPI_Neighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                            MPI_Comm comm) {
  return alltoallvw<int, int>(sendbuf, sendcounts, nullptr, sdispls, sendtypes, recvbuf, recvcounts,
                              nullptr, rdispls, recvtypes, true, comm, nullptr,
                              "MPI_Neighbor_alltoallw");
}

int PMPI_Ineighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                             const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                             const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                             MPI_Comm comm, MPI_Request* request) {
  return alltoallvw<int, int>(sendbuf, sendcounts, nullptr, sdispls, sendtypes, recvbuf, recvcounts,
                              nullptr, rdispls, recvtypes, true, comm, request,
                              "MPI_Ineighbor_alltoallw");
}

// The MPI-4.0 large-count forms.

int PMPI_Neighbor_allgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                              void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                              MPI_Comm comm) {
  return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr,
                   "MPI_Neighbor_allgather_c");
}

int PMPI_Ineighbor_allgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                               void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                               MPI_Comm comm, MPI_Request* request) {
  return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
                   "MPI_Ineighbor_allgather_c");
}

int PMPI_Neighbor_allgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                               void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                               MPI_Datatype recvtype, MPI_Comm comm) {
  return allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                    nullptr, "MPI_Neighbor_allgatherv_c");
}

int PMPI_Ineighbor_allgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                void* recvbuf, const MPI_Count recvcounts[],
                                const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Request* request) {
  return allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                    request, "MPI_Ineighbor_allgatherv_c");
}

int PMPI_Neighbor_alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                             void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                             MPI_Comm comm) {
  return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr,
                  "MPI_Neighbor_alltoall_c");
}

int PMPI_Ineighbor_alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                              void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                              MPI_Comm comm, MPI_Request* request) {
  return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
                  "MPI_Ineighbor_alltoall_c");
}

int PMPI_Neighbor_alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[],
                              const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf,
                              const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                              MPI_Datatype recvtype, MPI_Comm comm) {
  return alltoallvw(sendbuf, sendcounts, sdispls, nullptr, &sendtype, recvbuf, recvcounts, rdispls,
                    nullptr, &recvtype, false, comm, nullptr, "MPI_Neighbor_alltoallv_c");
}

int PMPI_Ineighbor_alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[],
                               const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf,
                               const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                               MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return alltoallvw(sendbuf, sendcounts, sdispls, nullptr, &sendtype, recvbuf, recvcounts, rdispls,
                    nullptr, &recvtype, false, comm, request, "MPI_Ineighbor_alltoallv_c");
}

int PMPI_Neighbor_alltoallw_c(const void* sendbuf, const MPI_Count sendcounts[],
                              const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                              void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                              const MPI_Datatype recvtypes[], MPI_Comm comm) {
  return alltoallvw<MPI_Count, MPI_Aint>(sendbuf, sendcounts, nullptr, sdispls, sendtypes, recvbuf,
                                         recvcounts, nullptr, rdispls, recvtypes, true, comm,
                                         nullptr, "MPI_Neighbor_alltoallw_c");
}

int PMPI_Ineighbor_alltoallw_c(const void* sendbuf, const MPI_Count sendcounts[],
                               const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                               void* recvbuf, const MPI_Count recvcounts[],
                               const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                               MPI_Comm comm, MPI_Request* request) {
  return alltoallvw<MPI_Count, MPI_Aint>(sendbuf, sendcounts, nullptr, sdispls, sendtypes, recvbuf,
                                         recvcounts, nullptr, rdispls, recvtypes, true, comm,
                                         request, "MPI_Ineighbor_alltoallw_c");
}

}  // extern "C"

// The MPI_ names: weak, so a profiling library defining them comes first (MPI-3.1
// §14.2); it reaches these definitions as PMPI_.
#pragma weak MPI_Dims_create = PMPI_Dims_create
#pragma weak MPI_Cart_create = PMPI_Cart_create
#pragma weak MPI_Cart_map = PMPI_Cart_map
#pragma weak MPI_Cartdim_get = PMPI_Cartdim_get
#pragma weak MPI_Cart_get = PMPI_Cart_get
#pragma weak MPI_Cart_coords = PMPI_Cart_coords
#pragma weak MPI_Cart_rank = PMPI_Cart_rank
#pragma weak MPI_Cart_shift = PMPI_Cart_shift
#pragma weak MPI_Cart_sub = PMPI_Cart_sub
#pragma weak MPI_Graph_create = PMPI_Graph_create
#pragma weak MPI_Graph_map = PMPI_Graph_map
#pragma weak MPI_Graphdims_get = PMPI_Graphdims_get
#pragma weak MPI_Graph_get = PMPI_Graph_get
#pragma weak MPI_Graph_neighbors_count = PMPI_Graph_neighbors_count
#pragma weak MPI_Graph_neighbors = PMPI_Graph_neighbors
#pragma weak MPI_Dist_graph_create_adjacent = PMPI_Dist_graph_create_adjacent
#pragma weak MPI_Dist_graph_create = PMPI_Dist_graph_create
#pragma weak MPI_Dist_graph_neighbors_count = PMPI_Dist_graph_neighbors_count
#pragma weak MPI_Dist_graph_neighbors = PMPI_Dist_graph_neighbors
#pragma weak MPI_Topo_test = PMPI_Topo_test
#pragma weak MPI_Neighbor_allgather = PMPI_Neighbor_allgather
#pragma weak MPI_Ineighbor_allgather = PMPI_Ineighbor_allgather
#pragma weak MPI_Neighbor_allgatherv = PMPI_Neighbor_allgatherv
#pragma weak MPI_Ineighbor_allgatherv = PMPI_Ineighbor_allgatherv
#pragma weak MPI_Neighbor_alltoall = PMPI_Neighbor_alltoall
#pragma weak MPI_Ineighbor_alltoall = PMPI_Ineighbor_alltoall
#pragma weak MPI_Neighbor_alltoallv = PMPI_Neighbor_alltoallv
#pragma weak MPI_Ineighbor_alltoallv = PMPI_Ineighbor_alltoallv
#pragma weak MPI_Neighbor_alltoallw = PMPI_Neighbor_alltoallw
#pragma weak MPI_Ineighbor_alltoallw = PMPI_Ineighbor_alltoallw
#pragma weak MPI_Neighbor_allgather_c = PMPI_Neighbor_allgather_c
#pragma weak MPI_Ineighbor_allgather_c = PMPI_Ineighbor_allgather_c
#pragma weak MPI_Neighbor_allgatherv_c = PMPI_Neighbor_allgatherv_c
#pragma weak MPI_Ineighbor_allgatherv_c = PMPI_Ineighbor_allgatherv_c
#pragma weak MPI_Neighbor_alltoall_c = PMPI_Neighbor_alltoall_c
#pragma weak MPI_Ineighbor_alltoall_c = PMPI_Ineighbor_alltoall_c
#pragma weak MPI_Neighbor_alltoallv_c = PMPI_Neighbor_alltoallv_c
#pragma weak MPI_Ineighbor_alltoallv_c = PMPI_Ineighbor_alltoallv_c
#pragma weak MPI_Neighbor_alltoallw_c = PMPI_Neighbor_alltoallw_c
#pragma weak MPI_Ineighbor_alltoallw_c = PMPI_Ineighbor_alltoallw_c
