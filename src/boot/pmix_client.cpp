// BootClient over PMIx.
//
// Rank, size and local rank/size come from PMIx job data (PMIX_JOB_SIZE, PMIX_LOCAL_RANK,
// PMIX_LOCAL_SIZE). The Sluice store is a global namespace (get(key) does not say who put
// the key) while PMIx data belongs to the process that put it, so the store travels in
// epochs: put() buffers locally; fence() publishes this rank's buffered pairs as one blob
// under "sluice.kv.<epoch>", then PMIx_Commit + PMIx_Fence with PMIX_COLLECT_DATA. The first
// get() after a fence reads every rank's blob of the new epoch (PMIX_OPTIONAL: already
// local after the collecting fence, so a missing blob fails instead of waiting) and merges
// them in rank order. A get therefore sees exactly the values put before the last completed
// fence, as with sluicerun.
//
// Failure notices (docs/CONFIGURATION.md "When a rank dies"): take_failed_ranks() reports the
// ranks PMIx knows to have failed, from two sources. (1) The standard events
// (PMIX_ERR_PROC_ABORTED, _ABORTED_BY_SIG, _TERM_WO_SYNC), through an event handler.
// (2) A proc-table query (PMIX_QUERY_PROC_TABLE: every rank's state), sent at most every
// SLUICE_PMIX_FAILURE_POLL (200 ms) from take_failed_ranks() and answered on PMIx's thread; a rank
// in an error state (PMIX_PROC_STATE_ERROR and above: aborted, killed by a signal, exited without
// PMIx_Finalize, ...) is failed. The query is what works with Debian's Open MPI 4.1 mpirun
// (`--enable-recovery` keeps the job going): its ORTE does send PMIX_ERR_PROC_ABORTED, but
// with a custom target range under PMIX_RANGE_SESSION, which the PMIx 4.2 server library
// rejects ("PMIX ERROR: BAD-PARAM in pmix_event_notification.c") and no client receives.
//
// Job key: rank 0 draws 128 bits from getrandom() and puts them as "sluice.job_key";
// everyone reads them after the first fence. The key is only as secret as the PMIx store:
// anyone who can read this job's PMIx data (the launcher's daemons, root) can read it.
#include "boot/pmix_client.hpp"

#include <cstdlib>
#include <cstring>
#include <string_view>

#include "boot/boot.hpp"

#if SLUICE_HAVE_PMIX

#include <pmix.h>
#include <sys/random.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "boot/boot_wire.hpp"

namespace sluice::detail {

namespace {

constexpr const char* job_key_name = "sluice.job_key";

std::string status_text(pmix_status_t rc) {
  return PMIx_Error_string(rc);
}

// Shared-memory segment names embed the job id: keep it to portable file-name characters.
std::string job_id_from_namespace(const char* nspace) {
  std::string id = "pmix-";
  for (const char* c = nspace; *c != '\0'; ++c) {
    bool plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                 *c == '-' || *c == '_' || *c == '.';
    id += plain ? *c : '_';
  }
  return id;
}

// Reads an unsigned integer value of any PMIx integer type.
bool value_as_uint(const pmix_value_t* v, std::uint64_t& out) {
  switch (v->type) {
    case PMIX_UINT16:
      out = v->data.uint16;
      return true;
    case PMIX_UINT32:
      out = v->data.uint32;
      return true;
    case PMIX_UINT64:
      out = v->data.uint64;
      return true;
    case PMIX_UINT8:
      out = v->data.uint8;
      return true;
    case PMIX_INT:
      out = static_cast<std::uint64_t>(v->data.integer);
      return true;
    case PMIX_SIZE:
      out = v->data.size;
      return true;
    default:
      return false;
  }
}

// How often take_failed_ranks() may ask for the proc table by default: a round trip to the
// launcher per rank, so not on every call (the engine asks every 10 ms). SLUICE_PMIX_FAILURE_POLL.
constexpr std::uint64_t kFailurePollNs = 200'000'000;

std::uint64_t monotonic_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

class PmixClient final : public IdentifiedBootClient {
 public:
  ~PmixClient() override {
    if (initialized_ && !finalized_) {
      wait_for_query();
      PMIx_Finalize(nullptr, 0);
    }
    if (query_.keys != nullptr) PMIX_INFO_DESTRUCT(&query_qualifier_);
  }

