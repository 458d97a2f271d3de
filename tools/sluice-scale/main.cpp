// sluice-scale: extrapolates allconn measurements (sluice-bench allconn --json, and the
// peer bench/peers/mpi_allconn.c) to 1 000 .. 100 000 processes.
//
//   sluice-scale [--at N,N,...] [FILE...]        (JSON lines; no FILE: standard input)
//
// The model, per implementation+driver, from the measured runs (N = 2..128 processes on
// `cpus` cores, oversubscribed):
//   memory per process   mem(N) = m0 + m1 * N        least squares over every run: m0 is what
//                        a process costs alone, m1 what each peer adds (connection state,
//                        socket buffers for tcp; almost nothing for udp). Separately for RSS
//                        and for the socket buffer allowance.
//   startup time         the exchange sends N(N-1) messages (and for tcp opens N(N-1)/2
//                        connections); on P = min(N, cpus) cores its wall time would be
//                        N(N-1) * c / P if each peer cost a process c. c is computed per run;
//                        the model uses the largest run's c (the most pessimistic: c grows
//                        with N when processes outnumber cores). With one process per core,
//                        as on a cluster, the time becomes (N - 1) * c. The growth exponent k
//                        of the measured times (time ~ N^k, log-log least squares) is shown
//                        too: 2 means the per-peer cost stayed constant.
// Assumptions, printed with the results: per-peer costs stay constant (no cache or kernel
// table effects beyond the measured range), loopback round trips (a real network adds its
// round trip per tcp connection), and the measured machine's per-message CPU cost.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

namespace {

struct Run {
  double n = 0, cpus = 0, time_us = 0, rss_kB = 0, sockbuf_kB = 0;
};

// The value of "key": in a flat JSON object line, as text (quotes removed); empty if absent.
std::string field(const std::string& line, const std::string& key) {
  const std::string needle = "\"" + key + "\":";
  auto at = line.find(needle);
  if (at == std::string::npos) return {};
  at += needle.size();
  if (at < line.size() && line[at] == '"') {
    auto end = line.find('"', at + 1);
    return end == std::string::npos ? std::string() : line.substr(at + 1, end - at - 1);
  }
  auto end = line.find_first_of(",}", at);
  return line.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

// Least squares y = a + b x.
void fit_line(const std::vector<double>& x, const std::vector<double>& y, double& a, double& b) {
  const double n = static_cast<double>(x.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sx += x[i];
    sy += y[i];
    sxx += x[i] * x[i];
    sxy += x[i] * y[i];
  }
  const double d = n * sxx - sx * sx;
  b = d != 0 ? (n * sxy - sx * sy) / d : 0;
  a = (sy - b * sx) / n;
}

std::string human_kB(double kB) {
  char text[32];
  if (kB >= 1024.0 * 1024.0)
    std::snprintf(text, sizeof text, "%.1f GiB", kB / 1024.0 / 1024.0);
  else if (kB >= 1024.0)
    std::snprintf(text, sizeof text, "%.1f MiB", kB / 1024.0);
  else
    std::snprintf(text, sizeof text, "%.0f KiB", kB);
  return text;
}

std::string human_us(double us) {
  char text[32];
  if (us >= 1e6)
    std::snprintf(text, sizeof text, "%.2f s", us / 1e6);
  else if (us >= 1e3)
    std::snprintf(text, sizeof text, "%.1f ms", us / 1e3);
  else
    std::snprintf(text, sizeof text, "%.0f us", us);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<double> targets = {1000, 10000, 100000};
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::puts("usage: sluice-scale [--at N,N,...] [FILE...]   (allconn JSON lines)");
      return 0;
    }
    if (arg == "--at" && i + 1 < argc) {
      targets.clear();
      std::string list = argv[++i];
      for (std::size_t at = 0; at < list.size();) {
        auto comma = list.find(',', at);
        double v = std::atof(list.substr(at, comma - at).c_str());
        if (v >= 2) targets.push_back(v);
        at = comma == std::string::npos ? list.size() : comma + 1;
      }
      if (targets.empty()) {
        std::fprintf(stderr, "sluice-scale: bad --at list\n");
        return 2;
      }
      continue;
    }
    files.push_back(arg);
  }

