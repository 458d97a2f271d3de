// Shared-memory driver: one lock-free SPSC ring per ordered pair of local ranks, plus a
// set of bulk slots per pair for payloads larger than a ring cell, and single-copy reads
// of a peer's memory with CMA (process_vm_readv).
//
// Each rank owns one segment holding its *inbound* channels (one per local sender), so a
// sender writes into the receiver's segment and the receiver reads its own memory.
//
//   segment = SegmentHeader | channel[0] | channel[1] | ...   (one channel per local rank)
//   channel = ChannelControl (1 line) | ring cells | bulk slots
//
// A packet whose header+payload fit one cell travels inline. A larger payload (up to one
// bulk slot) is copied into the next bulk slot in FIFO order and the cell carries only
// the header; the receiver frees slots in the same order by advancing bulk_released.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "drivers/driver.hpp"
#include "util/cpu.hpp"
#include "util/spsc_ring.hpp"

namespace sluice::drivers {

struct ShmParams {
  std::size_t cell_size = 8192;
  std::size_t ring_cells = 64;
  std::size_t bulk_slot_size = 65536;
  std::size_t bulk_slots = 8;
};

// Unique-owner mapping of a shared segment (munmap on destruction).
class SharedMapping {
 public:
  SharedMapping() = default;
  SharedMapping(void* addr, std::size_t len) : addr_(addr), len_(len) {}
  SharedMapping(SharedMapping&& o) noexcept : addr_(o.addr_), len_(o.len_) { o.addr_ = nullptr; }
  SharedMapping& operator=(SharedMapping&& o) noexcept;
  SharedMapping(const SharedMapping&) = delete;
  SharedMapping& operator=(const SharedMapping&) = delete;
  ~SharedMapping();
  std::byte* data() const { return static_cast<std::byte*>(addr_); }
  std::size_t size() const { return len_; }

 private:
  void* addr_ = nullptr;
  std::size_t len_ = 0;
};

struct SegmentHeader;

class ShmDriver final : public Driver {
 public:
  // local_ranks: world ranks on this host (including ours), sorted.
  ShmDriver(int my_rank, std::vector<int> local_ranks, const ShmParams& params);
  ~ShmDriver() override;

  // Step 1: create our segment (named after the job). Returns an error text or "".
  std::string create(const std::string& job_id);
  // Step 2 (after every local rank created its segment): map the peers' segments.
  std::string attach(const std::string& job_id);
  // Step 3 (after every local rank attached): remove our segment's name.
  void unlink_name();
  // Whether process_vm_readv works towards every local peer (probed in attach()).
  bool cma_available() const { return cma_ok_; }

  std::string_view name() const override { return "shm"; }
  const DriverCaps& caps() const override { return caps_; }
  bool reaches(int peer) const override;
  IoStatus send(int peer, std::span<const std::byte> header,
                std::span<const std::byte> payload) override;
  int poll(PacketSink& sink, int budget) override;
  // Single-copy CMA reads / writes of the peer's memory (process_vm_readv / writev): done
  // at once, never posted.
  IoStatus post_get(int peer, std::span<std::byte> local, const mem::Registration& local_reg,
                    const mem::RemoteKey& remote, uint64_t offset, CompletionToken token) override;
  IoStatus post_put(int peer, std::span<const std::byte> local, const mem::Registration& local_reg,
                    const mem::RemoteKey& remote, uint64_t offset, CompletionToken token) override;

  std::size_t segment_bytes() const { return segment_bytes_; }
  void register_stats(util::StatsRegistry& reg, std::string_view component) const override;
  bool block(uint64_t timeout_ns) override;

 private:
  struct Outbound {  // our side of the channel into a peer's segment
    util::SpscRing ring;
    std::byte* bulk = nullptr;
    std::atomic<uint64_t>* bulk_released = nullptr;
    uint64_t bulk_used = 0;
    pid_t pid = 0;
    SegmentHeader* header = nullptr;  // the peer's, for its doorbell
  };
  struct Inbound {  // a peer's channel into our segment
    util::SpscRing ring;
    std::byte* bulk = nullptr;
    std::atomic<uint64_t>* bulk_released = nullptr;
    uint64_t bulk_consumed = 0;
    int peer = -1;
    SegmentHeader* peer_header = nullptr;  // the sender's, to wake it when we free room
  };

  std::size_t channel_bytes() const;
  void wake_if_sleeping(SegmentHeader* peer);
  [[gnu::noinline]] void ring_doorbell(SegmentHeader* peer);
  std::byte* channel_base(std::byte* segment, int local_index) const;
  static std::string segment_name(const std::string& job_id, int rank);

  int rank_;
  int my_local_ = -1;
  std::vector<int> local_ranks_;
  std::vector<int> local_index_of_;  // world rank -> local index or -1
  ShmParams params_;
  DriverCaps caps_;
  std::size_t segment_bytes_ = 0;
  std::string my_name_;
  bool name_linked_ = false;
  SharedMapping own_;
  std::vector<SharedMapping> peers_;  // by local index (own slot empty)
  std::vector<Outbound> out_;         // by local index
  std::vector<Inbound> in_;           // compact list of peers that may send to us
  std::size_t poll_start_ = 0;
  bool cma_ok_ = false;
  struct Counters {
    uint64_t sent = 0, sent_bytes = 0, received = 0, ring_full = 0, bulk_sent = 0, bulk_full = 0,
             cma_reads = 0, cma_bytes = 0, cma_writes = 0, cma_written = 0, wakeups = 0;
  } count_;
  std::atomic<uint64_t> count_sleeps_{0};  // block() may run on the progress thread too
};

}  // namespace sluice::drivers
