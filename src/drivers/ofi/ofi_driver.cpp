// ofi driver (see ofi_driver.hpp): provider choice, resources, and the packet paths.
#include "drivers/ofi/ofi_driver.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <map>
#include <set>
#include <stdexcept>

#include "drivers/ofi/ofi_loader.hpp"
#include "util/log.hpp"
#include "util/stats.hpp"

namespace sluice::drivers {

namespace {

// Precedes every packet: who sent it, its number among the sender's packets to this peer,
// and where its header ends.
struct OfiHeader {
  uint32_t src;
  uint32_t seq;
  uint16_t header_len;
  uint16_t magic;
};
static_assert(sizeof(OfiHeader) == 12);
constexpr uint16_t kMagic = 0x0f1c;

constexpr uint32_t kApiVersion = FI_VERSION(1, 9);

// libfabric's shm provider names its shared-memory region after the process id
// (/dev/shm/<pid>:<endpoint>:<n>) and creates it exclusively; a process killed by a signal
// leaves its region behind, and a later process given the same (recycled) id then fails in
// fi_enable with "Device or resource busy". A region named after this process's own id
// belongs to no live process, so it is removed before the endpoint is enabled.
void remove_stale_shm_regions() {
  DIR* dir = opendir("/dev/shm");
  if (!dir) return;
  const std::string prefix = std::to_string(getpid()) + ":";
  while (const dirent* e = readdir(dir)) {
    if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0)
      unlinkat(dirfd(dir), e->d_name, 0);
  }
  closedir(dir);
}

// A msg connection request's private data: who asks, for which job.
struct CmData {
  uint32_t magic;
  int32_t rank;
  std::byte job_key[16];
};
constexpr uint32_t kCmMagic = 0x0f1c0c0du;

struct InfoDeleter {
  void operator()(fi_info* i) const { ofi::freeinfo(i); }
};
using InfoPtr = std::unique_ptr<fi_info, InfoDeleter>;

template <class T>
struct FidDeleter {
  void operator()(T* p) const {
    if (p) fi_close(&p->fid);
  }
};
template <class T>
using FidPtr = std::unique_ptr<T, FidDeleter<T>>;

const char* type_name(fi_ep_type t) {
  switch (t) {
    case FI_EP_RDM:
      return "rdm";
    case FI_EP_DGRAM:
      return "dgram";
    case FI_EP_MSG:
      return "msg";
    default:
      return "other";
  }
}

std::string mr_mode_text(int mode) {
  static constexpr std::pair<int, const char*> kBits[] = {
      {FI_MR_LOCAL, "local"},         {FI_MR_RAW, "raw"},
      {FI_MR_VIRT_ADDR, "virt_addr"}, {FI_MR_ALLOCATED, "allocated"},
      {FI_MR_PROV_KEY, "prov_key"},   {FI_MR_MMU_NOTIFY, "mmu_notify"},
      {FI_MR_RMA_EVENT, "rma_event"}, {FI_MR_ENDPOINT, "endpoint"},
      {FI_MR_HMEM, "hmem"},
  };
  std::string s;
  for (const auto& [bit, name] : kBits)
    if (mode & bit) s += (s.empty() ? "" : ",") + std::string(name);
  return s.empty() ? "none" : s;
}

// The mr_mode bits the driver honours (for its pools and, with FI_RMA, the ofi domain's
// registrations): not FI_MR_RAW (ofi_domain.hpp), and not FI_MR_ENDPOINT on msg (one
// endpoint per peer shares the send pool and the registrations).
int hint_mr_mode(fi_ep_type type) {
  return FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY |
         (type == FI_EP_MSG ? 0 : FI_MR_ENDPOINT);
}

const char* progress_text(fi_progress p) {
  return p == FI_PROGRESS_AUTO ? "auto" : p == FI_PROGRESS_MANUAL ? "manual" : "unspec";
}

std::string fi_error(const char* what, int rc) {
  return std::string(what) + ": " + ofi::strerror(-rc);
}

uint64_t now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000u + static_cast<uint64_t>(t.tv_nsec);
}

std::string to_hex(const std::byte* p, std::size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  s.reserve(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto b = static_cast<unsigned>(p[i]);
    s += kDigits[b >> 4];
    s += kDigits[b & 15];
  }
  return s;
}

bool from_hex(const std::string& s, std::vector<std::byte>& out) {
  if (s.size() % 2) return false;
  out.clear();
  for (std::size_t i = 0; i < s.size(); i += 2) {
    unsigned v = 0;
    for (std::size_t j = i; j < i + 2; ++j) {
      const char c = s[j];
      v = v * 16 + static_cast<unsigned>(c >= '0' && c <= '9'   ? c - '0'
                                         : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                                                : 99);
      if (v > 255) return false;
    }
    out.push_back(static_cast<std::byte>(v));
  }
  return true;
}

// Every provider fi_getinfo reports here with the endpoint types it offers.
std::map<std::string, std::set<std::string>> offered(const char* provider) {
  std::map<std::string, std::set<std::string>> m;
  InfoPtr hints(ofi::allocinfo());
  if (provider && hints) hints->fabric_attr->prov_name = strdup(provider);
  fi_info* list = nullptr;
  if (ofi::getinfo(kApiVersion, nullptr, nullptr, 0, provider ? hints.get() : nullptr, &list) != 0)
    return m;
  InfoPtr owner(list);
  for (fi_info* i = list; i; i = i->next)
    if (i->fabric_attr && i->fabric_attr->prov_name && i->ep_attr)
      m[i->fabric_attr->prov_name].insert(type_name(i->ep_attr->type));
  return m;
}

std::string format_offered(const std::map<std::string, std::set<std::string>>& m) {
  std::string s;
  for (const auto& [prov, types] : m) {
    std::string t;
    for (const auto& x : types) t += (t.empty() ? "" : ", ") + x;
    s += (s.empty() ? "" : "; ") + prov + " (" + t + ")";
  }
  return s.empty() ? "none" : s;
}

}  // namespace

std::string ofi_available() {
  std::string err;
  if (!ofi::load(err)) return err;
  return format_offered(offered(nullptr));
}

// A posted fi_read / fi_write: its context (first), the protocol's token, and a registration
// of the local buffer made for it alone (FI_MR_LOCAL, a buffer handed over unregistered).
struct OfiDriver::RmaOp {
  fi_context2 ctx;
  CompletionToken token;
  mem::Registration local;
  uint32_t index = 0;
  bool read = false;
};

struct OfiDriver::Slot {
  fi_context2 ctx;  // first: the op_context a completion returns is the slot itself
  std::byte* buf = nullptr;
  uint32_t index = 0;
  int peer = -1;  // send slots: the destination
  bool rx = false;
  fid_ep* ep = nullptr;             // receive slots: the endpoint they are posted to
  void* desc = nullptr;             // fi_mr_desc of the buffer's registration (FI_MR_LOCAL)
  OfiDriver::Link* link = nullptr;  // msg receive slots: their connection
};

// Connections (msg endpoints). Each peer gets its own endpoint, made on the first send to
// it (fi_connect to the passive endpoint the peer published; send() says `again` until the
// connection is up) or when the peer's request arrives on our passive endpoint (fi_accept).
// Both ranks may ask at once: the connection the lower rank asked for wins (the lower rank
// refuses the higher one's request while its own is pending; the higher one accepts the
// lower one's and drops its own), so exactly one connection carries a pair's packets and
// their per-peer numbering stays whole. The refusal may reach the higher rank before the
// lower one's request does: it then waits for that request (10 s) instead of asking again. The
// request carries the asker's rank and the job key, checked before accepting. Every connection has
// its own receive pool (no shared receive context: the packet's sender is then the connection's
// peer, checked on arrival). Links are kept until the driver closes: a completion may still name
// their slots.
struct OfiDriver::Link {
  enum class State : uint8_t { connecting, accepting, up, closed, dropped };
  int peer = -1;
  State state = State::connecting;
  FidPtr<fid_ep> ep;
  FidPtr<fid_mr> mr;
  std::vector<std::byte> pool;
  std::unique_ptr<Slot[]> rx;
};

