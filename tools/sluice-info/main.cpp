// sluice-info: what Sluice would do here, and why.
//   sluice-info --config          every SLUICE_* key: value in force, default, help
//   sluice-info [--peers]         (under sluicerun) which driver serves which peer
//   sluice-info --protocols       which protocol each message size uses per driver
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/engine.hpp"
#include "sluice/sluice.hpp"

namespace {

const char* type_name(sluice::detail::ConfigType t) {
  using sluice::detail::ConfigType;
  switch (t) {
    case ConfigType::boolean:
      return "bool";
    case ConfigType::integer:
      return "int";
    case ConfigType::size:
      return "bytes";
    case ConfigType::duration:
      return "time";
    case ConfigType::string:
      return "string";
    case ConfigType::choice:
      return "choice";
  }
  return "?";
}

int print_config() {
  std::vector<std::string> problems;
  auto cfg = sluice::detail::Config::from_environment(problems);
  for (const auto& p : problems) std::printf("# warning: %s\n", p.c_str());
  for (const auto& k : sluice::detail::config_table()) {
    std::string name = "SLUICE_" + std::string(k.name);
    std::string value = cfg.value_text(k.name);
    std::printf("%-24s %-8s = %-10s (default %.*s%s)\n    %.*s", name.c_str(), type_name(k.type),
                value.c_str(), static_cast<int>(k.default_value.size()), k.default_value.data(),
                cfg.is_set(k.name) ? ", set in the environment" : "",
                static_cast<int>(k.help.size()), k.help.data());
    if (!k.choices.empty())
      std::printf(" [%.*s]", static_cast<int>(k.choices.size()), k.choices.data());
    std::printf("\n");
  }
  return 0;
}

std::string human(std::size_t b) {
  char buf[32];
  if (b >= (1u << 20) && b % (1u << 20) == 0)
    std::snprintf(buf, sizeof buf, "%zu MiB", b >> 20);
  else if (b >= 1024 && b % 1024 == 0)
    std::snprintf(buf, sizeof buf, "%zu KiB", b >> 10);
  else
    std::snprintf(buf, sizeof buf, "%zu B", b);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  bool config = false, protocols = false, peers = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--config"))
      config = true;
    else if (!std::strcmp(argv[i], "--protocols"))
      protocols = true;
    else if (!std::strcmp(argv[i], "--peers"))
      peers = true;
    else {
      const bool help = !std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h");
      std::fprintf(help ? stdout : stderr,
                   "usage: sluice-info [--config] [--peers] [--protocols]\n"
                   "  --config     every SLUICE_* key with its value, default and help\n"
                   "  --peers      (under sluicerun) the driver that serves each peer\n"
                   "  --protocols  the protocol each message size takes, and why\n"
                   "  -h, --help   show this help\n"
                   "With no option: --peers.\n");
      return help ? 0 : 2;
    }
  }
  if (!config && !protocols) peers = true;
  if (config) print_config();
  if (!peers && !protocols) return 0;

  sluice::Session s;
  auto* eng = sluice::detail::current_engine();
  if (peers) {
    // Each rank reports its own routes, in rank order.
    for (int r = 0; r < s.size(); ++r) {
      if (r == s.rank()) {
        std::printf("rank %d:", r);
        for (int p = 0; p < s.size(); ++p) {
          std::printf(" %d->%.*s", p, static_cast<int>(s.driver_name(p).size()),
                      s.driver_name(p).data());
          const std::string addr = eng->peer_address(p);  // socket drivers only
          if (!addr.empty()) std::printf("(%s)", addr.c_str());
        }
        std::printf("\n");
        std::fflush(stdout);
      }
      s.barrier();
    }
  }
  if (protocols && s.rank() == 0) {
    const auto& p2p = eng->p2p();
    const auto& th = p2p.thresholds();
    std::printf(
        "eager limit %s (SLUICE_EAGER_LIMIT), rendezvous by get from %s "
        "(SLUICE_SHM_CMA_THRESHOLD) to %s (SLUICE_SHM_CMA_MAX), SLUICE_SHM_RNDV=%s\n",
        human(th.eager_limit).c_str(), human(th.get_threshold).c_str(),
        th.get_max == SIZE_MAX ? "any size" : human(th.get_max).c_str(),
        eng->config().get_string("SHM_RNDV").c_str());
    for (int p = 0; p < s.size(); ++p) {
      const auto& caps = p2p.route(p)->caps();
      std::printf("peer %d via %.*s (inline payload %s, packet %s, one-sided get %s):\n", p,
                  static_cast<int>(s.driver_name(p).size()), s.driver_name(p).data(),
                  human(caps.inline_payload).c_str(), human(caps.max_packet).c_str(),
                  caps.rdma_get ? "yes" : "no");
      // The choice only changes at the thresholds: evaluate each range once.
      std::vector<std::size_t> edges = {0, th.eager_limit + 1, caps.inline_payload + 1,
                                        th.get_threshold};
      if (th.get_max != SIZE_MAX) edges.push_back(th.get_max + 1);
      std::sort(edges.begin(), edges.end());
      edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
      auto last = sluice::proto::Protocol::none;
      for (std::size_t e : edges) {
        auto pr = p2p.choose(p, e);
        if (pr == last) continue;
        std::printf("  from %-10s %s\n", human(e).c_str(), sluice::proto::protocol_name(pr));
        last = pr;
      }
    }
  }
  return 0;
}
