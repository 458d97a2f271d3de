// sluice-bench pingpong: two-rank latency and windowed bandwidth, the same method and output
// as the peer MPI program bench/peers/mpi_pingpong.c (see docs/PERFORMANCE.md, "Method").
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <sluice/sluice.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench.hpp"
#include "rtt.hpp"
#include "sizes.hpp"

namespace sluice::bench {
namespace {

constexpr int tag_ping = 1;
constexpr int tag_bw = 2;
constexpr int tag_ack = 3;

double now_us() {
  using namespace std::chrono;
  return duration<double, std::micro>(steady_clock::now().time_since_epoch()).count();
}

// A fresh anonymous mapping that nothing touches before the benchmark does: the first
// ping-pong pays the page faults (and any registration) a new application buffer pays.
class FreshBuffer {
 public:
  explicit FreshBuffer(std::size_t size) : size_(size) {
    std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    len_ = size == 0 ? page : (size + page - 1) / page * page;
    void* p = mmap(nullptr, len_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("cannot map " + std::to_string(size) + " bytes");
    data_ = static_cast<std::byte*>(p);
  }
  ~FreshBuffer() { munmap(data_, len_); }
  FreshBuffer(const FreshBuffer&) = delete;
  FreshBuffer& operator=(const FreshBuffer&) = delete;

  std::span<std::byte> span() { return {data_, size_}; }
  std::span<const std::byte> cspan() const { return {data_, size_}; }

 private:
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t len_ = 0;
};

void check(Errc e, const char* what) {
  if (e != Errc::ok)
    throw std::runtime_error(std::string(what) + " failed: " + std::string(to_string(e)));
}

// One round trip: the even rank of a pair sends then receives, the odd one receives then
// sends. Returns the half round-trip time on the even rank (0 on the odd one). With more
// than 2 ranks, pairs (0,1), (2,3), ... run at once and rank 0 reports its pair.
double round_trip(Session& s, int rank, FreshBuffer& sbuf, FreshBuffer& rbuf) {
  int peer = rank ^ 1;
  if (rank % 2 == 0) {
    double t0 = now_us();
    check(s.send(sbuf.cspan(), peer, tag_ping), "send");
    check(s.recv(rbuf.span(), peer, tag_ping), "recv");
    return (now_us() - t0) / 2;
  }
  check(s.recv(rbuf.span(), peer, tag_ping), "recv");
  check(s.send(sbuf.cspan(), peer, tag_ping), "send");
  return 0;
}

// First contact: a few ping-pongs of each protocol class (small, medium, the largest size)
// on a separate, touched buffer, so that connection setup and lazy initialisation are not
// charged to the first size's first_us.
void warm_up_connection(Session& s, int rank, std::size_t max_size) {
  std::vector<std::byte> buf(std::max<std::size_t>(max_size, 65536));
  int peer = rank ^ 1;
  for (std::size_t size : {std::size_t{1}, std::size_t{65536}, max_size}) {
    std::span<std::byte> b(buf.data(), size);
    for (int i = 0; i < 2; ++i) {
      if (rank % 2 == 0) {
        check(s.send(b, peer, tag_ping), "send");
        check(s.recv(b, peer, tag_ping), "recv");
      } else {
        check(s.recv(b, peer, tag_ping), "recv");
        check(s.send(b, peer, tag_ping), "send");
      }
    }
  }
}

PingpongResult measure(Session& s, int rank, std::size_t size, const Options& o) {
  PingpongResult r;
  r.size = size;
  r.iters = lat_iters(size, o.iters);
  r.reps = bw_reps(size, o.window, o.reps);
  int peer = rank ^ 1;
  FreshBuffer sbuf(size);
  FreshBuffer rbuf(size);

  // 1. The first ping-pong, on never-touched buffers.
  check(s.barrier(), "barrier");
  r.first_us = round_trip(s, rank, sbuf, rbuf);
  std::memset(sbuf.span().data(), rank + 1, size);

  // 2. Warm-ups, then timed iterations, each round trip timed on its own.
  int warm = r.iters >= 100 ? 10 : 2;
  for (int i = 0; i < warm; ++i) round_trip(s, rank, sbuf, rbuf);
  check(s.barrier(), "barrier");
  std::vector<double> t(static_cast<std::size_t>(r.iters));
  for (auto& x : t) x = round_trip(s, rank, sbuf, rbuf);
  if (rank == 0) {
    r.best_us = *std::min_element(t.begin(), t.end());
    double sum = 0;
    for (double x : t) sum += x;
    r.avg_us = sum / r.iters;
    r.lat_us = median(t);
  }

  // 3. Windowed bandwidth: `window` messages in flight, then a 1-byte ack.
  std::vector<Request> reqs(static_cast<std::size_t>(o.window));
  std::byte ack[1] = {};
  int bw_warm = r.reps >= 10 ? 2 : 1;
  std::vector<double> bw;
  bw.reserve(static_cast<std::size_t>(r.reps));
  check(s.barrier(), "barrier");
  for (int rep = 0; rep < bw_warm + r.reps; ++rep) {
    if (rank % 2 == 0) {
      double t0 = now_us();
      for (auto& q : reqs) q = s.isend(sbuf.cspan(), peer, tag_bw);
      check(s.waitall(reqs), "waitall(isend)");
      check(s.recv(ack, peer, tag_ack), "recv(ack)");
      double dt = now_us() - t0;
      if (rep >= bw_warm) bw.push_back(static_cast<double>(size) * o.window / dt);  // B/us = MB/s
    } else {
      for (auto& q : reqs) q = s.irecv(rbuf.span(), peer, tag_bw);
      check(s.waitall(reqs), "waitall(irecv)");
      check(s.send(ack, peer, tag_ack), "send(ack)");
    }
  }
  if (rank == 0) {
    r.bw_best_MBps = *std::max_element(bw.begin(), bw.end());
    r.bw_MBps = median(bw);
  }
  return r;
}

// The "[ 37/300] 4.2 KiB" line, redrawn in place. Under the launcher a rank's stderr is a
// pipe that is forwarded line by line, so an in-place line can only reach the user through
// the controlling terminal: use stderr when it is a terminal, else /dev/tty when there is one,
// else nothing (batch jobs, CI). The line ends with '\r' so that result lines forwarded later
// overwrite it from column 0 instead of being appended to it.
class Progress {
 public:
  Progress(bool enabled, std::size_t total) : total_(total) {
    if (!enabled || total < 2) return;
    if (isatty(STDERR_FILENO)) {
      fd_ = STDERR_FILENO;
    } else {
      fd_ = open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC);
      own_ = fd_ >= 0;
    }
  }
  ~Progress() {
    clear();
    if (own_) close(fd_);
  }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void show(std::size_t index, std::size_t size) {
    if (fd_ < 0) return;
    char line[96];
    int n = std::snprintf(line, sizeof line, "\r\033[K[%3zu/%zu] %s\r", index + 1, total_,
                          human_size(size).c_str());
    if (n > 0) (void)!write(fd_, line, static_cast<std::size_t>(n));
  }
  void clear() {
    if (fd_ >= 0) (void)!write(fd_, "\r\033[K", 4);
  }