  bool init(std::string& error) {
    pmix_status_t rc = PMIx_Init(&me_, nullptr, 0);
    if (rc != PMIX_SUCCESS) {
      error = "PMIx_Init failed: " + status_text(rc);
      return false;
    }
    initialized_ = true;
    pmix_proc_t job;
    PMIX_LOAD_PROCID(&job, me_.nspace, PMIX_RANK_WILDCARD);
    std::uint64_t size = 0, local_rank = 0, local_size = 0;
    if (!get_uint(job, PMIX_JOB_SIZE, size, error) ||
        !get_uint(me_, PMIX_LOCAL_RANK, local_rank, error) ||
        !get_uint(job, PMIX_LOCAL_SIZE, local_size, error))
      return false;
    id_.rank = static_cast<int>(me_.rank);
    id_.size = static_cast<int>(size);
    id_.local_rank = static_cast<int>(local_rank);
    id_.local_size = static_cast<int>(local_size);
    if (id_.rank < 0 || id_.rank >= id_.size || id_.local_rank >= id_.local_size) {
      error = "inconsistent PMIx job data: rank " + std::to_string(id_.rank) + " of " +
              std::to_string(id_.size) + ", local rank " + std::to_string(id_.local_rank) + " of " +
              std::to_string(id_.local_size);
      return false;
    }
    id_.job_id = job_id_from_namespace(me_.nspace);

    if (id_.rank == 0) {
      std::uint64_t random[2] = {0, 0};
      if (getrandom(random, sizeof random, 0) != sizeof random) {
        error = "cannot read random bytes for the job key";
        return false;
      }
      char key[40];
      std::snprintf(key, sizeof key, "%016llx%016llx", static_cast<unsigned long long>(random[0]),
                    static_cast<unsigned long long>(random[1]));
      pmix_value_t value;
      PMIX_VALUE_CONSTRUCT(&value);
      value.type = PMIX_STRING;
      value.data.string = key;  // PMIx_Put copies it
      rc = PMIx_Put(PMIX_GLOBAL, job_key_name, &value);
      if (rc != PMIX_SUCCESS) {
        error = "PMIx_Put of the job key failed: " + status_text(rc);
        return false;
      }
    }
    if (commit_and_fence() != PMIX_SUCCESS) {
      error = "the PMIx fence that hands out the job key failed";
      return false;
    }
    pmix_proc_t root;
    PMIX_LOAD_PROCID(&root, me_.nspace, 0);
    pmix_value_t* value = nullptr;
    rc = PMIx_Get(&root, job_key_name, nullptr, 0, &value);
    if (rc != PMIX_SUCCESS || value == nullptr || value->type != PMIX_STRING ||
        std::strlen(value->data.string) != bootwire::job_key_size) {
      error = "cannot read the job key from PMIx: " + status_text(rc);
      if (value != nullptr) PMIX_VALUE_RELEASE(value);
      return false;
    }
    id_.job_key = value->data.string;
    PMIX_VALUE_RELEASE(value);
    if (id_.size > 1) register_failure_events();
    return true;
  }

  void set_failure_poll_interval(std::uint64_t ns) override { failure_poll_ns_ = ns; }

  void take_failed_ranks(std::vector<int>& out) override {
    if (id_.size <= 1 || finalized_) return;
    const std::uint64_t now = monotonic_ns();
    if (now - last_query_ns_ >= failure_poll_ns_ &&
        !query_pending_.load(std::memory_order_acquire)) {
      last_query_ns_ = now;
      query_proc_table();
    }
    if (!have_failed_.load(std::memory_order_acquire)) return;
    std::lock_guard lock(failed_mutex_);
    out.insert(out.end(), failed_.begin(), failed_.end());
    failed_.clear();
    have_failed_.store(false, std::memory_order_relaxed);
  }

  Errc put(std::string_view key, std::string_view value) override {
    if (!bootwire::put_fits(key, value)) return Errc::invalid_argument;
    std::lock_guard lock(mutex_);
    if (finalized_) return Errc::peer_dead;
    pending_.emplace_back(std::string(key), std::string(value));
    return Errc::ok;
  }

