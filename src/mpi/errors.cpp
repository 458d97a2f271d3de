// Error classes, their strings, error handlers and argument checks.
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "mpi/big_lock.hpp"
#include "mpi/datatype.hpp"
#include "mpi/mpi_internal.hpp"

sluice_errhandler_s sluice_errh_fatal{sluice_errhandler_s::Kind::fatal, nullptr, true, 1};
sluice_errhandler_s sluice_errh_return{sluice_errhandler_s::Kind::ret, nullptr, true, 1};
// MPI-4.0's MPI_ERRORS_ABORT: as MPI_Abort on the communicator, which ends the whole job in
// Sluice, so it acts as MPI_ERRORS_ARE_FATAL and only names itself differently.
sluice_errhandler_s sluice_errh_abort{sluice_errhandler_s::Kind::fatal, nullptr, true, 1};

namespace sluice::mpi {
namespace {

const char* const kClassStrings[] = {
    "MPI_SUCCESS: no error",
    "MPI_ERR_BUFFER: invalid buffer pointer",
    "MPI_ERR_COUNT: invalid count argument",
    "MPI_ERR_TYPE: invalid datatype",
    "MPI_ERR_TAG: invalid tag",
    "MPI_ERR_COMM: invalid communicator",
    "MPI_ERR_RANK: invalid rank",
    "MPI_ERR_REQUEST: invalid request",
    "MPI_ERR_ROOT: invalid root",
    "MPI_ERR_GROUP: invalid group",
    "MPI_ERR_OP: invalid operation",
    "MPI_ERR_TOPOLOGY: invalid topology",
    "MPI_ERR_DIMS: invalid dimension argument",
    "MPI_ERR_ARG: invalid argument of some other kind",
    "MPI_ERR_UNKNOWN: unknown error",
    "MPI_ERR_TRUNCATE: message truncated on receive",
    "MPI_ERR_OTHER: known error not in this list",
    "MPI_ERR_INTERN: internal MPI (implementation) error",
    "MPI_ERR_IN_STATUS: error code is in status",
    "MPI_ERR_PENDING: pending request",
    "MPI_ERR_ACCESS: permission denied",
    "MPI_ERR_AMODE: error related to the amode passed to MPI_File_open",
    "MPI_ERR_ASSERT: invalid assert argument",
    "MPI_ERR_BAD_FILE: invalid file name",
    "MPI_ERR_BASE: invalid base argument",
    "MPI_ERR_CONVERSION: error in a user-supplied data conversion function",
    "MPI_ERR_DISP: invalid disp argument",
    "MPI_ERR_DUP_DATAREP: conversion functions already registered for this data representation",
    "MPI_ERR_FILE_EXISTS: file exists",
    "MPI_ERR_FILE_IN_USE: file operation could not be completed, the file is in use",
    "MPI_ERR_FILE: invalid file handle",
    "MPI_ERR_INFO_KEY: key longer than MPI_MAX_INFO_KEY",
    "MPI_ERR_INFO_NOKEY: invalid key passed to MPI_Info_delete",
    "MPI_ERR_INFO_VALUE: value longer than MPI_MAX_INFO_VAL",
    "MPI_ERR_INFO: invalid info argument",
    "MPI_ERR_IO: other I/O error",
    "MPI_ERR_KEYVAL: invalid keyval",
    "MPI_ERR_LOCKTYPE: invalid locktype argument",
    "MPI_ERR_NAME: invalid service name",
    "MPI_ERR_NO_MEM: out of memory (MPI_Alloc_mem)",
    "MPI_ERR_NOT_SAME: collective argument not identical on all processes",
    "MPI_ERR_NO_SPACE: not enough space",
    "MPI_ERR_NO_SUCH_FILE: file does not exist",
    "MPI_ERR_PORT: invalid port name",
    "MPI_ERR_QUOTA: quota exceeded",
    "MPI_ERR_READ_ONLY: read-only file or file system",
    "MPI_ERR_RMA_CONFLICT: conflicting accesses to window",
    "MPI_ERR_RMA_SYNC: wrong synchronization of RMA calls",
    "MPI_ERR_SERVICE: invalid service name",
    "MPI_ERR_SIZE: invalid size argument",
    "MPI_ERR_SPAWN: error in spawning processes",
    "MPI_ERR_UNSUPPORTED_DATAREP: unsupported data representation",
    "MPI_ERR_UNSUPPORTED_OPERATION: operation not supported",
    "MPI_ERR_WIN: invalid window",
    "MPI_ERR_RMA_RANGE: target memory is not part of the window",
    "MPI_ERR_RMA_ATTACH: memory cannot be attached",
    "MPI_ERR_RMA_SHARED: memory cannot be shared",
    "MPI_ERR_RMA_FLAVOR: passed window has the wrong flavor for the called function",
    "MPI_T_ERR_INVALID: invalid use of the MPI tool interface",
};
constexpr int kNumClasses = sizeof kClassStrings / sizeof kClassStrings[0];
// The tool interface's return codes, from MPI_T_ERR_MEMORY on (after MPIX_ERR_PROC_FAILED),
// then MPI-4.0's classes.
const char* const kLaterClassStrings[] = {
    "MPI_T_ERR_MEMORY: out of memory",
    "MPI_T_ERR_NOT_INITIALIZED: the tool interface is not initialized (MPI_T_init_thread)",
    "MPI_T_ERR_CANNOT_INIT: the tool interface cannot be initialized",
    "MPI_T_ERR_INVALID_INDEX: index invalid or out of range",
    "MPI_T_ERR_INVALID_ITEM: item index out of range",
    "MPI_T_ERR_INVALID_HANDLE: invalid handle",
    "MPI_T_ERR_OUT_OF_HANDLES: no more handles available",
    "MPI_T_ERR_OUT_OF_SESSIONS: no more sessions available",
    "MPI_T_ERR_INVALID_SESSION: invalid session",
    "MPI_T_ERR_CVAR_SET_NOT_NOW: the control variable cannot be set at this moment",
    "MPI_T_ERR_CVAR_SET_NEVER: the control variable cannot be set until the end of execution",
    "MPI_T_ERR_PVAR_NO_STARTSTOP: the performance variable cannot be started or stopped",
    "MPI_T_ERR_PVAR_NO_WRITE: the performance variable cannot be written or reset",
    "MPI_T_ERR_PVAR_NO_ATOMIC: the performance variable cannot be read and reset atomically",
    "MPI_T_ERR_INVALID_NAME: no variable or category of that name",
    "MPI_ERR_PROC_ABORTED: the operation involves a process that called MPI_Abort",
    "MPI_ERR_VALUE_TOO_LARGE: a value is too large to store",
    "MPI_ERR_SESSION: invalid session",
};
constexpr int kNumLaterClasses = sizeof kLaterClassStrings / sizeof kLaterClassStrings[0];
static_assert(MPI_T_ERR_MEMORY + kNumLaterClasses - 1 == MPI_ERR_SESSION);
bool is_later_class(int code) {
  return code >= MPI_T_ERR_MEMORY && code < MPI_T_ERR_MEMORY + kNumLaterClasses;
}

// Classes and codes the program added (MPI_Add_error_class/code), numbered from
// MPI_ERR_LASTCODE + 1 up; a class is its own class.
struct UserError {
  int errclass;
  std::string text;  // MPI_Add_error_string; empty until set
};
std::map<int, UserError> g_user_errors;
int g_last_number = MPI_ERR_LASTCODE;  // classes and codes share the numbers

bool is_class(int code) {
  if ((code >= 0 && code < kNumClasses) || code == MPIX_ERR_PROC_FAILED || is_later_class(code))
    return true;
  auto it = g_user_errors.find(code);
  return it != g_user_errors.end() && it->second.errclass == code;
}

}  // namespace

int g_last_used_class = MPI_ERR_LASTCODE;

const char* error_string(int code) {
  if (code >= 0 && code < kNumClasses) return kClassStrings[code];
  if (is_later_class(code)) return kLaterClassStrings[code - MPI_T_ERR_MEMORY];
  if (code == MPIX_ERR_PROC_FAILED)
    return "MPIX_ERR_PROC_FAILED: a process the operation involves has failed";
  if (auto it = g_user_errors.find(code); it != g_user_errors.end()) return it->second.text.c_str();
  return nullptr;
}

void errh_release(MPI_Errhandler h) {
  if (h && !h->predefined && --h->refs == 0) delete h;
}

int errc_to_class(Errc e) {
  switch (e) {
    case Errc::ok:
    case Errc::cancelled:
      return MPI_SUCCESS;
    case Errc::truncated:
      return MPI_ERR_TRUNCATE;
    case Errc::invalid_argument:
      return MPI_ERR_ARG;
    case Errc::no_memory:
      return MPI_ERR_NO_MEM;
    case Errc::peer_dead:
      return MPIX_ERR_PROC_FAILED;
    case Errc::internal:
      return MPI_ERR_INTERN;
    case Errc::remote_access:
      return MPI_ERR_RMA_RANGE;
  }
  return MPI_ERR_UNKNOWN;
}

[[noreturn]] void abort_job(int code, const std::string& reason) {
  // The launcher treats a rank that exits without finalizing as failed and ends the job.
  if (!reason.empty()) {
    const int rank = initialized() ? engine().rank() : -1;
    std::fprintf(stderr, "[rank %d] %s\n", rank, reason.c_str());
  }
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(code != 0 ? code : 1);
}

const char* comm_label(MPI_Comm comm) {
  if (!comm) return "MPI_COMM_NULL";
  if (!comm->valid()) return "an invalid communicator";
  if (!comm->name.empty()) return comm->name.c_str();
  return "a communicator";
}

void abort_not_initialized(const char* function) {
  abort_job(MPI_ERR_OTHER, std::string(function) + ": " + not_initialized_text());
}

int raise(MPI_Comm comm, int errclass, const char* function, const char* what) {
  if (!initialized())
    abort_job(errclass, std::string(function) + ": " + what + " (" + not_initialized_text() + ")");
  if (!comm || !comm->valid()) comm = MPI_COMM_WORLD;
  MPI_Errhandler h = comm->errh;
  switch (h->kind) {
    case sluice_errhandler_s::Kind::ret:
      return errclass;
    case sluice_errhandler_s::Kind::user: {
      int code = errclass;
      h->fn(&comm, &code);
      return errclass;
    }
    case sluice_errhandler_s::Kind::fatal:
      break;
  }
  const char* cls = error_string(errclass);
  abort_job(errclass, std::string(function) + ": " + what + " [" + (cls ? cls : "?") + "] (" +
                          (h == &sluice_errh_abort ? "MPI_ERRORS_ABORT" : "MPI_ERRORS_ARE_FATAL") +
                          " on " + comm_label(comm) + ")");
}

int raisef(MPI_Comm comm, int errclass, const char* function, const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return raise(comm, errclass, function, buf);
}

namespace check_failed {

int comm(MPI_Comm comm, const char* function) {
  if (!initialized()) abort_not_initialized(function);
  if (!comm) return raise(nullptr, MPI_ERR_COMM, function, "invalid communicator MPI_COMM_NULL");
  return raise(nullptr, MPI_ERR_COMM, function,
               "invalid communicator (freed or not a communicator)");
}

int count(MPI_Comm comm, MPI_Count count, const char* function) {
  return raisef(comm, MPI_ERR_COUNT, function, "invalid count %lld", count);
}

int type(MPI_Comm comm, MPI_Datatype type, const char* function) {
  if (!type) return raise(comm, MPI_ERR_TYPE, function, "invalid datatype MPI_DATATYPE_NULL");
  return raise(comm, MPI_ERR_TYPE, function, "invalid datatype (not committed)");
}

int rank(MPI_Comm comm, int rank, const char* function) {
  return raisef(comm, MPI_ERR_RANK, function, "invalid rank %d (communicator %s has %d ranks)",
                rank, comm_label(comm), comm->size);
}

int tag(MPI_Comm comm, int tag, const char* function) {
  return raisef(comm, MPI_ERR_TAG, function, "invalid tag %d (valid tags are 0..%d)", tag,
                sluice::max_tag);
}

int root(MPI_Comm comm, int root, const char* function) {
  return raisef(comm, MPI_ERR_ROOT, function, "invalid root %d (communicator %s has %d ranks)",
                root, comm_label(comm), comm->size);
}

int buffer(MPI_Comm comm, const void* buf, MPI_Count count, MPI_Datatype type,
           const char* function) {
  // As MPICH: a predefined type, or a derived one whose data starts at its origin, cannot be
  // addressed from NULL; a type of absolute addresses is used with MPI_BOTTOM (NULL).
  if (buf || count == 0 || !type || dt_size(type) == 0 ||
      (!type->predefined && dt_true_lb(type) != 0))
    return MPI_SUCCESS;
  return raisef(comm, MPI_ERR_BUFFER, function, "buffer is NULL with count %lld", count);
}

}  // namespace check_failed

}  // namespace sluice::mpi

