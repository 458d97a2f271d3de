// sluice-info: what Sluice would do here, and why. Uses only the public API
// (sluice/sluice.hpp, sluice/introspect.hpp).
//   sluice-info --config              every SLUICE_* key: value in force, default, source, help
//   sluice-info --config --markdown   the key tables of docs/CONFIGURATION.md (defaults only)
//   sluice-info --drivers             the registered driver components
//   sluice-info [--peers]             (under sluicerun) which driver serves which peer, and
//                                     the libfabric provider's capabilities when ofi does
//   sluice-info --protocols           which protocol each message size takes per peer, and why
#include <sluice/introspect.hpp>
#include <sluice/sluice.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace is = sluice::introspect;

int print_config() {
  std::vector<std::string> problems, errors;
  const auto table = is::config(&problems, &errors);
  for (const auto& p : problems) std::printf("# warning: %s\n", p.c_str());
  for (const auto& e : errors) std::printf("# error: %s\n", e.c_str());
  for (const auto& c : table) {
    std::printf("# %s: %s\n", c.name.c_str(), c.title.c_str());
    for (const auto& k : c.keys) {
      std::printf("%-24s %-8s = %-10s (default %s%s%s)\n    %s", k.key.c_str(), k.type.c_str(),
                  k.value.c_str(), k.default_value.c_str(),
                  k.source == "default" ? "" : ", set by ",
                  k.source == "default" ? "" : k.source.c_str(), k.help.c_str());
      if (!k.choices.empty()) std::printf(" [%s]", k.choices.c_str());
      if (k.has_range) std::printf(" [range %s]", k.range.c_str());
      for (const auto& a : k.aliases) std::printf(" (alias: %s)", a.c_str());
      std::printf("\n");
    }
  }
  // A value that would stop every rank's start-up: say so in the exit status too.
  return errors.empty() ? 0 : 1;
}

// A table cell: '|' would end the cell.
std::string cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

// The tables between the markers of docs/CONFIGURATION.md: defaults only, so the output
// does not depend on the environment it runs in.
int print_config_markdown() {
  bool first = true;
  for (const auto& c : is::config()) {
    if (!first) std::printf("\n");
    first = false;
    std::printf("### %s%s\n\n%s.\n\n", c.is_driver ? "Driver: " : "", c.name.c_str(),
                cell(c.title).c_str());
    std::printf("| key | type | default | range | meaning |\n|---|---|---|---|---|\n");
    for (const auto& k : c.keys) {
      std::string meaning = k.help;
      if (!k.choices.empty()) meaning += " (one of `" + k.choices + "`)";
      for (const auto& a : k.aliases) meaning += "; former name `" + a + "` still works";
      std::printf("| `%s` | %s | %s | %s | %s |\n", k.key.c_str(), k.type.c_str(),
                  k.default_value.empty() ? "(empty)" : ("`" + k.default_value + "`").c_str(),
                  k.has_range ? ("`" + k.range_doc + "`").c_str() : "", cell(meaning).c_str());
    }
  }
  return 0;
}

int print_drivers() {
  for (const auto& d : is::drivers())
    std::printf("%-10s %-10s %-12s %s\n", d.name.c_str(),
                d.same_host_only ? "same-host" : "any-host", d.on_by_default ? "default" : "",
                d.title.c_str());
  return 0;
}

std::string human(std::size_t b) {
  char buf[32];
  if (b == SIZE_MAX) return "any size";
  if (b >= (1u << 20) && b % (1u << 20) == 0)
    std::snprintf(buf, sizeof buf, "%zu MiB", b >> 20);
  else if (b >= 1024 && b % 1024 == 0)
    std::snprintf(buf, sizeof buf, "%zu KiB", b >> 10);
  else
    std::snprintf(buf, sizeof buf, "%zu B", b);
  return buf;
}

