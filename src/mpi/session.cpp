// MPI-4.0 sessions (§11.3): MPI_Session_init/finalize, the process sets "mpi://WORLD" and
// "mpi://SELF", groups from them, communicators from groups, and the session error handlers.
//
// A session shares the one library instance with the World Model: the first of MPI_Init and
// MPI_Session_init starts it, the last of MPI_Finalize and MPI_Session_finalize stops it
// (env.cpp). Stopping runs the engine's closing barrier, which every process of the job
// joins; a stopped library does not start again in the same process.
#include <strings.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>

#include "mpi/big_lock.hpp"
#include "mpi/mpi_internal.hpp"

struct sluice_session_s {
  MPI_Errhandler errh = nullptr;
  int thread_level = MPI_THREAD_SINGLE;
};

namespace sluice::mpi {
namespace {

constexpr const char* kPsets[] = {"mpi://WORLD", "mpi://SELF"};

// Applies the session's error handler (MPI_ERRORS_ARE_FATAL without a session).
int session_raise(MPI_Session session, int errclass, const char* function, const char* what) {
  MPI_Errhandler h = session && session->errh ? session->errh : &sluice_errh_fatal;
  switch (h->kind) {
    case sluice_errhandler_s::Kind::ret:
      return errclass;
    case sluice_errhandler_s::Kind::user: {
      int code = errclass;
      if (h->session_fn) h->session_fn(&session, &code);
      return errclass;
    }
    case sluice_errhandler_s::Kind::fatal:
      break;
  }
  const char* cls = error_string(errclass);
  abort_job(errclass, std::string(function) + ": " + what + " [" + (cls ? cls : "?") + "]");
}

int check_session(MPI_Session session, const char* function) {
  if (!session) return session_raise(nullptr, MPI_ERR_SESSION, function, "invalid session");
  return MPI_SUCCESS;
}

// The process set's index in kPsets (names compare without regard to case), or -1.
int pset_index(const char* name) {
  for (int i = 0; i < static_cast<int>(std::size(kPsets)); ++i)
    if (name && strcasecmp(name, kPsets[i]) == 0) return i;
  return -1;
}

std::vector<int> pset_world_ranks(int index) {
  if (index == 1) return {engine().rank()};
  std::vector<int> all(static_cast<std::size_t>(engine().size()));
  for (int i = 0; i < engine().size(); ++i) all[static_cast<std::size_t>(i)] = i;
  return all;
}

const char* thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    default:
      return "MPI_THREAD_MULTIPLE";
  }
}

int thread_level_from_name(std::string_view name) {
  for (int level :
       {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED, MPI_THREAD_MULTIPLE})
    if (name == thread_level_name(level)) return level;
  return -1;
}

// The stringtag as a tag of the group's creation exchange. Two creations over the same
// processes at the same time need distinct strings (MPI-4.0 §7.4.2): a hash collision of
// two such strings only serialises their agreements, which the context agreement survives.
int tag_of(const char* stringtag) {
  return static_cast<int>(std::hash<std::string_view>{}(stringtag)&0x3fffff);
}

}  // namespace
}  // namespace sluice::mpi

using namespace sluice::mpi;

extern "C" {

int PMPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session* session) {
  SLUICE_MPI_CALL;
  const char* fn = "MPI_Session_init";
  if (!session) return session_raise(nullptr, MPI_ERR_ARG, fn, "session is NULL");
  if (!errhandler) return session_raise(nullptr, MPI_ERR_ARG, fn, "invalid errhandler");
  int required = MPI_THREAD_SINGLE;
  char value[MPI_MAX_INFO_VAL + 1];
  int flag = 0;
  if (info) PMPI_Info_get(info, "thread_level", MPI_MAX_INFO_VAL, value, &flag);
  if (flag) {
    required = thread_level_from_name(value);
    if (required < 0) {
      auto* tmp = new sluice_session_s{errhandler, MPI_THREAD_SINGLE};
      const int rc = session_raise(tmp, MPI_ERR_ARG, fn, "invalid thread_level value");
      delete tmp;
      return rc;
    }
  }
  if (int rc = library_start(fn)) return rc;
  auto* s = new sluice_session_s;
  s->errh = errhandler;
  if (!errhandler->predefined) ++errhandler->refs;
  s->thread_level = provide_thread_level(required);
  ++g_live_sessions;
  *session = s;
  return MPI_SUCCESS;
}

int PMPI_Session_finalize(MPI_Session* session) {
  SLUICE_MPI_CALL;
  const char* fn = "MPI_Session_finalize";
  if (!session) return session_raise(nullptr, MPI_ERR_ARG, fn, "session is NULL");
  if (int rc = check_session(*session, fn)) return rc;
  errh_release((*session)->errh);
  delete *session;
  *session = MPI_SESSION_NULL;
  if (--g_live_sessions == 0 && !g_world_model) library_stop();
  return MPI_SUCCESS;
}

