// PointToPoint's counters and thresholds in the statistics registry.
#include <string>

#include "proto/p2p.hpp"

namespace sluice::proto {

namespace {
// Counter-name form of a protocol: "rndv_get" (protocol_name says "rndv-get").
std::string counter_group(Protocol p) {
  std::string s = protocol_name(p);
  for (char& c : s)
    if (c == '-') c = '_';
  return s;
}
}  // namespace

void PointToPoint::register_stats(util::StatsRegistry& reg) const {
  using util::Unit;
  for (Protocol p :
       {Protocol::eager, Protocol::rndv_get, Protocol::rndv_pipeline, Protocol::rndv_push}) {
    const int i = static_cast<int>(p);
    const std::string group = counter_group(p);  // "p2p.<group>.<counter>"
    reg.add("p2p", group + ".messages_sent", Unit::count, &stats_.sent[i],
            "messages sent by this protocol");
    reg.add("p2p", group + ".bytes_sent", Unit::bytes, &stats_.sent_bytes[i],
            "payload bytes of those");
    reg.add("p2p", group + ".messages_received", Unit::count, &stats_.received[i],
            "messages delivered into a receive by this protocol");
  }
  reg.add("p2p", "eager.sync_acks", Unit::count, &stats_.sync_acks,
          "synchronous eager messages received and acknowledged (MPI_Ssend)");
  reg.add("p2p", "fragments_sent", Unit::count, &stats_.fragments,
          "pipelined rendezvous data packets sent");
  reg.add("p2p", "get_bytes", Unit::bytes, &stats_.get_bytes, "bytes pulled by one-sided get");
  reg.add("p2p", "driver_full", Unit::count, &stats_.driver_full,
          "sends that found the driver full and queued");
  reg.add("p2p", "pushed_unexpected", Unit::count, &stats_.pushed_unexpected,
          "pushed messages stashed because no receive was posted yet");
  reg.add("p2p", "truncated", Unit::count, &stats_.truncated, "receives truncated");
  reg.add("p2p", "gets_deferred", Unit::count, &stats_.gets_deferred,
          "gets the driver posted to complete later");
  reg.add("p2p", "gets_again", Unit::count, &stats_.gets_again,
          "gets the driver had no room for (retried)");
  reg.add("p2p", "local_completions", Unit::count, &stats_.local_completions,
          "lent fragments the driver reported free");
  reg.add("p2p", "unknown_packets", Unit::count, &stats_.unknown_packets,
          "packets of a type p2p does not know, rejected");
  // The thresholds in force, beside the counters they explain.
  reg.add(
      "p2p", "threshold.eager_limit", Unit::bytes,
      [this] { return static_cast<uint64_t>(th_.eager_limit); },
      "largest eager message (SLUICE_EAGER_LIMIT)");
  reg.add_info(
      "p2p", "threshold.rndv",
      [this]() -> std::string {
        switch (th_.rndv) {
          case Thresholds::RndvMode::pipeline:
            return "pipeline";
          case Thresholds::RndvMode::get:
            return "get";
          case Thresholds::RndvMode::automatic:
            return "auto(get " + std::to_string(th_.get_threshold) + ".." +
                   (th_.get_max == SIZE_MAX ? std::string("unbounded")
                                            : std::to_string(th_.get_max)) +
                   " B, pipeline elsewhere)";
        }
        return "?";
      },
      "rendezvous path choice (SLUICE_RNDV_MODE, RNDV_GET_THRESHOLD, RNDV_GET_MAX)");
  reg.add(
      "p2p", "threshold.push_max", Unit::bytes,
      [this] { return static_cast<uint64_t>(th_.push_max); },
      "largest pushed rendezvous (SLUICE_RNDV_PUSH_MAX)");
}

}  // namespace sluice::proto
