#include "drivers/net/net.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <time.h>

#include <charconv>
#include <cstring>

namespace sluice::drivers::net {

namespace {

int prefix_of(const sockaddr* mask) {
  if (!mask) return 32;
  uint32_t m = ntohl(reinterpret_cast<const sockaddr_in*>(mask)->sin_addr.s_addr);
  return __builtin_popcount(m);
}

bool same_subnet(in_addr a, in_addr b, int prefix) {
  if (prefix <= 0) return true;
  uint32_t mask = prefix >= 32 ? 0xFFFFFFFFu : ~(0xFFFFFFFFu >> prefix);
  return (ntohl(a.s_addr) & mask) == (ntohl(b.s_addr) & mask);
}

}  // namespace

std::vector<IfAddr> local_addresses(std::string_view only_if, std::string_view only_addr,
                                    std::string& error) {
  std::vector<IfAddr> out, loop;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) {
    error = std::string("getifaddrs: ") + std::strerror(errno);
    return out;
  }
  for (ifaddrs* i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
    if (!(i->ifa_flags & IFF_UP)) continue;
    if (!only_if.empty() && only_if != i->ifa_name) continue;
    IfAddr a;
    a.addr = reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr;
    a.prefix = prefix_of(i->ifa_netmask);
    a.ifname = i->ifa_name;
    char text[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &a.addr, text, sizeof text);
    if (!only_addr.empty() && only_addr != text) continue;
    (a.loopback() ? loop : out).push_back(a);
  }
  freeifaddrs(list);
  out.insert(out.end(), loop.begin(), loop.end());
  if (out.empty() && !only_addr.empty()) {
    // An address on no local interface (e.g. a NAT'd name): publish it as given.
    IfAddr a;
    if (inet_pton(AF_INET, std::string(only_addr).c_str(), &a.addr) == 1) {
      out.push_back(a);
    } else {
      error = "SLUICE_NET_ADDR=" + std::string(only_addr) + " is not an IPv4 address";
    }
  }
  if (out.empty() && error.empty())
    error = only_if.empty() ? "no IPv4 address on any interface"
                            : "no IPv4 address on interface " + std::string(only_if);
  return out;
}

std::string format_published(uint16_t port, const std::vector<IfAddr>& addrs) {
  std::string s = std::to_string(port) + "|";
  for (std::size_t i = 0; i < addrs.size(); ++i) {
    char text[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &addrs[i].addr, text, sizeof text);
    if (i) s += ",";
    s += text;
    s += "/" + std::to_string(addrs[i].prefix);
  }
  return s;
}

bool parse_published(std::string_view s, uint16_t& port, std::vector<IfAddr>& addrs) {
  addrs.clear();
  const auto bar = s.find('|');
  if (bar == std::string_view::npos) return false;
  unsigned p = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + bar, p);
  if (ec != std::errc() || ptr != s.data() + bar || p == 0 || p > 65535) return false;
  port = static_cast<uint16_t>(p);
  std::string_view rest = s.substr(bar + 1);
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    const auto slash = item.find('/');
    if (slash == std::string_view::npos) return false;
    IfAddr a;
    if (inet_pton(AF_INET, std::string(item.substr(0, slash)).c_str(), &a.addr) != 1) return false;
    int pre = 0;
    auto [q, e2] = std::from_chars(item.data() + slash + 1, item.data() + item.size(), pre);
    if (e2 != std::errc() || pre < 0 || pre > 32) return false;
    a.prefix = pre;
    addrs.push_back(a);
  }
  return !addrs.empty();
}

sockaddr_in choose_address(uint16_t port, const std::vector<IfAddr>& peer,
                           const std::vector<IfAddr>& mine, bool same_host) {
  const IfAddr* pick = nullptr;
  if (same_host)
    for (const auto& a : peer)
      if (a.loopback()) pick = &a;
  if (!pick)
    for (const auto& a : peer) {
      if (a.loopback()) continue;
      for (const auto& m : mine)
        if (!m.loopback() && same_subnet(a.addr, m.addr, m.prefix)) pick = &a;
      if (pick) break;
    }
  if (!pick)
    for (const auto& a : peer)
      if (!a.loopback()) {
        pick = &a;
        break;
      }
  if (!pick && !peer.empty()) pick = &peer.front();
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  if (pick) sa.sin_addr = pick->addr;
  return sa;
}

std::string to_string(const sockaddr_in& a) {
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &a.sin_addr, text, sizeof text);
  return std::string(text) + ":" + std::to_string(ntohs(a.sin_port));
}

bool parse_job_key(std::string_view hex, std::array<uint8_t, 16>& key) {
  if (hex.size() != 32) return false;
  for (std::size_t i = 0; i < 16; ++i) {
    unsigned v = 0;
    auto [p, ec] = std::from_chars(hex.data() + 2 * i, hex.data() + 2 * i + 2, v, 16);
    if (ec != std::errc() || p != hex.data() + 2 * i + 2) return false;
    key[i] = static_cast<uint8_t>(v);
  }
  return true;
}

uint64_t fold_job_key(const std::array<uint8_t, 16>& key) {
  uint64_t a = 0, b = 0;
  std::memcpy(&a, key.data(), 8);
  std::memcpy(&b, key.data() + 8, 8);
  return a ^ (b * 0x9E3779B97F4A7C15ull);
}

uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

std::unique_ptr<mem::UringDomain> open_send_zc_domain(unsigned ring_entries, std::string& why) {
  mem::UringDomainParams up;
  up.slots = 1024;
  up.ring_entries = ring_entries;
  auto domain = mem::UringDomain::open(up, why);
  if (!domain) return nullptr;
  io_uring_probe* probe = io_uring_get_probe_ring(&domain->ring());
  const bool zc = probe && io_uring_opcode_supported(probe, IORING_OP_SEND_ZC);
  if (probe) io_uring_free_probe(probe);
  if (!zc) {
    why = "the kernel has no io_uring SEND_ZC (Linux 6.0+)";
    return nullptr;
  }
  return domain;
}

namespace {
constexpr util::ConfigKey kNetKeys[] = {
    {"NET_IF",
     util::ConfigType::string,
     "",
     {},
     "network interface whose IPv4 address the network drivers bind and publish to peers (its "
     "first; empty: every interface that is up, sockets bound to 0.0.0.0)"},
    {"NET_ADDR",
     util::ConfigType::string,
     "",
     {},
     "the one IPv4 address the network drivers bind and publish to peers (empty: the "
     "interfaces' addresses)"},
};
}  // namespace

std::span<const util::ConfigKey> config_keys() {
  return kNetKeys;
}

std::vector<IfAddr> configured_addresses(const util::ConfigValues& config, std::string& error) {
  const std::string only_if = config.get_string("NET_IF");
  std::vector<IfAddr> out = local_addresses(only_if, config.get_string("NET_ADDR"), error);
  // The error names the key that chose the interface (the rails' caller names its own).
  if (out.empty() && !only_if.empty() && error.starts_with("no IPv4 address on interface"))
    error = "SLUICE_NET_IF=\"" + only_if + "\": " + error;
  return out;
}

bool addresses_restricted(const util::ConfigValues& config) {
  return !config.get_string("NET_IF").empty() || !config.get_string("NET_ADDR").empty();
}

in_addr bind_address(bool restricted, std::vector<IfAddr>& addrs) {
  in_addr any{htonl(INADDR_ANY)};
  if (!restricted || addrs.empty() || addrs.front().ifname.empty()) return any;
  addrs.resize(1);
  return addrs.front().addr;
}

}  // namespace sluice::drivers::net