int PMPI_Session_get_num_psets(MPI_Session session, MPI_Info info, int* npset_names) {
  SLUICE_MPI_CALL;
  if (int rc = check_session(session, "MPI_Session_get_num_psets")) return rc;
  if (!npset_names)
    return session_raise(session, MPI_ERR_ARG, "MPI_Session_get_num_psets", "npset_names is NULL");
  *npset_names = static_cast<int>(std::size(kPsets));
  return MPI_SUCCESS;
}

// *pset_len in: the room in pset_name (0: only ask the length); out: the name's length + 1.
int PMPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n, int* pset_len,
                              char* pset_name) {
  SLUICE_MPI_CALL;
  const char* fn = "MPI_Session_get_nth_pset";
  if (int rc = check_session(session, fn)) return rc;
  if (!pset_len) return session_raise(session, MPI_ERR_ARG, fn, "pset_len is NULL");
  if (n < 0 || n >= static_cast<int>(std::size(kPsets)))
    return session_raise(session, MPI_ERR_ARG, fn, "no process set of that index");
  const std::string_view name = kPsets[n];
  if (*pset_len > 0 && pset_name) {
    const std::size_t copied = std::min(name.size(), static_cast<std::size_t>(*pset_len - 1));
    std::memcpy(pset_name, name.data(), copied);
    pset_name[copied] = '\0';
  }
  *pset_len = static_cast<int>(name.size()) + 1;
  return MPI_SUCCESS;
}

int PMPI_Session_get_info(MPI_Session session, MPI_Info* info_used) {
  SLUICE_MPI_CALL;
  if (int rc = check_session(session, "MPI_Session_get_info")) return rc;
  if (!info_used)
    return session_raise(session, MPI_ERR_ARG, "MPI_Session_get_info", "info_used is NULL");
  PMPI_Info_create(info_used);
  PMPI_Info_set(*info_used, "thread_level", thread_level_name(session->thread_level));
  return MPI_SUCCESS;
}

int PMPI_Session_get_pset_info(MPI_Session session, const char* pset_name, MPI_Info* info) {
  SLUICE_MPI_CALL;
  const char* fn = "MPI_Session_get_pset_info";
  if (int rc = check_session(session, fn)) return rc;
  const int index = pset_index(pset_name);
  if (index < 0) return session_raise(session, MPI_ERR_ARG, fn, "no such process set");
  if (!info) return session_raise(session, MPI_ERR_ARG, fn, "info is NULL");
  PMPI_Info_create(info);
  const std::size_t size = pset_world_ranks(index).size();
  PMPI_Info_set(*info, "mpi_size", std::to_string(size).c_str());
  return MPI_SUCCESS;
}

int PMPI_Group_from_session_pset(MPI_Session session, const char* pset_name, MPI_Group* newgroup) {
  SLUICE_MPI_CALL;
  const char* fn = "MPI_Group_from_session_pset";
  if (int rc = check_session(session, fn)) return rc;
  const int index = pset_index(pset_name);
  if (index < 0) return session_raise(session, MPI_ERR_ARG, fn, "no such process set");
  if (!newgroup) return session_raise(session, MPI_ERR_ARG, fn, "newgroup is NULL");
  auto* g = new sluice_group_s;
  g->world = pset_world_ranks(index);
  *newgroup = g;
  return MPI_SUCCESS;
}

// Collective over the group's processes only: Comm_create_group over the job's processes,
// tagged by the string.
int PMPI_Comm_create_from_group(MPI_Group group, const char* stringtag, MPI_Info info,
                                MPI_Errhandler errhandler, MPI_Comm* newcomm) {
  SLUICE_MPI_CALL;
  const char* fn = "MPI_Comm_create_from_group";
  if (!initialized()) abort_not_initialized(fn);
  if (!group) return raise(nullptr, MPI_ERR_GROUP, fn, "invalid group MPI_GROUP_NULL");
  if (!stringtag) return raise(nullptr, MPI_ERR_ARG, fn, "stringtag is NULL");
  if (!newcomm) return raise(nullptr, MPI_ERR_ARG, fn, "newcomm is NULL");
  if (group->rank_of_self() == MPI_UNDEFINED)
    return raise(nullptr, MPI_ERR_GROUP, fn, "the calling process is not in the group");
  if (int rc = PMPI_Comm_create_group(MPI_COMM_WORLD, group, tag_of(stringtag), newcomm)) return rc;
  if (info) PMPI_Comm_set_info(*newcomm, info);
  if (errhandler) PMPI_Comm_set_errhandler(*newcomm, errhandler);
  return MPI_SUCCESS;
}

int PMPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader,
                                      MPI_Group remote_group, int remote_leader,
                                      const char* stringtag, MPI_Info info,
                                      MPI_Errhandler errhandler, MPI_Comm* newintercomm) {
  SLUICE_MPI_CALL;
  const char* fn = "MPI_Intercomm_create_from_groups";
  if (!initialized()) abort_not_initialized(fn);
  if (!local_group || !remote_group)
    return raise(nullptr, MPI_ERR_GROUP, fn, "invalid group MPI_GROUP_NULL");
  if (!stringtag) return raise(nullptr, MPI_ERR_ARG, fn, "stringtag is NULL");
  if (!newintercomm) return raise(nullptr, MPI_ERR_ARG, fn, "newintercomm is NULL");
  if (remote_leader < 0 || remote_leader >= static_cast<int>(remote_group->world.size()))
    return raisef(nullptr, MPI_ERR_RANK, fn, "invalid remote_leader %d", remote_leader);
  MPI_Comm local = MPI_COMM_NULL;
  if (int rc = PMPI_Comm_create_from_group(local_group, stringtag, MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                           &local))
    return raise(nullptr, rc, fn, "creating the local communicator failed");
  // The leaders meet on the job's processes; a world rank names the remote leader there.
  const int rc =
      PMPI_Intercomm_create(local, local_leader, MPI_COMM_WORLD, remote_group->world[remote_leader],
                            tag_of(stringtag), newintercomm);
  PMPI_Comm_free(&local);
  if (rc != MPI_SUCCESS) return rc;
  if (info) PMPI_Comm_set_info(*newintercomm, info);
  if (errhandler) PMPI_Comm_set_errhandler(*newintercomm, errhandler);
  return MPI_SUCCESS;
}

int PMPI_Session_create_errhandler(MPI_Session_errhandler_function* session_errhandler_fn,
                                   MPI_Errhandler* errhandler) {
  SLUICE_MPI_CALL;
  const char* fn = "MPI_Session_create_errhandler";
  if (!session_errhandler_fn || !errhandler)
    return session_raise(nullptr, MPI_ERR_ARG, fn, "null handler function or errhandler");
  auto* h = new sluice_errhandler_s;
  h->kind = sluice_errhandler_s::Kind::user;
  h->session_fn = session_errhandler_fn;
  *errhandler = h;
  return MPI_SUCCESS;
}

int PMPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler) {
  SLUICE_MPI_CALL;
  const char* fn = "MPI_Session_set_errhandler";
  if (int rc = check_session(session, fn)) return rc;
  if (!errhandler) return session_raise(session, MPI_ERR_ARG, fn, "invalid errhandler");
  if (!errhandler->predefined) ++errhandler->refs;
  errh_release(session->errh);
  session->errh = errhandler;
  return MPI_SUCCESS;
}

int PMPI_Session_get_errhandler(MPI_Session session, MPI_Errhandler* errhandler) {
  SLUICE_MPI_CALL;
  const char* fn = "MPI_Session_get_errhandler";
  if (int rc = check_session(session, fn)) return rc;
  if (!errhandler) return session_raise(session, MPI_ERR_ARG, fn, "errhandler is NULL");
  if (!session->errh->predefined) ++session->errh->refs;
  *errhandler = session->errh;
  return MPI_SUCCESS;
}

int PMPI_Session_call_errhandler(MPI_Session session, int errorcode) {
  SLUICE_MPI_CALL;
  const char* fn = "MPI_Session_call_errhandler";
  if (int rc = check_session(session, fn)) return rc;
  session_raise(session, errorcode, fn, "MPI_Session_call_errhandler");
  return MPI_SUCCESS;
}

}  // extern "C"

// The MPI_ names: weak, so a profiling library defining them comes first (MPI-3.1
// §14.2); it reaches these definitions as PMPI_.
#pragma weak MPI_Session_init = PMPI_Session_init
#pragma weak MPI_Session_finalize = PMPI_Session_finalize
#pragma weak MPI_Session_get_num_psets = PMPI_Session_get_num_psets
#pragma weak MPI_Session_get_nth_pset = PMPI_Session_get_nth_pset
#pragma weak MPI_Session_get_info = PMPI_Session_get_info
#pragma weak MPI_Session_get_pset_info = PMPI_Session_get_pset_info
#pragma weak MPI_Group_from_session_pset = PMPI_Group_from_session_pset
#pragma weak MPI_Comm_create_from_group = PMPI_Comm_create_from_group
#pragma weak MPI_Intercomm_create_from_groups = PMPI_Intercomm_create_from_groups
#pragma weak MPI_Session_create_errhandler = PMPI_Session_create_errhandler
#pragma weak MPI_Session_set_errhandler = PMPI_Session_set_errhandler
#pragma weak MPI_Session_get_errhandler = PMPI_Session_get_errhandler
#pragma weak MPI_Session_call_errhandler = PMPI_Session_call_errhandler
