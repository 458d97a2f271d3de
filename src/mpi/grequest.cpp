// Generalized requests (MPI-3.1 §12.2): a request the program completes itself
// (MPI_Grequest_complete), waited for and tested like any other. It is an AsyncOp whose
// test() is the completion flag; on completion the query callback fills the status (not
// for a request the program freed), and the free callback runs when the request goes away
// (its completion reported, or freed and complete), after the query callback.
#include <memory>

#include "mpi/big_lock.hpp"
#include "mpi/mpi_internal.hpp"

namespace sluice::mpi {
namespace {

class GeneralizedRequest final : public AsyncOp {
 public:
  GeneralizedRequest(MPI_Grequest_query_function* query, MPI_Grequest_free_function* free_fn,
                     MPI_Grequest_cancel_function* cancel_fn, void* extra_state)
      : query_(query), free_(free_fn), cancel_(cancel_fn), extra_state_(extra_state) {}
  // The free callback's error has nowhere to go from here (the request is being released
  // by Wait/Test/Request_free, which report the query callback's); MPI-3.1 leaves it open.
  ~GeneralizedRequest() override {
    if (free_) free_(extra_state_);
  }
  bool test() override { return completed_; }
  int error() const override { return query_error_; }
  void fill_status(MPI_Status* status) override {
    if (released_) return;  // freed by the program: nobody asks for its status
    query_error_ = query_ ? query_(extra_state_, status) : MPI_SUCCESS;
    status->MPI_ERROR = query_error_;
  }
  void released() override { released_ = true; }
  bool cancellable() const override { return true; }
  int cancel() override { return cancel_ ? cancel_(extra_state_, completed_ ? 1 : 0) : 0; }
  void complete() { completed_ = true; }
  bool completed() const { return completed_; }

 private:
  MPI_Grequest_query_function* query_;
  MPI_Grequest_free_function* free_;
  MPI_Grequest_cancel_function* cancel_;
  void* extra_state_;
  bool completed_ = false;
  bool released_ = false;
  int query_error_ = MPI_SUCCESS;
};

}  // namespace
}  // namespace sluice::mpi

using namespace sluice::mpi;

extern "C" {

int PMPI_Grequest_start(MPI_Grequest_query_function* query_fn, MPI_Grequest_free_function* free_fn,
                        MPI_Grequest_cancel_function* cancel_fn, void* extra_state,
                        MPI_Request* request) {
  SLUICE_MPI_CALL;
  constexpr const char* f = "MPI_Grequest_start";
  if (!initialized()) abort_not_initialized(f);
  if (!request) return raise(nullptr, MPI_ERR_ARG, f, "request is NULL");
  // Errors in its completion go to MPI_COMM_WORLD's handler, as for every error MPI-3.1
  // ties to no communicator.
  *request = make_async_request(MPI_COMM_WORLD, std::make_unique<GeneralizedRequest>(
                                                    query_fn, free_fn, cancel_fn, extra_state));
  return MPI_SUCCESS;
}

int PMPI_Grequest_complete(MPI_Request request) {
  SLUICE_MPI_CALL;
  constexpr const char* f = "MPI_Grequest_complete";
  auto* g = request && request->kind == sluice_request_s::Kind::async
                ? dynamic_cast<GeneralizedRequest*>(request->op.get())
                : nullptr;
  if (!g) return raise(nullptr, MPI_ERR_REQUEST, f, "not a generalized request");
  if (g->completed()) return raise(nullptr, MPI_ERR_REQUEST, f, "request already completed");
  g->complete();
  progress();  // releases it now if the program already freed it (MPI_Request_free)
  return MPI_SUCCESS;
}

}  // extern "C"

// The MPI_ names: weak, so a profiling library defining them comes first (MPI-3.1
// §14.2); it reaches these definitions as PMPI_.
#pragma weak MPI_Grequest_start = PMPI_Grequest_start
#pragma weak MPI_Grequest_complete = PMPI_Grequest_complete