// Closed in reverse order of declaration: connections, passive endpoint, endpoint, memory
// region, address vector, event queue, completion queue, domain, fabric; the info list last.
struct OfiDriver::Fids {
  InfoPtr list;
  InfoPtr rma_list;         // the FI_RMA entries, when one of them was chosen
  fi_info* info = nullptr;  // the chosen entry of `list`
  FidPtr<fid_fabric> fabric;
  FidPtr<fid_domain> domain;
  FidPtr<fid_cq> cq;
  FidPtr<fid_eq> eq;
  FidPtr<fid_av> av;
  FidPtr<fid_mr> mr;
  FidPtr<fid_ep> ep;
  FidPtr<fid_pep> pep;
  std::vector<std::unique_ptr<Link>> links;
};

OfiDriver::OfiDriver(OfiParams params)
    : params_(std::move(params)), fids_(std::make_unique<Fids>()) {
  choose_provider();
  open_resources();
}

OfiDriver::~OfiDriver() = default;

void OfiDriver::choose_provider() {
  std::string err;
  if (!ofi::load(err)) throw std::runtime_error(err);
  // auto: reliable datagrams, else datagrams (the reliability layer on top), else
  // connections.
  std::vector<fi_ep_type> types;
  switch (params_.endpoint) {
    case OfiEndpointType::rdm:
      types = {FI_EP_RDM};
      break;
    case OfiEndpointType::dgram:
      types = {FI_EP_DGRAM};
      break;
    case OfiEndpointType::msg:
      types = {FI_EP_MSG};
      break;
    case OfiEndpointType::automatic:
      types = {FI_EP_RDM, FI_EP_DGRAM, FI_EP_MSG};
      break;
  }
  const bool named = !params_.provider.empty();
  std::vector<InfoPtr> lists;
  for (fi_ep_type type : types) {
    InfoPtr hints(ofi::allocinfo());
    if (!hints) throw std::runtime_error("fi_allocinfo failed");
    hints->caps = FI_MSG;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->ep_attr->type = type;
    // Packets to a peer must arrive in order on a reliable endpoint (else the engine
    // would need the reliability layer's reordering on top).
    if (type != FI_EP_DGRAM) hints->tx_attr->msg_order = hints->rx_attr->msg_order = FI_ORDER_SAS;
    // The modes this driver honours: its pools are registered (LOCAL), once, with the
    // provider's key (PROV_KEY), at their virtual address, bound to the endpoint (not on
    // msg: one endpoint per peer shares the send pool).
    hints->domain_attr->mr_mode = hint_mr_mode(type);
    hints->domain_attr->threading = FI_THREAD_DOMAIN;  // the engine serialises calls
    if (named) hints->fabric_attr->prov_name = strdup(params_.provider.c_str());
    if (!params_.domain.empty()) hints->domain_attr->name = strdup(params_.domain.c_str());
    fi_info* list = nullptr;
    if (ofi::getinfo(kApiVersion, nullptr, nullptr, 0, hints.get(), &list) != 0) list = nullptr;
    lists.emplace_back(list);
  }
  // A named provider is taken as named first ("tcp" is tcp's msg endpoint, not the
  // tcp;ofi_rxm that fi_getinfo also returns for that name), then layered over it.
  for (int pass = named ? 0 : 1; pass < 2; ++pass) {
    for (std::size_t t = 0; t < types.size(); ++t) {
      for (fi_info* i = lists[t].get(); i; i = i->next) {
        // Chosen by default, shm would leave the other hosts' ranks unreachable.
        if (!named && !params_.single_host && std::strcmp(i->fabric_attr->prov_name, "shm") == 0)
          continue;
        if (pass == 0 && params_.provider != i->fabric_attr->prov_name) continue;
        fids_->list = std::move(lists[t]);
        fids_->info = i;
        choose_rma(i, hint_mr_mode(i->ep_attr->type));
        return;
      }
    }
  }
  // Nothing fits: say what there is.
  const std::string want = params_.endpoint == OfiEndpointType::rdm     ? "rdm"
                           : params_.endpoint == OfiEndpointType::dgram ? "dgram"
                           : params_.endpoint == OfiEndpointType::msg   ? "msg"
                                                                        : "rdm, dgram or msg";
  std::string where = params_.domain.empty() ? "" : " in domain '" + params_.domain + "'";
  if (named) {
    const auto mine = offered(params_.provider.c_str());
    if (mine.empty())
      throw std::runtime_error(
          "libfabric provider '" + params_.provider +
          "' (SLUICE_OFI_PROVIDER) is not available here; available: " + ofi_available());
    throw std::runtime_error("libfabric provider '" + params_.provider + "'" + where +
                             " offers no " + want +
                             " endpoint Sluice can use (FI_MSG, FI_ORDER_SAS on rdm and msg, "
                             "mr_mode within local,virt_addr,allocated,prov_key,endpoint; "
                             "SLUICE_OFI_ENDPOINT); it offers: " +
                             format_offered(mine) + "; available: " + ofi_available());
  }
  throw std::runtime_error("no libfabric provider offers an " + want + " endpoint" + where +
                           (params_.single_host ? "" : " reaching other hosts") +
                           "; available: " + ofi_available());
}

namespace {
bool same_name(const char* a, const char* b) {
  return (!a && !b) || (a && b && std::strcmp(a, b) == 0);
}
}  // namespace

void OfiDriver::choose_rma(fi_info* chosen, int mr_mode) {
  const fi_ep_type type = chosen->ep_attr->type;
  if (type == FI_EP_DGRAM) return;  // unreliable: the reliability layer moves everything
  InfoPtr hints(ofi::allocinfo());
  if (!hints) return;
  hints->caps = FI_MSG | FI_RMA;
  hints->mode = FI_CONTEXT | FI_CONTEXT2;
  hints->ep_attr->type = type;
  hints->tx_attr->msg_order = hints->rx_attr->msg_order = FI_ORDER_SAS;
  hints->domain_attr->mr_mode = mr_mode;
  hints->domain_attr->threading = FI_THREAD_DOMAIN;
  hints->fabric_attr->prov_name = strdup(chosen->fabric_attr->prov_name);
  if (chosen->domain_attr->name) hints->domain_attr->name = strdup(chosen->domain_attr->name);
  fi_info* list = nullptr;
  if (ofi::getinfo(kApiVersion, nullptr, nullptr, 0, hints.get(), &list) != 0) list = nullptr;
  InfoPtr owner(list);
  fi_info* match = nullptr;
  for (fi_info* i = list; i && !match; i = i->next)
    if ((i->caps & FI_RMA) && i->ep_attr->type == type &&
        same_name(i->fabric_attr->prov_name, chosen->fabric_attr->prov_name) &&
        same_name(i->fabric_attr->name, chosen->fabric_attr->name) &&
        same_name(i->domain_attr->name, chosen->domain_attr->name))
      match = i;
  if (!match) return;
  rma_offered_ = true;
  if (!params_.rma) {
    desc_.rma_why = "SLUICE_OFI_RMA=off";
    return;
  }
  if (type == FI_EP_MSG) {
    desc_.rma_why = "not used on msg endpoints";
    return;
  }
  fids_->rma_list = std::move(owner);
  fids_->info = match;
}

