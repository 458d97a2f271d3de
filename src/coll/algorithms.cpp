// The collective algorithms, each compiled into a Schedule by a Builder.
//
// Sources: dissemination barrier [Hensgen]; binomial trees, recursive
// doubling, [Bruck] and pairwise exchange as in [Thakur-Coll], which also gives the
// fold of extra ranks for non-powers of two; Rabenseifner's reduce-scatter + allgather
// allreduce [Rabenseifner]; van de Geijn's scatter + allgather broadcast [InterCom].
//
// Conventions: `r` is this rank and `P` the group size; algorithms over a root work in
// relative ranks vr = (r - root) mod P. Every pair of ranks posts its messages in the same
// order on both sides (schedule.hpp explains why that makes one tag per collective enough).
#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "coll/coll.hpp"
#include "coll/schedule.hpp"
#include "util/stats.hpp"

namespace sluice::coll {

namespace {

// Algorithm thresholds (bytes). Where MPICH has a matching CVAR its default is used. Bcast,
// allreduce and alltoall read theirs from tuning() (coll.hpp); the others are fixed here.
constexpr std::size_t kReduceShort = 2048;      // MPIR_CVAR_REDUCE_SHORT_MSG_SIZE
constexpr std::size_t kAllgatherShort = 81920;  // MPIR_CVAR_ALLGATHER_SHORT_MSG_SIZE (total)
constexpr std::size_t kAllgatherLong = 524288;  // MPIR_CVAR_ALLGATHER_LONG_MSG_SIZE (total)
// Gather/scatter: binomial trees forward data through interior ranks (log P latency); for
// large totals a direct linear exchange moves every byte once, which wins on shared memory.
constexpr std::size_t kGatherBinomialMax = 65536;  // total bytes at the root
// Allgatherv: all blocks exchanged at once (one round) below this total, ring above.
constexpr std::size_t kAllgathervAllAtOnce = 65536;
// Reduce: receive every child's contribution at once (one buffer each) up to this size,
// else one child at a time through two alternating buffers.
constexpr std::size_t kReduceAllAtOnce = 65536;
// Alltoallv: every message posted at once up to this many ranks and block size, pairwise
// rounds beyond (bounds the requests and bytes in flight). Each pair exchanges one message
// per direction, so ranks may choose differently (each knows only its own counts).
constexpr int kAlltoallvAtOnceMaxProcs = 64;

// Every algorithm, for reports and the statistics counters "coll.<collective>.<algorithm>"
// (schedules started).
Algorithm kAlgoBarrierDissemination{"barrier: dissemination", "barrier.dissemination"};
Algorithm kAlgoBcastBinomial{"bcast: binomial tree", "bcast.binomial"};
Algorithm kAlgoBcastScatterRing{"bcast: scatter + ring allgather", "bcast.scatter_ring"};
Algorithm kAlgoBcastLinear{"bcast: linear (root to every rank)", "bcast.linear"};
Algorithm kAlgoReduceBinomial{"reduce: binomial tree", "reduce.binomial"};
Algorithm kAlgoReduceOrderedBinomial{"reduce: rank-ordered binomial tree",
                                     "reduce.ordered_binomial"};
Algorithm kAlgoReduceRabenseifner{"reduce: Rabenseifner reduce-scatter + gather",
                                  "reduce.rabenseifner"};
Algorithm kAlgoAllreduceRecursiveDoubling{"allreduce: recursive doubling",
                                          "allreduce.recursive_doubling"};
Algorithm kAlgoAllreduceRabenseifner{"allreduce: Rabenseifner reduce-scatter + allgather",
                                     "allreduce.rabenseifner"};
Algorithm kAlgoAllreduceAllAtOnce{"allreduce: all at once (every vector to every rank)",
                                  "allreduce.all_at_once"};
Algorithm kAlgoAllreduceDirect{"allreduce: direct reduce-scatter + allgather", "allreduce.direct"};
Algorithm kAlgoGatherBinomial{"gather: binomial tree", "gather.binomial"};
Algorithm kAlgoGatherLinear{"gather: linear", "gather.linear"};
Algorithm kAlgoGathervLinear{"gatherv: linear", "gatherv.linear"};
Algorithm kAlgoScatterBinomial{"scatter: binomial tree", "scatter.binomial"};
Algorithm kAlgoScatterLinear{"scatter: linear", "scatter.linear"};
Algorithm kAlgoScattervLinear{"scatterv: linear", "scatterv.linear"};
Algorithm kAlgoAllgatherRecursiveDoubling{"allgather: recursive doubling",
                                          "allgather.recursive_doubling"};
Algorithm kAlgoAllgatherBruck{"allgather: Bruck", "allgather.bruck"};
Algorithm kAlgoAllgatherRing{"allgather: ring", "allgather.ring"};
Algorithm kAlgoAllgathervAllAtOnce{"allgatherv: all at once", "allgatherv.all_at_once"};
Algorithm kAlgoAllgathervRing{"allgatherv: ring", "allgatherv.ring"};
Algorithm kAlgoAlltoallAllAtOnce{"alltoall: all at once", "alltoall.all_at_once"};
Algorithm kAlgoAlltoallBruck{"alltoall: Bruck", "alltoall.bruck"};
Algorithm kAlgoAlltoallPairwise{"alltoall: pairwise exchange", "alltoall.pairwise"};
Algorithm kAlgoAlltoallvAllAtOnce{"alltoallv: all at once", "alltoallv.all_at_once"};
Algorithm kAlgoAlltoallvPairwise{"alltoallv: pairwise exchange", "alltoallv.pairwise"};
Algorithm kAlgoReduceScatterRecursiveHalving{"reduce_scatter: recursive halving",
                                             "reduce_scatter.recursive_halving"};
Algorithm kAlgoReduceScatterOrderedReduceScatterv{"reduce_scatter: rank-ordered reduce + scatterv",
                                                  "reduce_scatter.ordered_reduce_scatterv"};
Algorithm kAlgoScanRecursiveDoubling{"scan: recursive doubling", "scan.recursive_doubling"};
Algorithm kAlgoExscanRecursiveDoubling{"exscan: recursive doubling", "exscan.recursive_doubling"};
Algorithm kAlgoExchangeListed{"exchange: listed transfers", "exchange.listed"};
Algorithm* const kAlgorithms[] = {&kAlgoBarrierDissemination,
                                  &kAlgoBcastBinomial,
                                  &kAlgoBcastScatterRing,
                                  &kAlgoBcastLinear,
                                  &kAlgoReduceBinomial,
                                  &kAlgoReduceOrderedBinomial,
                                  &kAlgoReduceRabenseifner,
                                  &kAlgoAllreduceRecursiveDoubling,
                                  &kAlgoAllreduceRabenseifner,
                                  &kAlgoAllreduceAllAtOnce,
                                  &kAlgoAllreduceDirect,
                                  &kAlgoGatherBinomial,
                                  &kAlgoGatherLinear,
                                  &kAlgoGathervLinear,
                                  &kAlgoScatterBinomial,
                                  &kAlgoScatterLinear,
                                  &kAlgoScattervLinear,
                                  &kAlgoAllgatherRecursiveDoubling,
                                  &kAlgoAllgatherBruck,
                                  &kAlgoAllgatherRing,
                                  &kAlgoAllgathervAllAtOnce,
                                  &kAlgoAllgathervRing,
                                  &kAlgoAlltoallAllAtOnce,
                                  &kAlgoAlltoallBruck,
                                  &kAlgoAlltoallPairwise,
                                  &kAlgoAlltoallvAllAtOnce,
                                  &kAlgoAlltoallvPairwise,
                                  &kAlgoReduceScatterRecursiveHalving,
                                  &kAlgoReduceScatterOrderedReduceScatterv,
                                  &kAlgoScanRecursiveDoubling,
                                  &kAlgoExscanRecursiveDoubling,
                                  &kAlgoExchangeListed};

using B = std::byte;

uint64_t u(const void* p) {
  return reinterpret_cast<uintptr_t>(p);
}
// Key of a reduction's shape (Builder::Key): operator function, element size, order.
uint64_t red_key(const Reducer& op) {
  return op.elem_size << 1 | (op.commutative ? 1 : 0);
}
B* wb(void* p) {
  return static_cast<B*>(p);
}
const B* rb(const void* p) {
  return static_cast<const B*>(p);
}

int pof2_floor(int n) {
  return static_cast<int>(std::bit_floor(static_cast<unsigned>(n)));
}
bool is_pof2(int n) {
  return std::has_single_bit(static_cast<unsigned>(n));
}

// The ranks of a binomial tree over relative ranks, rooted at relative rank 0.
struct TreeNode {
  int parent = -1;  // relative rank, -1 at the root
  int nchildren = 0;
  int children[32] = {};  // relative ranks, increasing (smallest subtree first)
  int subtree = 0;        // ranks in this node's subtree (itself included)
};

TreeNode binomial(int vr, int P) {
  TreeNode t;
  int mask = 1;
  for (; mask < P; mask <<= 1) {
    if (vr & mask) {
      t.parent = vr - mask;
      break;
    }
    if (vr + mask < P) t.children[t.nchildren++] = vr + mask;
  }
  t.subtree = std::min(mask, P - vr);
  return t;
}
// Subtree size of the child at relative rank c (its lowest set bit bounds it).
int child_subtree(int c, int P) {
  return std::min(c & -c, P - c);
}

// ---- broadcast -------------------------------------------------------------------------

void bcast_binomial(Builder& b, B* buf, std::size_t bytes, int root) {
  const int P = b.size(), vr = (b.rank() - root + P) % P;
  auto abs = [&](int v) { return (v + root) % P; };
  const TreeNode t = binomial(vr, P);
  if (t.parent >= 0) {
    b.recv(abs(t.parent), buf, bytes);
    b.end_round();
  }
  for (int i = t.nchildren - 1; i >= 0; --i) b.send(abs(t.children[i]), buf, bytes);
  b.end_round();
}

// van de Geijn: binomial scatter of P chunks, then a ring allgather. Moves ~2n bytes per
// rank instead of n log P at the root.
void bcast_scatter_ring(Builder& b, B* buf, std::size_t bytes, int root) {
  const int P = b.size(), vr = (b.rank() - root + P) % P;
  auto abs = [&](int v) { return (v + root) % P; };
  const std::size_t chunk = (bytes + P - 1) / P;
  auto off = [&](int v) {
    return std::min<std::size_t>(static_cast<std::size_t>(v) * chunk, bytes);
  };
  auto span = [&](int v, int n) { return off(v + n) - off(v); };
  const TreeNode t = binomial(vr, P);
  if (t.parent >= 0) {
    b.recv(abs(t.parent), buf + off(vr), span(vr, t.subtree));
    b.end_round();
  }
  for (int i = t.nchildren - 1; i >= 0; --i) {
    const int c = t.children[i];
    b.send(abs(c), buf + off(c), span(c, child_subtree(c, P)));
  }
  b.end_round();
  const int left = abs((vr - 1 + P) % P), right = abs((vr + 1) % P);
  for (int i = 0; i < P - 1; ++i) {
    const int sblk = (vr - i + P) % P, rblk = (vr - i - 1 + P) % P;
    b.recv(left, buf + off(rblk), span(rblk, 1));
    b.send(right, buf + off(sblk), span(sblk, 1));
    b.end_round();
  }
}

// Linear: the root sends to every rank in one round. For few ranks on one host: every
// receiver depends on the root alone, so no rank waits for an interior rank of a tree to be
// scheduled (ranks sharing cores), and with the single-copy get every receiver copies its
// own bytes, in parallel.
void bcast_linear(Builder& b, B* buf, std::size_t bytes, int root) {
  const int P = b.size(), r = b.rank();
  if (r != root) {
    b.recv(root, buf, bytes);
  } else {
    for (int i = 1; i < P; ++i) b.send((root + i) % P, buf, bytes);
  }
  b.end_round();
}

// ---- reduce ----------------------------------------------------------------------------

// Binomial reduction. Commutative operators use the tree rooted at `root`; others use the
// tree rooted at rank 0, where every node's subtree is a contiguous rank range above it,
// so combining acc op child in child order preserves rank order, and rank 0 then sends
// the result to the root. `out` is where the root's result goes (nullptr elsewhere); at
// the root `mine` may equal `out` (in place).
void reduce_binomial(Builder& b, const B* mine, B* out, std::size_t count, int root) {
  const Reducer& op = b.reducer();
  const std::size_t n = count * op.elem_size;
  const int P = b.size(), r = b.rank();
  const int lroot = op.commutative ? root : 0;
  const int vr = (r - lroot + P) % P;
  auto abs = [&](int v) { return (v + lroot) % P; };
  const TreeNode t = binomial(vr, P);
  const int k = t.nchildren;
  const bool result_here = vr == 0 && r == root;  // this rank's accumulator is the answer
  const bool in_place = mine == out;
  const bool at_once = n <= kReduceAllAtOnce;

  const B* acc = mine;
  if (k > 0 && op.commutative && result_here && in_place) {
    // Accumulate straight into the root's buffer: out = child op out.
    if (at_once) {
      B* x[32];
      for (int j = 0; j < k; ++j) {
        x[j] = b.temp(n);
        b.recv(abs(t.children[j]), x[j], n);
      }
      b.end_round();
      for (int j = 0; j < k; ++j) b.reduce(x[j], out, count);
    } else {
      B* x = b.temp(n);
      for (int j = 0; j < k; ++j) {
        if (j > 0) b.reduce(x, out, count);
        b.recv(abs(t.children[j]), x, n);
        b.end_round();
      }
      b.reduce(x, out, count);
    }
    acc = out;
  } else if (k > 0) {
    // acc_j = acc_{j-1} op child_j, stored in the buffer child j was received into; the
    // last one is the root's output buffer when that is free, so no final copy.
    B* last = result_here && !in_place ? out : nullptr;
    if (at_once) {
      B* x[32];
      for (int j = 0; j < k; ++j) {
        x[j] = j == k - 1 && last ? last : b.temp(n);
        b.recv(abs(t.children[j]), x[j], n);
      }
      b.end_round();
      for (int j = 0; j < k; ++j) {
        b.reduce(acc, x[j], count);
        acc = x[j];
      }
    } else {
      // Two alternating buffers; the last child's is `last` when there is one.
      B* even = last ? last : b.temp(n);
      B* odd = k > 1 ? b.temp(n) : nullptr;
      auto x = [&](int j) { return (k - 1 - j) % 2 == 0 ? even : odd; };
      for (int j = 0; j < k; ++j) {
        if (j > 0) {
          b.reduce(acc, x(j - 1), count);
          acc = x(j - 1);
        }
        b.recv(abs(t.children[j]), x(j), n);
        b.end_round();
      }
      b.reduce(acc, x(k - 1), count);
      acc = x(k - 1);
    }
    if (result_here && acc != out) b.copy(acc, out, n);
  }
  if (t.parent >= 0) b.send(abs(t.parent), acc, n);
  if (lroot != root) {
    if (vr == 0) b.send(root, acc, n);
    if (r == root) {
      if (in_place) b.end_round();  // our contribution leaves from `out` first
      b.recv(0, out, n);
    }
  }
  b.end_round();
}

// ---- allreduce -------------------------------------------------------------------------

// Recursive doubling; ranks beyond the largest power of two fold into their even
// neighbour first and get the result back at the end. Order-preserving: each exchange
// combines two adjacent rank ranges, lower one on the left.
void allreduce_recursive_doubling(Builder& b, const B* mine, B* out, std::size_t count) {
  const Reducer& op = b.reducer();
  const std::size_t n = count * op.elem_size;
  const int P = b.size(), r = b.rank();
  const int pof2 = pof2_floor(P), rem = P - pof2;
  // The accumulator starts as our (read-only) input and moves to `out` or `tmp`.
  bool acc_ro = mine != out;
  B* acc = out;
  B* tmp = nullptr;
  auto scratch = [&] { return tmp ? tmp : (tmp = b.temp(n)); };

  // Receive the partner's vector and fold it into the accumulator; `lower`: the partner's
  // ranks precede ours. The reduction runs at the start of the next round.
  auto exchange = [&](int peer, bool lower, bool send_ours) {
    const bool keep_order_copy = acc_ro && lower && !op.commutative;
    B* x = acc_ro ? (keep_order_copy ? scratch() : out) : (acc == out ? scratch() : out);
    b.recv(peer, x, n);
    if (send_ours) b.send(peer, acc_ro ? mine : acc, n);
    b.end_round();
    if (acc_ro) {
      if (keep_order_copy) {
        b.copy(mine, out, n);
        b.reduce(x, out, count);  // out = theirs op ours
      } else {
        b.reduce(mine, out, count);  // out = ours op theirs
      }
      acc = out;
      acc_ro = false;
    } else if (op.commutative || lower) {
      b.reduce(x, acc, count);  // acc = theirs op acc
    } else {
      b.reduce(acc, x, count);  // acc op theirs, left in x
      acc = x;
    }
  };

  int newrank;
  if (r < 2 * rem) {
    if (r % 2 == 0) {
      b.send(r + 1, mine, n);
      if (!acc_ro) b.end_round();  // in place: the result overwrites what we send
      b.recv(r + 1, out, n);
      b.end_round();
      return;
    }
    exchange(r - 1, true, false);
    newrank = r / 2;
  } else {
    newrank = r - rem;
  }
  for (int mask = 1; mask < pof2; mask <<= 1) {
    const int nd = newrank ^ mask;
    const int peer = nd < rem ? nd * 2 + 1 : nd + rem;
    exchange(peer, peer < r, true);
  }
  if (acc_ro)
    b.copy(mine, out, n);
  else if (acc != out)
    b.copy(acc, out, n);
  if (r < 2 * rem) b.send(r - 1, out, n);
  b.end_round();
}

// All at once (small vectors, few ranks): every rank sends its vector to every other and
// reduces all P in rank order itself. One round: each rank waits only for the others'
// messages, never for a partner to finish an earlier step, which is what costs when ranks
// share cores (every step of recursive doubling needs both partners scheduled). Any
// operator: the result is v_0 op (v_1 op (... op v_{P-1})), built from the top.
void allreduce_all_at_once(Builder& b, const B* mine, B* out, std::size_t count) {
  const Reducer& op = b.reducer();
  const std::size_t n = count * op.elem_size;
  const int P = b.size(), r = b.rank();
  const bool in_place = mine == out;
  // theirs[j]: rank j's vector (j != r).
  B* x = b.temp(static_cast<std::size_t>(P - 1) * n);
  auto theirs = [&](int j) { return x + static_cast<std::size_t>(j < r ? j : j - 1) * n; };
  for (int i = 1; i < P; ++i) {
    const int j = (r - i + P) % P;
    b.recv(j, theirs(j), n);
  }
  for (int i = 1; i < P; ++i) b.send((r + i) % P, mine, n);
  b.end_round();
  if (op.commutative) {
    b.copy(mine, out, n);  // nothing in place
    for (int j = 0; j < P; ++j)
      if (j != r) b.reduce(theirs(j), out, count);
  } else {
    // Ours must survive until its turn: in place, `out` is overwritten by the top ranks'.
    const B* own = mine;
    if (in_place && r != P - 1) {
      B* keep = b.temp(n);
      b.copy(mine, keep, n);
      own = keep;
    }
    auto src = [&](int j) -> const B* { return j == r ? own : theirs(j); };
    b.copy(src(P - 1), out, n);
    for (int j = P - 2; j >= 0; --j) b.reduce(src(j), out, count);
  }
  b.end_round();
}

// Direct reduce-scatter + allgather (few ranks, larger vectors): rank j sends block i of its
// vector to rank i, which reduces the P contributions to block i in rank order and sends the
// result to every rank. Rabenseifner's volume (~2n per rank) in two rounds instead of
// 2 log P, with no fold for non-powers of two; any operator.
void allreduce_direct(Builder& b, const B* mine, B* out, std::size_t count) {
  const Reducer& op = b.reducer();
  const std::size_t es = op.elem_size;
  const int P = b.size(), r = b.rank();
  const bool in_place = mine == out;
  const std::size_t q = count / static_cast<std::size_t>(P),
                    qr = count % static_cast<std::size_t>(P);
  auto disp = [&](int blk) {  // first element of block blk; blocks below qr hold q + 1
    return static_cast<std::size_t>(blk) * q + std::min<std::size_t>(blk, qr);
  };
  auto cnt = [&](int blk) { return disp(blk + 1) - disp(blk); };
  const std::size_t my = cnt(r), my_off = disp(r) * es, slot = cnt(0) * es;
  B* acc = out + my_off;
  // contrib(j): rank j's share of our block (j != r). Commutative and not in place, the
  // first one arrives straight in the accumulator.
  const bool first_in_acc = op.commutative && !in_place;
  const int first = (r - 1 + P) % P;
  B* x = b.temp(static_cast<std::size_t>(P - 1) * slot);
  auto contrib = [&](int j) {
    if (first_in_acc && j == first) return acc;
    return x + static_cast<std::size_t>(j < r ? j : j - 1) * slot;
  };
  const B* own = mine + my_off;
  if (!op.commutative && in_place && r != P - 1) {  // ours must survive the chain below
    B* keep = b.temp(my * es);
    b.copy(own, keep, my * es);
    own = keep;
  }
  for (int i = 1; i < P; ++i) {
    const int j = (r - i + P) % P;
    b.recv(j, contrib(j), my * es);
  }
  for (int i = 1; i < P; ++i) {
    const int j = (r + i) % P;
    b.send(j, mine + disp(j) * es, cnt(j) * es);
  }
  b.end_round();
  if (op.commutative) {
    if (first_in_acc) b.reduce(own, acc, my);  // acc = ours op first's
    for (int j = 0; j < P; ++j)
      if (j != r && !(first_in_acc && j == first)) b.reduce(contrib(j), acc, my);
  } else {
    auto src = [&](int j) -> const B* { return j == r ? own : contrib(j); };
    b.copy(src(P - 1), acc, my * es);
    for (int j = P - 2; j >= 0; --j) b.reduce(src(j), acc, my);
  }
  for (int i = 1; i < P; ++i) {
    const int j = (r - i + P) % P;
    b.recv(j, out + disp(j) * es, cnt(j) * es);
  }
  for (int i = 1; i < P; ++i) b.send((r + i) % P, acc, my * es);
  b.end_round();
}

// Rabenseifner's reduce-scatter phase (commutative operators), shared by allreduce and
// reduce: ranks beyond the largest power of two fold into their odd neighbour, then
// recursive halving over pof2 blocks leaves block `newrank` of the reduction in `acc`
// (n elements, writable; may equal `mine`, i.e. in place). Folded-away ranks only send.
struct Halving {
  int pof2 = 1, rem = 0, newrank = -1;
  std::size_t q = 0, qr = 0;  // block b holds q elements, plus one for b < qr
  struct Step {
    int peer, klo, khi, slo, shi;  // blocks kept [klo, khi) and sent [slo, shi)
  } steps[32];
  int nsteps = 0;
  std::size_t disp(int blk) const {  // first element of block blk
    return static_cast<std::size_t>(blk) * q + std::min<std::size_t>(blk, qr);
  }
  int world_of(int nr) const { return nr < rem ? nr * 2 + 1 : nr + rem; }
};

Halving reduce_scatter_rabenseifner(Builder& b, const B* mine, B* acc, std::size_t count) {
  const std::size_t es = b.reducer().elem_size, n = count * es;
  const int P = b.size(), r = b.rank();
  Halving h;
  h.pof2 = pof2_floor(P);
  h.rem = P - h.pof2;
  h.q = count / h.pof2;
  h.qr = count % h.pof2;
  bool acc_ro = mine != acc;  // our data still only in `mine`
  if (r < 2 * h.rem) {
    if (r % 2 == 0) {
      b.send(r + 1, mine, n);
      b.end_round();
      return h;
    }
    B* x = acc_ro ? acc : b.temp(n);
    b.recv(r - 1, x, n);
    b.end_round();
    b.reduce(acc_ro ? mine : x, acc, count);
    acc_ro = false;
    h.newrank = r / 2;
  } else {
    h.newrank = r - h.rem;
  }
  B* half = nullptr;  // the partner's share of our half; the first half is the largest
  int lo = 0, hi = h.pof2;
  for (int mask = h.pof2 / 2; mask >= 1; mask >>= 1) {
    const int peer = h.world_of(h.newrank ^ mask), mid = lo + mask;
    const Halving::Step s = h.newrank < mid ? Halving::Step{peer, lo, mid, mid, hi}
                                            : Halving::Step{peer, mid, hi, lo, mid};
    const std::size_t ko = h.disp(s.klo), kc = h.disp(s.khi) - ko;
    const std::size_t so = h.disp(s.slo), sc = h.disp(s.shi) - so;
    if (acc_ro) {
      b.recv(peer, acc + ko * es, kc * es);
      b.send(peer, mine + so * es, sc * es);
      b.end_round();
      b.reduce(mine + ko * es, acc + ko * es, kc);
      acc_ro = false;
    } else {
      if (!half) half = b.temp(h.disp(h.pof2 / 2) * es);
      b.recv(peer, half, kc * es);
      b.send(peer, acc + so * es, sc * es);
      b.end_round();
      b.reduce(half, acc + ko * es, kc);
    }
    h.steps[h.nsteps++] = s;
    lo = s.klo;
    hi = s.khi;
  }
  return h;
}

// Rabenseifner allreduce: the reduce-scatter above, then an allgather by recursive
// doubling (the halving steps in reverse), so each rank moves ~2n bytes, not n log P.
void allreduce_rabenseifner(Builder& b, const B* mine, B* out, std::size_t count) {
  const std::size_t es = b.reducer().elem_size, n = count * es;
  const int r = b.rank();
  const Halving h = reduce_scatter_rabenseifner(b, mine, out, count);
  if (h.newrank < 0) {  // folded away: the odd neighbour sends the result
    b.recv(r + 1, out, n);
    b.end_round();
    return;
  }
  for (int i = h.nsteps - 1; i >= 0; --i) {
    const Halving::Step& s = h.steps[i];
    b.recv(s.peer, out + h.disp(s.slo) * es, (h.disp(s.shi) - h.disp(s.slo)) * es);
    b.send(s.peer, out + h.disp(s.klo) * es, (h.disp(s.khi) - h.disp(s.klo)) * es);
    b.end_round();
  }
  if (r < 2 * h.rem) b.send(r - 1, out, n);
  b.end_round();
}

// Rabenseifner reduce: the reduce-scatter above, then a binomial gather of the blocks to
// the root (the halving steps in reverse, each pair's half nearer the root receiving).
// The root accumulates in its own buffer; a folded-away root gets the result from its
// odd neighbour.
void reduce_rabenseifner(Builder& b, const B* mine, B* out, std::size_t count, int root) {
  const std::size_t es = b.reducer().elem_size, n = count * es;
  const int r = b.rank();
  B* acc = r == root ? out : b.temp(n);
  const Halving h = reduce_scatter_rabenseifner(b, mine, acc, count);
  const int newroot = root < 2 * h.rem ? root / 2 : root - h.rem;
  if (h.newrank >= 0) {
    for (int i = h.nsteps - 1; i >= 0; --i) {
      const Halving::Step& s = h.steps[i];
      const int mask = h.pof2 >> (i + 1);
      if ((h.newrank & mask) == (newroot & mask)) {  // receive the partner's blocks
        b.recv(s.peer, acc + h.disp(s.slo) * es, (h.disp(s.shi) - h.disp(s.slo)) * es);
        b.end_round();
      } else {  // hand ours over and stop
        b.send(s.peer, acc + h.disp(s.klo) * es, (h.disp(s.khi) - h.disp(s.klo)) * es);
        b.end_round();
        return;
      }
    }
    if (h.world_of(newroot) != root) b.send(root, acc, n);  // our folded-away even root
  } else if (r == root) {
    b.recv(r + 1, out, n);
  }
  b.end_round();
}

// ---- gather / scatter ------------------------------------------------------------------

// Binomial gather: each interior rank collects its subtree's blocks (contiguous in
// relative rank order) and forwards them. The root receives straight into its buffer
// except for the one subtree that wraps around the end of it.
void gather_binomial(Builder& b, const B* mine, B* out, std::size_t bytes, int root) {
  const int P = b.size(), vr = (b.rank() - root + P) % P;
  auto abs = [&](int v) { return (v + root) % P; };
  const TreeNode t = binomial(vr, P);
  if (vr == 0) {
    b.copy(mine, out + static_cast<std::size_t>(root) * bytes, bytes);
    struct Wrap {
      B* buf;
      int first, n;
    } wrap{nullptr, 0, 0};
    for (int i = t.nchildren - 1; i >= 0; --i) {
      const int c = t.children[i], s = child_subtree(c, P), a = abs(c);
      if (a + s <= P) {
        b.recv(a, out + static_cast<std::size_t>(a) * bytes, s * bytes);
      } else {
        wrap = {b.temp(s * bytes), a, s};
        b.recv(a, wrap.buf, s * bytes);
      }
    }
    b.end_round();
    if (wrap.buf) {
      const std::size_t head = static_cast<std::size_t>(P - wrap.first) * bytes;
      b.copy(wrap.buf, out + static_cast<std::size_t>(wrap.first) * bytes, head);
      b.copy(wrap.buf + head, out, wrap.n * bytes - head);
    }
    b.end_round();
    return;
  }
  if (t.nchildren == 0) {
    b.send(abs(t.parent), mine, bytes);
    b.end_round();
    return;
  }
  B* sub = b.temp(t.subtree * bytes);
  b.copy(mine, sub, bytes);
  for (int i = t.nchildren - 1; i >= 0; --i) {
    const int c = t.children[i];
    b.recv(abs(c), sub + static_cast<std::size_t>(c - vr) * bytes, child_subtree(c, P) * bytes);
  }
  b.end_round();
  b.send(abs(t.parent), sub, t.subtree * bytes);
  b.end_round();
}

void gather_linear(Builder& b, const B* mine, B* out, std::span<const std::size_t> counts,
                   std::span<const std::size_t> displs, std::size_t sendbytes, int root) {
  const int P = b.size(), r = b.rank();
  if (r != root) {
    b.send(root, mine, sendbytes);
  } else {
    for (int i = 1; i < P; ++i) {
      const int src = (r + i) % P;
      b.recv(src, out + displs[src], counts[src]);
    }
    b.copy(mine, out + displs[r], counts[r]);
  }
  b.end_round();
}

void scatter_binomial(Builder& b, const B* in, B* out, std::size_t bytes, int root) {
  const int P = b.size(), vr = (b.rank() - root + P) % P;
  auto abs = [&](int v) { return (v + root) % P; };
  const TreeNode t = binomial(vr, P);
  if (vr == 0) {
    for (int i = t.nchildren - 1; i >= 0; --i) {
      const int c = t.children[i], s = child_subtree(c, P), a = abs(c);
      if (a + s <= P) {
        b.send(a, in + static_cast<std::size_t>(a) * bytes, s * bytes);
      } else {  // the subtree wraps around the end of the root's buffer
        B* w = b.temp(s * bytes);
        const std::size_t head = static_cast<std::size_t>(P - a) * bytes;
        b.copy(in + static_cast<std::size_t>(a) * bytes, w, head);
        b.copy(in, w + head, s * bytes - head);
        b.send(a, w, s * bytes);
      }
    }
    if (out) b.copy(in + static_cast<std::size_t>(root) * bytes, out, bytes);
    b.end_round();
    return;
  }
  if (t.nchildren == 0) {
    b.recv(abs(t.parent), out, bytes);
    b.end_round();
    return;
  }
  B* sub = b.temp(t.subtree * bytes);
  b.recv(abs(t.parent), sub, t.subtree * bytes);
  b.end_round();
  b.copy(sub, out, bytes);
  for (int i = t.nchildren - 1; i >= 0; --i) {
    const int c = t.children[i];
    b.send(abs(c), sub + static_cast<std::size_t>(c - vr) * bytes, child_subtree(c, P) * bytes);
  }
  b.end_round();
}

void scatter_linear(Builder& b, const B* in, std::span<const std::size_t> counts,
                    std::span<const std::size_t> displs, B* out, std::size_t recvbytes, int root) {
  const int P = b.size(), r = b.rank();
  if (r != root) {
    b.recv(root, out, recvbytes);
  } else {
    for (int i = 1; i < P; ++i) {
      const int dst = (r + i) % P;
      b.send(dst, in + displs[dst], counts[dst]);
    }
    if (out) b.copy(in + displs[r], out, counts[r]);
  }
  b.end_round();
}

// ---- allgather -------------------------------------------------------------------------

// Powers of two: at step k exchange the 2^k blocks gathered so far; data lands in place.
void allgather_recursive_doubling(Builder& b, B* out, std::size_t bytes) {
  const int P = b.size(), r = b.rank();
  for (int mask = 1; mask < P; mask <<= 1) {
    const int peer = r ^ mask;
    const std::size_t mine = static_cast<std::size_t>(r & ~(mask - 1)) * bytes;
    const std::size_t theirs = static_cast<std::size_t>(peer & ~(mask - 1)) * bytes;
    b.recv(peer, out + theirs, mask * bytes);
    b.send(peer, out + mine, mask * bytes);
    b.end_round();
  }
}

// Bruck: ceil(log2 P) steps for any P; blocks collect in rotated order in a temporary
// buffer (block i = rank r+i) and are rotated into place at the end.
void allgather_bruck(Builder& b, const B* mine, B* out, std::size_t bytes) {
  const int P = b.size(), r = b.rank();
  B* t = b.temp(static_cast<std::size_t>(P) * bytes);
  b.copy(mine, t, bytes);
  int have = 1;
  for (int dist = 1; dist < P; dist <<= 1) {
    const int n = std::min(dist, P - have);
    b.recv((r + dist) % P, t + static_cast<std::size_t>(have) * bytes, n * bytes);
    b.send((r - dist + P) % P, t, n * bytes);
    b.end_round();
    have += n;
  }
  const std::size_t head = static_cast<std::size_t>(P - r) * bytes;
  b.copy(t, out + static_cast<std::size_t>(r) * bytes, head);
  b.copy(t + head, out, static_cast<std::size_t>(r) * bytes);
  b.end_round();
}

// Ring: P-1 steps, each passing one block to the right; bandwidth-optimal for large data.
void allgatherv_ring(Builder& b, B* out, std::span<const std::size_t> counts,
                     std::span<const std::size_t> displs) {
  const int P = b.size(), r = b.rank();
  const int left = (r - 1 + P) % P, right = (r + 1) % P;
  for (int i = 0; i < P - 1; ++i) {
    const int sblk = (r - i + P) % P, rblk = (r - i - 1 + P) % P;
    b.recv(left, out + displs[rblk], counts[rblk]);
    b.send(right, out + displs[sblk], counts[sblk]);
    b.end_round();
  }
}

// All blocks at once: one round of P-1 sends and receives (best for small totals).
void allgatherv_at_once(Builder& b, const B* mine, B* out, std::span<const std::size_t> counts,
                        std::span<const std::size_t> displs) {
  const int P = b.size(), r = b.rank();
  for (int i = 1; i < P; ++i) {
    const int src = (r - i + P) % P;
    b.recv(src, out + displs[src], counts[src]);
  }
  for (int i = 1; i < P; ++i) b.send((r + i) % P, mine, counts[r]);
  b.end_round();
}

// ---- alltoall --------------------------------------------------------------------------

// Bruck: log2 P steps; at step k every block whose index has bit k travels 2^k ranks on.
void alltoall_bruck(Builder& b, const B* in, B* out, std::size_t bytes) {
  const int P = b.size(), r = b.rank();
  const std::size_t total = static_cast<std::size_t>(P) * bytes;
  B* t = b.temp(total);
  const std::size_t half = static_cast<std::size_t>((P + 1) / 2) * bytes;
  B* sbuf = b.temp(half);
  B* rbuf = b.temp(half);
  // t[i] = block for rank r+i.
  const std::size_t head = static_cast<std::size_t>(P - r) * bytes;
  b.copy(in + static_cast<std::size_t>(r) * bytes, t, head);
  b.copy(in, t + head, total - head);
  // Blocks with bit `dist` set form runs of `dist` consecutive indices.
  auto runs = [&](int dist, auto&& fn) {
    std::size_t packed = 0;
    for (int i = dist; i < P; i += 2 * dist) {
      const std::size_t len = static_cast<std::size_t>(std::min(dist, P - i)) * bytes;
      fn(static_cast<std::size_t>(i) * bytes, packed, len);
      packed += len;
    }
    return packed;
  };
  int prev = 0;
  for (int dist = 1; dist < P; dist <<= 1) {
    if (prev)
      runs(prev,
           [&](std::size_t at, std::size_t p, std::size_t len) { b.copy(rbuf + p, t + at, len); });
    const std::size_t n = runs(dist, [&](std::size_t at, std::size_t p, std::size_t len) {
      b.copy(t + at, sbuf + p, len);
    });
    b.recv((r - dist + P) % P, rbuf, n);
    b.send((r + dist) % P, sbuf, n);
    b.end_round();
    prev = dist;
  }
  if (prev)
    runs(prev,
         [&](std::size_t at, std::size_t p, std::size_t len) { b.copy(rbuf + p, t + at, len); });
  // t[i] now holds the block from rank r-i.
  for (int i = 0; i < P; ++i)
    b.copy(t + static_cast<std::size_t>(i) * bytes,
           out + static_cast<std::size_t>((r - i + P) % P) * bytes, bytes);
  b.end_round();
}

void alltoallv_at_once(Builder& b, const B* in, std::span<const std::size_t> scounts,
                       std::span<const std::size_t> sdispls, B* out,
                       std::span<const std::size_t> rcounts, std::span<const std::size_t> rdispls) {
  const int P = b.size(), r = b.rank();
  // Staggered peers so that not everyone targets rank 0 first.
  for (int i = 1; i < P; ++i) {
    const int src = (r + i) % P;
    b.recv(src, out + rdispls[src], rcounts[src]);
  }
  for (int i = 1; i < P; ++i) {
    const int dst = (r - i + P) % P;
    b.send(dst, in + sdispls[dst], scounts[dst]);
  }
  b.copy(in + sdispls[r], out + rdispls[r], std::min(scounts[r], rcounts[r]));
  b.end_round();
}

// Pairwise exchange: P-1 rounds, one partner each (XOR partners for powers of two).
void alltoallv_pairwise(Builder& b, const B* in, std::span<const std::size_t> scounts,
                        std::span<const std::size_t> sdispls, B* out,
                        std::span<const std::size_t> rcounts,
                        std::span<const std::size_t> rdispls) {
  const int P = b.size(), r = b.rank();
  const bool xor_partners = is_pof2(P);
  for (int i = 1; i < P; ++i) {
    const int src = xor_partners ? r ^ i : (r - i + P) % P;
    const int dst = xor_partners ? r ^ i : (r + i) % P;
    b.recv(src, out + rdispls[src], rcounts[src]);
    b.send(dst, in + sdispls[dst], scounts[dst]);
    // Our own block is copied while the first exchange is in flight.
    if (i == 1) b.copy(in + sdispls[r], out + rdispls[r], std::min(scounts[r], rcounts[r]));
    b.end_round();
  }
  if (P == 1) b.copy(in + sdispls[r], out + rdispls[r], std::min(scounts[r], rcounts[r]));
  b.end_round();
}

// ---- reduce-scatter --------------------------------------------------------------------

// Recursive halving (commutative operators). Extra ranks fold into their odd neighbour,
// which then owns both ranks' blocks (adjacent, so still one range per new rank).
void reduce_scatter_halving(Builder& b, const B* mine, B* out,
                            std::span<const std::size_t> counts) {
  const Reducer& op = b.reducer();
  const std::size_t es = op.elem_size;
  const int P = b.size(), r = b.rank();
  const int pof2 = pof2_floor(P), rem = P - pof2;
  std::vector<std::size_t> offs(P + 1, 0);  // element offset of each rank's block
  for (int i = 0; i < P; ++i) offs[i + 1] = offs[i] + counts[i];
  const std::size_t total = offs[P];
  auto bound = [&](int nr) { return offs[nr < rem ? 2 * nr : nr + rem]; };  // nr <= pof2

  if (r < 2 * rem && r % 2 == 0) {
    b.send(r + 1, mine, total * es);
    if (mine == out) b.end_round();
    b.recv(r + 1, out, counts[r] * es);
    b.end_round();
    return;
  }
  B* acc = b.temp(total * es);
  bool acc_ro = true;
  int newrank = r - rem;
  if (r < 2 * rem) {
    b.recv(r - 1, acc, total * es);
    b.end_round();
    b.reduce(mine, acc, total);
    acc_ro = false;
    newrank = r / 2;
  }
  auto world_of = [&](int nr) { return nr < rem ? nr * 2 + 1 : nr + rem; };
  const std::size_t first_half =
      std::max(bound(pof2 / 2) - bound(0), bound(pof2) - bound(pof2 / 2));
  B* half = nullptr;
  int lo = 0, hi = pof2;
  for (int mask = pof2 / 2; mask >= 1; mask >>= 1) {
    const int peer = world_of(newrank ^ mask), mid = lo + mask;
    const int klo = newrank < mid ? lo : mid, khi = newrank < mid ? mid : hi;
    const int slo = newrank < mid ? mid : lo, shi = newrank < mid ? hi : mid;
    const std::size_t ko = bound(klo), kc = bound(khi) - ko;
    const std::size_t so = bound(slo), sc = bound(shi) - so;
    if (acc_ro) {
      b.recv(peer, acc + ko * es, kc * es);
      b.send(peer, mine + so * es, sc * es);
      b.end_round();
      b.reduce(mine + ko * es, acc + ko * es, kc);
      acc_ro = false;
    } else {
      if (!half) half = b.temp(first_half * es);
      b.recv(peer, half, kc * es);
      b.send(peer, acc + so * es, sc * es);
      b.end_round();
      b.reduce(half, acc + ko * es, kc);
    }
    lo = klo;
    hi = khi;
  }
  if (r < 2 * rem) b.send(r - 1, acc + offs[r - 1] * es, counts[r - 1] * es);
  b.copy(acc + offs[r] * es, out, counts[r] * es);
  b.end_round();
}

// Any operator: an order-preserving reduce to rank 0, then a linear scatter of the blocks.
void reduce_scatter_via_root(Builder& b, const B* mine, B* out,
                             std::span<const std::size_t> counts) {
  const std::size_t es = b.reducer().elem_size;
  const int P = b.size(), r = b.rank();
  std::vector<std::size_t> bytes(P), displs(P);
  std::size_t total = 0;
  for (int i = 0; i < P; ++i) {
    displs[i] = total * es;
    bytes[i] = counts[i] * es;
    total += counts[i];
  }
  B* whole = r == 0 ? b.temp(total * es) : nullptr;
  reduce_binomial(b, mine, whole, total, 0);
  scatter_linear(b, whole, bytes, displs, out, bytes[r], 0);
}

// ---- scan ------------------------------------------------------------------------------

// Recursive doubling (MPICH's scan): `partial` accumulates the ranks of our current
// power-of-two group, the result only the lower ones.
void scan_recursive_doubling(Builder& b, const B* mine, B* out, std::size_t count, bool exclusive) {
  const Reducer& op = b.reducer();
  const std::size_t n = count * op.elem_size;
  const int P = b.size(), r = b.rank();
  B* partial = b.temp(n);
  B* tmp = b.temp(n);
  b.copy(mine, partial, n);
  if (!exclusive) b.copy(mine, out, n);
  bool have_result = !exclusive;
  for (int mask = 1; mask < P; mask <<= 1) {
    const int peer = r ^ mask;
    if (peer >= P) continue;
    b.recv(peer, tmp, n);
    b.send(peer, partial, n);
    b.end_round();
    if (peer < r) {
      b.reduce(tmp, partial, count);  // partial = theirs op partial
      if (have_result) {
        b.reduce(tmp, out, count);
      } else {
        b.copy(tmp, out, n);
        have_result = true;
      }
    } else if (op.commutative) {
      b.reduce(tmp, partial, count);
    } else {
      b.reduce(partial, tmp, count);  // partial op theirs, left in tmp
      std::swap(partial, tmp);
    }
  }
  b.end_round();
}

}  // namespace

// ---- entry points ------------------------------------------------------------------------

namespace {
// SLUICE_COLL_TUNING="field=value,...": overrides of the tuning table for measurements
// (sizes in bytes; a field name as in coll::Tuning), read from the configuration of the
// engine running the first collective. Unknown fields are reported and skipped.
Tuning tuning_from_config() {
  Tuning t;
  const detail::Engine* e = detail::current_engine();
  if (!e) return t;
  const std::string spec = e->config().get_string("COLL_TUNING");
  if (spec.empty()) return t;
  struct Field {
    const char* name;
    std::size_t* size;
    int* procs;
  };
  const Field fields[] = {{"bcast_linear_max_procs", nullptr, &t.bcast_linear_max_procs},
                          {"bcast_short", &t.bcast_short, nullptr},
                          {"bcast_min_procs", nullptr, &t.bcast_min_procs},
                          {"allreduce_direct_max_procs", nullptr, &t.allreduce_direct_max_procs},
                          {"allreduce_all_at_once_max", &t.allreduce_all_at_once_max, nullptr},
                          {"allreduce_short", &t.allreduce_short, nullptr},
                          {"alltoall_short", &t.alltoall_short, nullptr},
                          {"alltoall_bruck_min_procs", nullptr, &t.alltoall_bruck_min_procs},
                          {"alltoall_medium", &t.alltoall_medium, nullptr},
                          {"alltoall_at_once_total", &t.alltoall_at_once_total, nullptr}};
  std::size_t at = 0;
  while (at < spec.size()) {
    std::size_t end = spec.find(',', at);
    if (end == std::string::npos) end = spec.size();
    const std::string item = spec.substr(at, end - at);
    at = end + 1;
    const std::size_t eq = item.find('=');
    bool known = false;
    for (const Field& f : fields) {
      if (eq == std::string::npos || item.compare(0, eq, f.name) != 0 || std::strlen(f.name) != eq)
        continue;
      const unsigned long long v = std::strtoull(item.c_str() + eq + 1, nullptr, 10);
      if (f.size) *f.size = static_cast<std::size_t>(v);
      if (f.procs) *f.procs = static_cast<int>(std::min<unsigned long long>(v, 1u << 30));
      known = true;
    }
    if (!known && !item.empty())
      std::fprintf(stderr, "sluice: SLUICE_COLL_TUNING: unknown field '%s'\n", item.c_str());
  }
  return t;
}
}  // namespace

Tuning& tuning() {
  static Tuning t = tuning_from_config();
  return t;
}

Schedule* ibarrier(Group& g) {
  const Builder::Key key{1};
  if (Schedule* s = Builder::rerun(g, key)) return s;
  Builder b(g, kAlgoBarrierDissemination, &key);
  if (b.reused()) return b.start();
  const int P = g.size, r = g.rank;
  for (int k = 1; k < P; k <<= 1) {
    b.recv_signal((r - k + P) % P);
    b.send_signal((r + k) % P);
    b.end_round();
  }
  return b.start();
}

Schedule* ibcast(Group& g, void* buf, std::size_t bytes, int root) {
  const Builder::Key key{2, u(buf), bytes, static_cast<uint64_t>(root)};
  if (Schedule* s = Builder::rerun(g, key)) return s;
  Builder b(g, kAlgoBcastBinomial, &key);
  if (b.reused()) return b.start();
  if (g.size == 1 || bytes == 0) return b.start();
  // Two ranks: one message, and the root has nothing else to do, so the pipelined copy
  // (both cores copy) beats the receiver's single copy (1 MiB: ~40 µs against ~100 µs).
  // When ranks outnumber cores the engine takes the single copy at every size anyway.
  if (g.size == 2) b.prefer_pipeline();
  const Tuning& t = tuning();
  if (g.size > 2 && g.size <= t.bcast_linear_max_procs) {
    b.set_algorithm(kAlgoBcastLinear);
    bcast_linear(b, wb(buf), bytes, root);
  } else if (bytes < t.bcast_short || g.size < t.bcast_min_procs) {
    bcast_binomial(b, wb(buf), bytes, root);
  } else {
    b.set_algorithm(kAlgoBcastScatterRing);
    bcast_scatter_ring(b, wb(buf), bytes, root);
  }
  return b.start();
}

Schedule* ireduce(Group& g, const void* sendbuf, void* recvbuf, std::size_t count,
                  const Reducer& op, int root) {
  const Builder::Key key{3,
                         u(sendbuf),
                         u(recvbuf),
                         count,
                         red_key(op),
                         u(reinterpret_cast<const void*>(op.fn)),
                         static_cast<uint64_t>(root)};
  if (Schedule* s = Builder::rerun(g, key, &op)) return s;
  Builder b(g, op.commutative ? kAlgoReduceBinomial : kAlgoReduceOrderedBinomial, &key);
  b.set_reducer(op);
  if (b.reused()) return b.start();
  const B* mine = rb(sendbuf ? sendbuf : recvbuf);
  const std::size_t n = count * op.elem_size;
  if (n == 0) return b.start();
  if (g.size == 1) {
    b.copy(mine, recvbuf, n);
    return b.start();
  }
  if (op.commutative && n >= kReduceShort &&
      count >= static_cast<std::size_t>(pof2_floor(g.size))) {
    b.set_algorithm(kAlgoReduceRabenseifner);
    reduce_rabenseifner(b, mine, g.rank == root ? wb(recvbuf) : nullptr, count, root);
  } else {
    reduce_binomial(b, mine, g.rank == root ? wb(recvbuf) : nullptr, count, root);
  }
  return b.start();
}

Schedule* iallreduce(Group& g, const void* sendbuf, void* recvbuf, std::size_t count,
                     const Reducer& op) {
  const Builder::Key key{4,     u(sendbuf),  u(recvbuf),
                         count, red_key(op), u(reinterpret_cast<const void*>(op.fn))};
  if (Schedule* s = Builder::rerun(g, key, &op)) return s;
  Builder b(g, kAlgoAllreduceRecursiveDoubling, &key);
  b.set_reducer(op);
  if (b.reused()) return b.start();
  const B* mine = rb(sendbuf ? sendbuf : recvbuf);
  const std::size_t n = count * op.elem_size;
  if (n == 0) return b.start();
  if (g.size == 1) {
    b.copy(mine, recvbuf, n);
    return b.start();
  }
  const Tuning& t = tuning();
  if (g.size > 2 && g.size <= t.allreduce_direct_max_procs &&
      (n <= t.allreduce_all_at_once_max || count < static_cast<std::size_t>(g.size))) {
    b.set_algorithm(kAlgoAllreduceAllAtOnce);
    allreduce_all_at_once(b, mine, wb(recvbuf), count);
  } else if (g.size > 2 && g.size <= t.allreduce_direct_max_procs) {
    b.set_algorithm(kAlgoAllreduceDirect);
    allreduce_direct(b, mine, wb(recvbuf), count);
  } else if (op.commutative && n >= t.allreduce_short &&
             count >= static_cast<std::size_t>(pof2_floor(g.size))) {
    b.set_algorithm(kAlgoAllreduceRabenseifner);
    allreduce_rabenseifner(b, mine, wb(recvbuf), count);
  } else {
    allreduce_recursive_doubling(b, mine, wb(recvbuf), count);
  }
  return b.start();
}

Schedule* igather(Group& g, const void* sendbuf, void* recvbuf, std::size_t bytes, int root) {
  Builder b(g, kAlgoGatherBinomial);
  b.prefer_pipeline();
  const int P = g.size, r = g.rank;
  const B* mine = sendbuf ? rb(sendbuf) : rb(recvbuf) + static_cast<std::size_t>(r) * bytes;
  if (bytes == 0) return b.start();
  if (P == 1) {
    b.copy(mine, recvbuf, bytes);
    return b.start();
  }
  if (static_cast<std::size_t>(P) * bytes <= kGatherBinomialMax) {
    gather_binomial(b, mine, wb(recvbuf), bytes, root);
  } else {
    b.set_algorithm(kAlgoGatherLinear);
    std::vector<std::size_t> counts(r == root ? P : 0, bytes), displs(counts.size());
    for (std::size_t i = 0; i < displs.size(); ++i) displs[i] = i * bytes;
    gather_linear(b, mine, wb(recvbuf), counts, displs, bytes, root);
  }
  return b.start();
}

Schedule* igatherv(Group& g, const void* sendbuf, std::size_t sendbytes, void* recvbuf,
                   std::span<const std::size_t> counts, std::span<const std::size_t> displs,
                   int root) {
  Builder b(g, kAlgoGathervLinear);
  b.prefer_pipeline();
  const B* mine = sendbuf ? rb(sendbuf) : rb(recvbuf) + (g.rank == root ? displs[root] : 0);
  gather_linear(b, mine, wb(recvbuf), counts, displs, sendbytes, root);
  return b.start();
}

Schedule* iscatter(Group& g, const void* sendbuf, void* recvbuf, std::size_t bytes, int root) {
  Builder b(g, kAlgoScatterBinomial);
  const int P = g.size, r = g.rank;
  if (bytes == 0) return b.start();
  if (P == 1) {
    if (recvbuf) b.copy(sendbuf, recvbuf, bytes);
    return b.start();
  }
  if (static_cast<std::size_t>(P) * bytes <= kGatherBinomialMax) {
    scatter_binomial(b, rb(sendbuf), wb(recvbuf), bytes, root);
  } else {
    b.set_algorithm(kAlgoScatterLinear);
    std::vector<std::size_t> counts(r == root ? P : 0, bytes), displs(counts.size());
    for (std::size_t i = 0; i < displs.size(); ++i) displs[i] = i * bytes;
    scatter_linear(b, rb(sendbuf), counts, displs, wb(recvbuf), bytes, root);
  }
  return b.start();
}

Schedule* iscatterv(Group& g, const void* sendbuf, std::span<const std::size_t> counts,
                    std::span<const std::size_t> displs, void* recvbuf, std::size_t recvbytes,
                    int root) {
  Builder b(g, kAlgoScattervLinear);
  scatter_linear(b, rb(sendbuf), counts, displs, wb(recvbuf), recvbytes, root);
  return b.start();
}

Schedule* iallgather(Group& g, const void* sendbuf, void* recvbuf, std::size_t bytes) {
  const Builder::Key key{5, u(sendbuf), u(recvbuf), bytes};
  if (Schedule* s = Builder::rerun(g, key)) return s;
  Builder b(g, kAlgoAllgatherRecursiveDoubling, &key);
  if (b.reused()) return b.start();
  const int P = g.size, r = g.rank;
  B* out = wb(recvbuf);
  const B* mine = sendbuf ? rb(sendbuf) : out + static_cast<std::size_t>(r) * bytes;
  const std::size_t total = static_cast<std::size_t>(P) * bytes;
  if (bytes == 0) return b.start();
  if (is_pof2(P) && total < kAllgatherLong) {
    b.copy(mine, out + static_cast<std::size_t>(r) * bytes, bytes);
    allgather_recursive_doubling(b, out, bytes);
  } else if (total < kAllgatherShort) {
    b.set_algorithm(kAlgoAllgatherBruck);
    allgather_bruck(b, mine, out, bytes);
  } else {
    b.set_algorithm(kAlgoAllgatherRing);
    b.copy(mine, out + static_cast<std::size_t>(r) * bytes, bytes);
    std::vector<std::size_t> counts(P, bytes), displs(P);
    for (int i = 0; i < P; ++i) displs[i] = static_cast<std::size_t>(i) * bytes;
    allgatherv_ring(b, out, counts, displs);
  }
  return b.start();
}

Schedule* iallgatherv(Group& g, const void* sendbuf, std::size_t sendbytes, void* recvbuf,
                      std::span<const std::size_t> counts, std::span<const std::size_t> displs) {
  Builder b(g, kAlgoAllgathervAllAtOnce);
  const int P = g.size, r = g.rank;
  B* out = wb(recvbuf);
  const B* mine = sendbuf ? rb(sendbuf) : out + displs[r];
  std::size_t total = 0;
  for (int i = 0; i < P; ++i) total += counts[i];
  b.copy(mine, out + displs[r], std::min(sendbytes, counts[r]));
  if (total <= kAllgathervAllAtOnce) {
    allgatherv_at_once(b, mine, out, counts, displs);
  } else {
    b.set_algorithm(kAlgoAllgathervRing);
    allgatherv_ring(b, out, counts, displs);
  }
  return b.start();
}

Schedule* ialltoall(Group& g, const void* sendbuf, void* recvbuf, std::size_t bytes) {
  const Builder::Key key{6, u(sendbuf), u(recvbuf), bytes};
  if (Schedule* s = Builder::rerun(g, key)) return s;
  Builder b(g, kAlgoAlltoallAllAtOnce, &key);
  if (b.reused()) return b.start();
  const int P = g.size;
  const std::size_t total = static_cast<std::size_t>(P) * bytes;
  B* out = wb(recvbuf);
  const B* in = rb(sendbuf);
  if (bytes == 0) return b.start();
  if (!sendbuf) {  // in place: send from a copy of the buffer we receive into
    B* copy = b.temp(total);
    b.copy(out, copy, total);
    in = copy;
  }
  const Tuning& t = tuning();
  if (bytes <= t.alltoall_short && P >= t.alltoall_bruck_min_procs) {
    b.set_algorithm(kAlgoAlltoallBruck);
    alltoall_bruck(b, in, out, bytes);
  } else {
    std::vector<std::size_t> counts(P, bytes), displs(P);
    for (int i = 0; i < P; ++i) displs[i] = static_cast<std::size_t>(i) * bytes;
    // All at once while the whole exchange stays small: every round of the pairwise
    // exchange is a synchronisation point, and with ranks sharing cores each costs a
    // context switch.
    if (bytes <= t.alltoall_medium || total <= t.alltoall_at_once_total) {
      alltoallv_at_once(b, in, counts, displs, out, counts, displs);
    } else {
      b.set_algorithm(kAlgoAlltoallPairwise);
      alltoallv_pairwise(b, in, counts, displs, out, counts, displs);
    }
  }
  return b.start();
}

Schedule* ialltoallv(Group& g, const void* sendbuf, std::span<const std::size_t> scounts,
                     std::span<const std::size_t> sdispls, void* recvbuf,
                     std::span<const std::size_t> rcounts, std::span<const std::size_t> rdispls) {
  Builder b(g, kAlgoAlltoallvAllAtOnce);
  const int P = g.size;
  B* out = wb(recvbuf);
  if (!sendbuf) {  // in place: pack what we send (our receive blocks) into a copy
    std::size_t total = 0;
    for (int i = 0; i < P; ++i) total += rcounts[i];
    B* copy = b.temp(total);
    std::vector<std::size_t> displs(P);
    std::size_t at = 0;
    for (int i = 0; i < P; ++i) {
      displs[i] = at;
      b.copy(out + rdispls[i], copy + at, rcounts[i]);
      at += rcounts[i];
    }
    alltoallv_at_once(b, copy, rcounts, displs, out, rcounts, rdispls);
  } else if (P <= kAlltoallvAtOnceMaxProcs &&
             *std::max_element(scounts.begin(), scounts.end()) <= tuning().alltoall_medium &&
             *std::max_element(rcounts.begin(), rcounts.end()) <= tuning().alltoall_medium) {
    alltoallv_at_once(b, rb(sendbuf), scounts, sdispls, out, rcounts, rdispls);
  } else {
    b.set_algorithm(kAlgoAlltoallvPairwise);
    alltoallv_pairwise(b, rb(sendbuf), scounts, sdispls, out, rcounts, rdispls);
  }
  return b.start();
}

Schedule* ireduce_scatter(Group& g, const void* sendbuf, void* recvbuf,
                          std::span<const std::size_t> counts, const Reducer& op) {
  Builder b(g, op.commutative ? kAlgoReduceScatterRecursiveHalving
                              : kAlgoReduceScatterOrderedReduceScatterv);
  b.set_reducer(op);
  const int P = g.size;
  const B* mine = rb(sendbuf ? sendbuf : recvbuf);
  std::size_t total = 0;
  for (int i = 0; i < P; ++i) total += counts[i];
  if (total == 0) return b.start();
  if (P == 1) {
    b.copy(mine, recvbuf, total * op.elem_size);
  } else if (op.commutative) {
    reduce_scatter_halving(b, mine, wb(recvbuf), counts);
  } else {
    reduce_scatter_via_root(b, mine, wb(recvbuf), counts);
  }
  return b.start();
}

Schedule* ireduce_scatter_block(Group& g, const void* sendbuf, void* recvbuf, std::size_t count,
                                const Reducer& op) {
  std::vector<std::size_t> counts(g.size, count);
  return ireduce_scatter(g, sendbuf, recvbuf, counts, op);
}

Schedule* iscan(Group& g, const void* sendbuf, void* recvbuf, std::size_t count,
                const Reducer& op) {
  Builder b(g, kAlgoScanRecursiveDoubling);
  b.set_reducer(op);
  const B* mine = rb(sendbuf ? sendbuf : recvbuf);
  if (count * op.elem_size == 0) return b.start();
  if (g.size == 1) {
    b.copy(mine, recvbuf, count * op.elem_size);
    return b.start();
  }
  scan_recursive_doubling(b, mine, wb(recvbuf), count, false);
  return b.start();
}

Schedule* iexscan(Group& g, const void* sendbuf, void* recvbuf, std::size_t count,
                  const Reducer& op) {
  Builder b(g, kAlgoExscanRecursiveDoubling);
  b.set_reducer(op);
  const B* mine = rb(sendbuf ? sendbuf : recvbuf);
  if (count * op.elem_size == 0 || g.size == 1) return b.start();
  scan_recursive_doubling(b, mine, wb(recvbuf), count, true);
  return b.start();
}

Schedule* iexchange(Group& g, std::span<const Transfer> sends, std::span<const Transfer> recvs) {
  Builder b(g, kAlgoExchangeListed);
  for (const Transfer& t : recvs) {
    if (t.bytes == 0)
      b.recv_signal(t.peer);
    else
      b.recv(t.peer, t.buf, t.bytes);
  }
  for (const Transfer& t : sends) {
    if (t.bytes == 0)
      b.send_signal(t.peer);
    else
      b.send(t.peer, t.buf, t.bytes);
  }
  return b.start();
}

void register_algorithm_stats(util::StatsRegistry& reg) {
  for (const Algorithm* a : kAlgorithms)
    reg.add("coll", a->counter, util::Unit::count, &a->started, a->name);
}

}  // namespace sluice::coll
