// --plot: bandwidth against message size, drawn by gnuplot from a temporary data file.
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bench.hpp"

extern char** environ;

namespace sluice::bench {
namespace {

bool on_path(const std::string& prog) {
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= p.size()) {
    std::size_t end = p.find(':', start);
    if (end == std::string::npos) end = p.size();
    std::string dir = p.substr(start, end - start);
    if (dir.empty()) dir = ".";
    if (access((dir + "/" + prog).c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

// gnuplot's string syntax: single quotes, with '' for a quote.
std::string gp_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// Runs gnuplot on `script`; removes `dir` when it succeeded. An error message or empty.
std::string run_gnuplot(const std::filesystem::path& dir, const std::filesystem::path& script) {
  std::string script_path = script.string();
  char* argv[] = {const_cast<char*>("gnuplot"), script_path.data(), nullptr};
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, "gnuplot", nullptr, nullptr, argv, environ);
  std::string err;
  if (rc != 0) {
    err = std::string("cannot run gnuplot: ") + std::strerror(rc);
  } else {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      err = "gnuplot failed (script kept in " + dir.string() + ")";
  }
  if (err.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  return err;
}

// A fresh temporary directory for the data and the script; empty path and `err` on failure.
std::filesystem::path make_plot_dir(std::string& err) {
  char dir_template[] = "/tmp/sluice-bench-plot-XXXXXX";
  if (!mkdtemp(dir_template)) {
    err = std::string("cannot create a temporary directory: ") + std::strerror(errno);
    return {};
  }
  return dir_template;
}

const char* kPngTerminal =
    "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
    "  set terminal pngcairo size 1000,620 enhanced font 'sans,10'\n"
    "} else {\n"
    "  set terminal png size 1000,620\n"
    "}\n";

}  // namespace

std::string plot_pingpong(const std::vector<PingpongResult>& results, const std::string& impl,
                          const std::string& driver, const std::string& png) {
  if (results.empty()) return "no results to plot";
  if (!on_path("gnuplot"))
    return "gnuplot not found on PATH; install it (apt-get install -y gnuplot-nox) or drop --plot";

  char dir_template[] = "/tmp/sluice-bench-plot-XXXXXX";
  if (!mkdtemp(dir_template))
    return std::string("cannot create a temporary directory: ") + std::strerror(errno);
  std::filesystem::path dir(dir_template);
  std::filesystem::path data = dir / "pingpong.dat";
  std::filesystem::path script = dir / "pingpong.gp";
  {
    std::ofstream f(data);
    f << "# size bw_MBps bw_best_MBps pingpong_best_MBps pingpong_first_MBps\n";
    for (const auto& r : results) {
      double size = static_cast<double>(r.size);
      f << r.size << ' ' << r.bw_MBps << ' ' << r.bw_best_MBps << ' '
        << (r.best_us > 0 ? size / r.best_us : 0) << ' ' << (r.first_us > 0 ? size / r.first_us : 0)
        << '\n';
    }
  }
  {
    std::ofstream f(script);
    f << "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
         "  set terminal pngcairo size 1000,620 enhanced font 'sans,10'\n"
         "} else {\n"
         "  set terminal png size 1000,620\n"
         "}\n"
      << "set output " << gp_quote(png) << "\n"
      << "set title " << gp_quote("sluice-bench pingpong: " + impl + " over " + driver) << "\n"
      << "set logscale x 2\n"
         "set format x '%.0b%B'\n"
         "set xlabel 'message size (bytes)'\n"
         "set ylabel 'bandwidth (MB/s, 10^6 B/s)'\n"
         "set grid\n"
         "set key top left\n"
         "set style data linespoints\n"
         "set pointsize 0.5\n"
      << "plot " << gp_quote(data.string())
      << " using 1:2 title 'windowed (median)' lw 2, \\\n"
         "     '' using 1:4 title 'ping-pong, best round trip', \\\n"
         "     '' using 1:5 title 'ping-pong, first round trip (fresh buffers)'\n";
  }

  return run_gnuplot(dir, script);
}

}  // namespace sluice::bench

namespace sluice::bench {

std::string plot_regcost(const std::vector<RegcostResult>& results, const RegFit& fit,
                         const std::string& emulation, const std::string& png) {
  if (results.empty()) return "no results to plot";
  if (!on_path("gnuplot"))
    return "gnuplot not found on PATH; install it (apt-get install -y gnuplot-nox) or drop --plot";
  std::string err;
  const std::filesystem::path dir = make_plot_dir(err);
  if (dir.empty()) return err;
  const std::filesystem::path data = dir / "regcost.dat";
  const std::filesystem::path script = dir / "regcost.gp";
  {
    std::ofstream f(data);
    f << "# size reg_us dereg_us memcpy_us\n";
    for (const auto& r : results)
      f << r.size << ' ' << r.reg_ns / 1000 << ' ' << r.dereg_ns / 1000 << ' ' << r.memcpy_ns / 1000
        << '\n';
  }
  {
    std::ofstream f(script);
    f << kPngTerminal << "set output " << gp_quote(png) << "\n"
      << "set title "
      << gp_quote("sluice-bench regcost: uring domain (io_uring registered buffers)" +
                  (emulation == "off" ? std::string() : ", " + emulation))
      << "\n"
         "set termoption noenhanced\n"
         "set logscale x 2\n"
         "set logscale y 10\n"
         "set format x '%.0b%B'\n"
         "set xlabel 'buffer size (bytes)'\n"
         "set ylabel 'time (us)'\n"
         "set grid\n"
         "set key top left\n"
         "set style data linespoints\n"
         "set pointsize 0.6\n"
      << "fit_us(x) = " << fit.latency_us << " + x / (" << fit.bandwidth_MBps << ")\n"
      << "plot " << gp_quote(data.string()) << " using 1:2 title 'register' lw 2, \\\n"
      << "     '' using 1:3 title 'deregister', \\\n"
      << "     '' using 1:4 title 'memcpy', \\\n"
      << "     fit_us(x) with lines dt 2 title " << gp_quote("fit: lambda_reg + L/B_reg") << "\n";
  }
  return run_gnuplot(dir, script);
}

}  // namespace sluice::bench

namespace sluice::bench {

std::string plot_series(const std::vector<Series>& series, const std::string& title,
                        const std::string& ylabel, const std::string& png,
                        const std::string& xlabel) {
  if (series.empty()) return "no results to plot";
  if (!on_path("gnuplot"))
    return "gnuplot not found on PATH; install it (apt-get install -y gnuplot-nox) or drop --plot";
  std::string err;
  const std::filesystem::path dir = make_plot_dir(err);
  if (dir.empty()) return err;
  const std::filesystem::path script = dir / "series.gp";
  std::ofstream f(script);
  f << kPngTerminal << "set output " << gp_quote(png) << "\n"
    << "set title " << gp_quote(title) << "\n"
    << "set termoption noenhanced\n"
       "set logscale x 2\n"
       "set format x '%.0b%B'\n"
    << "set xlabel " << gp_quote(xlabel) << "\n"
    << "set ylabel " << gp_quote(ylabel) << "\n"
    << "set grid\n"
       "set key top left\n"
       "set style data linespoints\n"
       "set pointsize 0.6\n"
       "plot ";
  for (std::size_t i = 0; i < series.size(); ++i) {
    const std::filesystem::path data = dir / ("series" + std::to_string(i) + ".dat");
    std::ofstream d(data);
    for (const auto& [x, y] : series[i].points) d << x << ' ' << y << '\n';
    f << (i ? ", \\\n     " : "") << gp_quote(data.string()) << " using 1:2 title "
      << gp_quote(series[i].name) << (series[i].dashed ? " dt 2" : " lw 2");
  }
  f << "\n";
  f.close();
  return run_gnuplot(dir, script);
}

}  // namespace sluice::bench
