// Environment: init/finalize, thread level, versions, timers, info objects, attributes.
//
// Thread level: MPI_Init_thread provides what is asked, up to MPI_THREAD_MULTIPLE (one
// uncontended lock per call, see mpi_internal.hpp) when every binding takes the lock.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include "mpi/big_lock.hpp"
#include "mpi/mpi_internal.hpp"
#include "sluice/sluice.hpp"

// Defined (non-zero) by the collectives' bindings once each of their MPI functions starts
// with SLUICE_MPI_CALL; weak so that its absence caps the thread level at SERIALIZED.
extern "C" {
extern const int sluice_mpi_coll_thread_safe __attribute__((weak));
}

int sluice_mpi_in_place_marker = 0;
sluice_message_s sluice_message_no_proc;
sluice_info_s sluice_info_env{{}, true};

namespace sluice::mpi {

bool g_initialized = false;
bool g_finalized = false;
bool g_world_model = false;
bool g_world_finalized = false;
int g_live_sessions = 0;

namespace {

// Static links: programs refer to the predefined objects weakly (mpi.h), and a weak
// reference never pulls a member out of an archive. This object (MPI_Init's) refers to all
// of them, so every object defining one comes along with it.
[[gnu::used]] const void* const kPredefinedObjects[] = {&sluice_comm_world,
                                                        &sluice_comm_self,
                                                        &sluice_group_empty,
                                                        &sluice_errh_fatal,
                                                        &sluice_errh_return,
                                                        &sluice_errh_abort,
                                                        &sluice_dt_char,
                                                        &sluice_dt_signed_char,
                                                        &sluice_dt_unsigned_char,
                                                        &sluice_dt_byte,
                                                        &sluice_dt_wchar,
                                                        &sluice_dt_short,
                                                        &sluice_dt_unsigned_short,
                                                        &sluice_dt_int,
                                                        &sluice_dt_unsigned,
                                                        &sluice_dt_long,
                                                        &sluice_dt_unsigned_long,
                                                        &sluice_dt_long_long,
                                                        &sluice_dt_unsigned_long_long,
                                                        &sluice_dt_float,
                                                        &sluice_dt_double,
                                                        &sluice_dt_long_double,
                                                        &sluice_dt_c_bool,
                                                        &sluice_dt_int8_t,
                                                        &sluice_dt_int16_t,
                                                        &sluice_dt_int32_t,
                                                        &sluice_dt_int64_t,
                                                        &sluice_dt_uint8_t,
                                                        &sluice_dt_uint16_t,
                                                        &sluice_dt_uint32_t,
                                                        &sluice_dt_uint64_t,
                                                        &sluice_dt_c_float_complex,
                                                        &sluice_dt_c_double_complex,
                                                        &sluice_dt_c_long_double_complex,
                                                        &sluice_dt_packed,
                                                        &sluice_dt_aint,
                                                        &sluice_dt_offset,
                                                        &sluice_dt_count,
                                                        &sluice_dt_float_int,
                                                        &sluice_dt_double_int,
                                                        &sluice_dt_long_int,
                                                        &sluice_dt_2int,
                                                        &sluice_dt_short_int,
                                                        &sluice_dt_long_double_int,
                                                        &sluice_dt_integer,
                                                        &sluice_dt_real,
                                                        &sluice_dt_double_precision,
                                                        &sluice_dt_complex,
                                                        &sluice_dt_double_complex,
                                                        &sluice_dt_logical,
                                                        &sluice_dt_character,
                                                        &sluice_dt_real4,
                                                        &sluice_dt_real8,
                                                        &sluice_dt_integer1,
                                                        &sluice_dt_integer2,
                                                        &sluice_dt_integer4,
                                                        &sluice_dt_integer8,
                                                        &sluice_dt_complex8,
                                                        &sluice_dt_complex16,
                                                        &sluice_dt_real16,
                                                        &sluice_dt_complex32,
                                                        &sluice_dt_integer16,
                                                        &sluice_dt_2integer,
                                                        &sluice_dt_2real,
                                                        &sluice_dt_2double_precision,
                                                        &sluice_dt_cxx_bool,
                                                        &sluice_dt_cxx_float_complex,
                                                        &sluice_dt_cxx_double_complex,
                                                        &sluice_dt_cxx_long_double_complex,
                                                        &sluice_op_max,
                                                        &sluice_op_min,
                                                        &sluice_op_sum,
                                                        &sluice_op_prod,
                                                        &sluice_op_land,
                                                        &sluice_op_band,
                                                        &sluice_op_lor,
                                                        &sluice_op_bor,
                                                        &sluice_op_lxor,
                                                        &sluice_op_bxor,
                                                        &sluice_op_maxloc,
                                                        &sluice_op_minloc,
                                                        &sluice_op_replace,
                                                        &sluice_op_no_op,
                                                        &sluice_message_no_proc,
                                                        &sluice_info_env,
                                                        &sluice_mpi_in_place_marker,
                                                        &sluice_mpi_unweighted_marker,
                                                        &sluice_mpi_weights_empty_marker};

std::unique_ptr<Session> g_session;
int g_thread_level = MPI_THREAD_SINGLE;
std::thread::id g_main_thread;
int g_pcontrol_level = 1;

// Predefined attribute values (Comm_get_attr hands out their addresses).
int g_attr_tag_ub = sluice::max_tag;
int g_attr_wtime_global = 0;
int g_attr_appnum = 0;
int g_attr_universe = 1;
int g_attr_host = MPI_PROC_NULL;
int g_attr_io = MPI_ANY_SOURCE;

int init_common(int* argc, char*** argv, const char* function) {
  if (g_finalized || g_world_finalized)
    abort_job(MPI_ERR_OTHER, std::string(function) + ": MPI was already finalized");
  if (g_world_model) return raise(nullptr, MPI_ERR_OTHER, function, "MPI is already initialized");
  if (int rc = library_start(function)) return rc;
  g_world_model = true;
  sluice_info_env.entries.clear();
  if (argc && argv && *argc > 0 && *argv && (*argv)[0]) {
    sluice_info_env.entries.emplace_back("command", (*argv)[0]);
    std::string args;
    for (int i = 1; i < *argc; ++i) args += (i > 1 ? " " : "") + std::string((*argv)[i]);
    sluice_info_env.entries.emplace_back("argv", args);
  }
  sluice_info_env.entries.emplace_back("maxprocs", std::to_string(engine().size()));
  char wd[4096];
  if (getcwd(wd, sizeof wd)) sluice_info_env.entries.emplace_back("wdir", wd);

  return MPI_SUCCESS;
}

// Info objects work before MPI_Init and after MPI_Finalize too (MPI-4.0 §11.2.1): they
// touch nothing of the engine.
int check_info(MPI_Info info, const char* function) {
  if (!info) return raise(nullptr, MPI_ERR_INFO, function, "invalid info MPI_INFO_NULL");
  return MPI_SUCCESS;
}

int check_key(const char* key, const char* function) {
  if (!key) return raise(nullptr, MPI_ERR_INFO_KEY, function, "null info key");
  const std::size_t n = std::strlen(key);
  if (n == 0 || n > MPI_MAX_INFO_KEY)
    return raisef(nullptr, MPI_ERR_INFO_KEY, function, "invalid info key length %zu (1..%d)", n,
                  MPI_MAX_INFO_KEY);
  return MPI_SUCCESS;
}

auto find_key(MPI_Info info, const char* key) {
  return std::find_if(info->entries.begin(), info->entries.end(),
                      [&](const auto& kv) { return kv.first == key; });
}

}  // namespace

// Implemented in p2p.cpp / comm.cpp.
void finalize_p2p();
void finalize_comms();

int library_start(const char* function) {
  if (g_finalized) abort_job(MPI_ERR_OTHER, std::string(function) + ": MPI was already finalized");
  if (g_initialized) return MPI_SUCCESS;
  try {
    g_session = std::make_unique<Session>();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", function, e.what());
    return MPI_ERR_OTHER;
  }
  g_initialized = true;
  g_main_thread = std::this_thread::get_id();
  init_predefined_comms();
  g_attr_universe = engine().size();
  tool_engine_started();
  return MPI_SUCCESS;
}

int provide_thread_level(int required) {
  // MULTIPLE is provided through the big lock (mpi_internal.hpp); lower levels skip it.
  // Only when every binding takes it: the collectives declare so by defining
  // sluice_mpi_coll_thread_safe (see below); otherwise SERIALIZED is the honest answer.
  // A level once provided stays (a session may have asked for more than MPI_Init).
  const int highest = &sluice_mpi_coll_thread_safe != nullptr && sluice_mpi_coll_thread_safe
                          ? MPI_THREAD_MULTIPLE
                          : MPI_THREAD_SERIALIZED;
  g_thread_level =
      std::max(g_thread_level, std::min(std::max(required, MPI_THREAD_SINGLE), highest));
  g_threaded = g_thread_level == MPI_THREAD_MULTIPLE;
  return g_thread_level;
}

int thread_level() {
  return g_thread_level;
}

void library_stop() {
  // MPI_COMM_SELF's attributes go first: libraries use their delete callbacks as
  // finalize hooks, and those may still communicate.
  delete_attrs(MPI_COMM_SELF);
  delete_attrs(MPI_COMM_WORLD);
  finalize_p2p();  // buffered and freed sends reach their peers
  finalize_comms();
  // The engine drains its sends and runs a barrier. Explicitly: destroying the Session while
  // the process exits (a program that calls MPI_Finalize from an atexit handler) would leave
  // the job instead.
  engine().finalize();
  tool_engine_ending();
  g_session.reset();
  g_initialized = false;
  g_finalized = true;
  g_threaded = false;
}

}  // namespace sluice::mpi