void OfiDriver::open_resources() {
  fi_info* info = fids_->info;
  int rc = 0;
  fid_fabric* fabric = nullptr;
  if ((rc = ofi::fabric(info->fabric_attr, &fabric, nullptr)) != 0)
    throw std::runtime_error(fi_error("fi_fabric", rc));
  fids_->fabric.reset(fabric);
  fid_domain* domain = nullptr;
  if ((rc = fi_domain(fabric, info, &domain, nullptr)) != 0)
    throw std::runtime_error(fi_error("fi_domain", rc));
  fids_->domain.reset(domain);

  // Sizes: a packet is one message, at most max_msg_size (1472 B on the udp provider).
  const uint64_t max_msg = info->ep_attr->max_msg_size;
  caps_.max_header = params_.max_header;
  if (max_msg < sizeof(OfiHeader) + 2 * caps_.max_header)
    caps_.max_header = (max_msg - sizeof(OfiHeader)) / 4;
  if (caps_.max_header < 64)
    throw std::runtime_error("provider " + std::string(info->fabric_attr->prov_name) +
                             ": messages of " + std::to_string(max_msg) + " bytes are too small");
  caps_.max_packet = static_cast<std::size_t>(
      std::min<uint64_t>(params_.max_packet, max_msg - sizeof(OfiHeader) - caps_.max_header));
  caps_.inline_payload = caps_.max_packet;
  connected_type_ = info->ep_attr->type == FI_EP_MSG;
  caps_.reliable = caps_.ordered = info->ep_attr->type != FI_EP_DGRAM;
  slot_bytes_ = (sizeof(OfiHeader) + caps_.max_header + caps_.max_packet + 63) & ~std::size_t{63};
  // Whole messages (driver header included) up to the provider's inject size go by
  // fi_inject: no send buffer, no completion.
  inject_limit_ = std::min(info->tx_attr->inject_size, slot_bytes_);

  // On msg the receive pools belong to the connections (Link); the driver's pool holds
  // the send buffers only.
  const std::size_t nrx = connected_type_ ? 0 : params_.rx_buffers, ntx = params_.tx_buffers;
  const std::size_t rx_posted =
      connected_type_ ? params_.rx_buffers * static_cast<std::size_t>(params_.size) : nrx;
  fi_cq_attr cq_attr{};
  cq_attr.size =
      std::max<std::size_t>(rx_posted + ntx + 64, info->rx_attr->size + info->tx_attr->size);
  cq_attr.format = FI_CQ_FORMAT_MSG;
  cq_attr.wait_obj = FI_WAIT_FD;
  fid_cq* cq = nullptr;
  rc = fi_cq_open(domain, &cq_attr, &cq, nullptr);
  if (rc != 0) {  // no fd to sleep on: block() returns false and the engine naps instead
    cq_attr.wait_obj = FI_WAIT_NONE;
    if ((rc = fi_cq_open(domain, &cq_attr, &cq, nullptr)) != 0)
      throw std::runtime_error(fi_error("fi_cq_open", rc));
  }
  fids_->cq.reset(cq);
  if (cq_attr.wait_obj == FI_WAIT_FD && fi_control(&cq->fid, FI_GETWAIT, &wait_fd_) != 0)
    wait_fd_ = -1;
  caps_.naps = wait_fd_ < 0;

  fid_ep* ep = nullptr;
  if (!connected_type_) {
    fi_av_attr av_attr{};
    av_attr.type =
        info->domain_attr->av_type != FI_AV_UNSPEC ? info->domain_attr->av_type : FI_AV_TABLE;
    av_attr.count = static_cast<std::size_t>(params_.size);
    fid_av* av = nullptr;
    if ((rc = fi_av_open(domain, &av_attr, &av, nullptr)) != 0)
      throw std::runtime_error(fi_error("fi_av_open", rc));
    fids_->av.reset(av);

    if ((rc = fi_endpoint(domain, info, &ep, nullptr)) != 0)
      throw std::runtime_error(fi_error("fi_endpoint", rc));
    fids_->ep.reset(ep);
    if ((rc = fi_ep_bind(ep, &av->fid, 0)) != 0) throw std::runtime_error(fi_error("bind av", rc));
    if ((rc = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV)) != 0)
      throw std::runtime_error(fi_error("bind cq", rc));
  }

  // The pools: receive buffers, then send buffers; registered once when the provider wants
  // local buffers registered.
  pool_.resize(slot_bytes_ * (nrx + ntx));
  const int mr_mode = info->domain_attr->mr_mode;
  if (mr_mode & FI_MR_LOCAL) {
    fid_mr* mr = nullptr;
    if ((rc = fi_mr_reg(domain, pool_.data(), pool_.size(), FI_SEND | FI_RECV, 0, 1, 0, &mr,
                        nullptr)) != 0)
      throw std::runtime_error(fi_error("fi_mr_reg", rc));
    fids_->mr.reset(mr);
    if (ep && (mr_mode & FI_MR_ENDPOINT)) {
      if ((rc = fi_mr_bind(mr, &ep->fid, 0)) != 0 || (rc = fi_mr_enable(mr)) != 0)
        throw std::runtime_error(fi_error("fi_mr_bind", rc));
    }
    mr_desc_ = fi_mr_desc(mr);
  }
  if (ep && std::strcmp(info->fabric_attr->prov_name, "shm") == 0) remove_stale_shm_regions();
  if (ep && (rc = fi_enable(ep)) != 0) throw std::runtime_error(fi_error("fi_enable", rc));
  // One-sided operations: the user's memory is registered through the ofi domain (under the
  // protocol's registration cache), and fi_read / fi_write complete on the queue.
  // (Only on the FI_RMA entry choose_rma took: a messages-only entry may list FI_RMA in its
  // caps too, but SLUICE_OFI_RMA=off or a msg endpoint did not ask for it.)
  if (fids_->rma_list && (info->caps & FI_RMA) && ep) {
    rma_domain_ = std::make_unique<OfiDomain>(domain, ep, mr_mode,
                                              FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE,
                                              info->domain_attr->mr_cnt);
    rma_local_ = (mr_mode & FI_MR_LOCAL) != 0;
    max_rma_ = max_msg;
    rma_slots_ = params_.tx_buffers;
    rma_ops_ = std::make_unique<RmaOp[]>(rma_slots_);
    for (std::size_t i = rma_slots_; i-- > 0;) free_rma_.push_back(static_cast<uint32_t>(i));
    caps_.rdma_get = caps_.rdma_put = caps_.needs_registration = true;
    caps_.get_any_size = true;  // the provider reads: no CPU copy on either side
    stats_.rma_enabled = 1;
  }

  slots_.resize(nrx + ntx);
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    slots_[i].buf = pool_.data() + i * slot_bytes_;
    slots_[i].index = static_cast<uint32_t>(i);
    slots_[i].rx = i < nrx;
    slots_[i].ep = ep;
    slots_[i].desc = mr_desc_;
  }
  for (std::size_t i = nrx + ntx; i-- > nrx;) free_tx_.push_back(static_cast<uint32_t>(i));
  note_tx();
  for (std::size_t i = 0; i < nrx; ++i)
    if (!post_rx(slots_[i])) throw std::runtime_error("fi_recv: cannot post the receive pool");
  inject_buf_.resize(inject_limit_);
  derive_thresholds(info);

  peers_.assign(static_cast<std::size_t>(params_.size), FI_ADDR_NOTAVAIL);
  peer_hex_.assign(static_cast<std::size_t>(params_.size), {});
  tx_ep_.assign(static_cast<std::size_t>(params_.size), connected_type_ ? nullptr : ep);
  link_of_.assign(static_cast<std::size_t>(params_.size), nullptr);
  wait_until_.assign(static_cast<std::size_t>(params_.size), 0);
  peer_raw_.assign(static_cast<std::size_t>(params_.size), {});
  if (connected_type_) {
    open_passive();
  } else {
    std::byte name[512];
    std::size_t len = sizeof name;
    if ((rc = fi_getname(&ep->fid, name, &len)) != 0)
      throw std::runtime_error(fi_error("fi_getname", rc));
    address_hex_ = to_hex(name, len);
  }
  tx_seq_.assign(static_cast<std::size_t>(params_.size), 0);
  rx_seq_.assign(static_cast<std::size_t>(params_.size), 0);
  held_.reserve(params_.rx_buffers);

  desc_.provider = info->fabric_attr->prov_name;
  desc_.fabric = info->fabric_attr->name ? info->fabric_attr->name : "";
  desc_.domain = info->domain_attr->name ? info->domain_attr->name : "";
  desc_.endpoint = type_name(info->ep_attr->type);
  desc_.inject_size = info->tx_attr->inject_size;
  desc_.max_message = max_msg;
  desc_.rma = rma_offered_;
  desc_.rma_used = rma_domain_ != nullptr;
  desc_.tagged = (info->caps & FI_TAGGED) != 0;
  desc_.mr_mode = mr_mode_text(mr_mode);
  desc_.progress = std::string("data ") + progress_text(info->domain_attr->data_progress) +
                   ", control " + progress_text(info->domain_attr->control_progress);
  desc_.wait = wait_fd_ >= 0 ? "fd" : "none (polled)";
}