  Errc fence() override {
    std::lock_guard lock(mutex_);
    if (finalized_) return Errc::peer_dead;
    std::string blob;
    for (const auto& [key, value] : pending_) {
      bootwire::append_u32(blob, static_cast<std::uint32_t>(key.size()));
      bootwire::append_u32(blob, static_cast<std::uint32_t>(value.size()));
      blob += key;
      blob += value;
    }
    pending_.clear();
    ++epoch_;
    pmix_value_t value;
    PMIX_VALUE_CONSTRUCT(&value);
    value.type = PMIX_BYTE_OBJECT;
    value.data.bo.bytes = blob.data();  // PMIx_Put copies it
    value.data.bo.size = blob.size();
    if (PMIx_Put(PMIX_GLOBAL, epoch_key(epoch_).c_str(), &value) != PMIX_SUCCESS)
      return Errc::internal;
    // A failed fence (a process died) is how PMIx reports a broken job.
    return commit_and_fence() == PMIX_SUCCESS ? Errc::ok : Errc::peer_dead;
  }

  bool get(std::string_view key, std::string& value) override {
    std::lock_guard lock(mutex_);
    if (merged_epoch_ < epoch_ && !merge_epochs()) return false;
    auto it = store_.find(std::string(key));
    if (it == store_.end()) return false;
    value = it->second;
    return true;
  }

  Errc finalize() override {
    std::lock_guard lock(mutex_);
    if (finalized_) return Errc::ok;
    finalized_ = true;
    wait_for_query();
    return PMIx_Finalize(nullptr, 0) == PMIX_SUCCESS ? Errc::ok : Errc::internal;
  }

  void abort(int code, std::string_view reason) override {
    std::string text(reason);
    std::fprintf(stderr, "sluice: rank %d abort (code %d): %s\n", id_.rank, code, text.c_str());
    std::fflush(nullptr);
    int status = code & 0xff;
    if (status == 0) status = 1;
    // PMIx_Abort asks the launcher to end the whole job; it may return (e.g. not
    // supported), so exit either way. Open MPI 4.1's mpirun (ORTE, which sets
    // OMPI_COMM_WORLD_RANK) crashed or hung in about 1 of 15 PMIx_Abort calls here; it ends
    // the job on a non-zero exit anyway, so there the exit alone is the abort.
    if (std::getenv("OMPI_COMM_WORLD_RANK") == nullptr)
      PMIx_Abort(status, text.c_str(), nullptr, 0);
    std::_Exit(status);
  }

 private:
  static std::string epoch_key(std::uint64_t epoch) { return "sluice.kv." + std::to_string(epoch); }

  bool get_uint(const pmix_proc_t& proc, const char* key, std::uint64_t& out, std::string& error) {
    pmix_value_t* value = nullptr;
    pmix_status_t rc = PMIx_Get(&proc, key, nullptr, 0, &value);
    bool ok = rc == PMIX_SUCCESS && value != nullptr && value_as_uint(value, out);
    if (value != nullptr) PMIX_VALUE_RELEASE(value);
    if (!ok) error = std::string("cannot read ") + key + " from PMIx: " + status_text(rc);
    return ok;
  }

  pmix_status_t commit_and_fence() {
    pmix_status_t rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) return rc;
    pmix_info_t info;
    bool collect = true;
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    rc = PMIx_Fence(nullptr, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    return rc;
  }

