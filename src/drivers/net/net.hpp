// Helpers shared by the socket drivers (tcp, udp): this host's IPv4 addresses, the address strings
// published through the bootstrap store, the choice of which of a peer's addresses to use, and the
// job key in binary form.
//
// Published address format (boot key "tcp/<rank>" or "udp/<rank>"):
//     <port>|<ip>/<prefix>,<ip>/<prefix>,...
// e.g. "40211|10.0.0.2/24,127.0.0.1/8". Without SLUICE_NET_IF / NET_ADDR the sockets bind
// INADDR_ANY and every address of the host is listed; with them, the sockets bind the one
// configured address (bind_address) and only it is listed.
#pragma once

#include <netinet/in.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mem/uring_domain.hpp"
#include "util/config_key.hpp"

namespace sluice::drivers::net {

struct IfAddr {
  in_addr addr{};
  int prefix = 32;
  std::string ifname;
  bool loopback() const { return (ntohl(addr.s_addr) >> 24) == 127; }
};

// This host's IPv4 addresses (interfaces that are up), loopback last. `only_if` keeps one
// interface (SLUICE_NET_IF), `only_addr` one address (SLUICE_NET_ADDR); both may be empty.
std::vector<IfAddr> local_addresses(std::string_view only_if, std::string_view only_addr,
                                    std::string& error);

std::string format_published(uint16_t port, const std::vector<IfAddr>& addrs);
// Parses format_published's output; false when malformed.
bool parse_published(std::string_view s, uint16_t& port, std::vector<IfAddr>& addrs);

// Which of a peer's addresses to use: loopback when the peer shares our host, else one
// in a subnet we are attached to, else the first non-loopback one.
sockaddr_in choose_address(uint16_t port, const std::vector<IfAddr>& peer_addrs,
                           const std::vector<IfAddr>& mine, bool same_host);

std::string to_string(const sockaddr_in& a);

// The job key (32 hex digits) as 16 bytes; false if it is not 32 hex digits.
bool parse_job_key(std::string_view hex, std::array<uint8_t, 16>& key);
// A 64-bit key for the reliability layer's datagram header, derived from the 128-bit one.
uint64_t fold_job_key(const std::array<uint8_t, 16>& key);

uint64_t monotonic_ns();

// The uring memory domain a socket driver sends zero-copy from (io_uring SEND_ZC of fixed
// buffers, `ring_entries` submission entries), or null with the reason in `why` (no
// io_uring, or a kernel without SEND_ZC).
std::unique_ptr<mem::UringDomain> open_send_zc_domain(unsigned ring_entries, std::string& why);

// The keys every network driver shares (SLUICE_NET_IF, SLUICE_NET_ADDR).
std::span<const util::ConfigKey> config_keys();
// local_addresses() as SLUICE_NET_IF / SLUICE_NET_ADDR select them.
std::vector<IfAddr> configured_addresses(const util::ConfigValues& config, std::string& error);
// The address a driver's sockets bind: INADDR_ANY when `restricted` is false (every address
// of the host is published); otherwise the first of `addrs` (a selected interface's or the
// configured address), and `addrs` keeps only it, so peers are given no address the sockets
// do not listen on. An address on no local interface (SLUICE_NET_ADDR behind NAT) cannot be
// bound: INADDR_ANY then.
in_addr bind_address(bool restricted, std::vector<IfAddr>& addrs);
// Whether SLUICE_NET_IF or SLUICE_NET_ADDR selects the addresses.
bool addresses_restricted(const util::ConfigValues& config);

}  // namespace sluice::drivers::net