namespace {
// Whether the provider of `chosen` offers FI_REMOTE_COMM on its endpoint type: fi_getinfo
// reports the bit only when asked for it (shm offers no such entry).
bool reaches_other_hosts(const fi_info* chosen) {
  InfoPtr hints(ofi::allocinfo());
  if (!hints) return true;
  hints->caps = FI_MSG | FI_REMOTE_COMM;
  hints->mode = FI_CONTEXT | FI_CONTEXT2;
  hints->ep_attr->type = chosen->ep_attr->type;
  hints->domain_attr->mr_mode = chosen->domain_attr->mr_mode;
  hints->fabric_attr->prov_name = strdup(chosen->fabric_attr->prov_name);
  fi_info* list = nullptr;
  if (ofi::getinfo(kApiVersion, nullptr, nullptr, 0, hints.get(), &list) != 0) return false;
  InfoPtr owner(list);
  return list != nullptr;
}
}  // namespace

void OfiDriver::derive_thresholds(const fi_info* info) {
  // Room left by fi_inject for the protocol's eager header (16 B, 24 B synchronous) and
  // the payload.
  constexpr std::size_t kEagerHeaderRoom = 64;
  const std::size_t inject_packet =
      inject_limit_ > sizeof(OfiHeader) ? inject_limit_ - sizeof(OfiHeader) : 0;
  // A provider without FI_REMOTE_COMM reaches this host only (shm): its fi_read is one CPU
  // copy (CMA), and a message above its inject size moves by that same copy into our
  // receive buffer, then ours out of it. So past the inject size an eager message costs
  // three copies and the pipeline as many per fragment, a rendezvous by fi_read one: eager
  // up to what fi_inject carries, fi_read for every larger message. Across hosts (tcp,
  // verbs, efa, cxi) a get costs a network round trip more than an eager message: the
  // protocol's limits (SLUICE_EAGER_LIMIT, SLUICE_RNDV_GET_THRESHOLD) apply, capped by the
  // largest message (max_packet: max_msg_size on dgram).
  desc_.host_local = rma_domain_ && !reaches_other_hosts(info);
  desc_.thresholds_why = "max_msg_size";
  if (params_.eager_max != 0) {
    caps_.inline_payload = std::min(params_.eager_max, caps_.max_packet);
    desc_.thresholds_why = "SLUICE_OFI_EAGER_MAX";
  } else if (rma_domain_ && desc_.host_local && inject_packet >= 2 * kEagerHeaderRoom) {
    caps_.inline_payload = std::min(inject_packet - kEagerHeaderRoom, caps_.max_packet);
    desc_.thresholds_why = "inject_size, host-local FI_RMA";
  }
  if (rma_domain_ && desc_.host_local) caps_.get_threshold = caps_.inline_payload + 1;
  desc_.inject_limit = inject_packet;
  desc_.eager_max = caps_.inline_payload;
  desc_.get_threshold = caps_.get_threshold;
}

void OfiDriver::open_passive() {
  fi_info* info = fids_->info;
  int rc = 0;
  fi_eq_attr eq_attr{};
  eq_attr.size = static_cast<std::size_t>(4 * params_.size + 16);
  eq_attr.wait_obj = FI_WAIT_FD;
  fid_eq* eq = nullptr;
  if ((rc = fi_eq_open(fids_->fabric.get(), &eq_attr, &eq, nullptr)) != 0) {
    eq_attr.wait_obj = FI_WAIT_NONE;
    if ((rc = fi_eq_open(fids_->fabric.get(), &eq_attr, &eq, nullptr)) != 0)
      throw std::runtime_error(fi_error("fi_eq_open", rc));
  }
  fids_->eq.reset(eq);
  if (eq_attr.wait_obj == FI_WAIT_FD && fi_control(&eq->fid, FI_GETWAIT, &eq_fd_) != 0) eq_fd_ = -1;
  fid_pep* pep = nullptr;
  if ((rc = fi_passive_ep(fids_->fabric.get(), info, &pep, nullptr)) != 0)
    throw std::runtime_error(fi_error("fi_passive_ep", rc));
  fids_->pep.reset(pep);
  if ((rc = fi_pep_bind(pep, &eq->fid, 0)) != 0)
    throw std::runtime_error(fi_error("fi_pep_bind", rc));
  if ((rc = fi_listen(pep)) != 0) throw std::runtime_error(fi_error("fi_listen", rc));
  std::byte name[512];
  std::size_t len = sizeof name;
  if ((rc = fi_getname(&pep->fid, name, &len)) != 0)
    throw std::runtime_error(fi_error("fi_getname", rc));
  address_hex_ = to_hex(name, len);
}

std::string OfiDriver::set_peer_address(int peer, const std::string& hex) {
  std::vector<std::byte> raw;
  if (!from_hex(hex, raw) || raw.empty()) return "malformed ofi address";
  if (connected_type_) {  // kept for fi_connect, on the first send to the peer
    peer_raw_[static_cast<std::size_t>(peer)] = std::move(raw);
    peers_[static_cast<std::size_t>(peer)] = 0;
    peer_hex_[static_cast<std::size_t>(peer)] = hex;
    return {};
  }
  fi_addr_t a = FI_ADDR_NOTAVAIL;
  const int rc = fi_av_insert(fids_->av.get(), raw.data(), 1, &a, 0, nullptr);
  if (rc != 1) return "fi_av_insert of rank " + std::to_string(peer) + "'s address failed";
  peers_[static_cast<std::size_t>(peer)] = a;
  peer_hex_[static_cast<std::size_t>(peer)] = hex;
  return {};
}

std::string OfiDriver::peer_address(int peer) const {
  if (peer < 0 || peer >= params_.size) return {};
  const std::string& hex = peer_hex_[static_cast<std::size_t>(peer)];
  if (hex.empty()) return {};
  std::vector<std::byte> raw;
  from_hex(hex, raw);
  if (connected_type_) {  // no address vector: a socket address is shown as ip:port
    char ip[INET6_ADDRSTRLEN] = "";
    sockaddr_storage sa{};
    std::memcpy(&sa, raw.data(), std::min(raw.size(), sizeof sa));
    if (sa.ss_family == AF_INET && raw.size() >= sizeof(sockaddr_in)) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(&sa);
      inet_ntop(AF_INET, &in->sin_addr, ip, sizeof ip);
      return desc_.provider + " " + ip + ":" + std::to_string(ntohs(in->sin_port));
    }
    if (sa.ss_family == AF_INET6 && raw.size() >= sizeof(sockaddr_in6)) {
      const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&sa);
      inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof ip);
      return desc_.provider + " [" + ip + "]:" + std::to_string(ntohs(in6->sin6_port));
    }
    return desc_.provider;
  }
  char text[256];
  std::size_t len = sizeof text;
  if (fi_av_straddr(fids_->av.get(), raw.data(), text, &len) == nullptr) return desc_.provider;
  return desc_.provider + " " + std::string(text, strnlen(text, sizeof text));
}

bool OfiDriver::reaches(int peer) const {
  return peer >= 0 && peer < params_.size &&
         peers_[static_cast<std::size_t>(peer)] != FI_ADDR_NOTAVAIL;
}

bool OfiDriver::post_rx(Slot& s) {
  const ssize_t rc = fi_recv(s.ep, s.buf, slot_bytes_, s.desc, FI_ADDR_UNSPEC, &s.ctx);
  if (rc == 0) return true;
  if (rc == -FI_EAGAIN) {
    rx_retry_.push_back(&s);
    return true;
  }
  return false;
}

void OfiDriver::repost_pending() {
  std::vector<Slot*> again;
  again.swap(rx_retry_);  // (capacity moves back below: no allocation once grown)
  for (Slot* s : again) post_rx(*s);
  again.clear();
  if (rx_retry_.empty()) rx_retry_.swap(again);
}

OfiDriver::Slot* OfiDriver::take_tx() {
  if (free_tx_.empty()) return nullptr;
  Slot* s = &slots_[free_tx_.back()];
  free_tx_.pop_back();
  note_tx();
  return s;
}

// ---- connections (msg) ------------------------------------------------------------------

