// ofi driver: packets over a libfabric endpoint, so the same binary runs on InfiniBand
// (verbs;ofi_rxm), EFA, Slingshot (cxi) and, here, tcp;ofi_rxm, shm and udp.
//
// Endpoint types: FI_EP_RDM (reliable, unconnected: caps().reliable), FI_EP_DGRAM
// (unreliable: the engine stacks proto/reliable on it, as on the udp driver) and FI_EP_MSG
// (reliable and connected, the connection-oriented transport [OpenMPI-UD] weighs against
// datagrams: one endpoint per peer, connected lazily on the first send to it; see
// "Connections" in ofi_driver.cpp).
// Wire: every message is [OfiHeader][protocol header][payload], one libfabric message;
// OfiHeader numbers the packets per peer, so that completions a provider reports out of
// order (its rendezvous finishing after a later eager message) are delivered in order.
// Sending copies into a pre-registered buffer: fi_inject when the message fits the
// provider's inject size (no completion at all), else a send slot from a fixed pool that
// the send completion returns; no slot free is IoStatus::again. Receiving: a fixed pool of
// pre-posted receive buffers, reposted once their packet went to the sink. No allocation
// per message. One completion queue for both directions, polled by poll(); when the
// provider offers a wait fd (FI_WAIT_FD, fi_control FI_GETWAIT), block() sleeps on it after
// fi_trywait, so blocked ranks do not spin.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "drivers/driver.hpp"
#include "drivers/ofi/ofi_domain.hpp"

namespace sluice::drivers {

enum class OfiEndpointType : uint8_t { automatic, rdm, dgram, msg };

struct OfiParams {
  int rank = 0;
  int size = 1;
  std::string provider;  // e.g. "tcp;ofi_rxm", "shm", "verbs;ofi_rxm"; empty: the first offered
  std::string domain;    // libfabric domain name (e.g. "lo", "mlx5_0"); empty: the first
  OfiEndpointType endpoint = OfiEndpointType::automatic;
  bool single_host = true;  // every rank on this host (automatic choice may take shm)
  std::size_t max_packet = 64u << 10;
  std::size_t max_header = 256;
  std::size_t rx_buffers = 64;
  std::size_t tx_buffers = 64;
  // Rendezvous by fi_read (and posted get / put) where the rdm endpoint offers FI_RMA
  // (SLUICE_OFI_RMA=auto); false: messages only (the pipelined protocol), as without FI_RMA.
  bool rma = true;
  // Largest eager payload (SLUICE_OFI_EAGER_MAX); 0: derived from the provider's caps.
  std::size_t eager_max = 0;
  std::string job_key;  // 32 hex digits (may be empty): msg connections carry and check it
  std::function<void(int)> on_peer_dead;  // a send to the peer failed in the provider
};

// What the chosen provider offers, as sluice-info reports it.
struct OfiDescription {
  std::string provider, fabric, domain, endpoint, mr_mode, progress, wait;
  std::size_t inject_size = 0;
  uint64_t max_message = 0;
  bool rma = false;       // the provider offers FI_RMA on this endpoint type
  bool rma_used = false;  // ... and the driver reads / writes through it
  std::string rma_why;    // why not, when offered and not used
  bool tagged = false;
  bool host_local = false;  // no FI_REMOTE_COMM: the provider reaches this host only (shm)
  // The thresholds derived from the caps above: protocol header + payload bytes sent by
  // fi_inject, the largest eager payload (DriverCaps::inline_payload), the driver's get
  // threshold (DriverCaps::get_threshold, 0: the protocol's), and why.
  std::size_t inject_limit = 0, eager_max = 0, get_threshold = 0;
  std::string thresholds_why;
};

struct OfiStats {
  uint64_t sent = 0, sent_bytes = 0, injected = 0, received = 0, received_bytes = 0;
  uint64_t send_again = 0, send_errors = 0, malformed = 0, cq_errors = 0;
  uint64_t held = 0;
  // msg endpoints: connections made by us / accepted, connection requests refused (a lost
  // simultaneous-connect race, a stranger), connections that failed or the peer closed.
  uint64_t connects = 0, accepts = 0, conn_rejected = 0, conn_refused = 0, conn_failed = 0;
  uint64_t conn_closed = 0;
  // One-sided operations (fi_read / fi_write): posted, their bytes, refused for now
  // (-FI_EAGAIN, no operation slot), completed with an error; local buffers registered
  // for one operation (FI_MR_LOCAL and a buffer handed over unregistered).
  uint64_t rma_reads = 0, rma_read_bytes = 0, rma_writes = 0, rma_write_bytes = 0;
  uint64_t rma_again = 0, rma_errors = 0, rma_local_registrations = 0;
  uint64_t rma_enabled = 0;  // 1 when the driver does one-sided operations (caps rdma_get)
};

class OfiDriver final : public Driver {
 public:
  // Picks the provider and opens fabric, domain, completion queue, address vector and
  // endpoint; posts the receive pool. Throws std::runtime_error with a message naming what
  // is available when the provider or endpoint type asked for is not.
  explicit OfiDriver(OfiParams params);
  ~OfiDriver() override;
  OfiDriver(const OfiDriver&) = delete;
  OfiDriver& operator=(const OfiDriver&) = delete;

