// Persistent collectives (MPI-4.0 §6.13): MPI_<Collective>_init makes an inactive persistent
// request; each MPI_Start (or MPI_Startall) starts the matching nonblocking collective with
// the arguments given at init, and the request completes with it (Wait/Test as any request),
// inactive again until the next start. The info argument's hints are ignored. Every process
// starts its persistent collectives on a communicator in the same order, as for nonblocking
// ones, so they pair up as those do.
#include <functional>
#include <memory>
#include <vector>

#include "mpi/big_lock.hpp"
#include "mpi/mpi_internal.hpp"

namespace sluice::mpi {
namespace {

class PersistentCollective final : public AsyncOp {
 public:
  PersistentCollective(std::function<int(MPI_Request*)> start, std::vector<MPI_Datatype> types)
      : start_(std::move(start)), types_(std::move(types)) {
    for (MPI_Datatype t : types_) dt_retain(t);  // MPI_Type_free after init must not free them
  }
  ~PersistentCollective() override {
    if (inner_ != MPI_REQUEST_NULL) PMPI_Request_free(&inner_);  // lets it finish unseen
    for (MPI_Datatype t : types_) dt_release(t);
  }
  int start() override {
    error_ = MPI_SUCCESS;
    return start_(&inner_);
  }
  bool test() override {
    if (inner_ == MPI_REQUEST_NULL) return true;
    if (!request_poll(inner_)) return false;
    error_ = inner_->status.MPI_ERROR;
    PMPI_Request_free(&inner_);  // complete: deleted now
    return true;
  }
  int error() const override { return error_; }

 private:
  std::function<int(MPI_Request*)> start_;  // the nonblocking collective, arguments bound
  std::vector<MPI_Datatype> types_;
  MPI_Request inner_ = MPI_REQUEST_NULL;  // the started collective, until it completes
  int error_ = MPI_SUCCESS;
};

int persistent_collective(MPI_Comm comm, MPI_Info info, MPI_Request* request, const char* function,
                          std::vector<MPI_Datatype> types, std::function<int(MPI_Request*)> start) {
  (void)info;  // hints: none used
  if (int rc = check_comm(comm, function)) return rc;
  if (!request) return raise(comm, MPI_ERR_ARG, function, "request is NULL");
  MPI_Request r = make_async_request(
      comm, std::make_unique<PersistentCollective>(std::move(start), std::move(types)));
  r->active = false;  // until MPI_Start
  r->persistent = true;
  *request = r;
  return MPI_SUCCESS;
}

}  // namespace
}  // namespace sluice::mpi

using namespace sluice::mpi;

extern "C" {

int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(comm, info, request, "MPI_Barrier_init", {},
                               [=](MPI_Request* r) { return PMPI_Ibarrier(comm, r); });
}

int PMPI_Bcast_init(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                    MPI_Info info, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(
      comm, info, request, "MPI_Bcast_init", {datatype},
      [=](MPI_Request* r) { return PMPI_Ibcast(buffer, count, datatype, root, comm, r); });
}

int PMPI_Reduce_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(
      comm, info, request, "MPI_Reduce_init", {datatype}, [=](MPI_Request* r) {
        return PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, r);
      });
}

int PMPI_Allreduce_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(
      comm, info, request, "MPI_Allreduce_init", {datatype}, [=](MPI_Request* r) {
        return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, r);
      });
}

int PMPI_Gather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                     MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(comm, info, request, "MPI_Gather_init", {sendtype, recvtype},
                               [=](MPI_Request* r) {
                                 return PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf,
                                                     recvcount, recvtype, root, comm, r);
                               });
}

int PMPI_Gatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                      const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                      MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(comm, info, request, "MPI_Gatherv_init", {sendtype, recvtype},
                               [=](MPI_Request* r) {
                                 return PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf,
                                                      recvcounts, displs, recvtype, root, comm, r);
                               });
}

int PMPI_Scatter_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                      int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                      MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(comm, info, request, "MPI_Scatter_init", {sendtype, recvtype},
                               [=](MPI_Request* r) {
                                 return PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf,
                                                      recvcount, recvtype, root, comm, r);
                               });
}