OfiDriver::Link* OfiDriver::new_link(int peer, fi_info* info) {
  // Kept (dropped) even when it fails below: closing an endpoint may flush its posted
  // receives into the completion queue, naming the link's slots.
  fids_->links.push_back(std::make_unique<Link>());
  Link* l = fids_->links.back().get();
  l->peer = peer;
  l->state = Link::State::dropped;
  fid_ep* ep = nullptr;
  int rc = fi_endpoint(fids_->domain.get(), info, &ep, l);  // events name the link
  if (rc != 0) {
    util::log(util::LogLevel::warn, "ofi: fi_endpoint for rank %d: %s", peer, ofi::strerror(-rc));
    return nullptr;
  }
  l->ep.reset(ep);
  if ((rc = fi_ep_bind(ep, &fids_->eq->fid, 0)) != 0 ||
      (rc = fi_ep_bind(ep, &fids_->cq->fid, FI_TRANSMIT | FI_RECV)) != 0 ||
      (rc = fi_enable(ep)) != 0) {
    util::log(util::LogLevel::warn, "ofi: endpoint for rank %d: %s", peer, ofi::strerror(-rc));
    return nullptr;
  }
  // The connection's receive pool, posted before the first packet can arrive.
  const std::size_t n = params_.rx_buffers;
  l->pool.resize(slot_bytes_ * n);
  void* desc = nullptr;
  if (fids_->info->domain_attr->mr_mode & FI_MR_LOCAL) {
    fid_mr* mr = nullptr;
    if ((rc = fi_mr_reg(fids_->domain.get(), l->pool.data(), l->pool.size(), FI_RECV, 0, 0, 0, &mr,
                        nullptr)) != 0) {
      util::log(util::LogLevel::warn, "ofi: fi_mr_reg for rank %d: %s", peer, ofi::strerror(-rc));
      return nullptr;
    }
    l->mr.reset(mr);
    desc = fi_mr_desc(mr);
  }
  l->rx = std::make_unique<Slot[]>(n);
  for (std::size_t i = 0; i < n; ++i) {
    Slot& s = l->rx[i];
    s.buf = l->pool.data() + i * slot_bytes_;
    s.index = static_cast<uint32_t>(i);
    s.rx = true;
    s.ep = ep;
    s.desc = desc;
    s.link = l;
    s.peer = peer;
    if (!post_rx(s)) {
      util::log(util::LogLevel::warn, "ofi: cannot post receives for rank %d", peer);
      return nullptr;
    }
  }
  l->state = Link::State::connecting;
  return l;
}

IoStatus OfiDriver::link_status(int peer) {
  Link* l = link_of_[static_cast<std::size_t>(peer)];
  // Refused by a lower rank whose own request is on its way: wait for it (a while).
  if (!l && wait_until_[static_cast<std::size_t>(peer)] != 0) {
    if (now_ns() < wait_until_[static_cast<std::size_t>(peer)]) {
      progress_events();
      l = link_of_[static_cast<std::size_t>(peer)];
      if (!l) return IoStatus::again;
    } else {
      wait_until_[static_cast<std::size_t>(peer)] = 0;  // ask again
    }
  }
  if (!l) {  // the first send to the peer: ask for the connection
    CmData cm{kCmMagic, params_.rank, {}};
    std::vector<std::byte> key;
    if (from_hex(params_.job_key, key) &&
        !key.empty())  // no key: nothing to copy (memcpy from null is UB)
      std::memcpy(cm.job_key, key.data(), std::min(key.size(), sizeof cm.job_key));
    l = new_link(peer, fids_->info);
    int rc = -FI_EINVAL;
    if (l) {
      rc = static_cast<int>(fi_connect(
          l->ep.get(), peer_raw_[static_cast<std::size_t>(peer)].data(), &cm, sizeof cm));
      if (rc != 0)
        util::log(util::LogLevel::warn, "ofi: fi_connect to rank %d: %s", peer, ofi::strerror(-rc));
    }
    if (rc != 0) {
      if (l) l->state = Link::State::dropped;
      ++stats_.conn_failed;
      peers_[static_cast<std::size_t>(peer)] = FI_ADDR_NOTAVAIL;
      return IoStatus::failed;
    }
    l->state = Link::State::connecting;
    link_of_[static_cast<std::size_t>(peer)] = l;
    links_pending_.fetch_add(1, std::memory_order_relaxed);
    ++stats_.connects;
  }
  progress_events();
  l = link_of_[static_cast<std::size_t>(peer)];
  if (l && l->state == Link::State::up) return IoStatus::done;
  if (l && l->state == Link::State::closed) return IoStatus::failed;
  return IoStatus::again;  // nothing sent yet: the protocol retries after progress
}

void OfiDriver::progress_events() {
  // Room for a connection request's entry and its private data.
  alignas(fi_eq_cm_entry) std::byte buf[sizeof(fi_eq_cm_entry) + 256];
  for (;;) {
    uint32_t event = 0;
    const ssize_t n = fi_eq_read(fids_->eq.get(), &event, buf, sizeof buf, 0);
    if (n == -FI_EAVAIL) {
      on_event_error();
      continue;
    }
    // -FI_EAGAIN: nothing. (A cm entry without private data is 16 bytes.)
    if (n < static_cast<ssize_t>(sizeof(fi_eq_cm_entry))) return;
    const auto* e = reinterpret_cast<const fi_eq_cm_entry*>(buf);
    if (event == FI_CONNREQ) {
      on_connreq(buf, static_cast<std::size_t>(n));
      continue;
    }
    Link* l = e->fid ? static_cast<Link*>(e->fid->context) : nullptr;
    if (!l) continue;
    if (event == FI_CONNECTED) {
      if (l->state == Link::State::connecting || l->state == Link::State::accepting) {
        links_pending_.fetch_sub(1, std::memory_order_relaxed);
        l->state = Link::State::up;
        if (link_of_[static_cast<std::size_t>(l->peer)] == l)
          tx_ep_[static_cast<std::size_t>(l->peer)] = l->ep.get();
      }
    } else if (event == FI_SHUTDOWN) {
      // The peer closed its end (it finalized, or died): later sends to it fail.
      if (l->state == Link::State::connecting || l->state == Link::State::accepting)
        links_pending_.fetch_sub(1, std::memory_order_relaxed);
      if (l->state != Link::State::dropped) {
        l->state = Link::State::closed;
        ++stats_.conn_closed;
      }
      if (link_of_[static_cast<std::size_t>(l->peer)] == l)
        tx_ep_[static_cast<std::size_t>(l->peer)] = nullptr;
    }
  }
}

void OfiDriver::on_connreq(const void* entry, std::size_t len) {
  const auto* e = static_cast<const fi_eq_cm_entry*>(entry);
  InfoPtr info(e->info);  // ours to free
  CmData cm{};
  const std::size_t data = len - sizeof(fi_eq_cm_entry);
  if (data >= sizeof cm) std::memcpy(&cm, e->data, sizeof cm);
  std::vector<std::byte> key;
  std::byte want[sizeof cm.job_key]{};
  if (from_hex(params_.job_key, key) && !key.empty())
    std::memcpy(want, key.data(), std::min(key.size(), sizeof want));
  const int peer = cm.rank;
  bool accept = data >= sizeof cm && cm.magic == kCmMagic && peer >= 0 && peer < params_.size &&
                peer != params_.rank && std::memcmp(cm.job_key, want, sizeof want) == 0;
  if (!accept) {
    util::log(util::LogLevel::warn, "ofi: refused a connection request: not from this job");
  } else if (Link* cur = link_of_[static_cast<std::size_t>(peer)]) {
    // Both asked at once: the lower rank's request wins.
    if (cur->state == Link::State::connecting && params_.rank > peer) {
      cur->state = Link::State::dropped;  // the peer refuses it
      links_pending_.fetch_sub(1, std::memory_order_relaxed);
      link_of_[static_cast<std::size_t>(peer)] = nullptr;
    } else {
      accept = false;
    }
  }
  if (!accept) {
    ++stats_.conn_rejected;
    fi_reject(fids_->pep.get(), info->handle, nullptr, 0);
    return;
  }
  Link* l = new_link(peer, info.get());
  CmData mine{kCmMagic, params_.rank, {}};
  std::memcpy(mine.job_key, want, sizeof want);
  if (!l || fi_accept(l->ep.get(), &mine, sizeof mine) != 0) {
    ++stats_.conn_failed;
    if (l)
      l->state = Link::State::dropped;
    else
      fi_reject(fids_->pep.get(), info->handle, nullptr, 0);
    return;
  }
  l->state = Link::State::accepting;
  link_of_[static_cast<std::size_t>(peer)] = l;
  links_pending_.fetch_add(1, std::memory_order_relaxed);
  ++stats_.accepts;
}