  // The endpoint's address (fi_getname; on msg the passive endpoint's) as hex, for the
  // bootstrap.
  const std::string& address() const { return address_hex_; }
  // Inserts a peer's published address in the address vector; an error text, empty on success.
  std::string set_peer_address(int peer, const std::string& hex);
  std::string peer_address(int peer) const;
  const OfiDescription& description() const { return desc_; }
  bool reliable_endpoint() const { return caps_.reliable; }
  // Sends still in the provider's hands complete (or `timeout_ns` passes).
  void drain(uint64_t timeout_ns);

  std::string_view name() const override { return "ofi"; }
  const DriverCaps& caps() const override { return caps_; }
  bool reaches(int peer) const override;
  IoStatus send(int peer, std::span<const std::byte> header,
                std::span<const std::byte> payload) override;
  int poll(PacketSink& sink, int budget) override;
  bool block(uint64_t timeout_ns) override;
  // The ofi domain (fi_mr_reg) when the endpoint does RMA, else host memory.
  mem::Domain& memory_domain() override;
  // fi_read / fi_write at `remote.addr + offset`; completions from the completion queue.
  IoStatus post_get(int peer, std::span<std::byte> local, const mem::Registration& local_reg,
                    const mem::RemoteKey& remote, uint64_t offset, CompletionToken token) override;
  IoStatus post_put(int peer, std::span<const std::byte> local, const mem::Registration& local_reg,
                    const mem::RemoteKey& remote, uint64_t offset, CompletionToken token) override;
  void register_stats(util::StatsRegistry& reg, std::string_view component) const override;
  const OfiStats& stats() const { return stats_; }

 private:
  struct Slot;
  struct Fids;
  struct Link;
  struct RmaOp;
  IoStatus post_rma(bool read, int peer, std::byte* local, std::size_t n,
                    const mem::Registration& local_reg, const mem::RemoteKey& remote,
                    uint64_t offset, CompletionToken token);
  // The operation slot `ctx` names, or nullptr when it is a packet slot's.
  RmaOp* rma_op_of(const void* ctx) const;
  void finish_rma(RmaOp& op, Errc status, PacketSink* sink);
  void choose_provider();
  // Takes the chosen provider's FI_RMA entry of the same endpoint type instead, if it has
  // one and RMA is wanted (rdm only).
  void choose_rma(fi_info* chosen, int mr_mode);
  void open_resources();
  void open_passive();
  // The eager limit and get threshold from the provider's caps (or SLUICE_OFI_EAGER_MAX).
  void derive_thresholds(const fi_info* info);
  Slot* take_tx();
  bool post_rx(Slot& s);
  // msg: the connection to `peer` is not up: start it, or see how it goes.
  IoStatus link_status(int peer);
  Link* new_link(int peer, fi_info* info);
  void progress_events();
  void on_connreq(const void* entry, std::size_t len);
  void on_event_error();
  void repost_pending();
  int complete(const void* op_context, std::size_t len, PacketSink* sink);
  void deliver(Slot& s, std::size_t len, PacketSink& sink);
  void release_held(uint32_t src, PacketSink& sink);
  void read_error(PacketSink* sink);
  // block() may run in the progress thread beside poll() and send(): it reads this mirror
  // (a plain store on x86, no read-modify-write on the send path) instead of free_tx_.
  void note_tx() {
    tx_busy_.store(free_tx_.size() < params_.tx_buffers || free_rma_.size() < rma_slots_,
                   std::memory_order_relaxed);
  }

