// The Fortran routines gen_fortran.py leaves to hand-written code (its MANUAL table): those
// taking Fortran procedures (user reduction operations, error handlers), returning a value
// (MPI_WTIME, MPI_AINT_ADD), with attribute values, or without their C form's arguments
// (MPI_INIT). Each is pmpi_x_, with the weak aliases mpi_x_, mpi_x__, mpi_x and MPI_X.
#include <algorithm>
#include <array>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>

#include "fortran_glue.hpp"

// Declares the weak aliases of pmpi_<lower>_.
#define SLUICE_FORTRAN_ALIASES(ret, lower, upper, params)                      \
  ret mpi_##lower##_ params __attribute__((weak, alias("pmpi_" #lower "_")));  \
  ret mpi_##lower##__ params __attribute__((weak, alias("pmpi_" #lower "_"))); \
  ret mpi_##lower params __attribute__((weak, alias("pmpi_" #lower "_")));     \
  ret upper params __attribute__((weak, alias("pmpi_" #lower "_")));

// The same without MPI_X, for the names mpi.h defines as macros (MPI_COMM_DUP_FN ...).
#define SLUICE_FORTRAN_LOWER_ALIASES(ret, lower, params)                       \
  ret mpi_##lower##_ params __attribute__((weak, alias("pmpi_" #lower "_")));  \
  ret mpi_##lower##__ params __attribute__((weak, alias("pmpi_" #lower "_"))); \
  ret mpi_##lower params __attribute__((weak, alias("pmpi_" #lower "_")));

namespace {

// ---- user reduction operations -------------------------------------------------------------
// SUBROUTINE USER_FUNCTION(INVEC, INOUTVEC, LEN, DATATYPE): the C operation calls one of a
// fixed set of trampolines, each bound to one Fortran procedure (a procedure passed again
// reuses its trampoline, so creating and freeing in a loop does not run out).
using FortranOpFn = void (*)(void*, void*, MPI_Fint*, MPI_Fint*);
using FortranErrhFn = void (*)(MPI_Fint*, MPI_Fint*);
constexpr int kTrampolines = 64;
std::mutex g_bind_mutex;
std::array<FortranOpFn, kTrampolines> g_op_fns{};
std::array<FortranErrhFn, kTrampolines> g_errh_fns{};
std::array<FortranErrhFn, kTrampolines> g_session_errh_fns{};  // SUBROUTINE (SESSION, CODE)
std::array<FortranErrhFn, kTrampolines> g_win_errh_fns{};      // window error handlers

template <int I>
void op_trampoline(void* in, void* inout, int* len, MPI_Datatype* type) {
  MPI_Fint ftype = sluice_fortran_c2f_borrow(SLUICE_FH_DATATYPE, *type);
  g_op_fns[I](in, inout, len, &ftype);
}

template <int I>
void errh_trampoline(MPI_Comm* comm, int* code, ...) {
  MPI_Fint fcomm = sluice_fortran_c2f_borrow(SLUICE_FH_COMM, *comm);
  g_errh_fns[I](&fcomm, code);
}

template <int I>
void session_errh_trampoline(MPI_Session* session, int* code, ...) {
  MPI_Fint fsession = sluice_fortran_c2f_borrow(SLUICE_FH_SESSION, *session);
  g_session_errh_fns[I](&fsession, code);
}

template <int I>
void win_errh_trampoline(MPI_Win* win, int* code, ...) {
  MPI_Fint fwin = sluice_fortran_c2f_borrow(SLUICE_FH_WIN, *win);
  g_win_errh_fns[I](&fwin, code);
}

template <size_t... I>
constexpr std::array<MPI_User_function*, kTrampolines> op_trampolines(std::index_sequence<I...>) {
  return {&op_trampoline<I>...};
}
template <size_t... I>
constexpr std::array<MPI_Comm_errhandler_function*, kTrampolines> errh_trampolines(
    std::index_sequence<I...>) {
  return {&errh_trampoline<I>...};
}
template <size_t... I>
constexpr std::array<MPI_Session_errhandler_function*, kTrampolines> session_errh_trampolines(
    std::index_sequence<I...>) {
  return {&session_errh_trampoline<I>...};
}
template <size_t... I>
constexpr std::array<MPI_Win_errhandler_function*, kTrampolines> win_errh_trampolines(
    std::index_sequence<I...>) {
  return {&win_errh_trampoline<I>...};
}
constexpr auto kWinErrhTrampolines = win_errh_trampolines(std::make_index_sequence<kTrampolines>());
constexpr auto kOpTrampolines = op_trampolines(std::make_index_sequence<kTrampolines>());
constexpr auto kErrhTrampolines = errh_trampolines(std::make_index_sequence<kTrampolines>());
constexpr auto kSessionErrhTrampolines =
    session_errh_trampolines(std::make_index_sequence<kTrampolines>());

// The trampoline bound to `fn` (binding a free one), or -1 when all are taken.
template <typename Fn>
int bind(std::array<Fn, kTrampolines>& fns, Fn fn) {
  std::lock_guard<std::mutex> lock(g_bind_mutex);
  for (int i = 0; i < kTrampolines; ++i)
    if (fns[i] == fn) return i;
  for (int i = 0; i < kTrampolines; ++i)
    if (!fns[i]) {
      fns[i] = fn;
      return i;
    }
  return -1;
}

// ---- communicator keyvals with Fortran callbacks ------------------------------------------
// The C keyval's extra_state points to the Fortran procedures and the Fortran extra_state;
// one pair of C callbacks calls them. Attribute values set from Fortran are stored as the
// pointer itself (an INTEGER(KIND=MPI_ADDRESS_KIND) is pointer-sized).
using FortranCopyFn = void (*)(MPI_Fint* oldcomm, MPI_Fint* keyval, MPI_Aint* extra, MPI_Aint* in,
                               MPI_Aint* out, MPI_Fint* flag, MPI_Fint* ierror);
using FortranDeleteFn = void (*)(MPI_Fint* comm, MPI_Fint* keyval, MPI_Aint* value, MPI_Aint* extra,
                                 MPI_Fint* ierror);
struct FortranKeyval {
  FortranCopyFn copy;
  FortranDeleteFn del;
  MPI_Aint extra;
};

// One pair of C callbacks per kind of object (communicator, datatype, window): H is the C
// handle, Kind its Fortran handle table.
template <class H, int Kind>
int keyval_copy(H old, int keyval, void* extra_state, void* in, void* out, int* flag) {
  auto* k = static_cast<FortranKeyval*>(extra_state);
  MPI_Fint fold = sluice_fortran_c2f_borrow(Kind, old), fkey = keyval;
  MPI_Fint fflag = 0, ierror = MPI_SUCCESS;
  MPI_Aint fin = reinterpret_cast<MPI_Aint>(in), fout = 0;
  k->copy(&fold, &fkey, &k->extra, &fin, &fout, &fflag, &ierror);
  *flag = fflag != 0;
  if (*flag) *static_cast<void**>(out) = reinterpret_cast<void*>(fout);
  return ierror;
}

template <class H, int Kind>
int keyval_delete(H h, int keyval, void* value, void* extra_state) {
  auto* k = static_cast<FortranKeyval*>(extra_state);
  MPI_Fint fh = sluice_fortran_c2f_borrow(Kind, h), fkey = keyval;
  MPI_Fint ierror = MPI_SUCCESS;
  MPI_Aint fvalue = reinterpret_cast<MPI_Aint>(value);
  k->del(&fh, &fkey, &fvalue, &k->extra, &ierror);
  return ierror;
}

// The MPI-1 form (MPI_KEYVAL_CREATE): extra state and attribute values are default INTEGERs;
// an attribute set by MPI_ATTR_PUT holds the integer itself, sign-extended to a pointer.
using FortranCopyFn1 = void (*)(MPI_Fint* oldcomm, MPI_Fint* keyval, MPI_Fint* extra, MPI_Fint* in,
                                MPI_Fint* out, MPI_Fint* flag, MPI_Fint* ierror);
using FortranDeleteFn1 = void (*)(MPI_Fint* comm, MPI_Fint* keyval, MPI_Fint* value,
                                  MPI_Fint* extra, MPI_Fint* ierror);
struct FortranKeyval1 {
  FortranCopyFn1 copy;
  FortranDeleteFn1 del;
  MPI_Fint extra;
};

int keyval1_copy(MPI_Comm oldcomm, int keyval, void* extra_state, void* in, void* out, int* flag) {
  auto* k = static_cast<FortranKeyval1*>(extra_state);
  MPI_Fint fcomm = sluice_fortran_c2f_borrow(SLUICE_FH_COMM, oldcomm), fkey = keyval;
  MPI_Fint fflag = 0, ierror = MPI_SUCCESS;
  MPI_Fint fin = static_cast<MPI_Fint>(reinterpret_cast<MPI_Aint>(in)), fout = 0;
  k->copy(&fcomm, &fkey, &k->extra, &fin, &fout, &fflag, &ierror);
  *flag = fflag != 0;
  if (*flag) *static_cast<void**>(out) = reinterpret_cast<void*>(static_cast<MPI_Aint>(fout));
  return ierror;
}

int keyval1_delete(MPI_Comm comm, int keyval, void* value, void* extra_state) {
  auto* k = static_cast<FortranKeyval1*>(extra_state);
  MPI_Fint fcomm = sluice_fortran_c2f_borrow(SLUICE_FH_COMM, comm), fkey = keyval;
  MPI_Fint ierror = MPI_SUCCESS;
  MPI_Fint fvalue = static_cast<MPI_Fint>(reinterpret_cast<MPI_Aint>(value));
  k->del(&fcomm, &fkey, &fvalue, &k->extra, &ierror);
  return ierror;
}

// ---- generalized requests with Fortran callbacks ------------------------------------------
// The callbacks get the address of the EXTRA_STATE variable given to MPI_GREQUEST_START (as
// MPICH's binding does: a callback that changes it changes the program's variable).
using FortranGreqQueryFn = void (*)(MPI_Aint* extra, MPI_Fint* status, MPI_Fint* ierror);
using FortranGreqFreeFn = void (*)(MPI_Aint* extra, MPI_Fint* ierror);
using FortranGreqCancelFn = void (*)(MPI_Aint* extra, MPI_Fint* complete, MPI_Fint* ierror);
struct FortranGrequest {
  FortranGreqQueryFn query;
  FortranGreqFreeFn free;
  FortranGreqCancelFn cancel;
  MPI_Aint* extra;
};
static_assert(sizeof(MPI_Status) == 6 * sizeof(MPI_Fint), "INTEGER status(MPI_STATUS_SIZE)");

int greq_query(void* state, MPI_Status* status) {
  auto* g = static_cast<FortranGrequest*>(state);
  MPI_Status ignored{};
  MPI_Fint ierror = MPI_SUCCESS;
  g->query(g->extra, reinterpret_cast<MPI_Fint*>(status ? status : &ignored), &ierror);
  return ierror;
}

int greq_free(void* state) {
  auto* g = static_cast<FortranGrequest*>(state);
  MPI_Fint ierror = MPI_SUCCESS;
  g->free(g->extra, &ierror);
  delete g;
  return ierror;
}

int greq_cancel(void* state, int complete) {
  auto* g = static_cast<FortranGrequest*>(state);
  MPI_Fint fcomplete = complete, ierror = MPI_SUCCESS;
  g->cancel(g->extra, &fcomplete, &ierror);
  return ierror;
}

// The value of an attribute for Fortran: the predefined ones (MPI_TAG_UB ...
// MPI_LASTUSEDCODE) are ints the C side points to; user attributes are the value itself.
MPI_Aint attribute_value(int keyval, void* c) {
  if (keyval >= MPI_TAG_UB && keyval <= MPI_LASTUSEDCODE) return *static_cast<int*>(c);
  return reinterpret_cast<MPI_Aint>(c);
}

// The same for windows: MPI_WIN_BASE is the address, MPI_WIN_SIZE an MPI_Aint the C side
// points to, MPI_WIN_DISP_UNIT/CREATE_FLAVOR/MODEL ints.
MPI_Aint win_attribute_value(int keyval, void* c) {
  switch (keyval) {
    case MPI_WIN_SIZE:
      return *static_cast<MPI_Aint*>(c);
    case MPI_WIN_DISP_UNIT:
    case MPI_WIN_CREATE_FLAVOR:
    case MPI_WIN_MODEL:
      return *static_cast<int*>(c);
    default:
      return reinterpret_cast<MPI_Aint>(c);
  }
}

}  // namespace

// ---- helpers of the generated routines (fortran_glue.hpp) -----------------------------------

int sluice_fortran_peer_count(MPI_Comm comm) {
  int inter = 0, n = 0;
  if (MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return 0;
  if (inter ? MPI_Comm_remote_size(comm, &n) : MPI_Comm_size(comm, &n)) return 0;
  return n;
}

int sluice_fortran_neighbor_count(MPI_Comm comm, int recv) {
  int kind = MPI_UNDEFINED, in = 0, out = 0;
  if (MPI_Topo_test(comm, &kind) != MPI_SUCCESS) return 0;
  if (kind == MPI_CART) {
    int ndims = 0;
    MPI_Cartdim_get(comm, &ndims);
    in = out = 2 * ndims;
  } else if (kind == MPI_GRAPH) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Graph_neighbors_count(comm, rank, &in);
    out = in;
  } else if (kind == MPI_DIST_GRAPH) {
    int weighted = 0;
    MPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted);
  }
  return recv ? in : out;
}

extern "C" {

// ---- environment -------------------------------------------------------------------------

void pmpi_init_(MPI_Fint* ierror) {
  *ierror = MPI_Init(nullptr, nullptr);
}
SLUICE_FORTRAN_ALIASES(void, init, MPI_INIT, (MPI_Fint*))

// MPI_INFO_CREATE_ENV(INFO, IERROR): Fortran has no argv to pass (the C side then leaves out
// "command" and "argv", as MPI-4.0 allows).
void pmpi_info_create_env_(MPI_Fint* info, MPI_Fint* ierror) {
  MPI_Info c_info = MPI_INFO_NULL;
  *ierror = MPI_Info_create_env(0, nullptr, &c_info);
  if (*ierror == MPI_SUCCESS) *info = sluice_fortran_c2f(SLUICE_FH_INFO, c_info);
}
SLUICE_FORTRAN_ALIASES(void, info_create_env, MPI_INFO_CREATE_ENV, (MPI_Fint*, MPI_Fint*))

void pmpi_init_thread_(const MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierror) {
  *ierror = MPI_Init_thread(nullptr, nullptr, *required, provided);
}
SLUICE_FORTRAN_ALIASES(void, init_thread, MPI_INIT_THREAD, (const MPI_Fint*, MPI_Fint*, MPI_Fint*))

double pmpi_wtime_() {
  return MPI_Wtime();
}
SLUICE_FORTRAN_ALIASES(double, wtime, MPI_WTIME, ())

double pmpi_wtick_() {
  return MPI_Wtick();
}
SLUICE_FORTRAN_ALIASES(double, wtick, MPI_WTICK, ())

MPI_Aint pmpi_aint_add_(const MPI_Aint* base, const MPI_Aint* disp) {
  return MPI_Aint_add(*base, *disp);
}
SLUICE_FORTRAN_ALIASES(MPI_Aint, aint_add, MPI_AINT_ADD, (const MPI_Aint*, const MPI_Aint*))

MPI_Aint pmpi_aint_diff_(const MPI_Aint* addr1, const MPI_Aint* addr2) {
  return MPI_Aint_diff(*addr1, *addr2);
}
SLUICE_FORTRAN_ALIASES(MPI_Aint, aint_diff, MPI_AINT_DIFF, (const MPI_Aint*, const MPI_Aint*))

void pmpi_pcontrol_(const MPI_Fint* level) {
  MPI_Pcontrol(*level);
}
SLUICE_FORTRAN_ALIASES(void, pcontrol, MPI_PCONTROL, (const MPI_Fint*))

// The buffer's address means nothing in Fortran: it is not written back.
void pmpi_buffer_detach_(void* /*buffer_addr*/, MPI_Fint* size, MPI_Fint* ierror) {
  void* addr = nullptr;
  *ierror = MPI_Buffer_detach(&addr, size);
}
SLUICE_FORTRAN_ALIASES(void, buffer_detach, MPI_BUFFER_DETACH, (void*, MPI_Fint*, MPI_Fint*))

// ---- user functions ---------------------------------------------------------------------

void pmpi_op_create_(FortranOpFn fn, const MPI_Fint* commute, MPI_Fint* op, MPI_Fint* ierror) {
  const int slot = bind(g_op_fns, fn);
  if (slot < 0) {
    MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER);  // more procedures than trampolines
    *ierror = MPI_ERR_OTHER;
    return;
  }
  MPI_Op c_op = MPI_OP_NULL;
  *ierror = MPI_Op_create(kOpTrampolines[slot], *commute, &c_op);
  if (*ierror == MPI_SUCCESS) *op = sluice_fortran_c2f(SLUICE_FH_OP, c_op);
}
SLUICE_FORTRAN_ALIASES(void, op_create, MPI_OP_CREATE,
                       (FortranOpFn, const MPI_Fint*, MPI_Fint*, MPI_Fint*))

void pmpi_comm_create_errhandler_(FortranErrhFn fn, MPI_Fint* errhandler, MPI_Fint* ierror) {
  const int slot = bind(g_errh_fns, fn);
  if (slot < 0) {
    MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER);
    *ierror = MPI_ERR_OTHER;
    return;
  }
  MPI_Errhandler c_errh = MPI_ERRHANDLER_NULL;
  *ierror = MPI_Comm_create_errhandler(kErrhTrampolines[slot], &c_errh);
  if (*ierror == MPI_SUCCESS) *errhandler = sluice_fortran_c2f(SLUICE_FH_ERRHANDLER, c_errh);
}
SLUICE_FORTRAN_ALIASES(void, comm_create_errhandler, MPI_COMM_CREATE_ERRHANDLER,
                       (FortranErrhFn, MPI_Fint*, MPI_Fint*))

void pmpi_win_create_errhandler_(FortranErrhFn fn, MPI_Fint* errhandler, MPI_Fint* ierror) {
  const int slot = bind(g_win_errh_fns, fn);
  if (slot < 0) {
    MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER);
    *ierror = MPI_ERR_OTHER;
    return;
  }
  MPI_Errhandler c_errh = MPI_ERRHANDLER_NULL;
  *ierror = MPI_Win_create_errhandler(kWinErrhTrampolines[slot], &c_errh);
  if (*ierror == MPI_SUCCESS) *errhandler = sluice_fortran_c2f(SLUICE_FH_ERRHANDLER, c_errh);
}
SLUICE_FORTRAN_ALIASES(void, win_create_errhandler, MPI_WIN_CREATE_ERRHANDLER,
                       (FortranErrhFn, MPI_Fint*, MPI_Fint*))