void OfiDriver::on_event_error() {
  fi_eq_err_entry err{};
  if (fi_eq_readerr(fids_->eq.get(), &err, 0) < 0) return;
  Link* l = err.fid ? static_cast<Link*>(err.fid->context) : nullptr;
  if (!l || l->state == Link::State::dropped) return;  // a request we gave up (lost a race)
  const bool current = link_of_[static_cast<std::size_t>(l->peer)] == l;
  // A lower rank refuses our request while its own to us is pending, and its request may
  // reach us after its refusal: wait for it rather than give the peer up.
  if (current && err.err == FI_ECONNREFUSED && l->peer < params_.rank &&
      l->state == Link::State::connecting) {
    l->state = Link::State::dropped;
    links_pending_.fetch_sub(1, std::memory_order_relaxed);
    link_of_[static_cast<std::size_t>(l->peer)] = nullptr;
    wait_until_[static_cast<std::size_t>(l->peer)] = now_ns() + 10'000'000'000ull;
    ++stats_.conn_refused;
    return;
  }
  if (l->state == Link::State::connecting || l->state == Link::State::accepting)
    links_pending_.fetch_sub(1, std::memory_order_relaxed);
  ++stats_.conn_failed;
  util::log(util::LogLevel::warn, "ofi: connection with rank %d failed: %s", l->peer,
            ofi::strerror(err.err));
  l->state = Link::State::closed;
  if (current) {
    tx_ep_[static_cast<std::size_t>(l->peer)] = nullptr;
    if (params_.on_peer_dead) params_.on_peer_dead(l->peer);
  }
}

// ---- packets ----------------------------------------------------------------------------

IoStatus OfiDriver::send(int peer, std::span<const std::byte> header,
                         std::span<const std::byte> payload) {
  if (!reaches(peer) || header.size() > caps_.max_header || payload.size() > caps_.max_packet) {
    ++stats_.send_errors;
    return IoStatus::failed;
  }
  fid_ep* ep = tx_ep_[static_cast<std::size_t>(peer)];
  if (!ep) {  // msg: no connection up yet
    const IoStatus st = link_status(peer);
    if (st != IoStatus::done) {
      if (st == IoStatus::failed) ++stats_.send_errors;
      return st;
    }
    ep = tx_ep_[static_cast<std::size_t>(peer)];
  }
  uint32_t& seq = tx_seq_[static_cast<std::size_t>(peer)];
  const OfiHeader oh{static_cast<uint32_t>(params_.rank), seq, static_cast<uint16_t>(header.size()),
                     kMagic};
  const std::size_t total = sizeof oh + header.size() + payload.size();
  const fi_addr_t dest = peers_[static_cast<std::size_t>(peer)];
  auto fill = [&](std::byte* p) {
    std::memcpy(p, &oh, sizeof oh);
    if (!header.empty()) std::memcpy(p + sizeof oh, header.data(), header.size());
    if (!payload.empty())
      std::memcpy(p + sizeof oh + header.size(), payload.data(), payload.size());
  };
  ssize_t rc;
  if (total <= inject_limit_) {
    fill(inject_buf_.data());
    rc = fi_inject(ep, inject_buf_.data(), total, dest);
    if (rc == 0) ++stats_.injected;
  } else {
    Slot* s = take_tx();
    if (!s) {
      ++stats_.send_again;
      return IoStatus::again;  // every send buffer is in the provider's hands
    }
    fill(s->buf);
    s->peer = peer;
    rc = fi_send(ep, s->buf, total, mr_desc_, dest, &s->ctx);
    if (rc != 0) {
      free_tx_.push_back(s->index);
      note_tx();
    }
  }
  if (rc == 0) {
    ++seq;
    ++stats_.sent;
    stats_.sent_bytes += total;
    return IoStatus::done;
  }
  if (rc == -FI_EAGAIN) {  // the provider's queues are full: progress (poll) frees them
    ++stats_.send_again;
    return IoStatus::again;
  }
  ++stats_.send_errors;
  return IoStatus::failed;
}

int OfiDriver::complete(const void* op_context, std::size_t len, PacketSink* sink) {
  if (RmaOp* op = rma_op_of(op_context)) {
    finish_rma(*op, Errc::ok, sink);
    return 1;
  }
  Slot& s = *static_cast<Slot*>(const_cast<void*>(op_context));
  if (!s.rx) {
    free_tx_.push_back(s.index);
    note_tx();
    return 1;
  }
  OfiHeader oh{};
  if (len >= sizeof oh) std::memcpy(&oh, s.buf, sizeof oh);
  // On msg the sender is the connection's peer; elsewhere any peer in the address vector.
  const bool valid =
      len >= sizeof oh && oh.magic == kMagic && static_cast<int>(oh.src) < params_.size &&
      static_cast<int>(oh.src) != params_.rank &&
      (s.link ? s.link->peer == static_cast<int>(oh.src) : peers_[oh.src] != FI_ADDR_NOTAVAIL) &&
      oh.header_len <= len - sizeof oh;
  if (!valid) {
    ++stats_.malformed;
  } else if (sink) {
    // A reliable endpoint matches receives in send order (FI_ORDER_SAS) but may complete
    // them out of order (a provider's rendezvous finishes after a later eager message):
    // hold an early one, its buffer not reposted, until its predecessors are delivered.
    if (caps_.ordered && oh.seq != rx_seq_[oh.src]) {
      held_.push_back({oh.src, oh.seq, &s, static_cast<uint32_t>(len)});
      ++stats_.held;
      return 1;
    }
    ++rx_seq_[oh.src];  // before the sink runs: it may send, and a send may poll
    deliver(s, len, *sink);
    release_held(oh.src, *sink);
    return 1;
  }
  if (!post_rx(s)) ++stats_.cq_errors;
  return 1;
}

void OfiDriver::deliver(Slot& s, std::size_t len, PacketSink& sink) {
  OfiHeader oh{};
  std::memcpy(&oh, s.buf, sizeof oh);
  ++stats_.received;
  stats_.received_bytes += len;
  const std::span<const std::byte> all(s.buf + sizeof oh, len - sizeof oh);
  sink.on_packet(static_cast<int>(oh.src), all.first(oh.header_len), all.subspan(oh.header_len));
  if (!post_rx(s)) ++stats_.cq_errors;
}

void OfiDriver::release_held(uint32_t src, PacketSink& sink) {
  for (std::size_t i = 0; i < held_.size();) {
    if (held_[i].src != src || held_[i].seq != rx_seq_[src]) {
      ++i;
      continue;
    }
    const Held h = held_[i];
    held_[i] = held_.back();
    held_.pop_back();
    ++rx_seq_[src];
    deliver(*h.slot, h.len, sink);
    i = 0;
  }
}

