// Fortran handles: MPI objects seen from Fortran are INTEGERs. Each kind of handle has a
// table: 0 is the kind's null handle, 1..P its predefined objects (fixed, the values
// mpif.h and the mpi module give them), and above P the objects converted on demand,
// with a reference count per slot (a C object converted twice, such as an error handler
// returned by every MPI_Comm_get_errhandler, keeps one integer until freed as often).
//
// The tables live in libmpi (not libmpifort), so the C-side conversion functions
// (MPI_Comm_f2c/c2f and kin) can give C and Fortran the same integers.
#pragma once

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Handle kinds; the order is that of the tables (handles.cpp). */
enum {
  SLUICE_FH_COMM,
  SLUICE_FH_GROUP,
  SLUICE_FH_DATATYPE,
  SLUICE_FH_OP,
  SLUICE_FH_REQUEST,
  SLUICE_FH_ERRHANDLER,
  SLUICE_FH_INFO,
  SLUICE_FH_MESSAGE,
  SLUICE_FH_WIN,
  SLUICE_FH_SESSION,
  SLUICE_FH_KINDS
};

/* The C object of integer `f`, or null for the null handle and any integer that names
   nothing (the C function then reports the invalid handle). Lock-free. */
void* sluice_fortran_f2c(int kind, MPI_Fint f);
/* The integer of C object `c` (0 for null): the object's slot if it has one (one more
   reference), else a new slot. */
MPI_Fint sluice_fortran_c2f(int kind, void* c);
/* The integer of C object `c` without taking a reference (a callback's argument): its slot
   if it has one, else a new slot. */
MPI_Fint sluice_fortran_c2f_borrow(int kind, void* c);
/* A new slot for an object known to have none (a request just started): no lookup. */
MPI_Fint sluice_fortran_c2f_new(int kind, void* c);
/* Drops one reference to slot `f` (its C object was freed or completed); predefined and
   null handles are never released. */
void sluice_fortran_release(int kind, MPI_Fint f);

#ifdef __cplusplus
}
#endif