void pmpi_session_create_errhandler_(FortranErrhFn fn, MPI_Fint* errhandler, MPI_Fint* ierror) {
  const int slot = bind(g_session_errh_fns, fn);
  if (slot < 0) {
    MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER);
    *ierror = MPI_ERR_OTHER;
    return;
  }
  MPI_Errhandler c_errh = MPI_ERRHANDLER_NULL;
  *ierror = MPI_Session_create_errhandler(kSessionErrhTrampolines[slot], &c_errh);
  if (*ierror == MPI_SUCCESS) *errhandler = sluice_fortran_c2f(SLUICE_FH_ERRHANDLER, c_errh);
}
SLUICE_FORTRAN_ALIASES(void, session_create_errhandler, MPI_SESSION_CREATE_ERRHANDLER,
                       (FortranErrhFn, MPI_Fint*, MPI_Fint*))

// ---- attributes ---------------------------------------------------------------------------

void pmpi_comm_get_attr_(const MPI_Fint* comm, const MPI_Fint* keyval, MPI_Aint* value,
                         MPI_Fint* flag, MPI_Fint* ierror) {
  void* c = nullptr;
  MPI_Comm c_comm = static_cast<MPI_Comm>(sluice_fortran_f2c(SLUICE_FH_COMM, *comm));
  *ierror = MPI_Comm_get_attr(c_comm, *keyval, &c, flag);
  if (*ierror == MPI_SUCCESS && *flag) *value = attribute_value(*keyval, c);
}
SLUICE_FORTRAN_ALIASES(void, comm_get_attr, MPI_COMM_GET_ATTR,
                       (const MPI_Fint*, const MPI_Fint*, MPI_Aint*, MPI_Fint*, MPI_Fint*))