using namespace sluice::mpi;

extern "C" {

int PMPI_Error_string(int errorcode, char* string, int* resultlen) {
  SLUICE_MPI_CALL;
  const char* s = error_string(errorcode);
  if (!s)
    return raisef(nullptr, MPI_ERR_ARG, "MPI_Error_string", "invalid error code %d", errorcode);
  std::snprintf(string, MPI_MAX_ERROR_STRING, "%s", s);
  *resultlen = static_cast<int>(std::strlen(string));
  return MPI_SUCCESS;
}

int PMPI_Error_class(int errorcode, int* errorclass) {
  SLUICE_MPI_CALL;
  if (!error_string(errorcode))
    return raisef(nullptr, MPI_ERR_ARG, "MPI_Error_class", "invalid error code %d", errorcode);
  // Every code Sluice itself returns is its class.
  auto it = g_user_errors.find(errorcode);
  *errorclass = it != g_user_errors.end() ? it->second.errclass : errorcode;
  return MPI_SUCCESS;
}

int PMPI_Add_error_class(int* errorclass) {
  SLUICE_MPI_CALL;
  if (!errorclass) return raise(nullptr, MPI_ERR_ARG, "MPI_Add_error_class", "errorclass is NULL");
  *errorclass = ++g_last_number;
  g_last_used_class = *errorclass;
  g_user_errors[*errorclass] = UserError{*errorclass, {}};
  return MPI_SUCCESS;
}

int PMPI_Add_error_code(int errorclass, int* errorcode) {
  SLUICE_MPI_CALL;
  constexpr const char* f = "MPI_Add_error_code";
  if (!errorcode) return raise(nullptr, MPI_ERR_ARG, f, "errorcode is NULL");
  if (!is_class(errorclass) || errorclass == MPI_SUCCESS)
    return raisef(nullptr, MPI_ERR_ARG, f, "%d is not an error class", errorclass);
  *errorcode = ++g_last_number;
  g_user_errors[*errorcode] = UserError{errorclass, {}};
  return MPI_SUCCESS;
}

int PMPI_Add_error_string(int errorcode, const char* string) {
  SLUICE_MPI_CALL;
  constexpr const char* f = "MPI_Add_error_string";
  auto it = g_user_errors.find(errorcode);
  if (it == g_user_errors.end())
    return raisef(nullptr, MPI_ERR_ARG, f, "%d is not an error class or code the program added",
                  errorcode);
  if (!string) return raise(nullptr, MPI_ERR_ARG, f, "string is NULL");
  if (std::strlen(string) >= MPI_MAX_ERROR_STRING)
    return raisef(nullptr, MPI_ERR_ARG, f, "string longer than MPI_MAX_ERROR_STRING - 1 (%d)",
                  MPI_MAX_ERROR_STRING - 1);
  it->second.text = string;
  return MPI_SUCCESS;
}

int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function* function,
                                MPI_Errhandler* errhandler) {
  SLUICE_MPI_CALL;
  if (!function)
    return raise(nullptr, MPI_ERR_ARG, "MPI_Comm_create_errhandler", "null handler function");
  auto* h = new sluice_errhandler_s;
  h->kind = sluice_errhandler_s::Kind::user;
  h->fn = function;
  *errhandler = h;
  return MPI_SUCCESS;
}

