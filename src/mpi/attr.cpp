// Attribute caching on communicators: user keyvals with copy and delete callbacks, and the
// predefined attributes of MPI_COMM_WORLD (MPI_TAG_UB, ...).
#include <algorithm>
#include <map>

#include "mpi/big_lock.hpp"
#include "mpi/mpi_internal.hpp"

namespace sluice::mpi {
namespace {

struct Keyval {
  MPI_Comm_copy_attr_function* copy;
  MPI_Comm_delete_attr_function* del;
  void* extra;
  int refs;            // the user's handle (until freed) + every attribute set with it
  bool freed = false;  // the user's handle is gone (freed once)
};
std::map<int, Keyval> g_keyvals;
int g_next_keyval = 100;  // above the predefined keys (MPI_TAG_UB ... MPI_LASTUSEDCODE)

void keyval_release(int key) {
  auto it = g_keyvals.find(key);
  if (it != g_keyvals.end() && --it->second.refs == 0) g_keyvals.erase(it);
}

// Runs the delete callback of one attribute; MPI_SUCCESS or its error.
int delete_one(MPI_Comm comm, int key, void* value) {
  auto it = g_keyvals.find(key);
  int rc = MPI_SUCCESS;
  if (it != g_keyvals.end() && it->second.del)
    rc = it->second.del(comm, key, value, it->second.extra);
  keyval_release(key);
  return rc;
}

}  // namespace

int get_user_attr(MPI_Comm comm, int keyval, void* attribute_val, int* flag) {
  if (!g_keyvals.count(keyval)) return -1;
  *flag = 0;
  for (auto [key, value] : comm->attrs)
    if (key == keyval) {
      *static_cast<void**>(attribute_val) = value;
      *flag = 1;
    }
  return MPI_SUCCESS;
}

int copy_attrs(MPI_Comm from, MPI_Comm to) {
  for (auto [key, value] : from->attrs) {
    auto it = g_keyvals.find(key);
    if (it == g_keyvals.end() || !it->second.copy) continue;
    void* out = nullptr;
    int flag = 0;
    if (int rc = it->second.copy(from, key, it->second.extra, value, &out, &flag)) return rc;
    if (flag) {
      ++it->second.refs;
      to->attrs.emplace_back(key, out);
    }
  }
  return MPI_SUCCESS;
}

int delete_attrs(MPI_Comm comm) {
  int result = MPI_SUCCESS;
  // Deleted in the reverse order of setting (MPI-3.1 asks for it on MPI_COMM_SELF).
  while (!comm->attrs.empty()) {
    auto [key, value] = comm->attrs.back();
    comm->attrs.pop_back();
    if (int rc = delete_one(comm, key, value); rc != MPI_SUCCESS && result == MPI_SUCCESS)
      result = rc;
  }
  return result;
}

}  // namespace sluice::mpi

using namespace sluice::mpi;

extern "C" {

int sluice_comm_null_copy_fn(MPI_Comm, int, void*, void*, void*, int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}

int sluice_comm_dup_fn(MPI_Comm, int, void*, void* in, void* out, int* flag) {
  *static_cast<void**>(out) = in;
  *flag = 1;
  return MPI_SUCCESS;
}

int sluice_comm_null_delete_fn(MPI_Comm, int, void*, void*) {
  return MPI_SUCCESS;
}

int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function* copy_fn,
                            MPI_Comm_delete_attr_function* delete_fn, int* keyval, void* extra) {
  SLUICE_MPI_CALL;
  if (!initialized()) abort_not_initialized("MPI_Comm_create_keyval");
  if (!keyval) return raise(nullptr, MPI_ERR_ARG, "MPI_Comm_create_keyval", "null keyval pointer");
  const int key = g_next_keyval++;
  g_keyvals[key] = Keyval{copy_fn, delete_fn, extra, 1, false};
  *keyval = key;
  return MPI_SUCCESS;
}

int PMPI_Comm_free_keyval(int* keyval) {
  SLUICE_MPI_CALL;
  auto it = keyval ? g_keyvals.find(*keyval) : g_keyvals.end();
  if (it == g_keyvals.end())
    return raise(nullptr, MPI_ERR_KEYVAL, "MPI_Comm_free_keyval", "invalid keyval");
  // Freeing it again (through a copy of the handle, or from a delete callback) while
  // attributes keep it alive is erroneous but harmless: MPICH and Open MPI ignore it, and
  // programs rely on that. Only the first free drops the handle's reference.
  if (!it->second.freed) {
    it->second.freed = true;
    keyval_release(*keyval);  // attributes still set keep it alive
  }
  *keyval = MPI_KEYVAL_INVALID;
  return MPI_SUCCESS;
}

int PMPI_Comm_set_attr(MPI_Comm comm, int keyval, void* value) {
  SLUICE_MPI_CALL;
  if (int rc = check_comm(comm, "MPI_Comm_set_attr")) return rc;
  auto it = g_keyvals.find(keyval);
  if (it == g_keyvals.end())
    return raisef(comm, MPI_ERR_KEYVAL, "MPI_Comm_set_attr", "invalid keyval %d", keyval);
  for (auto& [key, old] : comm->attrs) {
    if (key != keyval) continue;
    // Replacing runs the delete callback on the old value first.
    if (it->second.del)
      if (int rc = it->second.del(comm, key, old, it->second.extra))
        return raise(comm, rc, "MPI_Comm_set_attr", "delete callback failed");
    old = value;
    return MPI_SUCCESS;
  }
  ++it->second.refs;
  comm->attrs.emplace_back(keyval, value);
  return MPI_SUCCESS;
}

int PMPI_Comm_delete_attr(MPI_Comm comm, int keyval) {
  SLUICE_MPI_CALL;
  if (int rc = check_comm(comm, "MPI_Comm_delete_attr")) return rc;
  auto find = [&] {
    return std::find_if(comm->attrs.begin(), comm->attrs.end(),
                        [&](const auto& a) { return a.first == keyval; });
  };
  if (auto it = find(); it != comm->attrs.end()) {
    // The callback runs first: when it fails, the call fails and the attribute stays
    // (MPI-3.1 §6.7.2), so a later dup still sees it.
    auto kv = g_keyvals.find(keyval);
    if (kv != g_keyvals.end() && kv->second.del)
      if (int rc = kv->second.del(comm, keyval, it->second, kv->second.extra))
        return raise(comm, rc, "MPI_Comm_delete_attr", "delete callback failed");
    if (it = find(); it != comm->attrs.end()) comm->attrs.erase(it);  // callback may recurse
    keyval_release(keyval);
    return MPI_SUCCESS;
  }
  return raisef(comm, MPI_ERR_KEYVAL, "MPI_Comm_delete_attr", "no attribute for keyval %d", keyval);
}

}  // extern "C"

// The MPI_ names: weak, so a profiling library defining them comes first (MPI-3.1
// §14.2); it reaches these definitions as PMPI_.
#pragma weak MPI_Comm_create_keyval = PMPI_Comm_create_keyval
#pragma weak MPI_Comm_free_keyval = PMPI_Comm_free_keyval
#pragma weak MPI_Comm_set_attr = PMPI_Comm_set_attr
#pragma weak MPI_Comm_delete_attr = PMPI_Comm_delete_attr
