// The launcher: starts the ranks, serves the bootstrap key-value store, forwards output,
// and turns the ranks' fates into one exit status. launcher.cpp holds the job itself (its
// id and key, the ranks' environment, the event loop's dispatch and deadlines, what a
// rank's exit or lost connection means, termination); the parts it drives each own one
// seam:
//   options.hpp        the command line (main.cpp is the front end)
//   event_loop.hpp     the epoll set every part registers its descriptors with
//   store_server.hpp   the bootstrap store server: listener, connections, hello, fences
//   rank_spawner.hpp   local spawning: fork/exec, pipes and output, binding, reaping, signals
//   remote_launch.hpp  --hosts/--launch: rank placement on hosts, launch command lines, tokens
#pragma once

#include "options.hpp"

namespace sluicerun {

// Runs the whole job; returns sluicerun's exit status (0 when every rank finalized and
// exited 0; the first failing rank's status, 128+signal for a signal; 124 on timeout).
int run_job(const Options& options);

}  // namespace sluicerun
