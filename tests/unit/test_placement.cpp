// Unit tests for rank and progress-thread placement (src/coll/placement): [MPC-Threads]'
// algorithms 1 and 2 on synthetic hwloc topologies, the bind and none policies, the report,
// and real binding of the calling thread on this machine.
#include <gtest/gtest.h>
#include <hwloc.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "coll/placement.hpp"

namespace sluice::coll {
namespace {

using Cores = std::vector<int>;

struct Expected {
  int ranks;
  Cores rank_core;
  Cores thread_core;
};

void expect_table(const Topology& topology, const std::vector<Expected>& table) {
  for (const Expected& row : table) {
    SCOPED_TRACE("ranks = " + std::to_string(row.ranks));
    const Placement p = place(topology, row.ranks, Policy::numa);
    EXPECT_EQ(p.rank_core, row.rank_core);
    EXPECT_EQ(p.thread_core, row.thread_core);
  }
}

// The paper's host: 2 quad-core packages, one NUMA node each.
Topology paper_host() {
  return Topology::synthetic("pack:2 [numa] core:4 pu:1");
}

// ---- topology ----------------------------------------------------------------------------

TEST(PlacementTopology, BothSyntheticSyntaxesGiveThePaperHost) {
  // Debian's hwloc 2.9 accepts both the explicit NUMA level and the bracketed memory child.
  for (const char* description : {"pack:2 numa:1 core:4 pu:1", "pack:2 [numa] core:4 pu:1"}) {
    SCOPED_TRACE(description);
    Topology t = Topology::synthetic(description);
    ASSERT_EQ(t.numa_count(), 2);
    ASSERT_EQ(t.core_count(), 8);
    EXPECT_FALSE(t.is_this_system());
    for (int numa = 0; numa < 2; ++numa) {
      EXPECT_EQ(t.numa_os_index(numa), static_cast<unsigned>(numa));
      const std::span<const int> cores = t.numa_cores(numa);
      EXPECT_EQ(Cores(cores.begin(), cores.end()),
                (Cores{4 * numa, 4 * numa + 1, 4 * numa + 2, 4 * numa + 3}));
    }
    for (int core = 0; core < 8; ++core) {
      EXPECT_EQ(t.core_numa(core), core / 4);
      EXPECT_EQ(t.core_os_index(core), static_cast<unsigned>(core));
      EXPECT_EQ(t.pus_per_core(core), 1);
      EXPECT_EQ(t.core_pus(core)[0], static_cast<unsigned>(core));
    }
  }
}

TEST(PlacementTopology, HardwareThreadsAreListedPerCore) {
  Topology t = Topology::synthetic("pack:1 [numa] core:2 pu:2");
  ASSERT_EQ(t.core_count(), 2);
  EXPECT_EQ(t.pus_per_core(1), 2);
  EXPECT_EQ(std::vector<unsigned>(t.core_pus(1).begin(), t.core_pus(1).end()),
            (std::vector<unsigned>{2, 3}));
}

TEST(PlacementTopology, BadSyntheticDescriptionThrows) {
  EXPECT_THROW(Topology::synthetic("pack:2 frobnicate:3"), std::invalid_argument);
}

TEST(PlacementTopology, RestrictionBuildsUnequalNodesAndDropsEmptyOnes) {
  Topology t = Topology::synthetic("pack:2 [numa] core:5 pu:1");
  const std::vector<unsigned> keep{0, 1, 2, 5, 6, 7, 8, 9};
  t.restrict_to_pus(keep);
  ASSERT_EQ(t.numa_count(), 2);
  EXPECT_EQ(t.numa_cores(0).size(), 3u);
  EXPECT_EQ(t.numa_cores(1).size(), 5u);
  EXPECT_EQ(t.core_pus(3)[0], 5u);  // core indices stay dense; PU numbers are the OS's

  Topology half = paper_host();
  const std::vector<unsigned> first_package{0, 1, 2, 3};
  half.restrict_to_pus(first_package);
  EXPECT_EQ(half.numa_count(), 1);
  EXPECT_EQ(half.core_count(), 4);

  const std::vector<unsigned> missing{100};
  EXPECT_THROW(half.restrict_to_pus(missing), std::invalid_argument);
}

TEST(PlacementTopology, MovedTopologyKeepsWorking) {
  Topology a = paper_host();
  Topology b = std::move(a);
  EXPECT_EQ(b.core_count(), 8);
  a = std::move(b);
  EXPECT_EQ(a.core_count(), 8);
  EXPECT_EQ(place(a, 2, Policy::numa).thread_core, (Cores{1, 5}));
}

// ---- [MPC-Threads], algorithms 1 and 2 -----------------------------------------------------

// Expected values written from the paper's formulas (section 3), N = 2 NUMA nodes, c = 4
// cores each, n ranks, rank r:
//   algorithm 1: numa = floor(r*N/n); local = r - ceil(numa*n/N);
//                k = ceil((numa+1)*n/N) - ceil(numa*n/N); pos = floor(local*c/k) + numa*c
//   algorithm 2: k >= c ? pos : ceil((floor(pos/e) + 1) * e) - 1 with e = c/(c-k)
// Worked examples: n=2, rank 1: numa 1, local 0, k 1, pos 4; e = 4/3, floor(4/e) = 3,
// ceil(4e) - 1 = ceil(5.33) - 1 = 5. n=6, rank 4: numa 1, local 1, k 3, pos floor(4/3)+4 = 5;
// e = 4, floor(5/4) = 1, 2*4 - 1 = 7. n=7: k = 4 on NUMA 0 (threads stay on their ranks' cores),
// k = 3 on NUMA 1 (all three threads on its one free core, 7), as the paper's text says.
TEST(PlacementNuma, PaperHostOneToEightRanks) {
  // clang-format off
  expect_table(paper_host(), {
      // n rank cores (algorithm 1)  progress thread cores (algorithm 2)
      {1,  {0},                      {1}},
      {2,  {0, 4},                   {1, 5}},
      {3,  {0, 2, 4},                {1, 3, 5}},
      {4,  {0, 2, 4, 6},             {1, 3, 5, 7}},
      {5,  {0, 1, 2, 4, 6},          {3, 3, 3, 5, 7}},
      {6,  {0, 1, 2, 4, 5, 6},       {3, 3, 3, 7, 7, 7}},
      {7,  {0, 1, 2, 3, 4, 5, 6},    {0, 1, 2, 3, 7, 7, 7}},
      {8,  {0, 1, 2, 3, 4, 5, 6, 7}, {0, 1, 2, 3, 4, 5, 6, 7}},
  });
  // clang-format on
}

// More ranks than cores: k > c on each node, so algorithm 1 puts floor(local*4/k) ranks per
// core and algorithm 2 leaves every thread on its rank's core.
TEST(PlacementNuma, PaperHostMoreRanksThanCores) {
  // clang-format off
  expect_table(paper_host(), {
      // n  ranks' cores (algorithm 1), then progress threads' cores (algorithm 2)
      {12, {0, 0, 1, 2, 2, 3, 4, 4, 5, 6, 6, 7},
           {0, 0, 1, 2, 2, 3, 4, 4, 5, 6, 6, 7}},
      {16, {0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7},
           {0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7}},
  });
  // clang-format on
}

// Same formulas with N = 4 NUMA nodes of c = 3 cores (2 hardware threads each). E.g. n = 5:
// ranks per node k = 2,1,1,1 (boundaries ceil(i*5/4) = 0,2,3,4,5); NUMA 0 holds ranks on cores
// 0,1 and e = 3 puts both threads on core 2; rank 2 on core 3 with e = 3/2: floor(3/e) = 2,
// ceil(3e) - 1 = 4. n = 10: k = 3,2,3,2.
TEST(PlacementNuma, FourNumaNodes) {
  Topology t = Topology::synthetic("pack:2 l3:2 [numa] core:3 pu:2");
  ASSERT_EQ(t.numa_count(), 4);
  ASSERT_EQ(t.core_count(), 12);
  // clang-format off
  expect_table(t, {
      // n rank cores (algorithm 1)                progress thread cores (algorithm 2)
      {1,  {0},                                    {1}},
      {2,  {0, 6},                                 {1, 7}},
      {3,  {0, 3, 6},                              {1, 4, 7}},
      {4,  {0, 3, 6, 9},                           {1, 4, 7, 10}},
      {5,  {0, 1, 3, 6, 9},                        {2, 2, 4, 7, 10}},
      {6,  {0, 1, 3, 6, 7, 9},                     {2, 2, 4, 8, 8, 10}},
      {7,  {0, 1, 3, 4, 6, 7, 9},                  {2, 2, 5, 5, 8, 8, 10}},
      {8,  {0, 1, 3, 4, 6, 7, 9, 10},              {2, 2, 5, 5, 8, 8, 11, 11}},
      {9,  {0, 1, 2, 3, 4, 6, 7, 9, 10},           {0, 1, 2, 5, 5, 8, 8, 11, 11}},
      {10, {0, 1, 2, 3, 4, 6, 7, 8, 9, 10},        {0, 1, 2, 5, 5, 6, 7, 8, 11, 11}},
      {11, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10},     {0, 1, 2, 3, 4, 5, 6, 7, 8, 11, 11}},
      {12, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
  });
  // clang-format on
}

// NUMA node 0 with 3 cores (0-2), node 1 with 5 (3-7), C = 8. The paper assumes equal nodes;
// placement.hpp's generalization gives node 0 the ranks [0, ceil(3n/8)) and node 1 the rest,
// then applies the paper's in-node formulas with c = 3 and c = 5:
//   n=1: node 0 k=1: rank core 0; e = 3/2: thread ceil(1.5)-1 = 1.
//   n=2: + node 1 k=1: rank core 3+0; e = 5/4: thread 3 + ceil(1.25)-1 = 4.
//   n=3: node 0 k=2: ranks 0, floor(3/2)=1; e = 3: threads 2, 2.
//   n=4: node 1 k=2: ranks 3+0, 3+floor(5/2)=5; e = 5/3: threads 3+1, 3+(ceil(10/3)-1)=6.
//   n=5: node 1 k=3: ranks 3+{0,1,3}; e = 5/2: threads 3+{2,2,4} = 5,5,7.
//   n=6: node 0 k=3 = c: threads on rank cores; node 1 as n=5.
//   n=7: node 1 k=4: ranks 3..6; e = 5: threads all on 7.   n=8: every core full.
TEST(PlacementNuma, UnequalNumaNodes) {
  Topology t = Topology::synthetic("pack:2 [numa] core:5 pu:1");
  const std::vector<unsigned> keep{0, 1, 2, 5, 6, 7, 8, 9};
  t.restrict_to_pus(keep);
  // clang-format off
  expect_table(t, {
      // n rank cores (algorithm 1)  progress thread cores (algorithm 2)
      {1,  {0},                      {1}},
      {2,  {0, 3},                   {1, 4}},
      {3,  {0, 1, 3},                {2, 2, 4}},
      {4,  {0, 1, 3, 5},             {2, 2, 4, 6}},
      {5,  {0, 1, 3, 4, 6},          {2, 2, 5, 5, 7}},
      {6,  {0, 1, 2, 3, 4, 6},       {0, 1, 2, 5, 5, 7}},
      {7,  {0, 1, 2, 3, 4, 5, 6},    {0, 1, 2, 7, 7, 7, 7}},
      {8,  {0, 1, 2, 3, 4, 5, 6, 7}, {0, 1, 2, 3, 4, 5, 6, 7}},
  });
  // clang-format on
}

// ceil(a/b), floor(a/b) for a >= 0, b > 0; kept apart from the implementation's helpers.
long ceil_of(long a, long b) {
  return (a + b - 1) / b;
}

// The paper's formulas transcribed literally (global positions, e = c/(c-k) kept exact as a
// fraction), for equal NUMA nodes: the implementation must agree on every such host.
struct PaperAnswer {
  int rank_core;
  int thread_core;
};
PaperAnswer paper(long r, long n, long numa_nodes, long c) {
  const long id_numa = r * numa_nodes / n;
  const long id_local = r - ceil_of(id_numa * n, numa_nodes);
  const long k = ceil_of((id_numa + 1) * n, numa_nodes) - ceil_of(id_numa * n, numa_nodes);
  const long pos_local = id_local * c / k;
  const long pos_global = pos_local + id_numa * c;
  if (k >= c) return {int(pos_global), int(pos_global)};
  // e = c / (c - k): floor(pos_global / e) = floor(pos_global * (c-k) / c);
  // ceil(m * e) = ceil(m * c / (c-k)).
  const long m = pos_global * (c - k) / c + 1;
  return {int(pos_global), int(ceil_of(m * c, c - k) - 1)};
}

TEST(PlacementNuma, AgreesWithThePaperOnEveryEqualHost) {
  for (int numa_nodes = 1; numa_nodes <= 4; ++numa_nodes)
    for (int c = 1; c <= 6; ++c) {
      Topology t = Topology::synthetic("pack:" + std::to_string(numa_nodes) +
                                       " [numa] core:" + std::to_string(c) + " pu:1");
      for (int n = 1; n <= 2 * numa_nodes * c + 1; ++n) {
        const Placement p = place(t, n, Policy::numa);
        for (int r = 0; r < n; ++r) {
          const PaperAnswer want = paper(r, n, numa_nodes, c);
          ASSERT_EQ(p.rank_core[r], want.rank_core)
              << numa_nodes << " x " << c << " cores, " << n << " ranks, rank " << r;
          ASSERT_EQ(p.thread_core[r], want.thread_core)
              << numa_nodes << " x " << c << " cores, " << n << " ranks, rank " << r;
        }
      }
    }
}

// The guarantees the issue states, on equal and unequal hosts of every size up to 3 nodes x
// 7 cores: a thread never leaves its rank's NUMA node; it takes a free core when its node has
// one, otherwise its rank's core; nodes get at most one rank per core while the host has room.
TEST(PlacementNuma, ThreadsStayOnTheirNodeAndTakeFreeCores) {
  const std::vector<std::vector<int>> shapes{{3, 5}, {5, 3}, {1, 7}, {2, 2, 6}, {7, 1, 4}, {4}};
  for (const std::vector<int>& shape : shapes) {
    // Build the shape by restricting a symmetric topology with enough cores per node.
    const int widest = 7;
    Topology t = Topology::synthetic("pack:" + std::to_string(shape.size()) +
                                     " [numa] core:" + std::to_string(widest) + " pu:1");
    std::vector<unsigned> keep;
    for (std::size_t node = 0; node < shape.size(); ++node)
      for (int c = 0; c < shape[node]; ++c) keep.push_back(unsigned(node * widest + c));
    t.restrict_to_pus(keep);
    ASSERT_EQ(t.numa_count(), int(shape.size()));
    for (int n = 1; n <= 2 * t.core_count(); ++n) {
      SCOPED_TRACE(std::to_string(n) + " ranks on nodes of " + std::to_string(shape[0]) + "...");
      const Placement p = place(t, n, Policy::numa);
      std::vector<int> ranks_on_node(shape.size(), 0);
      std::set<int> rank_cores(p.rank_core.begin(), p.rank_core.end());
      for (int r = 0; r < n; ++r) ++ranks_on_node[t.core_numa(p.rank_core[r])];
      for (int r = 0; r < n; ++r) {
        const int numa = t.core_numa(p.rank_core[r]);
        ASSERT_EQ(t.core_numa(p.thread_core[r]), numa);
        if (ranks_on_node[numa] < shape[numa]) {
          EXPECT_EQ(rank_cores.count(p.thread_core[r]), 0u) << "rank " << r;
        } else {
          EXPECT_EQ(p.thread_core[r], p.rank_core[r]) << "rank " << r;
        }
        if (n <= t.core_count()) {
          EXPECT_LE(ranks_on_node[numa], shape[numa]);
        }
      }
      // Ranks are in node order and never more than ceil(n / cores) per core.
      for (int r = 1; r < n; ++r) EXPECT_LE(p.rank_core[r - 1], p.rank_core[r]);
    }
  }
}

// ---- bind and none -----------------------------------------------------------------------

// bind: core = floor(r * 8 / n) over the whole host (paper figure 1a), thread on the same core.
TEST(PlacementBind, ScatterOverTheHostThreadOnRankCore) {
  const Topology t = paper_host();
  const std::vector<Expected> table{
      {1, {0}, {0}},
      {3, {0, 2, 5}, {0, 2, 5}},
      {5, {0, 1, 3, 4, 6}, {0, 1, 3, 4, 6}},
      {8, {0, 1, 2, 3, 4, 5, 6, 7}, {0, 1, 2, 3, 4, 5, 6, 7}},
      {12, {0, 0, 1, 2, 2, 3, 4, 4, 5, 6, 6, 7}, {0, 0, 1, 2, 2, 3, 4, 4, 5, 6, 6, 7}},
  };
  for (const Expected& row : table) {
    const Placement p = place(t, row.ranks, Policy::bind);
    EXPECT_EQ(p.rank_core, row.rank_core) << row.ranks;
    EXPECT_EQ(p.thread_core, row.thread_core) << row.ranks;
  }
}

TEST(PlacementNone, NothingIsBound) {
  const Placement p = place(paper_host(), 3, Policy::none);
  EXPECT_EQ(p.rank_core, (Cores{kUnbound, kUnbound, kUnbound}));
  EXPECT_EQ(p.thread_core, (Cores{kUnbound, kUnbound, kUnbound}));
}

TEST(Placement, RejectsNoRanks) {
  EXPECT_THROW(place(paper_host(), 0, Policy::numa), std::invalid_argument);
}

TEST(Placement, PolicyNamesRoundTrip) {
  for (Policy policy : {Policy::none, Policy::bind, Policy::numa})
    EXPECT_EQ(parse_policy(policy_name(policy)), policy);
  EXPECT_EQ(parse_policy("scatter"), std::nullopt);
}

// ---- report ------------------------------------------------------------------------------

TEST(PlacementDescribe, ListsEveryRankAndThreadAndDrawsThePicture) {
  const Topology t = paper_host();
  EXPECT_EQ(describe(t, place(t, 3, Policy::numa)),
            "placement numa: 3 ranks on 8 cores in 2 NUMA nodes\n"
            "  rank 0: core 0 (NUMA 0, PU 0); progress thread: core 1 (NUMA 0, PU 1)\n"
            "  rank 1: core 2 (NUMA 0, PU 2); progress thread: core 3 (NUMA 0, PU 3)\n"
            "  rank 2: core 4 (NUMA 1, PU 4); progress thread: core 5 (NUMA 1, PU 5)\n"
            "  | / | /   | /\n"
            "  o o o o   o o o o\n");
  const std::string seven = describe(t, place(t, 7, Policy::numa));
  EXPECT_NE(seven.find("  rank 6: core 6 (NUMA 1, PU 6); progress thread: core 7 (NUMA 1, PU 7)\n"
                       "                  /\n"
                       "  / / / /         /\n"
                       "  | | | |   | | | /\n"
                       "  o o o o   o o o o\n"),
            std::string::npos)
      << seven;
  EXPECT_EQ(describe(t, place(t, 1, Policy::none)),
            "placement none: 1 rank on 8 cores in 2 NUMA nodes\n"
            "  rank 0: not bound; progress thread: not bound\n");
  // 10 ranks per core: the picture would be taller than the report; the lines remain.
  const std::string crowded = describe(t, place(t, 80, Policy::bind));
  EXPECT_NE(crowded.find("  rank 79: core 7 (NUMA 1, PU 7)"), std::string::npos);
  EXPECT_EQ(crowded.find("o o o o"), std::string::npos);
  const Topology smt = Topology::synthetic("pack:1 [numa] core:2 pu:2");
  EXPECT_NE(describe(smt, place(smt, 1, Policy::bind)).find("core 0 (NUMA 0, PU 0,1)"),
            std::string::npos);
}

// ---- real binding ------------------------------------------------------------------------

std::vector<unsigned> affinity_of_this_thread() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  std::vector<unsigned> cpus;
  for (unsigned cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  return cpus;
}

std::vector<unsigned> hwloc_binding_of_this_thread(const Topology& t) {
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  EXPECT_EQ(hwloc_get_cpubind(t.native(), set, HWLOC_CPUBIND_THREAD), 0);
  std::vector<unsigned> cpus;
  unsigned cpu = 0;
  hwloc_bitmap_foreach_begin(cpu, set) cpus.push_back(cpu);
  hwloc_bitmap_foreach_end();
  hwloc_bitmap_free(set);
  return cpus;
}

TEST(PlacementApply, BindsTheCallingThreadForReal) {
  const Topology t = Topology::this_machine();
  ASSERT_TRUE(t.is_this_system());
  ASSERT_GE(t.core_count(), 1);
  // In a thread of its own, so the test's main thread keeps its affinity.
  std::thread worker([&] {
    const std::vector<unsigned> before = affinity_of_this_thread();
    EXPECT_TRUE(apply_to_current_thread(t, kUnbound));  // kUnbound leaves it alone
    EXPECT_EQ(affinity_of_this_thread(), before);

    const int last = t.core_count() - 1;
    for (int core : {0, last}) {
      SCOPED_TRACE("core " + std::to_string(core));
      const std::vector<unsigned> pus(t.core_pus(core).begin(), t.core_pus(core).end());
      ASSERT_TRUE(apply_to_current_thread(t, core));
      EXPECT_EQ(affinity_of_this_thread(), pus);
      EXPECT_EQ(hwloc_binding_of_this_thread(t), pus);
      if (pus.size() == 1) {
        EXPECT_EQ(static_cast<unsigned>(sched_getcpu()), pus[0]);
      }
    }
    if (last == 0) GTEST_LOG_(INFO) << "one core here: only core 0 was tested";

    EXPECT_FALSE(apply_to_current_thread(t, t.core_count()));
    EXPECT_FALSE(apply_to_current_thread(paper_host(), 0));  // synthetic: not this machine
  });
  worker.join();
}

TEST(PlacementApply, RestrictsToTheProcessBinding) {
  Topology synthetic = paper_host();
  EXPECT_FALSE(synthetic.restrict_to_process_binding());
  EXPECT_EQ(synthetic.core_count(), 8);

  // In a child process (its only thread is the process), as under `taskset -c <pu>`.
  const Topology machine = Topology::this_machine();
  const unsigned pu = machine.core_pus(machine.core_count() - 1)[0];
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(pu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) _exit(10);
    Topology t = Topology::this_machine();
    if (!t.restrict_to_process_binding()) _exit(11);
    if (t.core_count() != 1 || t.numa_count() != 1) _exit(12);
    if (t.core_pus(0).size() != 1 || t.core_pus(0)[0] != pu) _exit(13);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10: setaffinity, 11: restrict, 12: counts, 13: PU";
}

}  // namespace
}  // namespace sluice::coll