// [NewMadeleine]'s cost model for one route: per size range (doubling from 4 KiB to 16 MiB,
// each up to the next) the protocol the registration strategy runs and its predicted time.
void print_model(const sluice::Session& s, int peer, const std::string& driver) {
  if (peer == s.rank()) return;
  const is::CostModelInfo m = is::model_info(s, peer);
  std::printf("  cost model ([NewMadeleine]): %s%s%s; C_0 %s, q %.3g, b %s, pipeline chunk %s\n",
              m.source.c_str(), m.reg_emulate == "off" ? "" : ", measured with registration ",
              m.reg_emulate == "off" ? "" : m.reg_emulate.c_str(), human(m.c0).c_str(), m.q,
              human(m.block).c_str(), human(m.pipeline_chunk).c_str());
  if (!m.has_driver) {
    std::printf("    (no figures for %s: the first driver's are used)\n", driver.c_str());
  }
  for (std::size_t size = 4096; size <= (std::size_t{16} << 20); size *= 2) {
    const is::PlannedProtocol p = is::planned_protocol(s, peer, size);
    const double us = is::predict_us(s, peer, p.protocol, size);
    std::printf("    from %-8s %-14s predicted %10.1f us at that size (%7.0f MB/s)  %s\n",
                human(size).c_str(), p.protocol.c_str(), us,
                us > 0 ? static_cast<double>(size) / us : 0.0, p.why.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool config = false, markdown = false, protocols = false, peers = false, drivers = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--config"))
      config = true;
    else if (!std::strcmp(argv[i], "--markdown"))
      markdown = true;
    else if (!std::strcmp(argv[i], "--protocols"))
      protocols = true;
    else if (!std::strcmp(argv[i], "--peers"))
      peers = true;
    else if (!std::strcmp(argv[i], "--drivers"))
      drivers = true;
    else {
      const bool help = !std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h");
      std::fprintf(
          help ? stdout : stderr,
          "usage: sluice-info [--config [--markdown]] [--drivers] [--peers] [--protocols]\n"
          "  --config     every SLUICE_* key with its value, default, source and help\n"
          "  --markdown   with --config: the key tables of docs/CONFIGURATION.md\n"
          "  --drivers    the registered driver components\n"
          "  --peers      (under sluicerun) the driver that serves each peer\n"
          "  --protocols  the protocol each message size takes, and why\n"
          "  -h, --help   show this help\n"
          "With no option: --peers.\n");
      return help ? 0 : 2;
    }
  }
  if (markdown) return config ? print_config_markdown() : 2;
  if (!config && !protocols && !drivers) peers = true;
  int rc = 0;
  if (config) rc = print_config();
  if (drivers) print_drivers();
  if (!peers && !protocols) return rc;

  // A start-up failure (e.g. a configuration value out of range) is a message, not a crash.
  std::unique_ptr<sluice::Session> session;
  try {
    session = std::make_unique<sluice::Session>();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sluice-info: %s\n", e.what());
    return 1;
  }
  sluice::Session& s = *session;
  if (peers) {
    // Each rank reports its own routes, in rank order.
    for (int r = 0; r < s.size(); ++r) {
      if (r == s.rank()) {
        std::printf("rank %d:", r);
        for (const auto& route : is::routes(s)) {
          std::printf(" %d->%s", route.peer, route.driver.c_str());
          if (!route.address.empty()) std::printf("(%s)", route.address.c_str());
        }
        std::printf("\n");
        // What the ofi driver's provider offers (its attributes, when it serves a peer).
        if (const std::string prov = is::attribute(s, "ofi.provider"); !prov.empty()) {
          std::printf("  ofi: provider %s", prov.c_str());
          for (const char* a : {"fabric", "endpoint", "inject_size", "max_message", "rma",
                                "mr_mode", "progress", "wait", "thresholds"})
            std::printf(", %s %s", a, is::attribute(s, std::string("ofi.") + a).c_str());
          std::printf("\n");
        }
        std::fflush(stdout);
      }
      s.barrier();
    }
  }
  if (protocols && s.rank() == 0) {
    const is::Thresholds th = is::thresholds(s);
    std::printf(
        "eager limit %s (SLUICE_EAGER_LIMIT), rendezvous by get from %s "
        "(SLUICE_RNDV_GET_THRESHOLD) to %s (SLUICE_RNDV_GET_MAX), SLUICE_RNDV_MODE=%s\n",
        human(th.eager_limit).c_str(), human(th.get_threshold).c_str(), human(th.get_max).c_str(),
        th.rndv_mode.c_str());
    std::printf("registration: %s\n", is::registration(s).c_str());
    for (const auto& route : is::routes(s)) {
      std::printf(
          "peer %d via %s (inline payload %s, packet %s, one-sided get %s, registers memory "
          "%s):\n",
          route.peer, route.driver.c_str(), human(route.inline_payload).c_str(),
          human(route.max_packet).c_str(), route.one_sided_get ? "yes" : "no",
          is::route_registers(s, route.peer) ? "yes" : "no");
      for (const auto& c : is::protocols(s, route.peer))
        std::printf("  from %-10s %-14s %s\n", human(c.from).c_str(), c.protocol.c_str(),
                    c.why.c_str());
      print_model(s, route.peer, route.driver);
    }
  }
  return rc;
}
