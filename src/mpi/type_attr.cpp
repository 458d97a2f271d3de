// Attribute caching on datatypes (MPI-3.1 §6.7.4): user keyvals with copy callbacks (run
// by MPI_Type_dup) and delete callbacks (run when an attribute is replaced or deleted, and
// by MPI_Type_free). Keyvals are numbered apart from the communicator ones, so a keyval of
// the wrong kind is reported instead of silently used.
#include <algorithm>
#include <map>

#include "mpi/big_lock.hpp"
#include "mpi/datatype.hpp"
#include "mpi/mpi_internal.hpp"

namespace sluice::mpi {
namespace {

struct TypeKeyval {
  MPI_Type_copy_attr_function* copy;
  MPI_Type_delete_attr_function* del;
  void* extra;
  int refs;            // the user's handle (until freed) + every attribute set with it
  bool freed = false;  // the user's handle is gone (freed once)
};
std::map<int, TypeKeyval> g_type_keyvals;
int g_next_type_keyval = 0x10000;

void keyval_release(int key) {
  auto it = g_type_keyvals.find(key);
  if (it != g_type_keyvals.end() && --it->second.refs == 0) g_type_keyvals.erase(it);
}

auto find_attr(MPI_Datatype type, int keyval) {
  return std::find_if(type->attrs.begin(), type->attrs.end(),
                      [&](const auto& a) { return a.first == keyval; });
}

int check_type_handle(MPI_Datatype type, const char* function) {
  if (type == MPI_DATATYPE_NULL)
    return raise(nullptr, MPI_ERR_TYPE, function, "datatype is MPI_DATATYPE_NULL");
  return MPI_SUCCESS;
}

}  // namespace

int type_copy_attrs(MPI_Datatype from, MPI_Datatype to) {
  for (auto [key, value] : from->attrs) {
    auto it = g_type_keyvals.find(key);
    if (it == g_type_keyvals.end() || !it->second.copy) continue;
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

int type_delete_attrs(MPI_Datatype type) {
  while (!type->attrs.empty()) {
    auto [key, value] = type->attrs.back();
    auto it = g_type_keyvals.find(key);
    if (it != g_type_keyvals.end() && it->second.del)
      if (int rc = it->second.del(type, key, value, it->second.extra)) return rc;
    if (auto a = find_attr(type, key); a != type->attrs.end()) type->attrs.erase(a);
    keyval_release(key);
  }
  return MPI_SUCCESS;
}

}  // namespace sluice::mpi

using namespace sluice::mpi;

extern "C" {

int sluice_type_null_copy_fn(MPI_Datatype, int, void*, void*, void*, int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}

int sluice_type_dup_fn(MPI_Datatype, int, void*, void* in, void* out, int* flag) {
  *static_cast<void**>(out) = in;
  *flag = 1;
  return MPI_SUCCESS;
}

int sluice_type_null_delete_fn(MPI_Datatype, int, void*, void*) {
  return MPI_SUCCESS;
}

int PMPI_Type_create_keyval(MPI_Type_copy_attr_function* copy_fn,
                            MPI_Type_delete_attr_function* delete_fn, int* keyval, void* extra) {
  SLUICE_MPI_CALL;
  if (!keyval) return raise(nullptr, MPI_ERR_ARG, "MPI_Type_create_keyval", "keyval is NULL");
  const int key = g_next_type_keyval++;
  g_type_keyvals[key] = TypeKeyval{copy_fn, delete_fn, extra, 1, false};
  *keyval = key;
  return MPI_SUCCESS;
}

int PMPI_Type_free_keyval(int* keyval) {
  SLUICE_MPI_CALL;
  auto it = keyval ? g_type_keyvals.find(*keyval) : g_type_keyvals.end();
  if (it == g_type_keyvals.end())
    return raise(nullptr, MPI_ERR_KEYVAL, "MPI_Type_free_keyval", "invalid datatype keyval");
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

int PMPI_Type_set_attr(MPI_Datatype type, int keyval, void* value) {
  SLUICE_MPI_CALL;
  constexpr const char* f = "MPI_Type_set_attr";
  if (int rc = check_type_handle(type, f)) return rc;
  auto kv = g_type_keyvals.find(keyval);
  if (kv == g_type_keyvals.end())
    return raisef(nullptr, MPI_ERR_KEYVAL, f, "invalid datatype keyval %d", keyval);
  if (auto a = find_attr(type, keyval); a != type->attrs.end()) {
    // Replacing runs the delete callback on the old value first.
    if (kv->second.del)
      if (int rc = kv->second.del(type, keyval, a->second, kv->second.extra))
        return raise(nullptr, rc, f, "delete callback failed");
    if (a = find_attr(type, keyval); a != type->attrs.end()) {  // the callback may recurse
      a->second = value;
      return MPI_SUCCESS;
    }
  }
  ++kv->second.refs;
  type->attrs.emplace_back(keyval, value);
  return MPI_SUCCESS;
}

int PMPI_Type_get_attr(MPI_Datatype type, int keyval, void* attribute_val, int* flag) {
  SLUICE_MPI_CALL;
  constexpr const char* f = "MPI_Type_get_attr";
  if (int rc = check_type_handle(type, f)) return rc;
  if (!attribute_val || !flag) return raise(nullptr, MPI_ERR_ARG, f, "an output argument is NULL");
  if (!g_type_keyvals.count(keyval))
    return raisef(nullptr, MPI_ERR_KEYVAL, f, "invalid datatype keyval %d", keyval);
  auto a = find_attr(type, keyval);
  *flag = a != type->attrs.end();
  if (*flag) *static_cast<void**>(attribute_val) = a->second;
  return MPI_SUCCESS;
}

int PMPI_Type_delete_attr(MPI_Datatype type, int keyval) {
  SLUICE_MPI_CALL;
  constexpr const char* f = "MPI_Type_delete_attr";
  if (int rc = check_type_handle(type, f)) return rc;
  auto a = find_attr(type, keyval);
  if (a == type->attrs.end())
    return raisef(nullptr, MPI_ERR_KEYVAL, f, "no attribute for datatype keyval %d", keyval);
  // The callback runs first: when it fails, the call fails and the attribute stays.
  auto kv = g_type_keyvals.find(keyval);
  if (kv != g_type_keyvals.end() && kv->second.del)
    if (int rc = kv->second.del(type, keyval, a->second, kv->second.extra))
      return raise(nullptr, rc, f, "delete callback failed");
  if (a = find_attr(type, keyval); a != type->attrs.end()) type->attrs.erase(a);
  keyval_release(keyval);
  return MPI_SUCCESS;
}

}  // extern "C"

// The MPI_ names: weak, so a profiling library defining them comes first (MPI-3.1
// §14.2); it reaches these definitions as PMPI_.
#pragma weak MPI_Type_create_keyval = PMPI_Type_create_keyval
#pragma weak MPI_Type_free_keyval = PMPI_Type_free_keyval
#pragma weak MPI_Type_set_attr = PMPI_Type_set_attr
#pragma weak MPI_Type_get_attr = PMPI_Type_get_attr
#pragma weak MPI_Type_delete_attr = PMPI_Type_delete_attr
