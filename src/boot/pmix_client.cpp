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

#include <cstdio>
#include <mutex>
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

class PmixClient final : public IdentifiedBootClient {
 public:
  ~PmixClient() override {
    if (initialized_ && !finalized_) PMIx_Finalize(nullptr, 0);
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
    return true;
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

  pmix_proc_t me_{};
  bool initialized_ = false;
  bool finalized_ = false;
  std::mutex mutex_;
  std::vector<std::pair<std::string, std::string>> pending_;
  std::uint64_t epoch_ = 0;         // fences completed through this client
  std::uint64_t merged_epoch_ = 0;  // epochs whose blobs are in store_
  std::unordered_map<std::string, std::string> store_;
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