void pmpi_attr_get_(const MPI_Fint* comm, const MPI_Fint* keyval, MPI_Fint* value, MPI_Fint* flag,
                    MPI_Fint* ierror) {
  void* c = nullptr;
  MPI_Comm c_comm = static_cast<MPI_Comm>(sluice_fortran_f2c(SLUICE_FH_COMM, *comm));
  *ierror = MPI_Attr_get(c_comm, *keyval, &c, flag);
  if (*ierror == MPI_SUCCESS && *flag) *value = static_cast<MPI_Fint>(attribute_value(*keyval, c));
}
SLUICE_FORTRAN_ALIASES(void, attr_get, MPI_ATTR_GET,
                       (const MPI_Fint*, const MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

// The predefined callbacks, as Fortran procedures.
void pmpi_comm_null_copy_fn_(MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint*, MPI_Aint*, MPI_Fint* flag,
                             MPI_Fint* ierror) {
  *flag = 0;
  *ierror = MPI_SUCCESS;
}
SLUICE_FORTRAN_LOWER_ALIASES(void, comm_null_copy_fn,
                             (MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint*, MPI_Aint*, MPI_Fint*,
                              MPI_Fint*))

void pmpi_comm_dup_fn_(MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint* in, MPI_Aint* out, MPI_Fint* flag,
                       MPI_Fint* ierror) {
  *out = *in;
  *flag = 1;
  *ierror = MPI_SUCCESS;
}
SLUICE_FORTRAN_LOWER_ALIASES(void, comm_dup_fn,
                             (MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint*, MPI_Aint*, MPI_Fint*,
                              MPI_Fint*))

void pmpi_comm_null_delete_fn_(MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint*, MPI_Fint* ierror) {
  *ierror = MPI_SUCCESS;
}
SLUICE_FORTRAN_LOWER_ALIASES(void, comm_null_delete_fn,
                             (MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint*, MPI_Fint*))

// The keyval's FortranKeyval lives as long as the process (MPI_COMM_FREE_KEYVAL does not
// tell when the last attribute using it is gone).
void pmpi_comm_create_keyval_(FortranCopyFn copy, FortranDeleteFn del, MPI_Fint* keyval,
                              const MPI_Aint* extra_state, MPI_Fint* ierror) {
  auto* k = new FortranKeyval{copy, del, *extra_state};
  *ierror = MPI_Comm_create_keyval(keyval_copy<MPI_Comm, SLUICE_FH_COMM>,
                                   keyval_delete<MPI_Comm, SLUICE_FH_COMM>, keyval, k);
  if (*ierror != MPI_SUCCESS) delete k;
}
SLUICE_FORTRAN_ALIASES(void, comm_create_keyval, MPI_COMM_CREATE_KEYVAL,
                       (FortranCopyFn, FortranDeleteFn, MPI_Fint*, const MPI_Aint*, MPI_Fint*))

void pmpi_comm_set_attr_(const MPI_Fint* comm, const MPI_Fint* keyval, const MPI_Aint* value,
                         MPI_Fint* ierror) {
  MPI_Comm c_comm = static_cast<MPI_Comm>(sluice_fortran_f2c(SLUICE_FH_COMM, *comm));
  *ierror = MPI_Comm_set_attr(c_comm, *keyval, reinterpret_cast<void*>(*value));
}
SLUICE_FORTRAN_ALIASES(void, comm_set_attr, MPI_COMM_SET_ATTR,
                       (const MPI_Fint*, const MPI_Fint*, const MPI_Aint*, MPI_Fint*))

// The predefined callbacks of datatype and window keyvals have the communicator ones'
// signature (a handle is an INTEGER either way).
void pmpi_type_null_copy_fn_(MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint*, MPI_Aint*, MPI_Fint* flag,
                             MPI_Fint* ierror) __attribute__((alias("pmpi_comm_null_copy_fn_")));
SLUICE_FORTRAN_LOWER_ALIASES(void, type_null_copy_fn,
                             (MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint*, MPI_Aint*, MPI_Fint*,
                              MPI_Fint*))
void pmpi_type_dup_fn_(MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint* in, MPI_Aint* out, MPI_Fint* flag,
                       MPI_Fint* ierror) __attribute__((alias("pmpi_comm_dup_fn_")));
SLUICE_FORTRAN_LOWER_ALIASES(void, type_dup_fn,
                             (MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint*, MPI_Aint*, MPI_Fint*,
                              MPI_Fint*))
void pmpi_type_null_delete_fn_(MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint*, MPI_Fint* ierror)
    __attribute__((alias("pmpi_comm_null_delete_fn_")));
SLUICE_FORTRAN_LOWER_ALIASES(void, type_null_delete_fn,
                             (MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint*, MPI_Fint*))
void pmpi_win_null_copy_fn_(MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint*, MPI_Aint*, MPI_Fint* flag,
                            MPI_Fint* ierror) __attribute__((alias("pmpi_comm_null_copy_fn_")));
SLUICE_FORTRAN_LOWER_ALIASES(void, win_null_copy_fn,
                             (MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint*, MPI_Aint*, MPI_Fint*,
                              MPI_Fint*))
void pmpi_win_dup_fn_(MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint* in, MPI_Aint* out, MPI_Fint* flag,
                      MPI_Fint* ierror) __attribute__((alias("pmpi_comm_dup_fn_")));
SLUICE_FORTRAN_LOWER_ALIASES(void, win_dup_fn,
                             (MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint*, MPI_Aint*, MPI_Fint*,
                              MPI_Fint*))
void pmpi_win_null_delete_fn_(MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint*, MPI_Fint* ierror)
    __attribute__((alias("pmpi_comm_null_delete_fn_")));
SLUICE_FORTRAN_LOWER_ALIASES(void, win_null_delete_fn,
                             (MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint*, MPI_Fint*))

// ---- datatype keyvals and attributes --------------------------------------------------------

void pmpi_type_create_keyval_(FortranCopyFn copy, FortranDeleteFn del, MPI_Fint* keyval,
                              const MPI_Aint* extra_state, MPI_Fint* ierror) {
  auto* k = new FortranKeyval{copy, del, *extra_state};
  *ierror = MPI_Type_create_keyval(keyval_copy<MPI_Datatype, SLUICE_FH_DATATYPE>,
                                   keyval_delete<MPI_Datatype, SLUICE_FH_DATATYPE>, keyval, k);
  if (*ierror != MPI_SUCCESS) delete k;
}
SLUICE_FORTRAN_ALIASES(void, type_create_keyval, MPI_TYPE_CREATE_KEYVAL,
                       (FortranCopyFn, FortranDeleteFn, MPI_Fint*, const MPI_Aint*, MPI_Fint*))

void pmpi_type_set_attr_(const MPI_Fint* type, const MPI_Fint* keyval, const MPI_Aint* value,
                         MPI_Fint* ierror) {
  auto c_type = static_cast<MPI_Datatype>(sluice_fortran_f2c(SLUICE_FH_DATATYPE, *type));
  *ierror = MPI_Type_set_attr(c_type, *keyval, reinterpret_cast<void*>(*value));
}
SLUICE_FORTRAN_ALIASES(void, type_set_attr, MPI_TYPE_SET_ATTR,
                       (const MPI_Fint*, const MPI_Fint*, const MPI_Aint*, MPI_Fint*))

void pmpi_type_get_attr_(const MPI_Fint* type, const MPI_Fint* keyval, MPI_Aint* value,
                         MPI_Fint* flag, MPI_Fint* ierror) {
  void* c = nullptr;
  auto c_type = static_cast<MPI_Datatype>(sluice_fortran_f2c(SLUICE_FH_DATATYPE, *type));
  *ierror = MPI_Type_get_attr(c_type, *keyval, &c, flag);
  if (*ierror == MPI_SUCCESS && *flag) *value = reinterpret_cast<MPI_Aint>(c);
}
SLUICE_FORTRAN_ALIASES(void, type_get_attr, MPI_TYPE_GET_ATTR,
                       (const MPI_Fint*, const MPI_Fint*, MPI_Aint*, MPI_Fint*, MPI_Fint*))

// ---- window keyvals and attributes ----------------------------------------------------------

void pmpi_win_create_keyval_(FortranCopyFn copy, FortranDeleteFn del, MPI_Fint* keyval,
                             const MPI_Aint* extra_state, MPI_Fint* ierror) {
  auto* k = new FortranKeyval{copy, del, *extra_state};
  *ierror = MPI_Win_create_keyval(keyval_copy<MPI_Win, SLUICE_FH_WIN>,
                                  keyval_delete<MPI_Win, SLUICE_FH_WIN>, keyval, k);
  if (*ierror != MPI_SUCCESS) delete k;
}
SLUICE_FORTRAN_ALIASES(void, win_create_keyval, MPI_WIN_CREATE_KEYVAL,
                       (FortranCopyFn, FortranDeleteFn, MPI_Fint*, const MPI_Aint*, MPI_Fint*))

void pmpi_win_set_attr_(const MPI_Fint* win, const MPI_Fint* keyval, const MPI_Aint* value,
                        MPI_Fint* ierror) {
  auto c_win = static_cast<MPI_Win>(sluice_fortran_f2c(SLUICE_FH_WIN, *win));
  *ierror = MPI_Win_set_attr(c_win, *keyval, reinterpret_cast<void*>(*value));
}
SLUICE_FORTRAN_ALIASES(void, win_set_attr, MPI_WIN_SET_ATTR,
                       (const MPI_Fint*, const MPI_Fint*, const MPI_Aint*, MPI_Fint*))

void pmpi_win_get_attr_(const MPI_Fint* win, const MPI_Fint* keyval, MPI_Aint* value,
                        MPI_Fint* flag, MPI_Fint* ierror) {
  void* c = nullptr;
  auto c_win = static_cast<MPI_Win>(sluice_fortran_f2c(SLUICE_FH_WIN, *win));
  *ierror = MPI_Win_get_attr(c_win, *keyval, &c, flag);
  if (*ierror == MPI_SUCCESS && *flag) *value = win_attribute_value(*keyval, c);
}
SLUICE_FORTRAN_ALIASES(void, win_get_attr, MPI_WIN_GET_ATTR,
                       (const MPI_Fint*, const MPI_Fint*, MPI_Aint*, MPI_Fint*, MPI_Fint*))

// ---- the MPI-1 keyvals (INTEGER attribute values) -------------------------------------------

void pmpi_null_copy_fn_(MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint* flag,
                        MPI_Fint* ierror) {
  *flag = 0;
  *ierror = MPI_SUCCESS;
}
SLUICE_FORTRAN_LOWER_ALIASES(void, null_copy_fn,
                             (MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*,
                              MPI_Fint*))

void pmpi_dup_fn_(MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint* in, MPI_Fint* out, MPI_Fint* flag,
                  MPI_Fint* ierror) {
  *out = *in;
  *flag = 1;
  *ierror = MPI_SUCCESS;
}
SLUICE_FORTRAN_LOWER_ALIASES(void, dup_fn,
                             (MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*,
                              MPI_Fint*))

void pmpi_null_delete_fn_(MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint* ierror) {
  *ierror = MPI_SUCCESS;
}
SLUICE_FORTRAN_LOWER_ALIASES(void, null_delete_fn,
                             (MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*))

// As MPI_COMM_CREATE_KEYVAL, the FortranKeyval1 lives as long as the process.
void pmpi_keyval_create_(FortranCopyFn1 copy, FortranDeleteFn1 del, MPI_Fint* keyval,
                         const MPI_Fint* extra_state, MPI_Fint* ierror) {
  auto* k = new FortranKeyval1{copy, del, *extra_state};
  *ierror = MPI_Keyval_create(keyval1_copy, keyval1_delete, keyval, k);
  if (*ierror != MPI_SUCCESS) delete k;
}
SLUICE_FORTRAN_ALIASES(void, keyval_create, MPI_KEYVAL_CREATE,
                       (FortranCopyFn1, FortranDeleteFn1, MPI_Fint*, const MPI_Fint*, MPI_Fint*))

void pmpi_attr_put_(const MPI_Fint* comm, const MPI_Fint* keyval, const MPI_Fint* value,
                    MPI_Fint* ierror) {
  MPI_Comm c_comm = static_cast<MPI_Comm>(sluice_fortran_f2c(SLUICE_FH_COMM, *comm));
  *ierror = MPI_Attr_put(c_comm, *keyval, reinterpret_cast<void*>(static_cast<MPI_Aint>(*value)));
}
SLUICE_FORTRAN_ALIASES(void, attr_put, MPI_ATTR_PUT,
                       (const MPI_Fint*, const MPI_Fint*, const MPI_Fint*, MPI_Fint*))

// ---- generalized requests --------------------------------------------------------------------

void pmpi_grequest_start_(FortranGreqQueryFn query, FortranGreqFreeFn free_fn,
                          FortranGreqCancelFn cancel, MPI_Aint* extra_state, MPI_Fint* request,
                          MPI_Fint* ierror) {
  auto* g = new FortranGrequest{query, free_fn, cancel, extra_state};
  MPI_Request c_request = MPI_REQUEST_NULL;
  *ierror = MPI_Grequest_start(greq_query, greq_free, greq_cancel, g, &c_request);
  if (*ierror != MPI_SUCCESS) {
    delete g;
    return;
  }
  *request = sluice_fortran_c2f_new(SLUICE_FH_REQUEST, c_request);
}
SLUICE_FORTRAN_ALIASES(void, grequest_start, MPI_GREQUEST_START,
                       (FortranGreqQueryFn, FortranGreqFreeFn, FortranGreqCancelFn, MPI_Aint*,
                        MPI_Fint*, MPI_Fint*))

// ---- info ---------------------------------------------------------------------------------

// MPI_INFO_GET_STRING(INFO, KEY, BUFLEN, VALUE, FLAG, IERROR): in Fortran BUFLEN counts
// characters without a terminator: at most BUFLEN of them are copied (blank-padded), none
// when BUFLEN is 0 or the key is not set (VALUE is then left alone); BUFLEN returns the
// value's length.
void pmpi_info_get_string_(const MPI_Fint* info, const char* key, MPI_Fint* buflen, char* value,
                           MPI_Fint* flag, MPI_Fint* ierror, size_t key_len, size_t value_len) {
  auto c_info = static_cast<MPI_Info>(sluice_fortran_f2c(SLUICE_FH_INFO, *info));
  const sluice::fortran::InString s_key(key, key_len);
  int len = 0;
  *ierror = MPI_Info_get_valuelen(c_info, s_key.c_str(), &len, flag);
  if (*ierror != MPI_SUCCESS || !*flag) return;
  if (*buflen > 0) {
    std::string full(static_cast<size_t>(len) + 1, '\0');
    int found = 0;
    *ierror = MPI_Info_get(c_info, s_key.c_str(), len, full.data(), &found);
    if (*ierror != MPI_SUCCESS) return;
    const size_t n = std::min({static_cast<size_t>(*buflen), static_cast<size_t>(len), value_len});
    std::memcpy(value, full.data(), n);
    std::memset(value + n, ' ', value_len - n);
  }
  *buflen = len;
}
SLUICE_FORTRAN_ALIASES(void, info_get_string, MPI_INFO_GET_STRING,
                       (const MPI_Fint*, const char*, MPI_Fint*, char*, MPI_Fint*, MPI_Fint*,
                        size_t, size_t))

}  // extern "C"