int PMPI_Scatterv_init(const void* sendbuf, const int sendcounts[], const int displs[],
                       MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                       int root, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(comm, info, request, "MPI_Scatterv_init", {sendtype, recvtype},
                               [=](MPI_Request* r) {
                                 return PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype,
                                                       recvbuf, recvcount, recvtype, root, comm, r);
                               });
}

int PMPI_Allgather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(
      comm, info, request, "MPI_Allgather_init", {sendtype, recvtype}, [=](MPI_Request* r) {
        return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, r);
      });
}

int PMPI_Allgatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                         MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(comm, info, request, "MPI_Allgatherv_init", {sendtype, recvtype},
                               [=](MPI_Request* r) {
                                 return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf,
                                                         recvcounts, displs, recvtype, comm, r);
                               });
}

int PMPI_Alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(
      comm, info, request, "MPI_Alltoall_init", {sendtype, recvtype}, [=](MPI_Request* r) {
        return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, r);
      });
}

int PMPI_Alltoallv_init(const void* sendbuf, const int sendcounts[], const int sdispls[],
                        MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                        const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(
      comm, info, request, "MPI_Alltoallv_init", {sendtype, recvtype}, [=](MPI_Request* r) {
        return PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                               recvtype, comm, r);
      });
}

int PMPI_Alltoallw_init(const void* sendbuf, const int sendcounts[], const int sdispls[],
                        const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                        const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                        MPI_Info info, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(comm, info, request, "MPI_Alltoallw_init", {}, [=](MPI_Request* r) {
    return PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                           recvtypes, comm, r);
  });
}

int PMPI_Reduce_scatter_init(const void* sendbuf, void* recvbuf, const int recvcounts[],
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                             MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(
      comm, info, request, "MPI_Reduce_scatter_init", {datatype}, [=](MPI_Request* r) {
        return PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, r);
      });
}

int PMPI_Reduce_scatter_block_init(const void* sendbuf, void* recvbuf, int recvcount,
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                   MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(
      comm, info, request, "MPI_Reduce_scatter_block_init", {datatype}, [=](MPI_Request* r) {
        return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, r);
      });
}

int PMPI_Scan_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(
      comm, info, request, "MPI_Scan_init", {datatype},
      [=](MPI_Request* r) { return PMPI_Iscan(sendbuf, recvbuf, count, datatype, op, comm, r); });
}

int PMPI_Exscan_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(
      comm, info, request, "MPI_Exscan_init", {datatype},
      [=](MPI_Request* r) { return PMPI_Iexscan(sendbuf, recvbuf, count, datatype, op, comm, r); });
}

int PMPI_Neighbor_allgather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                 MPI_Info info, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(comm, info, request, "MPI_Neighbor_allgather_init",
                               {sendtype, recvtype}, [=](MPI_Request* r) {
                                 return PMPI_Ineighbor_allgather(sendbuf, sendcount, sendtype,
                                                                 recvbuf, recvcount, recvtype, comm,
                                                                 r);
                               });
}

int PMPI_Neighbor_allgatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void* recvbuf, const int recvcounts[], const int displs[],
                                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                  MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(comm, info, request, "MPI_Neighbor_allgatherv_init",
                               {sendtype, recvtype}, [=](MPI_Request* r) {
                                 return PMPI_Ineighbor_allgatherv(sendbuf, sendcount, sendtype,
                                                                  recvbuf, recvcounts, displs,
                                                                  recvtype, comm, r);
                               });
}

int PMPI_Neighbor_alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Info info, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(
      comm, info, request, "MPI_Neighbor_alltoall_init", {sendtype, recvtype}, [=](MPI_Request* r) {
        return PMPI_Ineighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                       comm, r);
      });
}

int PMPI_Neighbor_alltoallv_init(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                 MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                 const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                 MPI_Info info, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(comm, info, request, "MPI_Neighbor_alltoallv_init",
                               {sendtype, recvtype}, [=](MPI_Request* r) {
                                 return PMPI_Ineighbor_alltoallv(sendbuf, sendcounts, sdispls,
                                                                 sendtype, recvbuf, recvcounts,
                                                                 rdispls, recvtype, comm, r);
                               });
}

