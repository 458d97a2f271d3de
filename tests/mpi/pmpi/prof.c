/* A profiling library built as tools (mpiP, Score-P, TAU, ...) build theirs: it defines some
 * MPI_ functions, counts the calls and forwards each to its PMPI_ name. pmpi.sh puts it in
 * front of libmpi by LD_PRELOAD and by link order; app.c reads the counts (prof_calls). */
#include <mpi.h>
#include <string.h>

enum counted {
  INIT,
  COMM_SIZE,
  SEND,
  RECV,
  ISEND,
  IRECV,
  WAIT,
  WAITALL,
  SENDRECV,
  BCAST,
  ALLREDUCE,
  BARRIER,
  NCOUNTED
};
static const char* const names[NCOUNTED] = {
    "MPI_Init", "MPI_Comm_size", "MPI_Send",     "MPI_Recv",  "MPI_Isend",     "MPI_Irecv",
    "MPI_Wait", "MPI_Waitall",   "MPI_Sendrecv", "MPI_Bcast", "MPI_Allreduce", "MPI_Barrier"};
static long counts[NCOUNTED];

/* Calls of `name` so far, -1 for a function this library does not count. */
long prof_calls(const char* name) {
  for (int i = 0; i < NCOUNTED; ++i)
    if (strcmp(names[i], name) == 0) return counts[i];
  return -1;
}

int MPI_Init(int* argc, char*** argv) {
  ++counts[INIT];
  return PMPI_Init(argc, argv);
}

int MPI_Comm_size(MPI_Comm comm, int* size) {
  ++counts[COMM_SIZE];
  return PMPI_Comm_size(comm, size);
}

int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  ++counts[SEND];
  return PMPI_Send(buf, count, type, dest, tag, comm);
}

int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status* status) {
  ++counts[RECV];
  return PMPI_Recv(buf, count, type, source, tag, comm, status);
}

int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request* request) {
  ++counts[ISEND];
  return PMPI_Isend(buf, count, type, dest, tag, comm, request);
}

int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request* request) {
  ++counts[IRECV];
  return PMPI_Irecv(buf, count, type, source, tag, comm, request);
}

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  ++counts[WAIT];
  return PMPI_Wait(request, status);
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  ++counts[WAITALL];
  return PMPI_Waitall(count, requests, statuses);
}

int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status* status) {
  ++counts[SENDRECV];
  return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                       source, recvtag, comm, status);
}

int MPI_Bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  ++counts[BCAST];
  return PMPI_Bcast(buffer, count, type, root, comm);
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm) {
  ++counts[ALLREDUCE];
  return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
}

int MPI_Barrier(MPI_Comm comm) {
  ++counts[BARRIER];
  return PMPI_Barrier(comm);
}
