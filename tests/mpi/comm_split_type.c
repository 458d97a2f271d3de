/* MPI_Comm_split_type's MPI-4.0 split types: MPI_COMM_TYPE_HW_GUIDED with the standard's
 * mpi_hw_resource_type value "mpi_shared_memory" gives the MPI_COMM_TYPE_SHARED split; an
 * unknown value, no key or MPI_INFO_NULL give MPI_COMM_NULL on every process;
 * MPI_COMM_TYPE_HW_UNGUIDED gives a communicator strictly smaller than the parent, with the
 * level's name in the info, or MPI_COMM_NULL. */
/* SLUICE_TEST_RANKS: 1 2 4 */
#include <mpi.h>
#include <string.h>

#include "check.h"

static int size_of(MPI_Comm c) {
  int n = -1;
  if (c != MPI_COMM_NULL) MPI_Comm_size(c, &n);
  return n;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  MPI_Comm shared, guided;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory");
  CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, rank, info, &guided) ==
            MPI_SUCCESS,
        "%s", "HW_GUIDED mpi_shared_memory");
  CHECK(guided != MPI_COMM_NULL && size_of(guided) == size_of(shared), "guided %d, shared %d",
        size_of(guided), size_of(shared));
  if (guided != MPI_COMM_NULL) {
    int result;
    MPI_Comm_compare(guided, shared, &result);
    CHECK(result == MPI_CONGRUENT, "compare %d", result);
    MPI_Comm_free(&guided);
  }
  MPI_Info_free(&info);

  /* No level of that name, no key, no info: MPI_COMM_NULL. */
  MPI_Info_create(&info);
  MPI_Info_set(info, "mpi_hw_resource_type", "sluice_no_such_level");
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &guided);
  CHECK(guided == MPI_COMM_NULL, "%s", "unknown level");
  MPI_Info_free(&info);
  MPI_Info_create(&info);
  MPI_Info_set(info, "shmem_topo", "mpi_shared_memory");
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &guided);
  CHECK(guided == MPI_COMM_NULL, "%s", "no mpi_hw_resource_type key");
  MPI_Info_free(&info);
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, MPI_INFO_NULL, &guided);
  CHECK(guided == MPI_COMM_NULL, "%s", "MPI_INFO_NULL");

  /* Unguided: strictly smaller, its level named in the info; or nothing smaller exists. */
  MPI_Comm unguided;
  MPI_Info_create(&info);
  CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, info, &unguided) ==
            MPI_SUCCESS,
        "%s", "HW_UNGUIDED");
  if (unguided != MPI_COMM_NULL) {
    char level[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0;
    MPI_Info_get(info, "mpi_hw_resource_type", MPI_MAX_INFO_VAL, level, &flag);
    CHECK(size_of(unguided) < size, "unguided size %d of %d", size_of(unguided), size);
    CHECK(flag && strlen(level) > 0, "%s", "unguided level named");
    MPI_Comm_free(&unguided);
  }
  MPI_Info_free(&info);
  MPI_Comm_free(&shared);
  MPI_Finalize();
  return check_exit("comm_split_type");
}
