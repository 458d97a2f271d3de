// The public introspection API (include/sluice/introspect.hpp) over the engine, the config
// groups and the driver registry.
#include "sluice/introspect.hpp"

#include <algorithm>
#include <cstdint>

#include "core/config.hpp"
#include "core/engine.hpp"
#include "drivers/registry.hpp"

namespace sluice::introspect {

namespace {

const char* type_name(detail::ConfigType t) {
  using detail::ConfigType;
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

const detail::Engine& engine_of(const Session&) {
  // A Session exists (the caller holds one), so the process's engine does.
  return *detail::current_engine();
}

std::string bytes(std::size_t b) {
  if (b == SIZE_MAX) return "any size";
  if (b >= (1u << 20) && b % (1u << 20) == 0) return std::to_string(b >> 20) + " MiB";
  if (b >= 1024 && b % 1024 == 0) return std::to_string(b >> 10) + " KiB";
  return std::to_string(b) + " B";
}

}  // namespace

std::vector<ConfigComponent> config(std::vector<std::string>* problems,
                                    std::vector<std::string>* errors) {
  std::vector<std::string> warned, bad;
  const detail::Config cfg = detail::Config::from_environment(warned, bad);
  if (!errors) warned.insert(warned.end(), bad.begin(), bad.end());
  if (problems) *problems = std::move(warned);
  if (errors) *errors = std::move(bad);
  std::vector<ConfigComponent> out;
  for (const detail::ConfigGroup& g : detail::config_groups()) {
    ConfigComponent c;
    c.name = g.component;
    c.title = g.title;
    c.is_driver = drivers::find_driver_component(g.component) != nullptr;
    for (const detail::ConfigKey& k : g.keys) {
      ConfigEntry e;
      e.key = "SLUICE_" + std::string(k.name);
      e.type = type_name(k.type);
      e.value = cfg.value_text(k.name);
      e.default_value = k.default_value;
      e.help = k.help;
      e.choices = k.choices;
      e.range = detail::range_text(k, true);
      e.range_doc = detail::range_text(k, false);
      detail::NumericRange r;
      if (detail::numeric_range(k, r)) {
        e.has_range = true;
        e.min = r.min;
        e.max = r.max;
        e.or_zero = r.or_zero;
      }
      e.source = cfg.source(k.name);
      for (const detail::ConfigAlias& a : g.aliases)
        if (a.name == k.name) e.aliases.push_back("SLUICE_" + std::string(a.old_name));
      c.keys.push_back(std::move(e));
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<DriverInfo> drivers() {
  std::vector<DriverInfo> out;
  for (const drivers::DriverComponent* d : drivers::driver_components())
    out.push_back({std::string(d->name), std::string(d->title),
                   d->locality == drivers::Locality::same_host, d->on_by_default});
  return out;
}

std::vector<Route> routes(const Session& s) {
  const detail::Engine& e = engine_of(s);
  std::vector<Route> out;
  for (int p = 0; p < e.size(); ++p) {
    const drivers::Driver* d = e.p2p().route(p);
    Route r;
    r.peer = p;
    r.driver = d->name();
    r.address = e.peer_address(p);
    r.inline_payload = d->caps().inline_payload;
    r.max_packet = d->caps().max_packet;
    r.one_sided_get = d->caps().rdma_get;
    r.reliable = d->caps().reliable;
    out.push_back(std::move(r));
  }
  return out;
}

Thresholds thresholds(const Session& s) {
  const proto::Thresholds& th = engine_of(s).p2p().thresholds();
  Thresholds t;
  t.eager_limit = th.eager_limit;
  t.get_threshold = th.get_threshold;
  t.get_max = th.get_max;
  t.push_max = th.push_max;
  t.rndv_mode = th.rndv == proto::Thresholds::RndvMode::get        ? "get"
                : th.rndv == proto::Thresholds::RndvMode::pipeline ? "pipeline"
                                                                   : "auto";
  return t;
}

std::string registration(const Session& s) {
  const detail::Engine& e = engine_of(s);
  std::string out = e.p2p().registration_summary();
  if (const auto cache = e.stats_registry().info("rcache.state")) out += "; cache: " + *cache;
  return out;
}

std::string attribute(const Session& s, std::string_view name) {
  return engine_of(s).stats_registry().info(name).value_or(std::string());
}

std::string registration_emulation(const Session& s) {
  return engine_of(s).stats_registry().info("reg.emulate").value_or("off");
}

bool set_registration_strategy(Session&, std::string_view strategy, std::size_t pipeline_chunk) {
  proto::RegOptions o = detail::current_engine()->p2p().registration();
  if (!proto::parse_reg_strategy(strategy, o.strategy)) return false;
  o.chosen = true;
  o.thresholds = false;  // exactly the protocol named, at every size
  if (pipeline_chunk) o.staged.chunk = pipeline_chunk;
  detail::current_engine()->p2p().set_registration(o);
  return true;
}

bool route_registers(const Session& s, int peer) {
  const drivers::Driver* d = engine_of(s).p2p().route(peer);
  return d && d->caps().needs_registration;
}

std::string protocol_for(const Session& s, int peer, std::size_t size) {
  return proto::protocol_name(engine_of(s).p2p().choose(peer, size));
}

std::vector<ProtocolChoice> protocols(const Session& s, int peer) {
  const proto::PointToPoint& p2p = engine_of(s).p2p();
  const proto::Thresholds& th = p2p.thresholds();
  const drivers::DriverCaps& caps = p2p.route(peer)->caps();
  // The choice only changes at the thresholds: evaluate each range once.
  const std::size_t get_min = p2p.get_threshold(caps);
  const std::string get_from = get_min == th.get_threshold
                                   ? "SLUICE_RNDV_GET_THRESHOLD " + bytes(th.get_threshold)
                                   : "the driver's get threshold " + bytes(get_min) +
                                         " (SLUICE_RNDV_GET_THRESHOLD overrides it)";
  std::vector<std::size_t> edges = {0, th.eager_limit + 1, caps.inline_payload + 1, get_min};
  if (th.push_max > 0) edges.push_back(th.push_max + 1);
  if (th.get_max != SIZE_MAX) edges.push_back(th.get_max + 1);
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  const std::string eager = "above the eager limit (min of SLUICE_EAGER_LIMIT " +
                            bytes(th.eager_limit) + " and the driver's inline payload " +
                            bytes(caps.inline_payload) + ")";
  std::vector<ProtocolChoice> out;
  for (std::size_t size : edges) {
    const proto::Protocol p = p2p.choose(peer, size);
    std::string why;
    switch (p) {
      case proto::Protocol::eager:
        why = "fits the eager limit (min of SLUICE_EAGER_LIMIT " + bytes(th.eager_limit) +
              " and the driver's inline payload " + bytes(caps.inline_payload) + ")";
        break;
      case proto::Protocol::rndv_push:
        why = eager + ", up to SLUICE_RNDV_PUSH_MAX " + bytes(th.push_max) +
              " on a driver that takes pushed fragments";
        break;
      case proto::Protocol::rndv_get:
        why = eager + "; the driver has one-sided get and " +
              (th.rndv == proto::Thresholds::RndvMode::get
                   ? std::string("SLUICE_RNDV_MODE=get")
                   : "SLUICE_RNDV_MODE=auto takes get from " + get_from +
                         (caps.get_any_size && !th.get_max_chosen
                              ? std::string(" at every size (the driver reads without a crossover "
                                            "to the pipeline)")
                              : " up to SLUICE_RNDV_GET_MAX " + bytes(th.get_max)));
        break;
      case proto::Protocol::rndv_pipeline:
        why = eager + "; " +
              (!caps.rdma_get ? std::string("the driver has no one-sided get")
               : th.rndv == proto::Thresholds::RndvMode::pipeline
                   ? std::string("SLUICE_RNDV_MODE=pipeline")
               : size < get_min ? "below " + get_from
                                : "above SLUICE_RNDV_GET_MAX " + bytes(th.get_max));
        break;
      case proto::Protocol::none:
        why = "no driver";
        break;
    }
    if (!out.empty() && out.back().protocol == proto::protocol_name(p) && out.back().why == why)
      continue;
    out.push_back({size, proto::protocol_name(p), std::move(why)});
  }
  return out;
}

namespace {

// The model with the staged options in force (a benchmark may have changed them).
proto::CostModel model_in_force(const proto::RegOptions& o) {
  proto::CostModel m = o.model;
  m.c0 = o.staged.c0;
  m.q = o.staged.q;
  m.pipeline_chunk = o.staged.chunk;
  m.staging_buffers = o.staged.buffers;
  return m;
}

}  // namespace

CostModelInfo model_info(const Session& s, int peer) {
  const proto::PointToPoint& p2p = engine_of(s).p2p();
  const proto::CostModel m = model_in_force(p2p.registration());
  CostModelInfo i;
  i.source = m.source;
  i.reg_emulate = m.reg_emulate;
  i.c0 = m.c0;
  i.q = m.q;
  i.block = m.block;
  i.pipeline_chunk = m.pipeline_chunk;
  i.staging_buffers = m.staging_buffers;
  const drivers::Driver* d = peer >= 0 && peer < s.size() ? p2p.route(peer) : nullptr;
  if (const proto::DriverCost* dc = d ? m.driver(d->name()) : nullptr) {
    i.has_driver = true;
    i.staged_min = p2p.registration().tuned ? dc->staged_min : 0;
  }
  return i;
}

double predict_us(const Session& s, int peer, std::string_view protocol, std::size_t size) {
  proto::CostProtocol p;
  if (!proto::parse_cost_protocol(protocol, p)) return -1;
  const proto::PointToPoint& p2p = engine_of(s).p2p();
  const proto::CostModel m = model_in_force(p2p.registration());
  const drivers::Driver* d = p2p.route(peer);
  return m.predict(p, d ? d->name() : std::string_view(), size).us;
}

PlannedProtocol planned_protocol(const Session& s, int peer, std::size_t size) {
  PlannedProtocol out;
  out.protocol = proto::cost_protocol_name(engine_of(s).p2p().planned(peer, size, out.why));
  return out;
}

}  // namespace sluice::introspect
