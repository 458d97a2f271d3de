// Loading libfabric (see ofi_loader.hpp).
#include "drivers/ofi/ofi_loader.hpp"

#include <dlfcn.h>
#include <signal.h>

#include <array>
#include <mutex>

namespace sluice::drivers::ofi {

namespace {

struct Api {
  int (*getinfo)(uint32_t, const char*, const char*, uint64_t, const fi_info*, fi_info**);
  void (*freeinfo)(fi_info*);
  fi_info* (*dupinfo)(const fi_info*);
  int (*fabric)(fi_fabric_attr*, fid_fabric**, void*);
  const char* (*strerror)(int);
};

Api g_api{};
std::string g_error;

void load_once() {
  // Every catchable signal's disposition, put back once the libraries' constructors ran.
  std::array<struct sigaction, NSIG> saved{};
  for (int s = 1; s < NSIG; ++s) sigaction(s, nullptr, &saved[static_cast<std::size_t>(s)]);
  void* lib = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
  for (int s = 1; s < NSIG; ++s)
    if (s != SIGKILL && s != SIGSTOP) sigaction(s, &saved[static_cast<std::size_t>(s)], nullptr);
  if (!lib) {
    const char* e = dlerror();
    g_error = std::string("libfabric (libfabric.so.1) cannot be loaded: ") +
              (e ? e : "unknown error") + " (Debian: apt-get install libfabric1)";
    return;
  }
  auto sym = [&](const char* name) { return dlsym(lib, name); };
  g_api.getinfo = reinterpret_cast<decltype(g_api.getinfo)>(sym("fi_getinfo"));
  g_api.freeinfo = reinterpret_cast<decltype(g_api.freeinfo)>(sym("fi_freeinfo"));
  g_api.dupinfo = reinterpret_cast<decltype(g_api.dupinfo)>(sym("fi_dupinfo"));
  g_api.fabric = reinterpret_cast<decltype(g_api.fabric)>(sym("fi_fabric"));
  g_api.strerror = reinterpret_cast<decltype(g_api.strerror)>(sym("fi_strerror"));
  if (!g_api.getinfo || !g_api.freeinfo || !g_api.dupinfo || !g_api.fabric || !g_api.strerror) {
    g_error = "libfabric.so.1 lacks fi_getinfo, fi_freeinfo, fi_dupinfo, fi_fabric or fi_strerror";
    g_api = {};
  }
}

}  // namespace

bool load(std::string& err) {
  static std::once_flag once;
  std::call_once(once, load_once);
  if (g_api.getinfo) return true;
  err = g_error;
  return false;
}

int getinfo(uint32_t version, const char* node, const char* service, uint64_t flags,
            const fi_info* hints, fi_info** info) {
  return g_api.getinfo(version, node, service, flags, hints, info);
}
void freeinfo(fi_info* info) {
  if (info) g_api.freeinfo(info);
}
fi_info* allocinfo() {
  return g_api.dupinfo(nullptr);
}
int fabric(fi_fabric_attr* attr, fid_fabric** fabric, void* context) {
  return g_api.fabric(attr, fabric, context);
}
const char* strerror(int errnum) {
  return g_api.strerror(errnum);
}

}  // namespace sluice::drivers::ofi
