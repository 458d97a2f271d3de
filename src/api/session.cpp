// The composition root: the one place that knows both core and boot. Session's constructor
// joins the job with a boot client (src/boot) and hands it to core's Engine, which only
// knows the BootClient interface (core/boot_client.hpp). Everything else of Session lives in
// core/session.cpp.
#include <stdexcept>
#include <string>

#include "boot/boot.hpp"
#include "core/engine.hpp"
#include "sluice/sluice.hpp"

namespace sluice {

Session::Session() {
  // Checked before joining: a second join would spend the launcher's one-time token.
  if (detail::current_engine()) throw std::runtime_error("sluice: only one Session per process");
  std::string error;
  std::unique_ptr<detail::BootClient> boot = detail::join_job(error);
  if (!boot) throw std::runtime_error("sluice: cannot join the job: " + error);
  engine_ = detail::open_engine(std::move(boot));
}

}  // namespace sluice