using namespace sluice::mpi;

extern "C" {

int PMPI_Init(int* argc, char*** argv) {
  int rc = init_common(argc, argv, "MPI_Init");
  if (rc == MPI_SUCCESS) provide_thread_level(MPI_THREAD_SINGLE);
  return rc;
}

int PMPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  int rc = init_common(argc, argv, "MPI_Init_thread");
  if (rc != MPI_SUCCESS) return rc;
  const int level = provide_thread_level(required);
  if (provided) *provided = level;
  return MPI_SUCCESS;
}

// The World Model's state (MPI-4.0 §11.2): sessions alone leave both false.
int PMPI_Initialized(int* flag) {
  *flag = g_world_model ? 1 : 0;
  return MPI_SUCCESS;
}

int PMPI_Finalized(int* flag) {
  *flag = g_world_finalized || g_finalized ? 1 : 0;
  return MPI_SUCCESS;
}

int PMPI_Finalize(void) {
  SLUICE_MPI_CALL;
  if (!g_world_model) abort_not_initialized("MPI_Finalize");
  // MPI_COMM_SELF's attributes go first, while MPI is still initialized and not finalized:
  // libraries use their delete callbacks as finalize hooks, and those may communicate.
  delete_attrs(MPI_COMM_SELF);
  delete_attrs(MPI_COMM_WORLD);
  g_world_model = false;
  g_world_finalized = true;
  // Sessions still open keep the library running until the last MPI_Session_finalize.
  if (g_live_sessions == 0) library_stop();
  return MPI_SUCCESS;
}

