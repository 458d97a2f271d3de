#include "drivers/shm/shm_driver.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include "util/stats.hpp"

#include "util/futex.hpp"
#include "util/small_copy.hpp"
#include "util/unique_fd.hpp"

namespace sluice::drivers {

namespace {

constexpr uint64_t kSegmentMagic = 0x534c5549434553ull;  // "SLUICES"
constexpr std::size_t kSegmentHeaderBytes = 4096;
constexpr uint32_t kBulkFlag = 0x80000000u;
constexpr uint32_t kHeaderLenMask = 0xffffu;

}  // namespace

struct SegmentHeader {
  uint64_t magic;
  uint64_t owner_pid;
  uint64_t owner_addr;  // where the owner maps this header: probed with CMA by peers
  uint64_t cell_size, ring_cells, bulk_slot_size, bulk_slots, nchannels;
  // Blocking: the owner sets `sleeping` and waits on the `doorbell` futex; a peer that
  // hands it work (a packet, a freed cell or slot) rings the doorbell. On a line of their
  // own, written rarely, so the peers' checks hit a shared cache line.
  alignas(64) std::atomic<uint32_t> sleeping;
  std::atomic<uint32_t> doorbell;
};
static_assert(sizeof(SegmentHeader) <= kSegmentHeaderBytes);

namespace {

std::size_t round_up(std::size_t v, std::size_t a) {
  return (v + a - 1) / a * a;
}

}  // namespace

SharedMapping& SharedMapping::operator=(SharedMapping&& o) noexcept {
  if (this != &o) {
    if (addr_) munmap(addr_, len_);
    addr_ = o.addr_;
    len_ = o.len_;
    o.addr_ = nullptr;
  }
  return *this;
}

SharedMapping::~SharedMapping() {
  if (addr_) munmap(addr_, len_);
}

ShmDriver::ShmDriver(int my_rank, std::vector<int> local_ranks, const ShmParams& params)
    : rank_(my_rank), local_ranks_(std::move(local_ranks)), params_(params) {
  params_.cell_size = round_up(std::max<std::size_t>(params_.cell_size, 256), 64);
  std::size_t cells = 2;
  while (cells < params_.ring_cells) cells <<= 1;
  params_.ring_cells = cells;
  params_.bulk_slot_size = round_up(std::max(params_.bulk_slot_size, params_.cell_size), 64);
  params_.bulk_slots = std::max<std::size_t>(params_.bulk_slots, 1);

  int max_rank = local_ranks_.empty() ? 0 : local_ranks_.back();
  local_index_of_.assign(static_cast<std::size_t>(std::max(max_rank, my_rank)) + 1, -1);
  for (std::size_t i = 0; i < local_ranks_.size(); ++i) {
    local_index_of_[static_cast<std::size_t>(local_ranks_[i])] = static_cast<int>(i);
    if (local_ranks_[i] == my_rank) my_local_ = static_cast<int>(i);
  }
  caps_.max_header = 128;
  caps_.inline_payload = params_.cell_size - util::SpscRing::kCellHeader - caps_.max_header;
  caps_.max_packet = params_.bulk_slot_size;
  caps_.reliable = true;
  caps_.ordered = true;
  caps_.takes_push = true;
  caps_.rdma_get = caps_.rdma_put = false;  // set once CMA is probed
  segment_bytes_ = kSegmentHeaderBytes + local_ranks_.size() * channel_bytes();
}

ShmDriver::~ShmDriver() {
  unlink_name();
}

std::size_t ShmDriver::channel_bytes() const {
  return util::kCacheLine + util::SpscRing::bytes_needed(params_.ring_cells, params_.cell_size) +
         params_.bulk_slots * params_.bulk_slot_size;
}

std::byte* ShmDriver::channel_base(std::byte* segment, int local_index) const {
  return segment + kSegmentHeaderBytes + static_cast<std::size_t>(local_index) * channel_bytes();
}

std::string ShmDriver::segment_name(const std::string& job_id, int rank) {
  return "/sluice-" + job_id + "-" + std::to_string(rank);
}

std::string ShmDriver::create(const std::string& job_id) {
  my_name_ = segment_name(job_id, rank_);
  const util::UniqueFd fd(shm_open(my_name_.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600));
  if (!fd) return "shm_open(" + my_name_ + "): " + std::strerror(errno);
  name_linked_ = true;
  if (ftruncate(fd.get(), static_cast<off_t>(segment_bytes_)) != 0)
    return std::string("ftruncate of shared segment: ") + std::strerror(errno);
  void* addr = mmap(nullptr, segment_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (addr == MAP_FAILED) return std::string("mmap of shared segment: ") + std::strerror(errno);
  own_ = SharedMapping(addr, segment_bytes_);

  auto* hdr = reinterpret_cast<SegmentHeader*>(own_.data());
  hdr->owner_pid = static_cast<uint64_t>(getpid());
  hdr->owner_addr = reinterpret_cast<uint64_t>(own_.data());
  hdr->cell_size = params_.cell_size;
  hdr->ring_cells = params_.ring_cells;
  hdr->bulk_slot_size = params_.bulk_slot_size;
  hdr->bulk_slots = params_.bulk_slots;
  hdr->nchannels = local_ranks_.size();
  new (&hdr->sleeping) std::atomic<uint32_t>(0);
  new (&hdr->doorbell) std::atomic<uint32_t>(0);
  for (std::size_t i = 0; i < local_ranks_.size(); ++i) {
    if (static_cast<int>(i) == my_local_) continue;
    std::byte* ch = channel_base(own_.data(), static_cast<int>(i));
    new (ch) std::atomic<uint64_t>(0);
    util::SpscRing::format(ch + util::kCacheLine, params_.ring_cells, params_.cell_size);
    Inbound in;
    in.ring = util::SpscRing(ch + util::kCacheLine, params_.ring_cells, params_.cell_size);
    in.bulk =
        ch + util::kCacheLine + util::SpscRing::bytes_needed(params_.ring_cells, params_.cell_size);
    in.bulk_released = std::launder(reinterpret_cast<std::atomic<uint64_t>*>(ch));
    in.peer = local_ranks_[i];
    in_.push_back(in);
  }
  // Publish the magic last: a peer that sees it sees a formatted segment.
  std::atomic_thread_fence(std::memory_order_release);
  hdr->magic = kSegmentMagic;
  return {};
}

std::string ShmDriver::attach(const std::string& job_id) {
  peers_.resize(local_ranks_.size());
  out_.resize(local_ranks_.size());
  cma_ok_ = true;
  for (std::size_t i = 0; i < local_ranks_.size(); ++i) {
    if (static_cast<int>(i) == my_local_) continue;
    std::string name = segment_name(job_id, local_ranks_[i]);
    const util::UniqueFd fd(shm_open(name.c_str(), O_RDWR, 0));
    if (!fd) return "shm_open(" + name + "): " + std::strerror(errno);
    struct stat st {};
    if (fstat(fd.get(), &st) != 0 || static_cast<std::size_t>(st.st_size) != segment_bytes_)
      return "shared segment " + name +
             " has an unexpected size (mismatched SLUICE_SHM_* settings?)";
    void* addr = mmap(nullptr, segment_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
    if (addr == MAP_FAILED) return std::string("mmap of peer segment: ") + std::strerror(errno);
    peers_[i] = SharedMapping(addr, segment_bytes_);
    auto* hdr = reinterpret_cast<const SegmentHeader*>(peers_[i].data());
    if (hdr->magic != kSegmentMagic || hdr->cell_size != params_.cell_size ||
        hdr->ring_cells != params_.ring_cells || hdr->bulk_slots != params_.bulk_slots ||
        hdr->bulk_slot_size != params_.bulk_slot_size)
      return "shared segment " + name + " was made with different SLUICE_SHM_* settings";

    std::byte* ch = channel_base(peers_[i].data(), my_local_);
    Outbound& o = out_[i];
    o.ring = util::SpscRing(ch + util::kCacheLine, params_.ring_cells, params_.cell_size);
    o.bulk =
        ch + util::kCacheLine + util::SpscRing::bytes_needed(params_.ring_cells, params_.cell_size);
    o.bulk_released = std::launder(reinterpret_cast<std::atomic<uint64_t>*>(ch));
    o.pid = static_cast<pid_t>(hdr->owner_pid);
    o.header = const_cast<SegmentHeader*>(hdr);
    for (Inbound& in : in_)
      if (in.peer == local_ranks_[i]) in.peer_header = o.header;

    // Probe CMA: read the peer's own view of its header magic.
    uint64_t probe = 0;
    iovec local{&probe, sizeof probe};
    iovec remote{reinterpret_cast<void*>(hdr->owner_addr), sizeof probe};
    if (process_vm_readv(o.pid, &local, 1, &remote, 1, 0) != sizeof probe || probe != kSegmentMagic)
      cma_ok_ = false;
  }
  caps_.rdma_get = caps_.rdma_put = cma_ok_;
  return {};
}

void ShmDriver::unlink_name() {
  if (name_linked_) {
    shm_unlink(my_name_.c_str());
    name_linked_ = false;
  }
}

bool ShmDriver::reaches(int peer) const {
  return peer >= 0 && static_cast<std::size_t>(peer) < local_index_of_.size() &&
         local_index_of_[static_cast<std::size_t>(peer)] >= 0 && peer != rank_;
}

// Inline, with the ring out of line: every send and every poll that delivered asks.
inline void ShmDriver::wake_if_sleeping(SegmentHeader* peer) {
  // A relaxed read, no fence: a seq_cst fence here would stall every send until the cell's
  // cache line arrived at the peer (it doubled the 8-byte latency). The price is a rare
  // lost wake-up when the peer falls asleep in the instant our packet is still in the
  // store buffer; block() bounds that with short, growing futex timeouts.
  if (peer->sleeping.load(std::memory_order_relaxed)) [[unlikely]]
    ring_doorbell(peer);
}

IoStatus ShmDriver::send(int peer, std::span<const std::byte> header,
                         std::span<const std::byte> payload) {
  Outbound& o = out_[static_cast<std::size_t>(local_index_of_[static_cast<std::size_t>(peer)])];
  std::byte* cell = o.ring.try_reserve();
  if (!cell) {
    ++count_.ring_full;
    return IoStatus::again;
  }
  ++count_.sent;
  count_.sent_bytes += payload.size();
  const std::size_t hlen = header.size();
  if (hlen + payload.size() <= o.ring.payload_capacity()) {
    util::copy_small(cell, header.data(), hlen);
    util::copy_small(cell + hlen, payload.data(), payload.size());
    o.ring.commit(static_cast<uint32_t>(hlen + payload.size()), static_cast<uint32_t>(hlen));
    wake_if_sleeping(o.header);
    return IoStatus::done;
  }
  // Bulk: the payload goes to the next slot in FIFO order, if the receiver freed it.
  if (payload.size() > params_.bulk_slot_size) return IoStatus::failed;
  if (o.bulk_used - o.bulk_released->load(std::memory_order_acquire) >= params_.bulk_slots) {
    --count_.sent;
    count_.sent_bytes -= payload.size();
    ++count_.bulk_full;
    return IoStatus::again;
  }
  ++count_.bulk_sent;
  std::byte* slot = o.bulk + (o.bulk_used % params_.bulk_slots) * params_.bulk_slot_size;
  std::memcpy(slot, payload.data(), payload.size());
  ++o.bulk_used;
  uint32_t plen = static_cast<uint32_t>(payload.size());
  std::memcpy(cell, &plen, 4);
  std::memcpy(cell + 4, header.data(), hlen);
  o.ring.commit(static_cast<uint32_t>(hlen + 4), static_cast<uint32_t>(hlen) | kBulkFlag);
  wake_if_sleeping(o.header);
  return IoStatus::done;
}

int ShmDriver::poll(PacketSink& sink, int budget) {
  int delivered = 0;
  const std::size_t n = in_.size();
  for (std::size_t k = 0; k < n && delivered < budget; ++k) {
    // Rotate the starting ring so a busy sender cannot starve the others.
    std::size_t idx = poll_start_ + k;
    if (idx >= n) idx -= n;
    Inbound& in = in_[idx];
    uint32_t len, user;
    const int before = delivered;
    while (delivered < budget) {
      const std::byte* cell = in.ring.peek(len, user);
      if (!cell) break;
      const std::size_t hlen = user & kHeaderLenMask;
      if (user & kBulkFlag) {
        uint32_t plen;
        std::memcpy(&plen, cell, 4);
        const std::byte* slot =
            in.bulk + (in.bulk_consumed % params_.bulk_slots) * params_.bulk_slot_size;
        sink.on_packet(in.peer, {cell + 4, hlen}, {slot, plen});
        ++in.bulk_consumed;
        in.bulk_released->store(in.bulk_consumed, std::memory_order_release);
      } else {
        sink.on_packet(in.peer, {cell, hlen}, {cell + hlen, len - hlen});
      }
      in.ring.release();
      ++delivered;
    }
    // We freed cells (and maybe slots): the sender may be blocked waiting for room.
    if (delivered != before) wake_if_sleeping(in.peer_header);
  }
  if (++poll_start_ >= n) poll_start_ = 0;
  count_.received += static_cast<uint64_t>(delivered);
  return delivered;
}

void ShmDriver::ring_doorbell(SegmentHeader* peer) {
  peer->doorbell.fetch_add(1, std::memory_order_release);
  // Every sleeper: the rank's thread and its progress thread may both be blocked here.
  util::futex_wake(peer->doorbell, INT32_MAX, util::FutexScope::shared);
  ++count_.wakeups;
}

bool ShmDriver::block(uint64_t timeout_ns) {
  auto* hdr = reinterpret_cast<SegmentHeader*>(own_.data());
  const uint32_t bell = hdr->doorbell.load(std::memory_order_acquire);
  // A count, not a flag: with a progress thread two threads of the owner may sleep here.
  hdr->sleeping.fetch_add(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // A sender that read `sleeping` as 0 just before our store has its packet at most in its
  // store buffer (wake_if_sleeping has no fence): it becomes visible within well under a
  // microsecond, so look for a few µs before sleeping. Without this grace period, two ranks
  // exchanging pipelined 64 KiB messages lost most wake-ups (42 sleeps, 7 wake-ups) and
  // each cost a futex timeout: Alltoall 64 KiB took 50–240 µs instead of 20.
  bool work = false;
  const uint64_t grace_end = util::now_ns() + 4000;
  for (uint32_t i = 0; !work; ++i) {
    // The published position: block() may run on the progress thread beside poll().
    for (const Inbound& in : in_) work |= in.ring.ready_shared();
    if ((i & 15) == 15 && util::now_ns() > grace_end) break;
    util::cpu_relax();
  }
  if (!work) {
    timespec ts{static_cast<time_t>(timeout_ns / 1000000000u),
                static_cast<long>(timeout_ns % 1000000000u)};
    util::futex_wait(hdr->doorbell, bell, &ts, util::FutexScope::shared);
    count_sleeps_.fetch_add(1, std::memory_order_relaxed);
  }
  hdr->sleeping.fetch_sub(1, std::memory_order_relaxed);
  return true;
}

IoStatus ShmDriver::post_get(int peer, std::span<std::byte> local, const mem::Registration&,
                             const mem::RemoteKey& remote, uint64_t offset, CompletionToken) {
  if (!caps_.rdma_get || !remote.covers(offset, local.size())) return IoStatus::failed;
  const Outbound& o =
      out_[static_cast<std::size_t>(local_index_of_[static_cast<std::size_t>(peer)])];
  ++count_.cma_reads;
  count_.cma_bytes += local.size();
  const uint64_t remote_addr = remote.addr + offset;
  std::size_t done = 0;
  while (done < local.size()) {
    iovec l{local.data() + done, local.size() - done};
    iovec r{reinterpret_cast<void*>(remote_addr + done), local.size() - done};
    ssize_t got = process_vm_readv(o.pid, &l, 1, &r, 1, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return IoStatus::failed;  // ESRCH: the peer is gone; EFAULT: not its memory
    }
    if (got == 0) return IoStatus::failed;
    done += static_cast<std::size_t>(got);
  }
  return IoStatus::done;
}

IoStatus ShmDriver::post_put(int peer, std::span<const std::byte> local, const mem::Registration&,
                             const mem::RemoteKey& remote, uint64_t offset, CompletionToken) {
  if (!caps_.rdma_put || !remote.covers(offset, local.size())) return IoStatus::failed;
  const Outbound& o =
      out_[static_cast<std::size_t>(local_index_of_[static_cast<std::size_t>(peer)])];
  ++count_.cma_writes;
  count_.cma_written += local.size();
  const uint64_t remote_addr = remote.addr + offset;
  std::size_t done = 0;
  while (done < local.size()) {
    iovec l{const_cast<std::byte*>(local.data()) + done, local.size() - done};
    iovec r{reinterpret_cast<void*>(remote_addr + done), local.size() - done};
    ssize_t put = process_vm_writev(o.pid, &l, 1, &r, 1, 0);
    if (put < 0) {
      if (errno == EINTR) continue;
      return IoStatus::failed;
    }
    if (put == 0) return IoStatus::failed;
    done += static_cast<std::size_t>(put);
  }
  return IoStatus::done;
}

}  // namespace sluice::drivers

namespace sluice::drivers {

void ShmDriver::register_stats(util::StatsRegistry& reg, std::string_view c) const {
  using util::Unit;
  reg.add(c, "packets_sent", Unit::count, &count_.sent, "packets written to a peer's ring");
  reg.add(c, "payload_sent", Unit::bytes, &count_.sent_bytes, "payload bytes of those");
  reg.add(c, "bulk_sent", Unit::count, &count_.bulk_sent,
          "of packets_sent: payload through a shared bulk slot");
  reg.add(c, "packets_received", Unit::count, &count_.received, "packets read from the rings");
  reg.add(c, "ring_full", Unit::count, &count_.ring_full, "sends that found the ring full");
  reg.add(c, "bulk_full", Unit::count, &count_.bulk_full, "sends that found no free bulk slot");
  reg.add(c, "cma_reads", Unit::count, &count_.cma_reads,
          "process_vm_readv calls (rendezvous get)");
  reg.add(c, "cma_bytes", Unit::bytes, &count_.cma_bytes, "bytes read by those");
  reg.add(
      c, "cma_available", Unit::count, [this] { return uint64_t{cma_ok_}; },
      "1 when process_vm_readv to the local peers is permitted (rendezvous by get), else 0");
  reg.add(c, "sleeps", Unit::count, &count_sleeps_, "sleeps in the doorbell (block)");
  reg.add(c, "wakeups", Unit::count, &count_.wakeups, "doorbell rings for sleeping peers");
  reg.add(
      c, "local_ranks", Unit::count, [this] { return static_cast<uint64_t>(local_ranks_.size()); },
      "ranks sharing the segment");
  reg.add(
      c, "segment", Unit::bytes, [this] { return static_cast<uint64_t>(segment_bytes_); },
      "size of the shared segment");
}

}  // namespace sluice::drivers