void OfiDriver::read_error(PacketSink* sink) {
  fi_cq_err_entry err{};
  if (fi_cq_readerr(fids_->cq.get(), &err, 0) < 0) return;
  ++stats_.cq_errors;
  if (!err.op_context) return;
  if (RmaOp* op = rma_op_of(err.op_context)) {
    // The operation failed, not the peer: a refused key or range (FI_EACCES, FI_EINVAL,
    // FI_EKEYREJECTED ...) is remote_access on this operation alone; only a connection that
    // is gone says peer_dead (the peer's death itself comes from the bootstrap, as always).
    ++stats_.rma_errors;
    util::log(util::LogLevel::warn, "ofi: an %s failed: %s", op->read ? "fi_read" : "fi_write",
              fi_cq_strerror(fids_->cq.get(), err.prov_errno, err.err_data, nullptr, 0));
    const bool gone = err.err == FI_ECONNRESET || err.err == FI_ECONNABORTED ||
                      err.err == FI_ENOTCONN || err.err == FI_ESHUTDOWN ||
                      err.err == FI_ECANCELED || err.err == FI_EHOSTUNREACH;
    finish_rma(*op, gone ? Errc::peer_dead : Errc::remote_access, sink);
    return;
  }
  Slot& s = *static_cast<Slot*>(err.op_context);
  if (s.rx) {
    // A connection torn down flushes its receives (not reposted); else e.g. a message
    // larger than the buffer (FI_ETRUNC).
    const bool gone = s.link && s.link->state != Link::State::up;
    if (!gone) ++stats_.malformed;
    if (err.err != FI_ECANCELED && !gone) post_rx(s);
    return;
  }
  free_tx_.push_back(s.index);
  note_tx();
  ++stats_.send_errors;
  util::log(util::LogLevel::warn, "ofi: a send to rank %d failed: %s", s.peer,
            fi_cq_strerror(fids_->cq.get(), err.prov_errno, err.err_data, nullptr, 0));
  if (params_.on_peer_dead && s.peer >= 0) params_.on_peer_dead(s.peer);
}

int OfiDriver::poll(PacketSink& sink, int budget) {
  if (!rx_retry_.empty()) repost_pending();
  // msg: connection events at every poll while a connection is being made, else now and
  // then (a peer's request waits on the passive endpoint meanwhile).
  if (connected_type_ && (links_pending_.load(std::memory_order_relaxed) > 0 || ++eq_tick_ >= 64)) {
    eq_tick_ = 0;
    progress_events();
  }
  int work = 0;
  fi_cq_msg_entry e[16];
  while (work < budget) {
    const ssize_t n =
        fi_cq_read(fids_->cq.get(), e, static_cast<std::size_t>(std::min(16, budget - work)));
    if (n == -FI_EAGAIN) break;
    if (n == -FI_EAVAIL) {
      read_error(&sink);
      ++work;
      continue;
    }
    if (n < 0) {
      ++stats_.cq_errors;
      break;
    }
    for (ssize_t i = 0; i < n; ++i) work += complete(e[i].op_context, e[i].len, &sink);
    if (n < 16) break;
  }
  // Idle: re-arm the wait fd now and then (fi_trywait resets its signal; block() only
  // sleeps on the fd, since the progress thread may call it beside a poll).
  if (work == 0 && wait_fd_ >= 0 && ++idle_polls_ >= 64) {
    idle_polls_ = 0;
    if (connected_type_) progress_events();  // before sleeping: take a pending request
    fid* f[2] = {&fids_->cq->fid, fids_->eq ? &fids_->eq->fid : nullptr};
    (void)fi_trywait(fids_->fabric.get(), f, eq_fd_ >= 0 ? 2 : 1);
  } else if (work > 0) {
    idle_polls_ = 0;
  }
  return work;
}

bool OfiDriver::block(uint64_t timeout_ns) {
  if (wait_fd_ < 0) return false;
  // Sends the provider still holds may need our progress: keep such sleeps short. (The
  // progress thread may be here beside a poll: only the mirror and atomics are read.)
  // A connection being made needs our calls too (fi_eq_read drives it on manual progress).
  if (tx_busy_.load(std::memory_order_relaxed) ||
      links_pending_.load(std::memory_order_relaxed) > 0)
    timeout_ns = std::min<uint64_t>(timeout_ns, 100000);
  blocks_.fetch_add(1, std::memory_order_relaxed);
  // msg: a peer's connection request arrives on the event queue.
  pollfd p[2] = {{wait_fd_, POLLIN, 0}, {eq_fd_, POLLIN, 0}};
  const timespec ts{static_cast<time_t>(timeout_ns / 1000000000u),
                    static_cast<long>(timeout_ns % 1000000000u)};
  ppoll(p, eq_fd_ >= 0 ? 2 : 1, &ts, nullptr);
  return true;
}

void OfiDriver::drain(uint64_t timeout_ns) {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  const auto ns = [](const timespec& t) {
    return static_cast<uint64_t>(t.tv_sec) * 1000000000u + static_cast<uint64_t>(t.tv_nsec);
  };
  const uint64_t deadline = ns(now) + timeout_ns;
  // Injected packets have no completion: give the provider a few rounds of progress after
  // the last tracked send completed (manual-progress providers move data only when called).
  int rounds_after = 200;
  fi_cq_msg_entry e[16];
  while (rounds_after > 0 && ns(now) < deadline) {
    const ssize_t n = fi_cq_read(fids_->cq.get(), e, 16);
    if (n == -FI_EAVAIL)
      read_error(nullptr);
    else
      for (ssize_t i = 0; i < n; ++i) complete(e[i].op_context, e[i].len, nullptr);
    if (free_tx_.size() == params_.tx_buffers && free_rma_.size() == rma_slots_) --rounds_after;
    const timespec nap{0, 20000};
    nanosleep(&nap, nullptr);
    clock_gettime(CLOCK_MONOTONIC, &now);
  }
}

// ---- one-sided operations ----------------------------------------------------------------

mem::Domain& OfiDriver::memory_domain() {
  return rma_domain_ ? static_cast<mem::Domain&>(*rma_domain_) : mem::host_domain();
}

OfiDriver::RmaOp* OfiDriver::rma_op_of(const void* ctx) const {
  const auto* p = static_cast<const RmaOp*>(ctx);
  if (!rma_ops_ || p < rma_ops_.get() || p >= rma_ops_.get() + rma_slots_) return nullptr;
  return const_cast<RmaOp*>(p);
}

void OfiDriver::finish_rma(RmaOp& op, Errc status, PacketSink* sink) {
  const CompletionToken token = op.token;
  op.local.reset();  // a registration made for this operation alone
  free_rma_.push_back(op.index);
  note_tx();
  if (sink) sink->on_completion(token, status);
}

IoStatus OfiDriver::post_get(int peer, std::span<std::byte> local,
                             const mem::Registration& local_reg, const mem::RemoteKey& remote,
                             uint64_t offset, CompletionToken token) {
  return post_rma(true, peer, local.data(), local.size(), local_reg, remote, offset, token);
}

IoStatus OfiDriver::post_put(int peer, std::span<const std::byte> local,
                             const mem::Registration& local_reg, const mem::RemoteKey& remote,
                             uint64_t offset, CompletionToken token) {
  return post_rma(false, peer, const_cast<std::byte*>(local.data()), local.size(), local_reg,
                  remote, offset, token);
}

IoStatus OfiDriver::post_rma(bool read, int peer, std::byte* local, std::size_t n,
                             const mem::Registration& local_reg, const mem::RemoteKey& remote,
                             uint64_t offset, CompletionToken token) {
  if (!rma_domain_ || !reaches(peer) || !remote.covers(offset, n) || n > max_rma_) {
    ++stats_.rma_errors;
    return IoStatus::failed;
  }
  if (n == 0) return IoStatus::done;
  if (free_rma_.empty()) {
    ++stats_.rma_again;
    return IoStatus::again;
  }
  RmaOp& op = rma_ops_[free_rma_.back()];
  op.index = free_rma_.back();
  free_rma_.pop_back();
  note_tx();
  op.token = token;
  op.read = read;
  void* desc = nullptr;
  if (rma_local_) {
    // The protocol registered the buffer in memory_domain() (its cache's entry, or the
    // ofi domain's own handle); a buffer it did not register is registered for this
    // operation alone.
    if (local_reg.pinned() && local_reg.covers({local, n})) {
      desc = reinterpret_cast<void*>(local_reg.local_key().value);
    } else if (rma_domain_->register_memory({local, n}, op.local) == Errc::ok) {
      ++stats_.rma_local_registrations;
      desc = reinterpret_cast<void*>(op.local.local_key().value);
    } else {
      finish_rma(op, Errc::ok, nullptr);
      ++stats_.rma_errors;
      return IoStatus::failed;
    }
  }
  fid_ep* ep = tx_ep_[static_cast<std::size_t>(peer)];
  const fi_addr_t dest = peers_[static_cast<std::size_t>(peer)];
  const uint64_t addr = remote.addr + offset;
  ssize_t rc;
  if (read) {
    rc = fi_read(ep, local, n, desc, dest, addr, remote.key, &op.ctx);
  } else {
    // Completed once the bytes are in the target's memory (FI_DELIVERY_COMPLETE), not when
    // they left: a flush that returns must find them there whatever path the next message
    // to the target takes.
    iovec iov{local, n};
    fi_rma_iov rma_iov{addr, n, remote.key};
    fi_msg_rma msg{};
    msg.msg_iov = &iov;
    msg.desc = &desc;
    msg.iov_count = 1;
    msg.addr = dest;
    msg.rma_iov = &rma_iov;
    msg.rma_iov_count = 1;
    msg.context = &op.ctx;
    rc = fi_writemsg(ep, &msg, FI_COMPLETION | FI_DELIVERY_COMPLETE);
  }
  if (rc != 0) {
    finish_rma(op, Errc::ok, nullptr);
    if (rc == -FI_EAGAIN) {  // the provider's queue is full: progress frees it
      ++stats_.rma_again;
      return IoStatus::again;
    }
    ++stats_.rma_errors;
    return IoStatus::failed;
  }
  if (read) {
    ++stats_.rma_reads;
    stats_.rma_read_bytes += n;
  } else {
    ++stats_.rma_writes;
    stats_.rma_write_bytes += n;
  }
  return IoStatus::posted;
}

