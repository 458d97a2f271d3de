// The Fortran sentinels (mpif.h, the mpi module): common blocks /sluice_mpif_*/, defined
// here so a program that names none still links. A program that declares them (every
// program including mpif.h or using the module) shares these objects or supersedes them
// with its own; either way the library finds the one instance through the symbol, and
// fortran_glue.hpp compares argument addresses with it. In their own translation unit, so
// no access is bound to this definition at compile time.
#include <mpi.h>

extern "C" {
MPI_Fint sluice_mpif_bottom_[1];
MPI_Fint sluice_mpif_in_place_[1];
MPI_Fint sluice_mpif_status_ign_[6];
MPI_Fint sluice_mpif_statuses_ign_[6];
MPI_Fint sluice_mpif_unweighted_[1];
MPI_Fint sluice_mpif_weights_empty_[1];
}
