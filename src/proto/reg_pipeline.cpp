// Strategies ondemand, superpipeline and pipeline: what reg_pipeline.hpp describes.
#include "proto/reg_pipeline.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace sluice::proto {

using drivers::IoStatus;

namespace {

uint64_t id_of(Transfer& t) {
  return reinterpret_cast<uint64_t>(&t);
}

// A staging buffer's completion token: its slot's address with the low bit set (a
// Transfer's address has it clear), so on_completion tells them apart.
uint64_t token_of(StagingSlot& s) {
  return reinterpret_cast<uint64_t>(&s) | 1;
}

uintptr_t page_size() {
  static const uintptr_t page = [] {
    const long p = ::sysconf(_SC_PAGESIZE);
    return p > 0 ? static_cast<uintptr_t>(p) : uintptr_t{4096};
  }();
  return page;
}

}  // namespace

// ---- the pinning thread ----

PinningThread::PinningThread() : thread_([this] { run(); }) {}

PinningThread::~PinningThread() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  cv_.notify_one();
  thread_.join();
}

void PinningThread::submit(std::shared_ptr<PinJob> job) {
  {
    std::lock_guard lk(mu_);
    queue_.push_back(std::move(job));
  }
  cv_.notify_one();
}

void PinningThread::run() {
  for (;;) {
    std::shared_ptr<PinJob> job;
    {
      std::unique_lock lk(mu_);
      cv_.wait(lk, [this] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    std::size_t start = 0;
    for (std::size_t k = 0; k < job->ends.size(); ++k) {
      std::lock_guard job_lock(job->mu);
      if (job->cancelled.load(std::memory_order_acquire)) {
        chunks_skipped.fetch_add(job->ends.size() - k, std::memory_order_relaxed);
        break;
      }
      const std::span<const std::byte> chunk{job->base + start, job->ends[k] - start};
      if (job->domain->register_memory(chunk, job->regs[k]) == Errc::ok) {
        chunks_pinned.fetch_add(1, std::memory_order_relaxed);
        bytes_pinned.fetch_add(chunk.size(), std::memory_order_relaxed);
      } else {
        job->regs[k].reset();  // the sender sees an unpinned chunk: copy path
        chunks_failed.fetch_add(1, std::memory_order_relaxed);
      }
      job->ready.store(k + 1, std::memory_order_release);
      start = job->ends[k];
    }
    // The job's registrations are released by whoever drops the last reference: here if
    // the send is over already, else at its completion.
  }
}

// ---- staging buffers ----

StagingPool::StagingPool(mem::Domain& d, unsigned buffers, std::size_t cap)
    : domain(&d), capacity(cap), slots(buffers) {
  bytes = capacity * buffers;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return;
  memory = static_cast<std::byte*>(p);
  std::memset(memory, 0, bytes);  // touched now: its pages exist before the first copy
  registered = true;
  for (unsigned i = 0; i < buffers; ++i) {
    slots[i].buf = memory + i * capacity;
    if (d.register_memory({slots[i].buf, capacity}, slots[i].reg) != Errc::ok) registered = false;
  }
}

StagingPool::~StagingPool() {
  for (StagingSlot& s : slots) s.reg.reset();
  if (memory) munmap(memory, bytes);
}

StagingSlot* StagingPool::take() {
  for (StagingSlot& s : slots)
    if (!s.busy) {
      s.busy = true;
      return &s;
    }
  return nullptr;
}

StagingPool* PointToPoint::staging_for(drivers::Driver& d) {
  mem::Domain& domain = d.memory_domain();
  for (auto& p : staging_)
    if (p->domain == &domain) return p->registered ? p.get() : nullptr;
  // One buffer holds the largest chunk: the driver's packet (a fragment never exceeds it).
  const std::size_t page = page_size();
  std::size_t cap = std::min<std::size_t>(d.caps().max_packet, std::size_t{4} << 20);
  cap = std::max(page, cap / page * page);
  staging_.push_back(std::make_unique<StagingPool>(domain, reg_opts_.staged.buffers, cap));
  return staging_.back()->registered ? staging_.back().get() : nullptr;
}

// ---- per send ----

void PointToPoint::begin_pipe(Transfer& t, RegStrategy strategy) {
  if (strategy != RegStrategy::ondemand && reg_opts_.strategy != RegStrategy::adaptive &&
      reg_opts_.thresholds && reg_opts_.tuned) {
    // Below the crossover the profile's model found, copying beats any pipeline (adaptive
    // weighs that itself, per send).
    const DriverCost* dc = reg_opts_.model.driver(route(t.peer)->name());
    if (dc && t.len < dc->staged_min) {
      ++reg_stats_.staged_below_min;
      t.reg = mem::Registration::host({t.buf, t.len});
      return;
    }
  }
  auto* p = new RegPipe;
  p->staged = strategy != RegStrategy::ondemand;
  p->fixed = strategy == RegStrategy::pipeline;
  t.pipe = p;
  t.reg = mem::Registration::host({t.buf, t.len});
  if (p->staged) {
    ++reg_stats_.staged;
    return;
  }
  ++reg_stats_.ondemand;
  auto job = std::make_shared<PinJob>();
  drivers::Driver& d = *route(t.peer);
  mem::RegistrationCache* cache = cache_for(d.memory_domain());
  job->domain = cache ? static_cast<mem::Domain*>(cache) : &d.memory_domain();
  job->base = t.buf;
  job->length = t.len;
  // Chunk ends on page addresses, growing: the first chunk is pinned soon after the
  // rendezvous request, the later ones while the earlier ones are on the wire.
  const uintptr_t page = page_size();
  const auto base = reinterpret_cast<uintptr_t>(t.buf);
  std::size_t size = kFirstPinChunk;
  std::size_t off = 0;
  while (off < t.len) {
    uintptr_t end = (base + off + size + page - 1) / page * page;
    std::size_t e = std::min<std::size_t>(end - base, t.len);
    job->ends.push_back(e);
    off = e;
    size = std::min(size * 2, kMaxPinChunk);
  }
  job->regs.reset(new mem::Registration[job->ends.size()]);
  p->job = std::move(job);
}

void PointToPoint::pipe_rts_sent(Transfer& t) {
  RegPipe& p = *t.pipe;
  if (!p.staged) {
    if (!pinner_) pinner_ = std::make_unique<PinningThread>();
    pinner_->submit(p.job);
    return;
  }
  // Copy chunk 0 while the rendezvous request and its answer are on the wire.
  drivers::Driver& d = *route(t.peer);
  StagingPool* pool = staging_for(d);
  if (!pool) return;  // push_staged sends by copy
  StagingSlot* s = pool->take();
  if (!s) return;
  const std::size_t n =
      std::min({t.len, pool->capacity, p.fixed ? reg_opts_.staged.chunk : reg_opts_.staged.c0});
  std::memcpy(s->buf, t.buf, n);
  p.ahead = s;
  p.ahead_offset = 0;
  p.ahead_len = n;
  ++reg_stats_.staged_early;
}

bool PointToPoint::push_piped(Transfer& t) {
  return t.pipe->staged ? push_staged(t) : push_ondemand(t);
}

bool PointToPoint::push_ondemand(Transfer& t) {
  drivers::Driver* d = route(t.peer);
  RegPipe& p = *t.pipe;
  PinJob& job = *p.job;
  const std::size_t max = d->caps().max_packet;
  constexpr std::size_t kFirstFragment = 8 * 1024;
  while (t.offset < t.length) {
    while (p.chunk + 1 < job.ends.size() && job.ends[p.chunk] <= t.offset) ++p.chunk;
    const std::size_t chunk_end = std::min(job.ends[p.chunk], t.length);
    const std::size_t ramp = d->caps().whole_fragments ? max : std::max(kFirstFragment, t.offset);
    const std::size_t n = std::min({max, ramp, chunk_end - t.offset});
    DataHeader h{PacketType::data, {}, t.remote_id, t.offset};
    const std::span<const std::byte> part{t.buf + t.offset, n};
    const std::span<const std::byte> hdr{reinterpret_cast<const std::byte*>(&h), sizeof h};
    const bool pinned =
        job.ready.load(std::memory_order_acquire) > p.chunk && job.regs[p.chunk].pinned();
    IoStatus s =
        pinned ? d->send_tracked(t.peer, hdr, part, job.regs[p.chunk], {id_of(t), kProtocolId})
               : d->send(t.peer, hdr, part);
    if (s == IoStatus::again) return false;
    if (s == IoStatus::failed) {
      t.offset = t.length;
      if (t.lent == 0) complete(t, Errc::peer_dead);
      t.lent = 0;
      return true;
    }
    if (pinned) {
      ++reg_stats_.ondemand_zc_frags;
    } else if (job.ready.load(std::memory_order_relaxed) <= p.chunk) {
      ++reg_stats_.overlap_misses;  // not pinned yet (a refused chunk is counted as failed)
      reg_stats_.overlap_miss_bytes += n;
    }
    if (s == IoStatus::posted) ++t.lent;
    t.offset += n;
    ++stats_.fragments;
  }
  if (t.lent > 0) return true;
  complete(t, Errc::ok);
  return true;
}

bool PointToPoint::push_staged(Transfer& t) {
  drivers::Driver* d = route(t.peer);
  RegPipe& p = *t.pipe;
  StagingPool* pool = staging_for(*d);
  const bool fixed = p.fixed;
  while (t.offset < t.length) {
    StagingSlot* s = nullptr;
    std::size_t n = 0;
    if (p.ahead && p.ahead_offset == t.offset) {
      s = p.ahead;
      n = p.ahead_len;
    } else {
      if (p.ahead) {  // copied for another offset (cannot happen in order; be safe)
        p.ahead->busy = false;
        p.ahead = nullptr;
      }
      const double want = fixed ? static_cast<double>(reg_opts_.staged.chunk)
                                : static_cast<double>(reg_opts_.staged.c0) *
                                      std::pow(reg_opts_.staged.q, static_cast<double>(p.index));
      const std::size_t cap = pool ? pool->capacity : d->caps().max_packet;
      n = std::min<std::size_t>(
          {static_cast<std::size_t>(std::min(want, 1e15)), cap, t.length - t.offset});
      n = std::max<std::size_t>(n, 1);
      s = pool ? pool->take() : nullptr;
      if (pool && !s) {  // every buffer in flight: wait for a local completion
        ++reg_stats_.staging_waits;
        return false;
      }
      if (s) std::memcpy(s->buf, t.buf + t.offset, n);
      p.ahead = s;
      p.ahead_offset = t.offset;
      p.ahead_len = n;
    }
    DataHeader h{PacketType::data, {}, t.remote_id, t.offset};
    const std::span<const std::byte> hdr{reinterpret_cast<const std::byte*>(&h), sizeof h};
    IoStatus st = s ? d->send_tracked(t.peer, hdr, {s->buf, n}, s->reg, {token_of(*s), kProtocolId})
                    : d->send(t.peer, hdr, {t.buf + t.offset, n});  // no staging buffers: copy path
    if (st == IoStatus::again) return false;  // the copy stays ahead for the retry
    p.ahead = nullptr;
    if (st == IoStatus::failed) {
      if (s) s->busy = false;
      t.offset = t.length;
      if (t.lent == 0) complete(t, Errc::peer_dead);
      t.lent = 0;
      return true;
    }
    if (st == IoStatus::posted) {
      s->owner = &t;
      ++t.lent;
    } else if (s) {
      s->busy = false;  // the driver copied it: free at once
    }
    t.offset += n;
    ++p.index;
    ++stats_.fragments;
    ++reg_stats_.staged_chunks;
    // Copy the next chunk now, while this one is on its way (the superpipeline's overlap):
    // the next pass of the loop finds it ahead and only has to send it.
  }
  if (t.lent > 0) return true;
  complete(t, Errc::ok);
  return true;
}

void PointToPoint::on_staging_completion(uint64_t token_id, Errc status) {
  auto* s = reinterpret_cast<StagingSlot*>(token_id & ~uint64_t{1});
  ++stats_.local_completions;
  Transfer* t = s->owner;
  s->owner = nullptr;
  s->busy = false;
  if (!t || t->lent == 0) return;
  if (--t->lent == 0 && t->offset >= t->length) complete(*t, status);
}

void PointToPoint::end_pipe(Transfer& t) {
  RegPipe* p = t.pipe;
  t.pipe = nullptr;
  if (p->job) {  // waits for a chunk registration under way (see PinJob::mu)
    std::lock_guard job_lock(p->job->mu);
    p->job->cancelled.store(true, std::memory_order_release);
  }
  if (p->ahead) p->ahead->busy = false;
  if (p->staged)  // chunks still in flight (a failed send): their buffers free on completion
    for (auto& pool : staging_)
      for (StagingSlot& s : pool->slots)
        if (s.owner == &t) s.owner = nullptr;
  delete p;
}

// ---- what the strategy runs, for the cost model ----

CostProtocol PointToPoint::planned(int peer, std::size_t size, std::string& why) const {
  const drivers::Driver* d = route(peer);
  if (!d || !d->caps().needs_registration) {
    why = "the route registers no memory: the driver's copy path";
    return CostProtocol::copy;
  }
  if (choose(peer, size) == Protocol::eager) {
    why = "eager: copied";
    return CostProtocol::copy;
  }
  switch (reg_opts_.strategy) {
    case RegStrategy::copy:
      why = "strategy copy";
      return CostProtocol::copy;
    case RegStrategy::per_message:
      why = "strategy register: pinned and released for every message";
      return CostProtocol::register_each;
    case RegStrategy::cache:
      why = "strategy cache: a reused buffer (its first use costs what register does)";
      return CostProtocol::cached;
    case RegStrategy::ondemand:
      why = "strategy ondemand";
      return CostProtocol::ondemand;
    case RegStrategy::superpipeline:
    case RegStrategy::pipeline: {
      const DriverCost* dc = reg_opts_.model.driver(d->name());
      if (reg_opts_.tuned && reg_opts_.thresholds && dc && size < dc->staged_min) {
        why = "below the profile's staged_min " +
              (dc->staged_min == SIZE_MAX ? std::string("(no size)")
                                          : std::to_string(dc->staged_min)) +
              " B for " + dc->driver + ": copying is predicted faster";
        return CostProtocol::copy;
      }
      why = std::string("strategy ") + reg_strategy_name(reg_opts_.strategy);
      return reg_opts_.strategy == RegStrategy::pipeline ? CostProtocol::pipeline
                                                         : CostProtocol::superpipeline;
    }
    default:  // a strategy that chooses per message says so itself
      break;
  }
  why = std::string("strategy ") + reg_strategy_name(reg_opts_.strategy) + " (not modelled)";
  return CostProtocol::copy;
}

}  // namespace sluice::proto