  // Reads every rank's blob of each epoch not merged yet, in rank order.
  bool merge_epochs() {
    pmix_info_t info;
    bool optional = true;
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_OPTIONAL, &optional, PMIX_BOOL);
    bool ok = true;
    for (; ok && merged_epoch_ < epoch_; ++merged_epoch_) {
      const std::string name = epoch_key(merged_epoch_ + 1);
      for (int r = 0; ok && r < id_.size; ++r) {
        pmix_proc_t proc;
        PMIX_LOAD_PROCID(&proc, me_.nspace, static_cast<pmix_rank_t>(r));
        pmix_value_t* value = nullptr;
        pmix_status_t rc = PMIx_Get(&proc, name.c_str(), &info, 1, &value);
        ok = rc == PMIX_SUCCESS && value != nullptr && value->type == PMIX_BYTE_OBJECT &&
             merge_blob(std::string_view(value->data.bo.bytes, value->data.bo.size));
        if (value != nullptr) PMIX_VALUE_RELEASE(value);
        if (!ok)
          std::fprintf(stderr, "sluice: cannot read rank %d's bootstrap data from PMIx: %s\n", r,
                       status_text(rc).c_str());
      }
    }
    PMIX_INFO_DESTRUCT(&info);
    return ok;
  }

  bool merge_blob(std::string_view blob) {
    while (!blob.empty()) {
      std::uint32_t key_size = 0, value_size = 0;
      if (!bootwire::take_u32(blob, key_size) || !bootwire::take_u32(blob, value_size) ||
          blob.size() < static_cast<std::size_t>(key_size) + value_size)
        return false;
      store_[std::string(blob.substr(0, key_size))] =
          std::string(blob.substr(key_size, value_size));
      blob.remove_prefix(static_cast<std::size_t>(key_size) + value_size);
    }
    return true;
  }

  // ---- failure notices (PMIx's thread calls the callbacks) ----

  // A rank of this job failed: queue it for take_failed_ranks() (once).
  void note_failed(const pmix_proc_t& proc) {
    if (!PMIX_CHECK_NSPACE(proc.nspace, me_.nspace) || proc.rank == me_.rank ||
        proc.rank >= static_cast<pmix_rank_t>(id_.size))
      return;
    std::lock_guard lock(failed_mutex_);
    if (reported_.empty()) reported_.assign(static_cast<std::size_t>(id_.size), false);
    if (reported_[proc.rank]) return;
    reported_[proc.rank] = true;
    failed_.push_back(static_cast<int>(proc.rank));
    have_failed_.store(true, std::memory_order_release);
  }

  void register_failure_events() {
    pmix_status_t codes[] = {PMIX_ERR_PROC_ABORTED, PMIX_ERR_PROC_ABORTED_BY_SIG,
                             PMIX_ERR_PROC_TERM_WO_SYNC};
    pmix_info_t info;
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_EVENT_RETURN_OBJECT, this, PMIX_POINTER);
    // Blocking registration (no callback). Failing it only loses this source of notices.
    const pmix_status_t rc = PMIx_Register_event_handler(codes, sizeof codes / sizeof codes[0],
                                                         &info, 1, on_event, nullptr, nullptr);
    if (rc < 0 && rc != PMIX_OPERATION_SUCCEEDED)
      std::fprintf(stderr, "sluice: PMIx failure events not available: %s\n",
                   status_text(rc).c_str());
    PMIX_INFO_DESTRUCT(&info);
  }

