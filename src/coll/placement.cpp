// Placement of ranks and progress threads: see placement.hpp for the policies and formulas.
#include "coll/placement.hpp"

#include <hwloc.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <stdexcept>
#include <utility>

namespace sluice::coll {

namespace {

struct BitmapDeleter {
  void operator()(hwloc_bitmap_s* bitmap) const { hwloc_bitmap_free(bitmap); }
};
using Bitmap = std::unique_ptr<hwloc_bitmap_s, BitmapDeleter>;

Bitmap make_bitmap() {
  Bitmap bitmap{hwloc_bitmap_alloc()};
  if (!bitmap) throw std::bad_alloc();
  return bitmap;
}

// Owns a topology between hwloc_topology_init and the hand-over to Topology.
struct TopologyDeleter {
  void operator()(hwloc_topology* topology) const { hwloc_topology_destroy(topology); }
};
using TopologyPtr = std::unique_ptr<hwloc_topology, TopologyDeleter>;

TopologyPtr init_topology() {
  hwloc_topology_t topology = nullptr;
  if (hwloc_topology_init(&topology) != 0) throw std::runtime_error("hwloc_topology_init failed");
  return TopologyPtr{topology};
}

// ceil(a / b) and floor(a / b) for a >= 0, b > 0.
long ceil_div(long a, long b) {
  return (a + b - 1) / b;
}

// Algorithm 2 inside one NUMA node of `cores` cores holding `ranks` ranks: the local position
// of the progress thread of the rank at local position `pos`. With e = cores / (cores - ranks),
// floor(pos / e) = floor(pos * free / cores) and ceil(m * e) = ceil(m * cores / free).
int algorithm2_local(int pos, int ranks, int cores) {
  if (ranks >= cores) return pos;
  const long free = cores - ranks;
  const long spacing_index = static_cast<long>(pos) * free / cores;  // floor(pos / e)
  return static_cast<int>(ceil_div((spacing_index + 1) * cores, free) - 1);
}

std::string pu_list(std::span<const unsigned> pus) {
  // "0", "0,4", "0-3": the same notation as taskset -c.
  std::string text;
  for (std::size_t i = 0; i < pus.size();) {
    std::size_t j = i;
    while (j + 1 < pus.size() && pus[j + 1] == pus[j] + 1) ++j;
    if (!text.empty()) text += ',';
    text += std::to_string(pus[i]);
    if (j > i) text += (j == i + 1 ? "," : "-") + std::to_string(pus[j]);
    i = j + 1;
  }
  return text;
}

}  // namespace

// ---- Topology ----------------------------------------------------------------------------

Topology::Topology(hwloc_topology* loaded) : topology_(loaded) {
  index();
}

Topology::Topology(Topology&& other) noexcept
    : topology_(std::exchange(other.topology_, nullptr)),
      numas_(std::move(other.numas_)),
      cores_(std::move(other.cores_)) {}

Topology& Topology::operator=(Topology&& other) noexcept {
  if (this != &other) {
    if (topology_) hwloc_topology_destroy(topology_);
    topology_ = std::exchange(other.topology_, nullptr);
    numas_ = std::move(other.numas_);
    cores_ = std::move(other.cores_);
  }
  return *this;
}

Topology::~Topology() {
  if (topology_) hwloc_topology_destroy(topology_);
}

Topology Topology::this_machine() {
  TopologyPtr topology = init_topology();
  if (hwloc_topology_load(topology.get()) != 0)
    throw std::runtime_error("hwloc cannot load this machine's topology");
  return Topology{topology.release()};
}

Topology Topology::synthetic(const std::string& description) {
  TopologyPtr topology = init_topology();
  if (hwloc_topology_set_synthetic(topology.get(), description.c_str()) != 0)
    throw std::invalid_argument("hwloc rejects the synthetic topology '" + description + "'");
  if (hwloc_topology_load(topology.get()) != 0)
    throw std::runtime_error("hwloc cannot load the synthetic topology '" + description + "'");
  return Topology{topology.release()};
}

void Topology::restrict_to_pus(std::span<const unsigned> pu_os_indices) {
  Bitmap set = make_bitmap();
  for (unsigned pu : pu_os_indices) hwloc_bitmap_set(set.get(), pu);
  if (!hwloc_bitmap_intersects(set.get(), hwloc_topology_get_topology_cpuset(topology_)))
    throw std::invalid_argument("restrict_to_pus: none of these PUs exists");
  // REMOVE_CPULESS drops NUMA nodes left without cores, as on a cgroup-limited host.
  if (hwloc_topology_restrict(topology_, set.get(), HWLOC_RESTRICT_FLAG_REMOVE_CPULESS) != 0)
    throw std::runtime_error("hwloc_topology_restrict failed");
  index();
}

bool Topology::restrict_to_process_binding() {
  if (!is_this_system()) return false;
  Bitmap set = make_bitmap();
  if (hwloc_get_cpubind(topology_, set.get(), HWLOC_CPUBIND_PROCESS) != 0) return false;
  const hwloc_const_cpuset_t all = hwloc_topology_get_topology_cpuset(topology_);
  if (!hwloc_bitmap_intersects(set.get(), all)) return false;
  if (hwloc_bitmap_isincluded(all, set.get())) return true;  // bound to everything: no change
  if (hwloc_topology_restrict(topology_, set.get(), HWLOC_RESTRICT_FLAG_REMOVE_CPULESS) != 0)
    return false;
  index();
  return true;
}

bool Topology::is_this_system() const {
  return hwloc_topology_is_thissystem(topology_) != 0;
}

void Topology::index() {
  numas_.clear();
  cores_.clear();
  // Machines where hwloc finds no cores (some VMs, exotic platforms): each PU is a core.
  const hwloc_obj_type_t core_type =
      hwloc_get_nbobjs_by_type(topology_, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
  const int core_total = hwloc_get_nbobjs_by_type(topology_, core_type);
  std::vector<bool> taken(static_cast<std::size_t>(core_total), false);

  auto add_core = [&](hwloc_obj_t core, int numa) {
    Core entry;
    entry.numa = numa;
    entry.os_index = core->os_index;
    unsigned pu = 0;
    hwloc_bitmap_foreach_begin(pu, core->cpuset) entry.pus.push_back(pu);
    hwloc_bitmap_foreach_end();
    numas_[numa].cores.push_back(static_cast<int>(cores_.size()));
    cores_.push_back(std::move(entry));
    taken[core->logical_index] = true;
  };

  // A core belongs to the first NUMA node whose CPU set holds it: nodes sharing a CPU set
  // (DDR + HBM, CXL memory) would otherwise count it twice.
  const int numa_total = hwloc_get_nbobjs_by_type(topology_, HWLOC_OBJ_NUMANODE);
  for (int n = 0; n < numa_total; ++n) {
    hwloc_obj_t node = hwloc_get_obj_by_type(topology_, HWLOC_OBJ_NUMANODE, n);
    const std::size_t cores_before = cores_.size();
    numas_.push_back(Numa{node->os_index, {}});
    for (hwloc_obj_t core = nullptr; (core = hwloc_get_next_obj_inside_cpuset_by_type(
                                          topology_, node->cpuset, core_type, core));)
      if (!taken[core->logical_index]) add_core(core, static_cast<int>(numas_.size()) - 1);
    if (cores_.size() == cores_before) numas_.pop_back();  // memory-only node
  }
  // Cores outside every NUMA node should not exist; keep them usable rather than lose them.
  if (std::find(taken.begin(), taken.end(), false) != taken.end()) {
    numas_.push_back(Numa{~0u, {}});
    for (int c = 0; c < core_total; ++c)
      if (!taken[c])
        add_core(hwloc_get_obj_by_type(topology_, core_type, c),
                 static_cast<int>(numas_.size()) - 1);
  }
}

// ---- policies ----------------------------------------------------------------------------

std::optional<Policy> parse_policy(std::string_view name) {
  if (name == "none") return Policy::none;
  if (name == "bind") return Policy::bind;
  if (name == "numa") return Policy::numa;
  return std::nullopt;
}

std::string_view policy_name(Policy policy) {
  switch (policy) {
    case Policy::none:
      return "none";
    case Policy::bind:
      return "bind";
    case Policy::numa:
      return "numa";
  }
  return "?";
}

Placement place(const Topology& topology, int local_ranks, Policy policy) {
  if (local_ranks < 1) throw std::invalid_argument("place: local_ranks must be at least 1");
  Placement placement;
  placement.policy = policy;
  const auto ranks = static_cast<std::size_t>(local_ranks);
  placement.rank_core.assign(ranks, kUnbound);
  placement.thread_core.assign(ranks, kUnbound);
  const long total_cores = topology.core_count();

  switch (policy) {
    case Policy::none:
      break;

    case Policy::bind:
      // Scatter over the host (paper figure 1a); the thread shares its rank's core.
      for (int r = 0; r < local_ranks; ++r) {
        const int core = static_cast<int>(r * total_cores / local_ranks);
        placement.rank_core[r] = placement.thread_core[r] = core;
      }
      break;

    case Policy::numa: {
      long cores_before = 0;  // P_i: cores of the NUMA nodes before node i
      for (int numa = 0; numa < topology.numa_count(); ++numa) {
        const std::span<const int> cores = topology.numa_cores(numa);
        const long node_cores = static_cast<long>(cores.size());
        // Algorithm 1: this node's ranks are [first, end); scatter them over its cores.
        const long first = ceil_div(cores_before * local_ranks, total_cores);
        const long end = ceil_div((cores_before + node_cores) * local_ranks, total_cores);
        const long node_ranks = end - first;
        for (long r = first; r < end; ++r) {
          const int pos = static_cast<int>((r - first) * node_cores / node_ranks);
          const int thread =
              algorithm2_local(pos, static_cast<int>(node_ranks), static_cast<int>(node_cores));
          placement.rank_core[r] = cores[pos];
          placement.thread_core[r] = cores[thread];
        }
        cores_before += node_cores;
      }
      break;
    }
  }
  return placement;
}

// ---- report ------------------------------------------------------------------------------

// Beyond these the picture wraps or scrolls away; the per-rank lines say it all anyway.
constexpr int kPictureMaxCores = 64;
constexpr std::size_t kPictureMaxHeight = 8;

std::string describe(const Topology& topology, const Placement& placement) {
  const int ranks = static_cast<int>(placement.rank_core.size());
  std::string text = "placement " + std::string(policy_name(placement.policy)) + ": " +
                     std::to_string(ranks) + (ranks == 1 ? " rank" : " ranks") + " on " +
                     std::to_string(topology.core_count()) + " cores in " +
                     std::to_string(topology.numa_count()) + " NUMA node" +
                     (topology.numa_count() == 1 ? "" : "s") + "\n";

  auto where = [&](int core) -> std::string {
    if (core == kUnbound) return "not bound";
    std::string numa =
        topology.numa_os_index(topology.core_numa(core)) == ~0u
            ? "no NUMA node"
            : "NUMA " + std::to_string(topology.numa_os_index(topology.core_numa(core)));
    return "core " + std::to_string(core) + " (" + numa + ", PU " +
           pu_list(topology.core_pus(core)) + ")";
  };
  for (int r = 0; r < ranks; ++r)
    text += "  rank " + std::to_string(r) + ": " + where(placement.rank_core[r]) +
            "; progress thread: " + where(placement.thread_core[r]) + "\n";

  // The picture of placement.hpp: per core, its ranks `|` then its threads `/`, bottom-up.
  const int cores = topology.core_count();
  std::vector<std::string> stacks(static_cast<std::size_t>(cores));
  for (int r = 0; r < ranks; ++r)
    if (placement.rank_core[r] != kUnbound) stacks[placement.rank_core[r]] += '|';
  for (int r = 0; r < ranks; ++r)
    if (placement.thread_core[r] != kUnbound) stacks[placement.thread_core[r]] += '/';
  std::size_t height = 0;
  for (const std::string& stack : stacks) height = std::max(height, stack.size());
  if (height == 0) return text;  // nothing bound: no picture
  if (cores > kPictureMaxCores || height > kPictureMaxHeight) return text;  // unreadable
  for (std::size_t row = height + 1; row-- > 0;) {
    std::string line = "  ";
    for (int c = 0; c < cores; ++c) {
      if (c > 0) line += (topology.core_numa(c) != topology.core_numa(c - 1)) ? "   " : " ";
      line += row == 0 ? 'o' : (stacks[c].size() >= row ? stacks[c][row - 1] : ' ');
    }
    while (line.back() == ' ') line.pop_back();
    text += line + "\n";
  }
  return text;
}

// ---- binding -----------------------------------------------------------------------------

bool apply_to_current_thread(const Topology& topology, int core) {
  if (core == kUnbound) return true;
  if (!topology.is_this_system() || core < 0 || core >= topology.core_count()) {
    errno = EINVAL;
    return false;
  }
  Bitmap set = make_bitmap();
  for (unsigned pu : topology.core_pus(core)) hwloc_bitmap_set(set.get(), pu);
  return hwloc_set_cpubind(topology.native(), set.get(), HWLOC_CPUBIND_THREAD) == 0;
}

}  // namespace sluice::coll
