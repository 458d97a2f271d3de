// Bootstrap clients: the implementations of core's BootClient interface
// (core/boot_client.hpp, which also lists the variables a launcher sets for each rank).
#pragma once

#include <memory>
#include <string>

#include "core/boot_client.hpp"

namespace sluice::detail {

// Joins the job this process was started in: the launcher named in the environment
// (SLUICE_BOOT_ADDR), a PMIx server (mpirun, srun), or, with neither, a singleton (rank 0 of
// 1) whose put/fence/get work locally. On failure returns nullptr and sets `error`.
// exit_when_launcher_gone: the process ends when sluicerun's store connection hangs up (ranks
// must not outlive their launcher); off, calls merely fail with peer_dead from then on
// (tests of the client itself).
std::unique_ptr<BootClient> join_job(std::string& error, bool exit_when_launcher_gone = true);

// The one-time launch token this process read on standard input and joined with
// (`sluicerun --hosts --launch`); empty otherwise. For the launcher's tests.
const std::string& launch_token_used();

// Who this process is in the job: fixed once its client has joined.
struct JobIdentity {
  int rank = 0, size = 1, local_rank = 0, local_size = 1;
  std::string job_id, job_key;
};

// The identity calls of every client (singleton, launcher, PMIx), answered from one
// JobIdentity the client fills in while joining.
class IdentifiedBootClient : public BootClient {
 public:
  int rank() const final { return id_.rank; }
  int size() const final { return id_.size; }
  int local_rank() const final { return id_.local_rank; }
  int local_size() const final { return id_.local_size; }
  std::string job_id() const final { return id_.job_id; }
  std::string job_key() const final { return id_.job_key; }

 protected:
  JobIdentity id_;
};

}  // namespace sluice::detail