  static void on_event(std::size_t, pmix_status_t, const pmix_proc_t* source, pmix_info_t info[],
                       std::size_t ninfo, pmix_info_t*, std::size_t,
                       pmix_event_notification_cbfunc_fn_t done, void* done_data) {
    PmixClient* self = nullptr;
    const pmix_proc_t* affected = nullptr;
    for (std::size_t i = 0; i < ninfo; ++i) {
      if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_RETURN_OBJECT) && info[i].value.type == PMIX_POINTER)
        self = static_cast<PmixClient*>(info[i].value.data.ptr);
      else if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) &&
               info[i].value.type == PMIX_PROC && info[i].value.data.proc != nullptr)
        affected = info[i].value.data.proc;
    }
    if (affected == nullptr) affected = source;
    if (self != nullptr && affected != nullptr) self->note_failed(*affected);
    // Let other handlers (e.g. another library's) see it too.
    if (done != nullptr) done(PMIX_SUCCESS, nullptr, 0, nullptr, nullptr, done_data);
  }

  void query_proc_table() {
    if (query_.keys == nullptr) {  // built once; PMIx may read it until the answer
      query_keys_[0] = const_cast<char*>(PMIX_QUERY_PROC_TABLE);
      query_.keys = query_keys_;
      PMIX_INFO_LOAD(&query_qualifier_, PMIX_NSPACE, me_.nspace, PMIX_STRING);
      query_.qualifiers = &query_qualifier_;
      query_.nqual = 1;
    }
    query_pending_.store(true, std::memory_order_release);
    // Answered on PMIx's thread.
    if (PMIx_Query_info_nb(&query_, 1, on_proc_table, this) != PMIX_SUCCESS)
      query_pending_.store(false, std::memory_order_release);
  }

  // The proc table: an array of pmix_info_t, each holding one pmix_proc_info_t (Open MPI
  // 4.1), or directly an array of pmix_proc_info_t.
  static void on_proc_table(pmix_status_t status, pmix_info_t* info, std::size_t ninfo,
                            void* cbdata, pmix_release_cbfunc_t release, void* release_data) {
    auto* self = static_cast<PmixClient*>(cbdata);
    for (std::size_t i = 0; status == PMIX_SUCCESS && i < ninfo; ++i) {
      if (!PMIX_CHECK_KEY(&info[i], PMIX_QUERY_PROC_TABLE) ||
          info[i].value.type != PMIX_DATA_ARRAY || info[i].value.data.darray == nullptr)
        continue;
      const pmix_data_array_t* table = info[i].value.data.darray;
      for (std::size_t k = 0; table->array != nullptr && k < table->size; ++k) {
        const pmix_proc_info_t* p = nullptr;
        if (table->type == PMIX_PROC_INFO) {
          p = static_cast<const pmix_proc_info_t*>(table->array) + k;
        } else if (table->type == PMIX_INFO) {
          const pmix_info_t& entry = static_cast<const pmix_info_t*>(table->array)[k];
          if (entry.value.type == PMIX_PROC_INFO) p = entry.value.data.pinfo;
        }
        if (p != nullptr && p->state >= PMIX_PROC_STATE_ERROR) self->note_failed(p->proc);
      }
    }
    if (release != nullptr) release(release_data);
    self->query_pending_.store(false, std::memory_order_release);
  }

  // Before PMIx_Finalize: the answer's callback uses this object.
  void wait_for_query() {
    for (int i = 0; i < 2000 && query_pending_.load(std::memory_order_acquire); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }

  pmix_proc_t me_{};
  bool initialized_ = false;
  bool finalized_ = false;
  std::mutex mutex_;
  std::vector<std::pair<std::string, std::string>> pending_;
  std::uint64_t epoch_ = 0;         // fences completed through this client
  std::uint64_t merged_epoch_ = 0;  // epochs whose blobs are in store_
  std::unordered_map<std::string, std::string> store_;
  std::atomic<bool> query_pending_{false};
  pmix_query_t query_{};  // the proc-table query (keys == nullptr until first sent)
  char* query_keys_[2] = {nullptr, nullptr};
  pmix_info_t query_qualifier_{};
  std::uint64_t last_query_ns_ = 0;
  std::uint64_t failure_poll_ns_ = kFailurePollNs;
  std::mutex failed_mutex_;  // PMIx's thread adds, the engine takes
  std::atomic<bool> have_failed_{false};
  std::vector<int> failed_;
  std::vector<bool> reported_;  // by rank: already queued once
};

}  // namespace

std::unique_ptr<BootClient> make_pmix_client(std::string& error) {
  auto client = std::make_unique<PmixClient>();
  if (!client->init(error)) return nullptr;
  return client;
}

}  // namespace sluice::detail

#else  // !SLUICE_HAVE_PMIX

namespace sluice::detail {

std::unique_ptr<BootClient> make_pmix_client(std::string& error) {
  error =
      "started by a PMIx launcher, but this Sluice was built without PMIx (install libpmix-dev "
      "and rebuild), so it cannot join the job; start it with sluicerun instead";
  return nullptr;
}

}  // namespace sluice::detail

#endif

namespace sluice::detail {

bool pmix_in_environment() {
  const char* rank = std::getenv("PMIX_RANK");
  const char* nspace = std::getenv("PMIX_NAMESPACE");
  return rank != nullptr && *rank != '\0' && nspace != nullptr && *nspace != '\0';
}

}  // namespace sluice::detail