int PMPI_Neighbor_alltoallw_init(const void* sendbuf, const int sendcounts[],
                                 const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                 void* recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                                 const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                                 MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(
      comm, info, request, "MPI_Neighbor_alltoallw_init", {}, [=](MPI_Request* r) {
        return PMPI_Ineighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                        recvcounts, rdispls, recvtypes, comm, r);
      });
}

// The MPI-4.0 large-count forms: the same, starting the nonblocking _c collective.

int PMPI_Bcast_init_c(void* buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                      MPI_Info info, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(
      comm, info, request, "MPI_Bcast_init_c", {datatype},
      [=](MPI_Request* r) { return PMPI_Ibcast_c(buffer, count, datatype, root, comm, r); });
}

int PMPI_Reduce_init_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                       MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(
      comm, info, request, "MPI_Reduce_init_c", {datatype}, [=](MPI_Request* r) {
        return PMPI_Ireduce_c(sendbuf, recvbuf, count, datatype, op, root, comm, r);
      });
}

int PMPI_Allreduce_init_c(const void* sendbuf, void* recvbuf, MPI_Count count,
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                          MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(
      comm, info, request, "MPI_Allreduce_init_c", {datatype}, [=](MPI_Request* r) {
        return PMPI_Iallreduce_c(sendbuf, recvbuf, count, datatype, op, comm, r);
      });
}

int PMPI_Gather_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                       void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                       MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(comm, info, request, "MPI_Gather_init_c", {sendtype, recvtype},
                               [=](MPI_Request* r) {
                                 return PMPI_Igather_c(sendbuf, sendcount, sendtype, recvbuf,
                                                       recvcount, recvtype, root, comm, r);
                               });
}

int PMPI_Gatherv_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                        MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                        MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(
      comm, info, request, "MPI_Gatherv_init_c", {sendtype, recvtype}, [=](MPI_Request* r) {
        return PMPI_Igatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                               root, comm, r);
      });
}

int PMPI_Scatter_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                        MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(comm, info, request, "MPI_Scatter_init_c", {sendtype, recvtype},
                               [=](MPI_Request* r) {
                                 return PMPI_Iscatter_c(sendbuf, sendcount, sendtype, recvbuf,
                                                        recvcount, recvtype, root, comm, r);
                               });
}

int PMPI_Scatterv_init_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                         MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                         MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                         MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(
      comm, info, request, "MPI_Scatterv_init_c", {sendtype, recvtype}, [=](MPI_Request* r) {
        return PMPI_Iscatterv_c(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                                root, comm, r);
      });
}

int PMPI_Allgather_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                          void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                          MPI_Info info, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(comm, info, request, "MPI_Allgather_init_c", {sendtype, recvtype},
                               [=](MPI_Request* r) {
                                 return PMPI_Iallgather_c(sendbuf, sendcount, sendtype, recvbuf,
                                                          recvcount, recvtype, comm, r);
                               });
}

int PMPI_Allgatherv_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                           void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                           MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                           MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(comm, info, request, "MPI_Allgatherv_init_c", {sendtype, recvtype},
                               [=](MPI_Request* r) {
                                 return PMPI_Iallgatherv_c(sendbuf, sendcount, sendtype, recvbuf,
                                                           recvcounts, displs, recvtype, comm, r);
                               });
}

int PMPI_Alltoall_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                         void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                         MPI_Info info, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(comm, info, request, "MPI_Alltoall_init_c", {sendtype, recvtype},
                               [=](MPI_Request* r) {
                                 return PMPI_Ialltoall_c(sendbuf, sendcount, sendtype, recvbuf,
                                                         recvcount, recvtype, comm, r);
                               });
}

