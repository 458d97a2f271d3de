// The deprecated MPI-1 names of the communicator attribute functions (MPI-3.1 §15.2 keeps
// them): each is its MPI_Comm_* successor with the same arguments.
#include <mpi.h>

extern "C" {

int MPI_Keyval_create(MPI_Copy_function* copy_fn, MPI_Delete_function* delete_fn, int* keyval,
                      void* extra_state) {
  return MPI_Comm_create_keyval(copy_fn, delete_fn, keyval, extra_state);
}

int MPI_Keyval_free(int* keyval) {
  return MPI_Comm_free_keyval(keyval);
}

int MPI_Attr_put(MPI_Comm comm, int keyval, void* attribute_val) {
  return MPI_Comm_set_attr(comm, keyval, attribute_val);
}

int MPI_Attr_delete(MPI_Comm comm, int keyval) {
  return MPI_Comm_delete_attr(comm, keyval);
}

}  // extern "C"
