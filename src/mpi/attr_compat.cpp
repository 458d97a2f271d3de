// The deprecated MPI-1 names of the communicator attribute functions (MPI-3.1 §15.2 keeps
// them): each is its MPI_Comm_* successor with the same arguments.
#include <mpi.h>

extern "C" {

int PMPI_Keyval_create(MPI_Copy_function* copy_fn, MPI_Delete_function* delete_fn, int* keyval,
                       void* extra_state) {
  return PMPI_Comm_create_keyval(copy_fn, delete_fn, keyval, extra_state);
}

int PMPI_Keyval_free(int* keyval) {
  return PMPI_Comm_free_keyval(keyval);
}

int PMPI_Attr_put(MPI_Comm comm, int keyval, void* attribute_val) {
  return PMPI_Comm_set_attr(comm, keyval, attribute_val);
}

int PMPI_Attr_delete(MPI_Comm comm, int keyval) {
  return PMPI_Comm_delete_attr(comm, keyval);
}

}  // extern "C"

// The MPI_ names: weak, so a profiling library defining them comes first (MPI-3.1
// §14.2); it reaches these definitions as PMPI_.
#pragma weak MPI_Keyval_create = PMPI_Keyval_create
#pragma weak MPI_Keyval_free = PMPI_Keyval_free
#pragma weak MPI_Attr_put = PMPI_Attr_put
#pragma weak MPI_Attr_delete = PMPI_Attr_delete