int PMPI_Abort(MPI_Comm comm, int errorcode) {
  char msg[160];
  std::snprintf(msg, sizeof msg, "MPI_Abort called on %s with error code %d",
                comm && comm->valid() ? comm_label(comm) : "an invalid communicator", errorcode);
  // Through the launcher: it ends the whole job, also under --enable-recovery, where a rank
  // that merely exits is a failure the others survive.
  if (initialized()) engine().abort(errorcode, msg);
  abort_job(errorcode, msg);
}

int PMPI_Query_thread(int* provided) {
  *provided = g_thread_level;
  return MPI_SUCCESS;
}

int PMPI_Is_thread_main(int* flag) {
  *flag = std::this_thread::get_id() == g_main_thread ? 1 : 0;
  return MPI_SUCCESS;
}

int PMPI_Get_processor_name(char* name, int* resultlen) {
  SLUICE_MPI_CALL;
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  if (gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "localhost");
  std::snprintf(name, MPI_MAX_PROCESSOR_NAME, "%s", host);
  *resultlen = static_cast<int>(std::strlen(name));
  return MPI_SUCCESS;
}

int PMPI_Get_version(int* version, int* subversion) {
  *version = MPI_VERSION;
  *subversion = MPI_SUBVERSION;
  return MPI_SUCCESS;
}