  std::map<std::string, std::vector<Run>> runs;  // by "impl/driver"
  auto read = [&](std::istream& in) {
    std::string line;
    while (std::getline(in, line)) {
      if (field(line, "bench") != "allconn") continue;
      Run r;
      r.n = std::atof(field(line, "n").c_str());
      r.cpus = std::atof(field(line, "cpus").c_str());
      r.time_us = std::atof(field(line, "time_us").c_str());
      r.rss_kB = std::atof(field(line, "rss_kB").c_str());
      r.sockbuf_kB = std::atof(field(line, "sockbuf_kB").c_str());
      if (r.n < 2) continue;
      if (r.cpus < 1) r.cpus = 1;
      std::string impl = field(line, "impl");
      std::string key = (impl.empty() ? "sluice" : impl) + "/" + field(line, "driver");
      runs[key].push_back(r);
    }
  };
  if (files.empty()) read(std::cin);
  for (const std::string& f : files) {
    std::ifstream in(f);
    if (!in) {
      std::fprintf(stderr, "sluice-scale: cannot read %s\n", f.c_str());
      return 1;
    }
    read(in);
  }
  if (runs.empty()) {
    std::fprintf(stderr, "sluice-scale: no allconn results in the input\n");
    return 1;
  }

  for (const auto& [name, list] : runs) {
    std::vector<double> n, mem, rss, buf, work, time;
    double largest = 0;
    for (const Run& r : list) {
      n.push_back(r.n);
      mem.push_back(r.rss_kB + r.sockbuf_kB);
      rss.push_back(r.rss_kB);
      buf.push_back(r.sockbuf_kB);
      work.push_back(r.n * (r.n - 1) / std::min(r.n, r.cpus));
      time.push_back(r.time_us);
      largest = std::max(largest, r.n);
    }
    double m0, m1, r0, r1, b0, b1;
    fit_line(n, mem, m0, m1);
    fit_line(n, rss, r0, r1);
    fit_line(n, buf, b0, b1);
    // Per-peer cost of each run, and the largest run's for the model.
    std::vector<std::pair<double, double>> cost;  // (N, c in us)
    for (std::size_t i = 0; i < n.size(); ++i)
      if (work[i] > 0) cost.emplace_back(n[i], time[i] / work[i]);
    std::sort(cost.begin(), cost.end());
    const double c = cost.empty() ? 0 : cost.back().second;
    std::vector<double> log_n, log_t;
    for (std::size_t i = 0; i < n.size(); ++i)
      if (time[i] > 0 && n[i] >= 4) {
        log_n.push_back(std::log(n[i]));
        log_t.push_back(std::log(time[i]));
      }
    double log_a = 0, k = 0;
    if (log_n.size() >= 2) fit_line(log_n, log_t, log_a, k);
    // How well the memory model reproduces the measurements (worst relative error).
    double worst_mem = 0;
    for (std::size_t i = 0; i < n.size(); ++i)
      worst_mem = std::max(worst_mem, std::fabs(m0 + m1 * n[i] - mem[i]) / mem[i]);
    std::printf("%s  (%zu runs, N = 2..%.0f)\n", name.c_str(), list.size(), largest);
    std::printf(
        "  memory/process = %s + %s x N   (RSS %s + %s x N, socket buffers %s + %s x N);"
        " worst fit error %.0f %%\n",
        human_kB(m0).c_str(), human_kB(m1).c_str(), human_kB(r0).c_str(), human_kB(r1).c_str(),
        human_kB(b0).c_str(), human_kB(b1).c_str(), 100 * worst_mem);
    std::printf("  startup: measured time ~ N^%.2f (N >= 4); per-peer cost per process:", k);
    for (const auto& [size, us] : cost) std::printf(" %.0f:%.1fus", size, us);
    std::printf("\n");
    std::printf("  %10s %16s %22s\n", "N", "memory/process", "startup (1 proc/core)");
    for (double t : targets)
      std::printf("  %10.0f %16s %22s\n", t, human_kB(m0 + m1 * t).c_str(),
                  human_us((t - 1) * c).c_str());
  }
  std::puts(
      "model: memory linear in N (least squares); startup = (N-1) x the largest run's per-peer "
      "cost (time x min(N,cpus) / (N(N-1)) on the measuring machine); loopback round trips; "
      "socket buffers are the kernel's allowance (SO_SNDBUF+SO_RCVBUF), not bytes in use.");
  return 0;
}
