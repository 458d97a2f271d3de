// The public nonblocking collectives (include/sluice/collectives.hpp): a coll::Group over
// the Session's ranks and the schedules of coll.hpp, with argument checks and typed
// reductions. Nothing here moves data itself.
#include <sluice/collectives.hpp>

#include <algorithm>

#include "coll/coll.hpp"
#include "coll/reducers.hpp"

namespace sluice {

namespace detail {
struct CollectiveGroup {
  coll::Group group;
};
}  // namespace detail

namespace {

coll::Schedule* schedule_of(void* p) {
  return static_cast<coll::Schedule*>(p);
}

}  // namespace

// ---- CollRequest ----

CollRequest& CollRequest::operator=(CollRequest&& o) noexcept {
  if (this != &o) {
    if (schedule_) coll::release(schedule_of(schedule_));
    schedule_ = o.schedule_;
    refused_ = o.refused_;
    o.schedule_ = nullptr;
    o.refused_ = Errc::ok;
  }
  return *this;
}

CollRequest::~CollRequest() {
  if (schedule_) coll::release(schedule_of(schedule_));
}

bool CollRequest::test() {
  return schedule_ == nullptr || coll::test(schedule_of(schedule_));
}

Errc CollRequest::wait() {
  if (schedule_ == nullptr) {  // refused at start, or no request at all
    Errc e = refused_ != Errc::ok ? refused_ : Errc::invalid_argument;
    refused_ = Errc::ok;
    return e;
  }
  Errc e = coll::finish(schedule_of(schedule_));
  schedule_ = nullptr;
  return e;
}

const char* CollRequest::algorithm() const {
  if (schedule_ == nullptr) return refused_ != Errc::ok ? "refused" : "none";
  return coll::algorithm(schedule_of(schedule_));
}

// ---- Collectives ----

Collectives::Collectives(Session& session, ContextId ctx)
    : group_(std::make_unique<detail::CollectiveGroup>()) {
  coll::Group& g = group_->group;
  g.rank = session.rank();
  g.size = session.size();
  g.world.resize(static_cast<std::size_t>(g.size));
  for (int r = 0; r < g.size; ++r) g.world[static_cast<std::size_t>(r)] = r;
  g.ctx = ctx;
}

Collectives::~Collectives() = default;

int Collectives::rank() const {
  return group_->group.rank;
}
int Collectives::size() const {
  return group_->group.size;
}

CollRequest Collectives::ibarrier() {
  return CollRequest(coll::ibarrier(group_->group));
}

CollRequest Collectives::ibcast(std::span<std::byte> buf, int root) {
  coll::Group& g = group_->group;
  if (root < 0 || root >= g.size) return CollRequest(Errc::invalid_argument);
  return CollRequest(coll::ibcast(g, buf.data(), buf.size(), root));
}

CollRequest Collectives::igather(std::span<const std::byte> send, std::span<std::byte> recv,
                                 int root) {
  coll::Group& g = group_->group;
  if (root < 0 || root >= g.size ||
      (g.rank == root && recv.size() != send.size() * static_cast<std::size_t>(g.size)))
    return CollRequest(Errc::invalid_argument);
  return CollRequest(coll::igather(g, send.data(), recv.data(), send.size(), root));
}

CollRequest Collectives::iscatter(std::span<const std::byte> send, std::span<std::byte> recv,
                                  int root) {
  coll::Group& g = group_->group;
  if (root < 0 || root >= g.size ||
      (g.rank == root && send.size() != recv.size() * static_cast<std::size_t>(g.size)))
    return CollRequest(Errc::invalid_argument);
  return CollRequest(coll::iscatter(g, send.data(), recv.data(), recv.size(), root));
}

CollRequest Collectives::iallgather(std::span<const std::byte> send, std::span<std::byte> recv) {
  coll::Group& g = group_->group;
  if (recv.size() != send.size() * static_cast<std::size_t>(g.size))
    return CollRequest(Errc::invalid_argument);
  return CollRequest(coll::iallgather(g, send.data(), recv.data(), send.size()));
}

CollRequest Collectives::ialltoall(std::span<const std::byte> send, std::span<std::byte> recv) {
  coll::Group& g = group_->group;
  const auto n = static_cast<std::size_t>(g.size);
  if (send.size() != recv.size() || send.size() % n != 0)
    return CollRequest(Errc::invalid_argument);
  return CollRequest(coll::ialltoall(g, send.data(), recv.data(), send.size() / n));
}

CollRequest Collectives::iallreduce(std::span<const std::byte> send, std::span<std::byte> recv,
                                    Element type, ReduceOp op) {
  coll::Reducer r;
  if (!coll::make_reducer(type, op, r) || send.size() != recv.size() ||
      send.size() % r.elem_size != 0)
    return CollRequest(Errc::invalid_argument);
  return CollRequest(
      coll::iallreduce(group_->group, send.data(), recv.data(), send.size() / r.elem_size, r));
}

CollRequest Collectives::ireduce(std::span<const std::byte> send, std::span<std::byte> recv,
                                 Element type, ReduceOp op, int root) {
  coll::Group& g = group_->group;
  coll::Reducer r;
  if (!coll::make_reducer(type, op, r) || root < 0 || root >= g.size ||
      send.size() % r.elem_size != 0 || (g.rank == root && recv.size() != send.size()))
    return CollRequest(Errc::invalid_argument);
  return CollRequest(
      coll::ireduce(g, send.data(), recv.data(), send.size() / r.elem_size, r, root));
}

}  // namespace sluice
