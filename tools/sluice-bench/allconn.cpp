// sluice-bench allconn: [OpenMPI-UD]'s startup benchmark. Every process sends a 0-byte message
// to every other process in ring order (rank r sends to r+1, r+2, ..., r-1, receives from
// everyone), starting right after the job is up, so connection setup (lazy, for tcp) is in
// the time. Reported over all ranks: the time of the exchange, the time Session() took,
// and per-process memory afterwards: resident set size plus the kernel buffers of the
// process's sockets (the sum of SO_SNDBUF + SO_RCVBUF over its socket descriptors, what
// the kernel lets those sockets hold), with the number of sockets.
#include <dirent.h>
#include <sys/socket.h>
#include <unistd.h>
#include <sluice/sluice.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench.hpp"

namespace sluice::bench {
namespace {

constexpr int tag_ring = 11;
constexpr int tag_report = 12;

struct Figures {
  double time_us = 0;
  double init_us = 0;
  double rss_kB = 0;
  double sockbuf_kB = 0;
  double sockets = 0;
};

double now_us() {
  using namespace std::chrono;
  return duration<double, std::micro>(steady_clock::now().time_since_epoch()).count();
}

void check(Errc e, const char* what) {
  if (e != Errc::ok)
    throw std::runtime_error(std::string(what) + " failed: " + std::string(to_string(e)));
}

double resident_kB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::strtod(line.c_str() + 6, nullptr);
  return 0;
}

// Kernel socket buffer allowance over every socket this process holds.
void socket_buffers(double& kB, double& count) {
  kB = 0;
  count = 0;
  DIR* fds = opendir("/proc/self/fd");
  if (fds == nullptr) return;
  while (dirent* entry = readdir(fds)) {
    int fd = std::atoi(entry->d_name);
    if (entry->d_name[0] == '.' || fd == dirfd(fds)) continue;
    char link[64] = {};
    std::string path = std::string("/proc/self/fd/") + entry->d_name;
    if (readlink(path.c_str(), link, sizeof link - 1) <= 0 || std::strncmp(link, "socket:", 7))
      continue;
    int snd = 0, rcv = 0;
    socklen_t len = sizeof snd;
    if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &snd, &len) != 0) continue;
    len = sizeof rcv;
    if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, &len) != 0) continue;
    kB += (static_cast<double>(snd) + rcv) / 1024.0;
    count += 1;
  }
  closedir(fds);
}

}  // namespace

int run_allconn(Session& s, const Options& o, double init_us) {
  const int me = s.rank(), n = s.size();
  if (n < 2) {
    if (me == 0) std::fprintf(stderr, "sluice-bench allconn: needs at least 2 ranks\n");
    return 2;
  }
  check(s.barrier(), "barrier");
  std::vector<Request> reqs;
  reqs.reserve(2 * static_cast<std::size_t>(n));
  std::vector<std::byte> none;
  const double t0 = now_us();
  for (int k = 1; k < n; ++k)
    reqs.push_back(s.irecv(std::span<std::byte>(none), (me - k + n) % n, tag_ring));
  for (int k = 1; k < n; ++k)
    reqs.push_back(s.isend(std::span<const std::byte>(none), (me + k) % n, tag_ring));
  check(s.waitall(reqs), "waitall");
  Figures mine;
  mine.time_us = now_us() - t0;
  mine.init_us = init_us;
  mine.rss_kB = resident_kB();
  socket_buffers(mine.sockbuf_kB, mine.sockets);
  check(s.barrier(), "barrier");

  auto bytes = [](Figures& f) { return std::as_writable_bytes(std::span(&f, 1)); };
  if (me != 0) {
    check(s.send(std::as_bytes(std::span(&mine, 1)), 0, tag_report), "send");
    return 0;
  }
  std::vector<Figures> all(n);
  all[0] = mine;
  for (int r = 1; r < n; ++r) check(s.recv(bytes(all[r]), r, tag_report), "recv");
  Figures max, avg;
  for (const Figures& f : all) {
    max.time_us = std::max(max.time_us, f.time_us);
    max.init_us = std::max(max.init_us, f.init_us);
    max.rss_kB = std::max(max.rss_kB, f.rss_kB);
    max.sockbuf_kB = std::max(max.sockbuf_kB, f.sockbuf_kB);
    avg.rss_kB += f.rss_kB / n;
    avg.sockbuf_kB += f.sockbuf_kB / n;
    avg.sockets += f.sockets / n;
  }
  // The driver rank 0 uses to reach its farthest peer (another host when there is one).
  const std::string driver(s.driver_name(n / 2));
  if (o.json) {
    std::printf(
        "{\"bench\":\"allconn\",\"impl\":\"sluice\",\"driver\":\"%s\",\"size\":0,"
        "\"iters\":1,\"n\":%d,\"cpus\":%ld,\"time_us\":%.1f,\"init_us\":%.1f,\"rss_kB\":%.0f,\"rss_"
        "kB_max\":%.0f,"
        "\"sockbuf_kB\":%.0f,\"sockbuf_kB_max\":%.0f,\"mem_kB\":%.0f,\"sockets\":%.1f}\n",
        driver.c_str(), n, sysconf(_SC_NPROCESSORS_ONLN), max.time_us, max.init_us, avg.rss_kB,
        max.rss_kB, avg.sockbuf_kB, max.sockbuf_kB, avg.rss_kB + avg.sockbuf_kB, avg.sockets);
  } else {
    std::printf("# allconn: %d ranks, driver to rank %d: %s\n", n, n / 2, driver.c_str());
    std::printf("%12s %12s %12s %14s %10s\n", "time_us", "init_us", "rss_kB/proc",
                "sockbuf_kB/proc", "sockets");
    std::printf("%12.1f %12.1f %12.0f %14.0f %10.1f\n", max.time_us, max.init_us, avg.rss_kB,
                avg.sockbuf_kB, avg.sockets);
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace sluice::bench