int PMPI_Alltoallv_init_c(const void* sendbuf, const MPI_Count sendcounts[],
                          const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf,
                          const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                          MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                          MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(
      comm, info, request, "MPI_Alltoallv_init_c", {sendtype, recvtype}, [=](MPI_Request* r) {
        return PMPI_Ialltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                 rdispls, recvtype, comm, r);
      });
}

int PMPI_Alltoallw_init_c(const void* sendbuf, const MPI_Count sendcounts[],
                          const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void* recvbuf,
                          const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                          const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                          MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(
      comm, info, request, "MPI_Alltoallw_init_c", {}, [=](MPI_Request* r) {
        return PMPI_Ialltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                 rdispls, recvtypes, comm, r);
      });
}

int PMPI_Reduce_scatter_init_c(const void* sendbuf, void* recvbuf, const MPI_Count recvcounts[],
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                               MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(
      comm, info, request, "MPI_Reduce_scatter_init_c", {datatype}, [=](MPI_Request* r) {
        return PMPI_Ireduce_scatter_c(sendbuf, recvbuf, recvcounts, datatype, op, comm, r);
      });
}

int PMPI_Reduce_scatter_block_init_c(const void* sendbuf, void* recvbuf, MPI_Count recvcount,
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                     MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(
      comm, info, request, "MPI_Reduce_scatter_block_init_c", {datatype}, [=](MPI_Request* r) {
        return PMPI_Ireduce_scatter_block_c(sendbuf, recvbuf, recvcount, datatype, op, comm, r);
      });
}

int PMPI_Scan_init_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(
      comm, info, request, "MPI_Scan_init_c", {datatype},
      [=](MPI_Request* r) { return PMPI_Iscan_c(sendbuf, recvbuf, count, datatype, op, comm, r); });
}

int PMPI_Exscan_init_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(
      comm, info, request, "MPI_Exscan_init_c", {datatype}, [=](MPI_Request* r) {
        return PMPI_Iexscan_c(sendbuf, recvbuf, count, datatype, op, comm, r);
      });
}

int PMPI_Neighbor_allgather_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                   void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                   MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(comm, info, request, "MPI_Neighbor_allgather_init_c",
                               {sendtype, recvtype}, [=](MPI_Request* r) {
                                 return PMPI_Ineighbor_allgather_c(sendbuf, sendcount, sendtype,
                                                                   recvbuf, recvcount, recvtype,
                                                                   comm, r);
                               });
}

int PMPI_Neighbor_allgatherv_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                    void* recvbuf, const MPI_Count recvcounts[],
                                    const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                    MPI_Info info, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(comm, info, request, "MPI_Neighbor_allgatherv_init_c",
                               {sendtype, recvtype}, [=](MPI_Request* r) {
                                 return PMPI_Ineighbor_allgatherv_c(sendbuf, sendcount, sendtype,
                                                                    recvbuf, recvcounts, displs,
                                                                    recvtype, comm, r);
                               });
}

int PMPI_Neighbor_alltoall_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                  void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                  MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(comm, info, request, "MPI_Neighbor_alltoall_init_c",
                               {sendtype, recvtype}, [=](MPI_Request* r) {
                                 return PMPI_Ineighbor_alltoall_c(sendbuf, sendcount, sendtype,
                                                                  recvbuf, recvcount, recvtype,
                                                                  comm, r);
                               });
}

int PMPI_Neighbor_alltoallv_init_c(const void* sendbuf, const MPI_Count sendcounts[],
                                   const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf,
                                   const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                   MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(comm, info, request, "MPI_Neighbor_alltoallv_init_c",
                               {sendtype, recvtype}, [=](MPI_Request* r) {
                                 return PMPI_Ineighbor_alltoallv_c(sendbuf, sendcounts, sdispls,
                                                                   sendtype, recvbuf, recvcounts,
                                                                   rdispls, recvtype, comm, r);
                               });
}

int PMPI_Neighbor_alltoallw_init_c(const void* sendbuf, const MPI_Count sendcounts[],
                                   const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                   void* recvbuf, const MPI_Count recvcounts[],
                                   const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                   MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return persistent_collective(
      comm, info, request, "MPI_Neighbor_alltoallw_init_c", {}, [=](MPI_Request* r) {
        return PMPI_Ineighbor_alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                          recvcounts, rdispls, recvtypes, comm, r);
      });
}
}  // extern "C"