int PMPI_Get_library_version(char* version, int* resultlen) {
  SLUICE_MPI_CALL;
  std::snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                "Sluice 0.1.0 (MPI %d.%d, parts of MPI-4.0; C, mpif.h and mpi module bindings; "
                "up to MPI_THREAD_MULTIPLE)",
                MPI_VERSION, MPI_SUBVERSION);
  *resultlen = static_cast<int>(std::strlen(version));
  return MPI_SUCCESS;
}

double PMPI_Wtime(void) {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

double PMPI_Wtick(void) {
  timespec ts{};
  clock_getres(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

namespace {
// MPI_Alloc_mem's regions (base -> mapped length, 0 for a small block from malloc): their own
// mappings, so the engine can keep them registered (no allocator reuses or trims them behind
// its back) and MPI_Free_mem knows the length. Outlives the engine: memory may be freed after
// MPI_Finalize.
std::mutex g_alloc_mem_mutex;
std::unordered_map<void*, std::size_t> g_alloc_mem;
}  // namespace

int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void* baseptr) {
  SLUICE_MPI_CALL;
  if (size < 0)
    return raisef(nullptr, MPI_ERR_SIZE, "MPI_Alloc_mem", "invalid size %ld", (long)size);
  // Small blocks come from malloc and are not registered: a mapping each would exhaust
  // vm.max_map_count for programs that allocate many, and no driver sends so little
  // zero-copy (tcp: SLUICE_TCP_ZEROCOPY_MIN, 32 KiB by default).
  constexpr std::size_t kMapMin = 32 * 1024;
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const auto bytes = std::max<std::size_t>(static_cast<std::size_t>(size), 1);
  const std::size_t length = bytes < kMapMin ? 0 : (bytes + page - 1) & ~(page - 1);
  void* p = length
                ? mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                : std::malloc(bytes);
  if (p == MAP_FAILED || !p)
    return raisef(nullptr, MPI_ERR_NO_MEM, "MPI_Alloc_mem", "cannot allocate %ld bytes",
                  (long)size);
  {
    std::lock_guard lock(g_alloc_mem_mutex);
    g_alloc_mem.emplace(p, length);  // 0: from malloc
  }
  // Registered once here (where a route pins memory) and kept until MPI_Free_mem, as real
  // MPIs do: rendezvous messages from it then skip registration.
  if (sluice::detail::Engine* e = sluice::detail::current_engine(); e && length)
    e->keep_registered({static_cast<const std::byte*>(p), length});
  *static_cast<void**>(baseptr) = p;
  return MPI_SUCCESS;
}

int PMPI_Free_mem(void* base) {
  SLUICE_MPI_CALL;
  if (!base) return MPI_SUCCESS;
  std::size_t length = 0;
  {
    std::lock_guard lock(g_alloc_mem_mutex);
    auto it = g_alloc_mem.find(base);
    if (it == g_alloc_mem.end())
      return raisef(nullptr, MPI_ERR_ARG, "MPI_Free_mem", "%p was not returned by MPI_Alloc_mem",
                    base);
    length = it->second;
    g_alloc_mem.erase(it);
  }
  if (length == 0) {
    std::free(base);
    return MPI_SUCCESS;
  }
  if (sluice::detail::Engine* e = sluice::detail::current_engine()) e->release_registered(base);
  munmap(base, length);
  return MPI_SUCCESS;
}

int MPIX_Sluice_counter(const char* name, unsigned long long* value) {
  SLUICE_MPI_CALL;
  const sluice::detail::Engine* e = sluice::detail::current_engine();
  const auto v = e && name ? e->stats_registry().value(name) : std::nullopt;
  if (!v || !value) return MPI_ERR_ARG;
  *value = *v;
  return MPI_SUCCESS;
}

int PMPI_Pcontrol(const int level, ...) {
  SLUICE_MPI_CALL;
  // No profiling layer is attached; the level is recorded (MPI-3.1 §14.2.4 leaves the
  // effect to the profiler).
  g_pcontrol_level = level;
  return MPI_SUCCESS;
}

int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void* attribute_val, int* flag) {
  SLUICE_MPI_CALL;
  if (int rc = check_comm(comm, "MPI_Comm_get_attr")) return rc;
  int* value = nullptr;
  switch (comm_keyval) {
    case MPI_TAG_UB:
      value = &g_attr_tag_ub;
      break;
    case MPI_WTIME_IS_GLOBAL:
      value = &g_attr_wtime_global;
      break;
    case MPI_APPNUM:
      value = &g_attr_appnum;
      break;
    case MPI_UNIVERSE_SIZE:
      value = &g_attr_universe;
      break;
    case MPI_HOST:
      value = &g_attr_host;
      break;
    case MPI_IO:
      value = &g_attr_io;
      break;
    case MPI_LASTUSEDCODE:
      value = &g_last_used_class;
      break;
    default:
      if (get_user_attr(comm, comm_keyval, attribute_val, flag) == MPI_SUCCESS) return MPI_SUCCESS;
      return raisef(comm, MPI_ERR_KEYVAL, "MPI_Comm_get_attr", "invalid keyval %d", comm_keyval);
  }
  *static_cast<int**>(attribute_val) = value;
  *flag = 1;
  return MPI_SUCCESS;
}

int PMPI_Attr_get(MPI_Comm comm, int keyval, void* attribute_val, int* flag) {
  return PMPI_Comm_get_attr(comm, keyval, attribute_val, flag);
}

// ---- info objects ----------------------------------------------------------------------

int PMPI_Info_create(MPI_Info* info) {
  SLUICE_MPI_CALL;
  if (!info) return raise(nullptr, MPI_ERR_ARG, "MPI_Info_create", "info is NULL");
  *info = new sluice_info_s;
  return MPI_SUCCESS;
}

int PMPI_Info_set(MPI_Info info, const char* key, const char* value) {
  SLUICE_MPI_CALL;
  if (int rc = check_info(info, "MPI_Info_set")) return rc;
  if (int rc = check_key(key, "MPI_Info_set")) return rc;
  if (info->predefined)
    return raise(nullptr, MPI_ERR_INFO, "MPI_Info_set", "MPI_INFO_ENV is read-only");
  if (!value || std::strlen(value) == 0 || std::strlen(value) > MPI_MAX_INFO_VAL)
    return raise(nullptr, MPI_ERR_INFO_VALUE, "MPI_Info_set", "invalid info value length");
  auto it = find_key(info, key);
  if (it != info->entries.end())
    it->second = value;
  else
    info->entries.emplace_back(key, value);
  return MPI_SUCCESS;
}

int PMPI_Info_get(MPI_Info info, const char* key, int valuelen, char* value, int* flag) {
  SLUICE_MPI_CALL;
  if (int rc = check_info(info, "MPI_Info_get")) return rc;
  if (int rc = check_key(key, "MPI_Info_get")) return rc;
  if (valuelen < 0)
    return raisef(nullptr, MPI_ERR_ARG, "MPI_Info_get", "invalid valuelen %d", valuelen);
  auto it = find_key(info, key);
  *flag = it != info->entries.end();
  if (*flag) {
    const std::size_t n = std::min<std::size_t>(it->second.size(), valuelen);
    std::memcpy(value, it->second.data(), n);
    value[n] = '\0';
  }
  return MPI_SUCCESS;
}

// MPI-4.0 §10: the value's length + 1 comes back in *buflen; at most *buflen - 1 characters
// are copied (none when *buflen is 0, so that value may be NULL).
int PMPI_Info_get_string(MPI_Info info, const char* key, int* buflen, char* value, int* flag) {
  SLUICE_MPI_CALL;
  const char* f = "MPI_Info_get_string";
  if (int rc = check_info(info, f)) return rc;
  if (int rc = check_key(key, f)) return rc;
  if (!buflen || !flag) return raise(nullptr, MPI_ERR_ARG, f, "buflen or flag is NULL");
  if (*buflen < 0) return raisef(nullptr, MPI_ERR_ARG, f, "invalid buflen %d", *buflen);
  if (*buflen > 0 && !value) return raise(nullptr, MPI_ERR_ARG, f, "value is NULL");
  auto it = find_key(info, key);
  *flag = it != info->entries.end();
  if (!*flag) return MPI_SUCCESS;
  if (*buflen > 0) {
    const std::size_t n = std::min<std::size_t>(it->second.size(), *buflen - 1);
    std::memcpy(value, it->second.data(), n);
    value[n] = '\0';
  }
  *buflen = static_cast<int>(it->second.size()) + 1;
  return MPI_SUCCESS;
}

// MPI-4.0 §11.2.3: what MPI_INFO_ENV holds, for a program that has not called MPI_Init yet
// (command, argv, maxprocs from the launcher's SLUICE_SIZE, wdir).
int PMPI_Info_create_env(int argc, char* argv[], MPI_Info* info) {
  SLUICE_MPI_CALL;
  if (!info) return raise(nullptr, MPI_ERR_ARG, "MPI_Info_create_env", "info is NULL");
  auto* created = new sluice_info_s;
  if (argc > 0 && argv && argv[0]) {
    created->entries.emplace_back("command", argv[0]);
    std::string args;
    for (int i = 1; i < argc && argv[i]; ++i) args += (i > 1 ? " " : "") + std::string(argv[i]);
    created->entries.emplace_back("argv", args);
  }
  if (initialized())
    created->entries.emplace_back("maxprocs", std::to_string(engine().size()));
  else if (const char* size = std::getenv("SLUICE_SIZE"))
    created->entries.emplace_back("maxprocs", size);
  char wd[4096];
  if (getcwd(wd, sizeof wd)) created->entries.emplace_back("wdir", wd);
  *info = created;
  return MPI_SUCCESS;
}

int PMPI_Info_get_valuelen(MPI_Info info, const char* key, int* valuelen, int* flag) {
  SLUICE_MPI_CALL;
  if (int rc = check_info(info, "MPI_Info_get_valuelen")) return rc;
  if (int rc = check_key(key, "MPI_Info_get_valuelen")) return rc;
  auto it = find_key(info, key);
  *flag = it != info->entries.end();
  if (*flag) *valuelen = static_cast<int>(it->second.size());
  return MPI_SUCCESS;
}

int PMPI_Info_delete(MPI_Info info, const char* key) {
  SLUICE_MPI_CALL;
  if (int rc = check_info(info, "MPI_Info_delete")) return rc;
  if (int rc = check_key(key, "MPI_Info_delete")) return rc;
  if (info->predefined)
    return raise(nullptr, MPI_ERR_INFO, "MPI_Info_delete", "MPI_INFO_ENV is read-only");
  auto it = find_key(info, key);
  if (it == info->entries.end())
    return raisef(nullptr, MPI_ERR_INFO_NOKEY, "MPI_Info_delete", "no key '%s'", key);
  info->entries.erase(it);
  return MPI_SUCCESS;
}

int PMPI_Info_get_nkeys(MPI_Info info, int* nkeys) {
  SLUICE_MPI_CALL;
  if (int rc = check_info(info, "MPI_Info_get_nkeys")) return rc;
  *nkeys = static_cast<int>(info->entries.size());
  return MPI_SUCCESS;
}

int PMPI_Info_get_nthkey(MPI_Info info, int n, char* key) {
  SLUICE_MPI_CALL;
  if (int rc = check_info(info, "MPI_Info_get_nthkey")) return rc;
  if (n < 0 || n >= static_cast<int>(info->entries.size()))
    return raisef(nullptr, MPI_ERR_ARG, "MPI_Info_get_nthkey",
                  "invalid key index %d (info has %zu keys)", n, info->entries.size());
  std::snprintf(key, MPI_MAX_INFO_KEY + 1, "%s", info->entries[n].first.c_str());
  return MPI_SUCCESS;
}

int PMPI_Info_dup(MPI_Info info, MPI_Info* newinfo) {
  SLUICE_MPI_CALL;
  if (int rc = check_info(info, "MPI_Info_dup")) return rc;
  auto* copy = new sluice_info_s;
  copy->entries = info->entries;
  *newinfo = copy;
  return MPI_SUCCESS;
}

int PMPI_Info_free(MPI_Info* info) {
  SLUICE_MPI_CALL;
  if (!info) return raise(nullptr, MPI_ERR_INFO, "MPI_Info_free", "null info pointer");
  if (int rc = check_info(*info, "MPI_Info_free")) return rc;
  if (!(*info)->predefined) delete *info;
  *info = MPI_INFO_NULL;
  return MPI_SUCCESS;
}

}  // extern "C"

