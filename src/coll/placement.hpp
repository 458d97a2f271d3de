// Placement of ranks and progress threads on the cores of one host ([MPC-Threads]).
//
// Policies, drawn as describe() draws them, for [MPC-Threads]' host (8 cores, 2 NUMA nodes) with
// 3 and with 7 ranks: `o` a core, `|` a rank on it, `/` a progress thread on it (stacked).
//
//   none   nothing is bound: the kernel schedules ranks and threads anywhere.
//
//   bind   ranks scattered over the whole host, ignoring NUMA (MPC's default placement, the
//          paper's figure 1a: core = floor(r * cores / n)); each progress thread on its rank's
//          core (figure 2a).
//            3 ranks:  /   /       /            7 ranks:  / / / /   / / /
//                      |   |       |                      | | | |   | | |
//                      o o o o   o o o o                  o o o o   o o o o
//
//   numa   [MPC-Threads], section 3. Algorithm 1: the ranks split evenly across the NUMA nodes,
//          then scattered inside each node (figure 1b). Algorithm 2: each progress thread on a
//          free core of its rank's NUMA node, on the rank's own core when the node has none
//          free, never on another NUMA node (figure 2b).
//            3 ranks:  | / | /   | /            7 ranks:                    /
//                      o o o o   o o o o                  / / / /         /
//                                                         | | | |   | | | /
//                                                         o o o o   o o o o
//          (7 ranks: NUMA 0 is full, so its threads share their ranks' cores; NUMA 1 has one
//          free core, and its three threads all go there, as the paper describes.)
//
// [MPC-Threads]' formulas, for rank r of n on a host of N NUMA nodes with c cores each:
//   Algorithm 1   numa    = floor(r * N / n)
//                 local   = r - ceil(numa * n / N)
//                 k       = ceil((numa + 1) * n / N) - ceil(numa * n / N)   (ranks on that node)
//                 pos     = floor(local * c / k) + numa * c                 (the rank's core)
//   Algorithm 2   if k >= c: thread = pos
//                 else:      e = c / (c - k)   (mean spacing of the free cores, a real number)
//                            thread = ceil((floor(pos / e) + 1) * e) - 1
// Both are evaluated here in exact integer arithmetic. MPC's code truncates e to an integer,
// which can leave the node (2 nodes of 5 cores, 4 ranks: the rank on core 7 gets thread core
// 13); with the real-valued e the thread always lands on a free core of the node (checked for
// every node size up to 32 cores).
//
// Unequal NUMA nodes (the paper assumes equal ones): node i, with c_i cores after the P_i
// cores of the nodes before it (C in all), receives the ranks [ceil(P_i n / C),
// ceil(P_{i+1} n / C)). With equal nodes P_i / C = i / N, so this is algorithm 1 exactly;
// otherwise it never puts more ranks than cores on a node while the host has a free core.
// Algorithm 2 runs inside each node with its own c_i.
//
// Cores are numbered by Sluice's core index: NUMA node by NUMA node, in hwloc's logical order
// (the same numbering as hwloc's logical core index, since each NUMA node covers a subtree).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

struct hwloc_topology;  // hwloc's topology (hwloc_topology_t); hwloc.h stays out of this header

namespace sluice::coll {

// The cores of one host grouped by NUMA node, over a loaded hwloc topology.
class Topology {
 public:
  // The machine this process runs on, limited to the PUs the OS allows it (cgroup cpuset),
  // but not to its current affinity: see restrict_to_process_binding. Throws
  // std::runtime_error when hwloc cannot load it.
  static Topology this_machine();
  // A synthetic machine, e.g. "pack:2 [numa] core:4 pu:1" or "pack:2 numa:1 core:4 pu:1"
  // (hwloc's synthetic syntax). Throws std::invalid_argument when hwloc rejects it.
  static Topology synthetic(const std::string& description);

  Topology(Topology&& other) noexcept;
  Topology& operator=(Topology&& other) noexcept;
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;
  ~Topology();

  // Keep only the given PUs (OS indices). Synthetic descriptions are symmetric, so this is
  // how tests build unequal NUMA nodes; it also models a host limited by a cgroup.
  // Throws std::invalid_argument when no given PU exists.
  void restrict_to_pus(std::span<const unsigned> pu_os_indices);
  // Keep only the PUs this process is bound to, so that `taskset -c 2-5 sluicerun ...` places
  // ranks on those CPUs only. For a launcher, before it binds anything: a rank already bound
  // to its core would see just that core. False (nothing changed) when the binding cannot be
  // read, e.g. on a synthetic topology.
  bool restrict_to_process_binding();

  int numa_count() const { return static_cast<int>(numas_.size()); }
  int core_count() const { return static_cast<int>(cores_.size()); }
  // Core indices of NUMA node `numa`: consecutive, in logical order.
  std::span<const int> numa_cores(int numa) const { return numas_.at(numa).cores; }
  int core_numa(int core) const { return cores_.at(core).numa; }
  unsigned numa_os_index(int numa) const { return numas_.at(numa).os_index; }
  unsigned core_os_index(int core) const { return cores_.at(core).os_index; }
  // OS indices of the PUs (hardware threads) of a core; what taskset and /proc show.
  std::span<const unsigned> core_pus(int core) const { return cores_.at(core).pus; }
  int pus_per_core(int core) const { return static_cast<int>(core_pus(core).size()); }
  // True for the machine we run on; binding is only possible then.
  bool is_this_system() const;

  hwloc_topology* native() const { return topology_; }

 private:
  explicit Topology(hwloc_topology* loaded);
  void index();  // rebuild numas_ and cores_ from the hwloc tree

  struct Core {
    int numa = 0;           // index into numas_
    unsigned os_index = 0;  // hwloc's OS index of the core
    std::vector<unsigned> pus;
  };
  struct Numa {
    unsigned os_index = 0;  // Linux node number (~0u for cores hwloc put under no node)
    std::vector<int> cores;
  };

  hwloc_topology* topology_ = nullptr;
  std::vector<Numa> numas_;  // only nodes with cores: memory-only nodes (HBM, CXL) are skipped
  std::vector<Core> cores_;
};

enum class Policy { none, bind, numa };

std::optional<Policy> parse_policy(std::string_view name);  // "none", "bind", "numa"
std::string_view policy_name(Policy policy);

inline constexpr int kUnbound = -1;

// Where each local rank and its progress thread run, as core indices of the Topology
// (kUnbound: left to the kernel).
struct Placement {
  Policy policy = Policy::none;
  std::vector<int> rank_core;
  std::vector<int> thread_core;
};

// Throws std::invalid_argument when local_ranks < 1.
Placement place(const Topology& topology, int local_ranks, Policy policy);

// One line per rank: its core, NUMA node and PUs, and the same for its progress thread; then
// the picture above (up to 64 cores and 8 occupants per core). For `sluicerun
// --report-bindings`.
std::string describe(const Topology& topology, const Placement& placement);

// Binds the calling thread to the PUs of `core` with hwloc_set_cpubind. kUnbound does nothing
// and succeeds. False (errno set) for a synthetic topology, a bad core or a refused binding.
// All the core's PUs: on SMT hosts a rank and a thread sharing a core get its two hardware
// threads. In a launcher's child between fork and exec this binds the whole rank (exec and
// threads created later inherit it); a progress thread calls it again for its own core.
bool apply_to_current_thread(const Topology& topology, int core);

}  // namespace sluice::coll