 private:
  int fd_ = -1;
  bool own_ = false;
  std::size_t total_;
};

std::string json_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out;
}

void print_result(const PingpongResult& r, const Options& o, const std::string& driver, int pairs) {
  if (o.json) {
    std::printf(
        "{\"bench\":\"pingpong\",\"impl\":\"sluice\",\"driver\":\"%s\",\"size\":%zu,"
        "\"iters\":%d,\"lat_us\":%.3f,\"first_us\":%.3f,\"best_us\":%.3f,\"avg_us\":%.3f,"
        "\"bw_MBps\":%.1f,\"bw_best_MBps\":%.1f,\"window\":%d,\"reps\":%d,\"pairs\":%d}\n",
        json_escape(driver).c_str(), r.size, r.iters, r.lat_us, r.first_us, r.best_us, r.avg_us,
        r.bw_MBps, r.bw_best_MBps, o.window, r.reps, pairs);
  } else {
    std::printf("%12zu %7d %10.3f %10.3f %10.3f %6d %12.1f %12.1f\n", r.size, r.iters, r.lat_us,
                r.best_us, r.first_us, r.reps, r.bw_MBps, r.bw_best_MBps);
  }
  std::fflush(stdout);
}

}  // namespace

int run_pingpong(Session& s, const Options& o) {
  int rank = s.rank();
  if (s.size() < 2 || s.size() % 2 != 0) {
    if (rank == 0)
      std::fprintf(stderr,
                   "sluice-bench pingpong: needs an even number of ranks (pairs), got %d; run "
                   "it as\n  sluicerun -n 2 sluice-bench pingpong [options]\n",
                   s.size());
    return 2;
  }
  std::vector<std::size_t> sizes = o.sizes.empty() ? sweep_sizes(o.max_size) : o.sizes;
  std::string driver(s.driver_name(rank ^ 1));
  Progress progress(rank == 0 && o.progress, sizes.size());

  if (rank == 0 && !o.json) {
    std::printf(
        "# sluice-bench pingpong impl=sluice driver=%s ranks=%d (pairs at once: %d, rank 0's "
        "pair reported) window=%d (lat: half round trip; bw: 10^6 B/s)\n",
        driver.c_str(), s.size(), s.size() / 2, o.window);
    std::printf("%12s %7s %10s %10s %10s %6s %12s %12s\n", "size", "iters", "lat_us", "best_us",
                "first_us", "reps", "bw_MBps", "bw_best_MBps");
  }
  std::vector<PingpongResult> results;
  try {
    warm_up_connection(s, rank,
                       std::max<std::size_t>(1, *std::max_element(sizes.begin(), sizes.end())));
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      progress.show(i, sizes[i]);
      PingpongResult r = measure(s, rank, sizes[i], o);
      if (rank != 0) continue;
      print_result(r, o, driver, s.size() / 2);
      results.push_back(r);
    }
  } catch (const std::exception& e) {
    progress.clear();
    std::fprintf(stderr, "sluice-bench pingpong: rank %d: %s\n", rank, e.what());
    return 1;
  }
  progress.clear();
  if (rank == 0 && !o.plot.empty()) {
    std::string err = plot_pingpong(results, "sluice", driver, o.plot);
    if (!err.empty()) {
      std::fprintf(stderr, "sluice-bench pingpong: --plot: %s\n", err.c_str());
      return 1;
    }
    std::fprintf(stderr, "sluice-bench: wrote %s\n", o.plot.c_str());
  }
  return 0;
}

}  // namespace sluice::bench
