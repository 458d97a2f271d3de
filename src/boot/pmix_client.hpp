// Bootstrap through PMIx, for jobs started by a PMIx launcher (Open MPI's mpirun, Slurm's
// srun --mpi=pmix) instead of sluicerun. See pmix_client.cpp for how the key-value store
// and the job key map onto PMIx.
#pragma once

#include <memory>
#include <string>

namespace sluice::detail {

class BootClient;

// True when a PMIx server started this process (PMIX_RANK and PMIX_NAMESPACE are set).
bool pmix_in_environment();

// PMIx_Init and the job key exchange (a collective over the job). nullptr and `error` on
// failure, or when Sluice was built without libpmix.
std::unique_ptr<BootClient> make_pmix_client(std::string& error);

}  // namespace sluice::detail