  OfiParams params_;
  DriverCaps caps_;
  OfiDescription desc_;
  std::unique_ptr<Fids> fids_;
  int wait_fd_ = -1;              // the completion queue's wait fd, -1: none (block() cannot sleep)
  std::size_t inject_limit_ = 0;  // whole messages (driver header included) sent by fi_inject
  std::size_t slot_bytes_ = 0;    // one pool buffer: OfiHeader + max_header + max_packet
  std::vector<std::byte> pool_;   // rx_buffers then tx_buffers buffers, registered if needed
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_tx_;  // indexes into slots_
  std::vector<Slot*> rx_retry_;    // receive slots the provider refused to repost for now
  std::vector<std::byte> inject_buf_;
  std::vector<fi_addr_t> peers_;  // FI_ADDR_NOTAVAIL: unreachable (msg: 0 once known)
  // The endpoint sending to each peer: the one endpoint on rdm / dgram; on msg the peer's
  // connection once it is up, else nullptr (send() then starts or awaits the connection).
  std::vector<fid_ep*> tx_ep_;
  std::vector<Link*> link_of_;        // msg: the peer's current connection (attempt), or nullptr
  std::vector<uint64_t> wait_until_;  // msg: refused by the peer, await its request until
  std::vector<std::vector<std::byte>> peer_raw_;  // msg: the peers' passive addresses
  std::vector<std::string> peer_hex_;
  std::vector<uint32_t> tx_seq_, rx_seq_;  // per peer: the next packet number sent / due
  struct Held {
    uint32_t src, seq;
    Slot* slot;
    uint32_t len;
  };
  std::vector<Held> held_;  // completed ahead of their turn (capacity: the receive pool)
  std::string address_hex_;
  void* mr_desc_ = nullptr;
  bool rma_offered_ = false;
  std::unique_ptr<OfiDomain> rma_domain_;  // registrations for fi_read / fi_write
  std::unique_ptr<RmaOp[]> rma_ops_;       // operation contexts (rma_slots_ of them)
  std::size_t rma_slots_ = 0;
  std::vector<uint32_t> free_rma_;
  uint64_t max_rma_ = 0;         // largest fi_read / fi_write (max_msg_size)
  bool rma_local_ = false;       // FI_MR_LOCAL: fi_read / fi_write need the local buffer's desc
  bool connected_type_ = false;  // FI_EP_MSG
  int eq_fd_ = -1;               // msg: the event queue's wait fd, -1: none
  uint32_t eq_tick_ = 0;         // msg: polls since the event queue was last read
  std::atomic<int> links_pending_{0};  // msg: connections being made (short sleeps)
  uint32_t idle_polls_ = 0;            // polls in a row that found nothing (re-arms the wait fd)
  OfiStats stats_;
  std::atomic<bool> tx_busy_{false};  // some send buffer is in the provider's hands
  std::atomic<uint64_t> blocks_{0};   // sleeps in block()
};

// The providers and endpoint types fi_getinfo offers on this machine, "name (rdm, dgram)".
std::string ofi_available();

}  // namespace sluice::drivers