#pragma weak MPI_Barrier_init = PMPI_Barrier_init
#pragma weak MPI_Bcast_init = PMPI_Bcast_init
#pragma weak MPI_Reduce_init = PMPI_Reduce_init
#pragma weak MPI_Allreduce_init = PMPI_Allreduce_init
#pragma weak MPI_Gather_init = PMPI_Gather_init
#pragma weak MPI_Gatherv_init = PMPI_Gatherv_init
#pragma weak MPI_Scatter_init = PMPI_Scatter_init
#pragma weak MPI_Scatterv_init = PMPI_Scatterv_init
#pragma weak MPI_Allgather_init = PMPI_Allgather_init
#pragma weak MPI_Allgatherv_init = PMPI_Allgatherv_init
#pragma weak MPI_Alltoall_init = PMPI_Alltoall_init
#pragma weak MPI_Alltoallv_init = PMPI_Alltoallv_init
#pragma weak MPI_Alltoallw_init = PMPI_Alltoallw_init
#pragma weak MPI_Reduce_scatter_init = PMPI_Reduce_scatter_init
#pragma weak MPI_Reduce_scatter_block_init = PMPI_Reduce_scatter_block_init
#pragma weak MPI_Scan_init = PMPI_Scan_init
#pragma weak MPI_Exscan_init = PMPI_Exscan_init
#pragma weak MPI_Neighbor_allgather_init = PMPI_Neighbor_allgather_init
#pragma weak MPI_Neighbor_allgatherv_init = PMPI_Neighbor_allgatherv_init
#pragma weak MPI_Neighbor_alltoall_init = PMPI_Neighbor_alltoall_init
#pragma weak MPI_Neighbor_alltoallv_init = PMPI_Neighbor_alltoallv_init
#pragma weak MPI_Neighbor_alltoallw_init = PMPI_Neighbor_alltoallw_init
#pragma weak MPI_Bcast_init_c = PMPI_Bcast_init_c
#pragma weak MPI_Reduce_init_c = PMPI_Reduce_init_c
#pragma weak MPI_Allreduce_init_c = PMPI_Allreduce_init_c
#pragma weak MPI_Gather_init_c = PMPI_Gather_init_c
#pragma weak MPI_Gatherv_init_c = PMPI_Gatherv_init_c
#pragma weak MPI_Scatter_init_c = PMPI_Scatter_init_c
#pragma weak MPI_Scatterv_init_c = PMPI_Scatterv_init_c
#pragma weak MPI_Allgather_init_c = PMPI_Allgather_init_c
#pragma weak MPI_Allgatherv_init_c = PMPI_Allgatherv_init_c
#pragma weak MPI_Alltoall_init_c = PMPI_Alltoall_init_c
#pragma weak MPI_Alltoallv_init_c = PMPI_Alltoallv_init_c
#pragma weak MPI_Alltoallw_init_c = PMPI_Alltoallw_init_c
#pragma weak MPI_Reduce_scatter_init_c = PMPI_Reduce_scatter_init_c
#pragma weak MPI_Reduce_scatter_block_init_c = PMPI_Reduce_scatter_block_init_c
#pragma weak MPI_Scan_init_c = PMPI_Scan_init_c
#pragma weak MPI_Exscan_init_c = PMPI_Exscan_init_c
#pragma weak MPI_Neighbor_allgather_init_c = PMPI_Neighbor_allgather_init_c
#pragma weak MPI_Neighbor_allgatherv_init_c = PMPI_Neighbor_allgatherv_init_c
#pragma weak MPI_Neighbor_alltoall_init_c = PMPI_Neighbor_alltoall_init_c
#pragma weak MPI_Neighbor_alltoallv_init_c = PMPI_Neighbor_alltoallv_init_c
#pragma weak MPI_Neighbor_alltoallw_init_c = PMPI_Neighbor_alltoallw_init_c
