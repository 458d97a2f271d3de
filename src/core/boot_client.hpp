// BootClient: how a rank learns its place in the job and exchanges addresses. Core owns
// this interface and uses only it; src/boot implements it (the launcher's key-value store,
// PMIx, a singleton) and the composition root (Session's constructor, src/api) creates the
// client and hands it to the Engine, so core never includes boot.
//
// The launcher (sluicerun) sets, for every rank it starts:
//   SLUICE_RANK, SLUICE_SIZE, SLUICE_LOCAL_RANK, SLUICE_LOCAL_SIZE,
//   SLUICE_JOB_ID (unique per job), SLUICE_BOOT_ADDR (path of the launcher's Unix socket)
// These are launcher variables, not configuration keys: the config layer must not report
// them as unknown (see is_launcher_variable()).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/errc.hpp"

namespace sluice::detail {

// The SLUICE_* variables a launcher sets for a rank (named without the prefix).
inline bool is_launcher_variable(std::string_view name_without_prefix) {
  for (std::string_view v : {"RANK", "SIZE", "LOCAL_RANK", "LOCAL_SIZE", "JOB_ID", "JOB_KEY",
                             "LAUNCH_TOKEN", "BOOT_ADDR", "HOST_ID"})
    if (name_without_prefix == v) return true;
  return false;
}

class BootClient {
 public:
  virtual ~BootClient() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual int local_rank() const = 0;
  virtual int local_size() const = 0;
  virtual std::string job_id() const = 0;
  // The job's secret (32 hex digits, 128 bits) handed out by the launcher: network drivers
  // put it in every handshake and datagram so only this job's processes get in.
  virtual std::string job_key() const = 0;

  // Key-value store. put() values become visible to every rank after the next fence()
  // (a collective over all ranks). get() returns false if the key is unknown.
  virtual Errc put(std::string_view key, std::string_view value) = 0;
  virtual Errc fence() = 0;
  virtual bool get(std::string_view key, std::string& value) = 0;

  // Tell the launcher this rank reached finalize (a rank that exits without it is
  // treated as failed). Then the connection is closed.
  virtual Errc finalize() = 0;
  // Ask the launcher to end the whole job with `code` and print `reason`.
  virtual void abort(int code, std::string_view reason) = 0;
  // Appends the ranks the launcher reported dead since the last call (sluicerun
  // --enable-recovery sends such notices). Never blocks; launchers without notices add none.
  virtual void take_failed_ranks(std::vector<int>& out) { (void)out; }
  // Launchers that must be asked (PMIx's proc-table query) are asked at most this often.
  virtual void set_failure_poll_interval(std::uint64_t ns) { (void)ns; }
};

}  // namespace sluice::detail
