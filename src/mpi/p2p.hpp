// The point-to-point operations with an MPI_Count count, implemented in p2p.cpp (they need
// its request pool and buffered-send state) and called by the MPI-4.0 large-count entry
// points in p2p_large.cpp.
//
// Why: the large-count forms doubled p2p.cpp's entry points, and the extra inlined copies of
// the request and engine helpers pushed the unit past GCC's --param inline-unit-growth, so
// the message-rate calls (MPI_Isend, MPI_Irecv, MPI_Waitall) lost their inlined helpers
// (delete_request, PointToPoint::try_inject, Transfer's move). Now each large-count form,
// and the int forms off the message-rate path (MPI_Issend, MPI_Irsend, MPI_Ibsend), call
// one out-of-line implementation; only MPI_Isend, MPI_Irecv and MPI_Recv inline it.
// `-fopt-info-inline-missed` on p2p.cpp shows whether a unit-growth limit is reached.
#pragma once

#include <mpi.h>

#include "mpi/mpi_internal.hpp"

namespace sluice::mpi::p2p {

// Blocking send in any mode (MPI_Send, MPI_Ssend, MPI_Rsend, MPI_Bsend).
int send(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
         SendMode mode, const char* function);
int recv(void* buf, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
         MPI_Status* status, const char* function);
// Nonblocking send in any mode (MPI_Isend, MPI_Issend, MPI_Irsend, MPI_Ibsend).
int isend(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
          MPI_Request* request, SendMode mode, const char* function);
int irecv(void* buf, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
          MPI_Request* request, const char* function);
int sendrecv(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,
             void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
             MPI_Comm comm, MPI_Status* status, const char* function);
int sendrecv_replace(void* buf, MPI_Count count, MPI_Datatype type, int dest, int sendtag,
                     int source, int recvtag, MPI_Comm comm, MPI_Status* status,
                     const char* function);
int isendrecv(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
              int sendtag, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source,
              int recvtag, MPI_Comm comm, MPI_Request* request, const char* function);
int isendrecv_replace(void* buf, MPI_Count count, MPI_Datatype type, int dest, int sendtag,
                      int source, int recvtag, MPI_Comm comm, MPI_Request* request,
                      const char* function);
int mrecv(void* buf, MPI_Count count, MPI_Datatype type, MPI_Message* message, MPI_Status* status,
          const char* function);
int imrecv(void* buf, MPI_Count count, MPI_Datatype type, MPI_Message* message,
           MPI_Request* request, const char* function);
int buffer_attach(void* buffer, MPI_Count size, const char* function);
// Blocks until every message in the buffer has been sent; the size is that of the buffer.
int buffer_detach(void* buffer_addr, MPI_Count* size, const char* function);
// MPI_Send_init, MPI_Recv_init and the other persistent point-to-point requests.
int persistent_init(const void* buf, MPI_Count count, MPI_Datatype type, int peer, int tag,
                    MPI_Comm comm, MPI_Request* request, sluice_request_s::Kind kind, SendMode mode,
                    const char* function);
// Whole elements of `type` the status holds, MPI_UNDEFINED for a partial one.
int get_count(const MPI_Status* status, MPI_Datatype type, MPI_Count* count, const char* function);
// Basic elements the status holds, MPI_UNDEFINED for a partial one.
int get_elements(const MPI_Status* status, MPI_Datatype type, MPI_Count* count,
                 const char* function);

}  // namespace sluice::mpi::p2p