void OfiDriver::register_stats(util::StatsRegistry& reg, std::string_view c) const {
  using util::Unit;
  reg.add(c, "packets_sent", Unit::count, &stats_.sent, "packets sent");
  reg.add(c, "bytes_sent", Unit::bytes, &stats_.sent_bytes, "bytes sent, ofi header included");
  reg.add(c, "injected", Unit::count, &stats_.injected,
          "of packets_sent: by fi_inject (no completion)");
  reg.add(c, "packets_received", Unit::count, &stats_.received, "packets received");
  reg.add(c, "bytes_received", Unit::bytes, &stats_.received_bytes, "bytes received");
  reg.add(c, "send_again", Unit::count, &stats_.send_again,
          "sends refused for now (no send buffer, provider queue full)");
  reg.add(c, "send_errors", Unit::count, &stats_.send_errors, "sends that failed");
  reg.add(c, "malformed", Unit::count, &stats_.malformed, "packets dropped as invalid");
  reg.add(c, "cq_errors", Unit::count, &stats_.cq_errors, "completion queue error entries");
  reg.add(c, "held", Unit::count, &stats_.held,
          "packets completed before an earlier one and held back to keep the order");
  reg.add(c, "blocks", Unit::count, &blocks_, "sleeps on the completion queue's fd");
  reg.add(c, "rma_enabled", Unit::count, &stats_.rma_enabled,
          "1 when rendezvous and posted get / put use fi_read / fi_write");
  reg.add(c, "rma_reads", Unit::count, &stats_.rma_reads, "fi_read operations posted");
  reg.add(c, "rma_read_bytes", Unit::bytes, &stats_.rma_read_bytes, "bytes read by fi_read");
  reg.add(c, "rma_writes", Unit::count, &stats_.rma_writes, "fi_write operations posted");
  reg.add(c, "rma_write_bytes", Unit::bytes, &stats_.rma_write_bytes, "bytes written by fi_write");
  reg.add(c, "rma_again", Unit::count, &stats_.rma_again,
          "one-sided operations refused for now (provider queue full, no operation slot)");
  reg.add(c, "rma_errors", Unit::count, &stats_.rma_errors,
          "one-sided operations that failed (posting or completion)");
  reg.add(c, "rma_local_registrations", Unit::count, &stats_.rma_local_registrations,
          "local buffers registered for one operation (FI_MR_LOCAL, handed over unregistered)");
  if (rma_domain_) {
    const OfiDomainStats& d = rma_domain_->stats();
    reg.add(c, "mr_registrations", Unit::count, &d.registrations, "fi_mr_reg calls that succeeded");
    reg.add(c, "mr_failures", Unit::count, &d.failures, "fi_mr_reg calls that failed");
    reg.add(c, "mr_live", Unit::count, &d.live, "memory regions registered now");
    reg.add(c, "mr_bytes", Unit::bytes, &d.bytes, "bytes of the memory regions registered now");
    const std::string prefix = std::string(c) + ".";
    reg.set_kind(prefix + "mr_live", util::Kind::level);
    reg.set_kind(prefix + "mr_bytes", util::Kind::level);
  }
  if (connected_type_) {
    reg.add(c, "connects", Unit::count, &stats_.connects, "msg connections asked for by this rank");
    reg.add(c, "accepts", Unit::count, &stats_.accepts, "msg connections accepted");
    reg.add(c, "conn_rejected", Unit::count, &stats_.conn_rejected,
            "msg connection requests refused (the lower rank's won a race; not from this job)");
    reg.add(c, "conn_refused", Unit::count, &stats_.conn_refused,
            "msg requests a lower rank refused (its own request to us was pending)");
    reg.add(c, "conn_failed", Unit::count, &stats_.conn_failed,
            "msg connections that could not be made");
    reg.add(c, "conn_closed", Unit::count, &stats_.conn_closed, "msg connections the peer closed");
  }
  reg.add_info(
      c, "provider", [this] { return desc_.provider; }, "libfabric provider");
  reg.add_info(
      c, "fabric", [this] { return desc_.fabric + " / " + desc_.domain; },
      "libfabric fabric / domain");
  reg.add_info(
      c, "endpoint", [this] { return desc_.endpoint; }, "endpoint type");
  reg.add_info(
      c, "inject_size", [this] { return std::to_string(desc_.inject_size); },
      "bytes the provider sends from the caller's buffer at once");
  reg.add_info(
      c, "max_message", [this] { return std::to_string(desc_.max_message); },
      "largest message of the endpoint");
  reg.add_info(
      c, "rma",
      [this] {
        // Without a wait object (shm) one-sided operations stay messages: see
        // RmaProtocol::registered_path.
        if (desc_.rma_used && caps_.naps)
          return std::string(
              "fi_read/fi_write (rendezvous; put/get and atomics as messages: no wait object)");
        return std::string(desc_.rma_used
                               ? "fi_read/fi_write (rendezvous, put/get; atomics as messages)"
                           : desc_.rma ? "offered, not used (" + desc_.rma_why + ")"
                                       : "no");
      },
      "FI_RMA: whether rendezvous and one-sided puts and gets use fi_read / fi_write (remote "
      "atomics and active messages always travel as messages)");
  reg.add_info(
      c, "mr_mode", [this] { return desc_.mr_mode; }, "memory registration mode bits");
  reg.add_info(
      c, "thresholds",
      [this] {
        return "inject " + std::to_string(desc_.inject_limit) + " B, eager " +
               std::to_string(desc_.eager_max) + " B, get from " +
               (desc_.get_threshold ? std::to_string(desc_.get_threshold) + " B"
                                    : std::string("the protocol's")) +
               " (" + desc_.thresholds_why + ")";
      },
      "from the caps: protocol header + payload sent by fi_inject, largest eager payload, "
      "smallest rendezvous by fi_read");
  reg.add(
      c, "inject_limit", Unit::bytes, [this] { return static_cast<uint64_t>(desc_.inject_limit); },
      "protocol header + payload bytes a packet may have to go by fi_inject");
  reg.add(
      c, "eager_max", Unit::bytes, [this] { return static_cast<uint64_t>(desc_.eager_max); },
      "largest eager payload the driver takes (its inline payload)");
  reg.add(
      c, "get_threshold", Unit::bytes,
      [this] { return static_cast<uint64_t>(desc_.get_threshold); },
      "smallest rendezvous the driver wants moved by fi_read (0: the protocol's)");
  for (const char* k : {"inject_limit", "eager_max", "get_threshold"})
    reg.set_kind(std::string(c) + "." + k, util::Kind::level);
  reg.add_info(
      c, "progress", [this] { return desc_.progress; }, "progress model");
  reg.add_info(
      c, "wait", [this] { return desc_.wait; }, "how a blocked rank sleeps");
}

}  // namespace sluice::drivers
