// The driver components, one line each: adding a driver is its folder plus one line here.
// (An explicit list, not static initializers: objects referenced only by a static
// registrar are dropped when they come from a static library.)
#include "drivers/registry.hpp"

#include <string>
#include <vector>

#include "drivers/net/net.hpp"

namespace sluice::drivers {

// Each defined in src/drivers/<name>/<name>_component.cpp.
extern const DriverComponent kShmComponent;
extern const DriverComponent kTcpComponent;
extern const DriverComponent kUdpComponent;
extern const DriverComponent kOfiComponent;

namespace {

std::vector<const DriverComponent*>& components() {
  static std::vector<const DriverComponent*> list = {
      &kShmComponent,
      &kTcpComponent,
      &kUdpComponent,
      &kOfiComponent,
  };
  return list;
}

const util::ConfigGroup kShared[] = {
    {"net", "the network drivers' shared keys: which addresses they publish", net::config_keys()},
};

}  // namespace

std::span<const DriverComponent* const> driver_components() {
  return components();
}

const DriverComponent* find_driver_component(std::string_view name) {
  for (const DriverComponent* c : components())
    if (c->name == name) return c;
  return nullptr;
}

std::string_view default_driver_list() {
  static const std::string list = [] {
    std::string s;
    for (const DriverComponent* c : components())
      if (c->on_by_default) s += (s.empty() ? "" : ",") + std::string(c->name);
    return s;
  }();
  return list;
}

void register_driver_component(const DriverComponent& c) {
  if (!find_driver_component(c.name)) components().push_back(&c);
}

std::span<const util::ConfigGroup> driver_shared_config() {
  return kShared;
}

}  // namespace sluice::drivers
