// sluice-demo: what `make run` shows. Every rank exchanges messages of growing size with
// every other rank (verifying the contents), passes a token around a ring, and rank 0
// prints which driver and protocol each size used and how long the exchange took.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <vector>

#include <sluice/introspect.hpp>
#include <sluice/sluice.hpp>

int main(int argc, char** argv) {
  if (argc > 1) {
    const bool help = !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h");
    std::fprintf(help ? stdout : stderr,
                 "usage: sluicerun -n N sluice-demo\n"
                 "  every rank exchanges messages of growing size with every other (checking\n"
                 "  the contents) and passes a token around a ring; rank 0 prints the driver\n"
                 "  and protocol each size used and how long the exchange took (make run)\n"
                 "  -h, --help   show this help\n");
    return help ? 0 : 2;
  }
  // A start-up failure (e.g. a configuration value out of range) is a message, not a crash.
  std::unique_ptr<sluice::Session> session;
  try {
    session = std::make_unique<sluice::Session>();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sluice-demo: %s\n", e.what());
    return 1;
  }
  sluice::Session& s = *session;
  const int n = s.size(), me = s.rank();

  // 1. Token ring: each rank adds its rank number.
  long token = 0;
  if (n > 1) {
    if (me == 0) {
      token = 0;
      s.send(std::as_bytes(std::span(&token, 1)), 1 % n, 1);
      s.recv(std::as_writable_bytes(std::span(&token, 1)), n - 1, 1);
    } else {
      s.recv(std::as_writable_bytes(std::span(&token, 1)), me - 1, 1);
      token += me;
      s.send(std::as_bytes(std::span(&token, 1)), (me + 1) % n, 1);
    }
  }

  // 2. All-to-all exchange at several sizes, contents checked.
  const std::vector<std::size_t> sizes = {8, 1024, 4096, 16384, 65536, 1 << 20, 8 << 20};
  std::vector<double> seconds(sizes.size());
  long errors = 0;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    const std::size_t sz = sizes[k];
    std::vector<std::vector<unsigned char>> out(n), in(n);
    std::vector<sluice::Request> reqs;
    s.barrier();
    auto t0 = std::chrono::steady_clock::now();
    for (int p = 0; p < n; ++p) {
      in[p].assign(sz, 0);
      reqs.push_back(s.irecv(std::as_writable_bytes(std::span(in[p])), p, 10));
    }
    for (int p = 0; p < n; ++p) {
      out[p].assign(sz, static_cast<unsigned char>(me * 31 + p));
      reqs.push_back(s.isend(std::as_bytes(std::span(out[p])), p, 10));
    }
    if (s.waitall(reqs) != sluice::Errc::ok) ++errors;
    seconds[k] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (int p = 0; p < n; ++p)
      for (unsigned char c : in[p])
        if (c != static_cast<unsigned char>(p * 31 + me)) {
          ++errors;
          break;
        }
  }
  long total_errors = errors;
  // Gather the error counts on rank 0.
  if (me == 0) {
    for (int p = 1; p < n; ++p) {
      long e = 0;
      s.recv(std::as_writable_bytes(std::span(&e, 1)), p, 20);
      total_errors += e;
    }
  } else {
    s.send(std::as_bytes(std::span(&errors, 1)), 0, 20);
  }

  if (me == 0) {
    std::printf("Sluice demo: %d ranks; rank 0 reaches rank %d via '%.*s'\n", n, n > 1 ? 1 : 0,
                static_cast<int>(s.driver_name(n > 1 ? 1 : 0).size()),
                s.driver_name(n > 1 ? 1 : 0).data());
    std::printf("token ring: sum of ranks = %ld (expected %ld)\n", token,
                static_cast<long>(n) * (n - 1) / 2);
    std::printf("%-10s %-14s %12s %14s\n", "size", "protocol", "all-to-all", "per rank");
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      const int peer = n > 1 ? 1 : 0;
      double mbps = static_cast<double>(sizes[k]) * 2 * n / seconds[k] / 1e6;
      std::printf("%-10zu %-14s %9.1f us %9.0f MB/s\n", sizes[k],
                  sluice::introspect::protocol_for(s, peer, sizes[k]).c_str(), seconds[k] * 1e6,
                  mbps);
    }
    std::printf("data errors: %ld\n", total_errors);
    std::printf("%s", s.stats_report().c_str());
  }
  // Rank 0 judges the whole job (it holds every error count and the full token).
  if (me != 0) return errors == 0 ? 0 : 1;
  return total_errors == 0 && (n == 1 || token == static_cast<long>(n) * (n - 1) / 2) ? 0 : 1;
}