int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
  SLUICE_MPI_CALL;
  if (int rc = check_comm(comm, "MPI_Comm_set_errhandler")) return rc;
  if (!errhandler)
    return raise(comm, MPI_ERR_ARG, "MPI_Comm_set_errhandler",
                 "invalid errhandler MPI_ERRHANDLER_NULL");
  if (!errhandler->predefined) ++errhandler->refs;
  errh_release(comm->errh);
  comm->errh = errhandler;
  return MPI_SUCCESS;
}

int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler) {
  SLUICE_MPI_CALL;
  if (int rc = check_comm(comm, "MPI_Comm_get_errhandler")) return rc;
  if (!comm->errh->predefined) ++comm->errh->refs;
  *errhandler = comm->errh;
  return MPI_SUCCESS;
}

int PMPI_Errhandler_free(MPI_Errhandler* errhandler) {
  SLUICE_MPI_CALL;
  if (!errhandler || !*errhandler)
    return raise(nullptr, MPI_ERR_ARG, "MPI_Errhandler_free",
                 "invalid errhandler MPI_ERRHANDLER_NULL");
  errh_release(*errhandler);
  *errhandler = MPI_ERRHANDLER_NULL;
  return MPI_SUCCESS;
}

int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode) {
  SLUICE_MPI_CALL;
  if (int rc = check_comm(comm, "MPI_Comm_call_errhandler")) return rc;
  raisef(comm, errorcode, "MPI_Comm_call_errhandler", "error code %d raised by the application",
         errorcode);
  return MPI_SUCCESS;
}

}  // extern "C"

// The MPI_ names: weak, so a profiling library defining them comes first (MPI-3.1
// §14.2); it reaches these definitions as PMPI_.
#pragma weak MPI_Error_string = PMPI_Error_string
#pragma weak MPI_Error_class = PMPI_Error_class
#pragma weak MPI_Add_error_class = PMPI_Add_error_class
#pragma weak MPI_Add_error_code = PMPI_Add_error_code
#pragma weak MPI_Add_error_string = PMPI_Add_error_string
#pragma weak MPI_Comm_create_errhandler = PMPI_Comm_create_errhandler
#pragma weak MPI_Comm_set_errhandler = PMPI_Comm_set_errhandler
#pragma weak MPI_Comm_get_errhandler = PMPI_Comm_get_errhandler
#pragma weak MPI_Errhandler_free = PMPI_Errhandler_free
#pragma weak MPI_Comm_call_errhandler = PMPI_Comm_call_errhandler
