// The launcher: starts the ranks, serves the bootstrap key-value store, forwards output,
// and turns the ranks' fates into one exit status.
#pragma once

#include "options.hpp"

namespace sluicerun {

// Runs the whole job; returns sluicerun's exit status (0 when every rank finalized and
// exited 0; the first failing rank's status, 128+signal for a signal; 124 on timeout).
int run_job(const Options& options);

}  // namespace sluicerun