// The MPI_ names: weak, so a profiling library defining them comes first (MPI-3.1
// §14.2); it reaches these definitions as PMPI_.
#pragma weak MPI_Init = PMPI_Init
#pragma weak MPI_Init_thread = PMPI_Init_thread
#pragma weak MPI_Initialized = PMPI_Initialized
#pragma weak MPI_Finalized = PMPI_Finalized
#pragma weak MPI_Finalize = PMPI_Finalize
#pragma weak MPI_Abort = PMPI_Abort
#pragma weak MPI_Query_thread = PMPI_Query_thread
#pragma weak MPI_Is_thread_main = PMPI_Is_thread_main
#pragma weak MPI_Get_processor_name = PMPI_Get_processor_name
#pragma weak MPI_Get_version = PMPI_Get_version
#pragma weak MPI_Get_library_version = PMPI_Get_library_version
#pragma weak MPI_Wtime = PMPI_Wtime
#pragma weak MPI_Wtick = PMPI_Wtick
#pragma weak MPI_Alloc_mem = PMPI_Alloc_mem
#pragma weak MPI_Free_mem = PMPI_Free_mem
#pragma weak MPI_Pcontrol = PMPI_Pcontrol
#pragma weak MPI_Comm_get_attr = PMPI_Comm_get_attr
#pragma weak MPI_Attr_get = PMPI_Attr_get
#pragma weak MPI_Info_create = PMPI_Info_create
#pragma weak MPI_Info_set = PMPI_Info_set
#pragma weak MPI_Info_get = PMPI_Info_get
#pragma weak MPI_Info_get_valuelen = PMPI_Info_get_valuelen
#pragma weak MPI_Info_delete = PMPI_Info_delete
#pragma weak MPI_Info_get_nkeys = PMPI_Info_get_nkeys
#pragma weak MPI_Info_get_nthkey = PMPI_Info_get_nthkey
#pragma weak MPI_Info_dup = PMPI_Info_dup
#pragma weak MPI_Info_free = PMPI_Info_free
#pragma weak MPI_Info_get_string = PMPI_Info_get_string
#pragma weak MPI_Info_create_env = PMPI_Info_create_env
