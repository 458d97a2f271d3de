// boot_probe: a rank program for sluicerun's tests. It links only the bootstrap client.
//
//   boot_probe MODE      (run under sluicerun -n N)
//
// Every mode first exchanges a value with every rank (put / fence / get). Then:
//   ok              a second round that replaces the values, checks local ranks per host
//                   (SLUICE_HOST_ID, set by sluicerun --hosts) and, with
//                   BOOT_PROBE_NETNS=1, that each host is its own network namespace;
//                   finalizes, exits 0
//   exit-early      the victim rank exit(3)s without finalize; the others wait in a fence
//   return-early    the victim returns 0 from main without finalize; the others wait
//   sigkill         the victim SIGKILLs itself; the others wait in a fence
//   abort           the victim calls abort(7, ...); the others wait in a fence
//   early-finalize  the victim finalizes and exits 0; the others' fence must fail
//   hang            every rank prints its pid and sleeps forever (for --timeout / signals)
//   stubborn        every rank ignores SIGTERM; the victim exit(3)s, the others sleep
//   output          every rank writes lines in pieces (for line-buffered forwarding)
//   stranger        (sluicerun --hosts, TCP store) rank 0 plays a stranger: a hello with a
//                   wrong job key must be rejected and a garbage frame must get the
//                   connection closed; then the job goes on and finalizes
//   token-hidden    (sluicerun --hosts --launch) checks that no process shows a launch
//                   token on its command line while the job runs; then as ok
//   store-flood     exchanges values round after round while store_flood.py floods the
//                   launcher's store, until $FLOOD_DIR/done exists
//   bind            prints how many CPUs the rank may run on; with "one", requires 1
//   threads         prints the process's thread count (the launcher watchdog is a thread
//                   only where the parent-death signal cannot reach the rank)
// The victim is rank 1 (rank 0 in a one-rank job).
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "boot/boot.hpp"
#include "boot/boot_wire.hpp"

using sluice::Errc;
using sluice::detail::BootClient;

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "boot_probe: CHECK FAILED: %s\n", what.c_str());
  ++failures;
}

// Arbitrary bytes (newlines and NULs included); rank 0's value is 64 KiB.
std::string value_for(int rank, int round) {
  std::size_t length = rank == 0 ? 65536 : 100 + 37 * static_cast<std::size_t>(rank);
  std::string value(length, '\0');
  for (std::size_t i = 0; i < length; ++i)
    value[i] = static_cast<char>((i * 31 + static_cast<std::size_t>(rank) * 7 + round) & 0xff);
  value[0] = '\n';
  return value;
}

std::string key_for(int rank) {
  return "probe/" + std::to_string(rank);
}

void exchange(BootClient& boot, int round) {
  const int size = boot.size();
  check(boot.put(key_for(boot.rank()), value_for(boot.rank(), round)) == Errc::ok, "put");
  if (round > 0) {
    // Not published before the fence: a get still sees the previous round's value.
    std::string value;
    check(boot.get(key_for(boot.rank()), value) && value == value_for(boot.rank(), round - 1),
          "value before fence is the old one");
  }
  check(boot.fence() == Errc::ok, "fence");
  for (int r = 0; r < size; ++r) {
    std::string value;
    bool found = boot.get(key_for(r), value);
    check(found && value == value_for(r, round),
          "value of rank " + std::to_string(r) + " in round " + std::to_string(round));
  }
  std::string value;
  check(!boot.get("probe/missing", value), "a missing key is reported missing");
}

std::string host_of_this_rank() {
  const char* host = std::getenv("SLUICE_HOST_ID");
  return host != nullptr ? host : "(this host)";
}

std::string network_namespace() {
  char link[128] = {};
  ssize_t n = readlink("/proc/self/ns/net", link, sizeof link - 1);
  return n > 0 ? std::string(link, static_cast<std::size_t>(n)) : "(unknown)";
}

// Every rank's host, local rank / size and network namespace, checked by every rank:
// local ranks count 0.. in rank order within each host.
void check_placement(BootClient& boot) {
  const int size = boot.size();
  std::string mine = host_of_this_rank() + "|" + std::to_string(boot.local_rank()) + "|" +
                     std::to_string(boot.local_size()) + "|" + network_namespace();
  check(boot.put("probe/place/" + std::to_string(boot.rank()), mine) == Errc::ok, "put place");
  check(boot.fence() == Errc::ok, "fence");
  std::vector<std::vector<std::string>> fields(size);
  for (int r = 0; r < size; ++r) {
    std::string value;
    check(boot.get("probe/place/" + std::to_string(r), value), "get place");
    std::string item;
    for (char c : value + "|") {
      if (c == '|') {
        fields[r].push_back(item);
        item.clear();
      } else {
        item += c;
      }
    }
    if (fields[r].size() != 4) fields[r].assign(4, "?");
  }
  const bool netns = std::getenv("BOOT_PROBE_NETNS") != nullptr;
  for (int r = 0; r < size; ++r) {
    int before = 0, total = 0;
    for (int q = 0; q < size; ++q) {
      if (fields[q][0] != fields[r][0]) {
        if (netns)
          check(fields[q][3] != fields[r][3],
                "ranks " + std::to_string(q) + " and " + std::to_string(r) +
                    " are on different hosts but share network namespace " + fields[q][3]);
        continue;
      }
      if (netns) check(fields[q][3] == fields[r][3], "same host, same network namespace");
      if (q < r) ++before;
      ++total;
    }
    check(fields[r][1] == std::to_string(before) && fields[r][2] == std::to_string(total),
          "rank " + std::to_string(r) + " on " + fields[r][0] + " has local rank " + fields[r][1] +
              " of " + fields[r][2] + ", expected " + std::to_string(before) + " of " +
              std::to_string(total));
  }
  if (boot.rank() == 0)
    for (int r = 0; r < size; ++r)
      std::printf("boot_probe: rank %d on host %s local %s of %s\n", r, fields[r][0].c_str(),
                  fields[r][1].c_str(), fields[r][2].c_str());
}

// Connects to the launcher's TCP store (SLUICE_BOOT_ADDR=tcp:IP:PORT) as an outsider.
int connect_to_store() {
  std::string address = std::getenv("SLUICE_BOOT_ADDR");
  auto colon = address.rfind(':');
  if (!address.starts_with("tcp:") || colon == std::string::npos) return -1;
  sockaddr_in where{};
  where.sin_family = AF_INET;
  where.sin_port = htons(static_cast<std::uint16_t>(std::atoi(address.c_str() + colon + 1)));
  if (inet_pton(AF_INET, address.substr(4, colon - 4).c_str(), &where.sin_addr) != 1) return -1;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&where), sizeof where) != 0) {
    close(fd);
    fd = -1;
  }
  return fd;
}

// Everything the launcher sends until it closes the connection.
std::string read_until_closed(int fd) {
  std::string all;
  char buffer[4096];
  ssize_t n;
  while ((n = recv(fd, buffer, sizeof buffer, 0)) > 0) all.append(buffer, n);
  close(fd);
  return all;
}

void play_stranger() {
  namespace wire = sluice::detail::bootwire;
  // A hello for rank 1 with the right job id but a made-up key.
  int fd = connect_to_store();
  check(fd >= 0, "stranger connects to the TCP store");
  if (fd < 0) return;
  std::string hello;
  wire::append_u32(hello, 1);
  hello += std::string(wire::job_key_size, '0');
  hello += std::getenv("SLUICE_JOB_ID");
  std::string frame = wire::make_frame(wire::MsgType::hello, hello);
  check(send(fd, frame.data(), frame.size(), 0) == static_cast<ssize_t>(frame.size()), "send");
  std::string reply = read_until_closed(fd);
  check(reply == wire::make_frame(wire::MsgType::reject, "wrong job key"),
        "a wrong key gets a reject and the connection closed");
  // A frame header announcing 1 MiB before any hello: closed, not read.
  fd = connect_to_store();
  check(fd >= 0, "stranger connects again");
  if (fd < 0) return;
  std::string header;
  wire::append_u32(header, static_cast<std::uint32_t>(wire::MsgType::put));
  wire::append_u32(header, 1u << 20);
  check(send(fd, header.data(), header.size(), 0) == 8, "send header");
  check(read_until_closed(fd).empty(), "an oversized first frame closes the connection");
  // This rank's launch token (as if stolen): spent by this rank's own hello, and never good
  // for another rank.
  const std::string& token = sluice::detail::launch_token_used();
  check(!token.empty(), "a --launch rank gets a launch token, not the job key, on its stdin");
  if (token.empty()) return;
  for (std::uint32_t rank : {0u, 1u}) {
    fd = connect_to_store();
    check(fd >= 0, "stranger connects with a token");
    if (fd < 0) return;
    hello.clear();
    wire::append_u32(hello, rank);
    hello += token;
    hello += std::getenv("SLUICE_JOB_ID");
    frame = wire::make_frame(wire::MsgType::hello, hello);
    check(send(fd, frame.data(), frame.size(), 0) == static_cast<ssize_t>(frame.size()), "send");
    reply = read_until_closed(fd);
    // This is rank 0: its own token, spent, is refused saying so (whoever shows it has seen
    // it used); for another rank it is merely a wrong key.
    const std::string why = rank == 0 ? "rank 0's launch token was already used: another "
                                        "process joined as rank 0 with it first"
                                      : "wrong job key";
    check(reply == wire::make_frame(wire::MsgType::reject, why),
          rank == 0 ? "a spent launch token is refused, saying so"
                    : "a token is good for its own rank only");
  }
  std::printf("boot_probe: stranger refused four times\n");
}

// No process on this host shows a launch token on its command line (/proc/*/cmdline, which
// every user can read): neither this rank's own token anywhere, nor any SLUICE_LAUNCH_TOKEN
// value but "stdin" on a command line of this job. Called while every rank of the job runs
// (after a fence).
void check_no_token_on_command_lines(int rank) {
  const std::string& token = sluice::detail::launch_token_used();
  check(token.size() == 32, "this rank read its launch token on standard input");
  const std::string job_id = std::string("SLUICE_JOB_ID=") + std::getenv("SLUICE_JOB_ID");
  DIR* proc = opendir("/proc");
  check(proc != nullptr, "opendir /proc");
  if (proc == nullptr) return;
  int scanned = 0;
  while (dirent* entry = readdir(proc)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    FILE* f = std::fopen(("/proc/" + std::string(entry->d_name) + "/cmdline").c_str(), "r");
    if (f == nullptr) continue;
    std::string line;
    char buffer[4096];
    std::size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) line.append(buffer, n);
    std::fclose(f);
    ++scanned;
    std::replace(line.begin(), line.end(), '\0', ' ');
    const std::string pid = entry->d_name;
    if (!token.empty())
      check(line.find(token) == std::string::npos,
            "pid " + pid + " has this rank's launch token on its command line: " + line);
    // (Only this job's command lines: other jobs on the machine may run older launchers.)
    if (line.find(job_id) == std::string::npos) continue;
    for (auto at = line.find("SLUICE_LAUNCH_TOKEN="); at != std::string::npos;
         at = line.find("SLUICE_LAUNCH_TOKEN=", at + 1))
      check(line.compare(at + 20, 6, "stdin ") == 0 || line.compare(at + 20, 6, "stdin") == 0,
            "pid " + pid + " has a launch token on its command line: " + line);
  }
  closedir(proc);
  check(scanned > 0, "read some /proc/*/cmdline");
  std::printf("boot_probe: rank %d: looked for launch tokens in %d command lines\n", rank, scanned);
}

// Blocks in a fence that can only end when the job is torn down.
int wait_for_teardown(BootClient& boot) {
  Errc e = boot.fence();
  std::fprintf(stderr, "boot_probe: rank %d: fence returned %s instead of waiting\n", boot.rank(),
               std::string(sluice::to_string(e)).c_str());
  return 4;
}

void write_out(const std::string& text) {
  (void)!write(STDOUT_FILENO, text.data(), text.size());
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "ok";
  std::string error;
  auto boot = sluice::detail::join_job(error);
  if (!boot) {
    std::fprintf(stderr, "boot_probe: cannot join the job: %s\n", error.c_str());
    return 2;
  }
  const int rank = boot->rank(), size = boot->size();
  const int victim = size > 1 ? 1 : 0;
  if (std::getenv("SLUICE_HOST_ID") == nullptr)
    check(boot->local_rank() == rank && boot->local_size() == size, "local rank and size");

  exchange(*boot, 0);

  if (mode == "ok") {
    // Every rank must see the same job id.
    check(boot->put("probe/job/" + std::to_string(rank), boot->job_id()) == Errc::ok, "put id");
    exchange(*boot, 1);
    check_placement(*boot);
    for (int r = 0; r < size; ++r) {
      std::string id;
      check(boot->get("probe/job/" + std::to_string(r), id) && id == boot->job_id(), "job id");
    }
    const char* marker = std::getenv("BOOT_PROBE_MARKER");
    if (rank == 0) std::printf("boot_probe: marker=%s\n", marker ? marker : "(unset)");
    check(boot->finalize() == Errc::ok, "finalize");
    std::printf("boot_probe: rank %d of %d %s\n", rank, size, failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
  }
  if (mode == "stranger") {
    if (rank == 0) play_stranger();
    exchange(*boot, 1);  // the job's own store is unaffected
    check(boot->finalize() == Errc::ok, "finalize");
    std::printf("boot_probe: rank %d of %d %s\n", rank, size, failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
  }
  if (mode == "token-hidden") {
    check_no_token_on_command_lines(rank);
    exchange(*boot, 1);  // every rank checked while all ran
    check(boot->finalize() == Errc::ok, "finalize");
    std::printf("boot_probe: rank %d of %d %s\n", rank, size, failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
  }
  if (mode == "store-flood") {
    // For store_flood.py: rank 0 writes the store's address to $FLOOD_DIR/addr, then every
    // rank exchanges values round after round (each checked) until rank 0 sees
    // $FLOOD_DIR/done and says so through the store.
    const char* dir = std::getenv("FLOOD_DIR");
    check(dir != nullptr, "FLOOD_DIR is set");
    if (dir == nullptr) return 1;
    if (rank == 0) {
      const std::string path = std::string(dir) + "/addr";
      if (FILE* f = std::fopen((path + ".tmp").c_str(), "w")) {
        std::fprintf(f, "%s\n", std::getenv("SLUICE_BOOT_ADDR"));
        std::fclose(f);
        std::rename((path + ".tmp").c_str(), path.c_str());
      }
    }
    int rounds = 1;
    for (bool stop = false; !stop && failures == 0; ++rounds) {
      if (rank == 0)
        check(boot->put("flood/stop",
                        access((std::string(dir) + "/done").c_str(), F_OK) == 0 ? "1" : "0") ==
                  Errc::ok,
              "put stop");
      exchange(*boot, rounds);
      std::string value;
      check(boot->get("flood/stop", value), "get stop");
      stop = value == "1";
      timespec pause_time{0, 20'000'000};
      nanosleep(&pause_time, nullptr);
    }
    check(boot->finalize() == Errc::ok, "finalize");
    std::printf("boot_probe: rank %d of %d %s after %d rounds\n", rank, size,
                failures ? "FAILED" : "ok", rounds);
    return failures ? 1 : 0;
  }
  if (mode == "exit-early") {
    if (rank == victim) std::exit(3);
    return wait_for_teardown(*boot);
  }
  if (mode == "return-early") {
    if (rank == victim) return 0;
    return wait_for_teardown(*boot);
  }
  if (mode == "sigkill") {
    if (rank == victim) kill(getpid(), SIGKILL);
    return wait_for_teardown(*boot);
  }
  if (mode == "abort") {
    if (rank == victim) boot->abort(7, "probe requested abort");
    return wait_for_teardown(*boot);
  }
  if (mode == "early-finalize") {
    if (rank != victim) {
      Errc e = boot->fence();
      check(e == Errc::peer_dead, "fence fails when a rank has finalized");
      if (e == Errc::peer_dead)
        std::printf("boot_probe: rank %d: fence failed as expected\n", rank);
    }
    check(boot->finalize() == Errc::ok, "finalize");
    return failures ? 1 : 0;
  }
  if (mode == "hang") {
    std::printf("boot_probe: rank %d pid %ld addr %s hanging\n", rank, static_cast<long>(getpid()),
                std::getenv("SLUICE_BOOT_ADDR"));
    std::fflush(stdout);
    for (;;) pause();
  }
  if (mode == "stubborn") {
    // Only the launcher's SIGKILL after its grace period can end the others.
    signal(SIGTERM, SIG_IGN);
    check(boot->fence() == Errc::ok, "fence");
    if (rank == victim) std::exit(3);
    for (;;) pause();
  }
  if (mode == "output") {
    // Each line goes out in two writes with a pause between: only line-buffered
    // forwarding keeps other ranks' lines from landing inside it.
    for (int i = 0; i < 20; ++i) {
      write_out("rank " + std::to_string(rank) + " line " + std::to_string(i) + ": ");
      timespec pause_time{0, 2'000'000};
      nanosleep(&pause_time, nullptr);
      write_out("payload-" + std::to_string(rank) + "-" + std::to_string(i) + "\n");
    }
    std::fprintf(stderr, "rank %d says goodbye on stderr\n", rank);
    check(boot->finalize() == Errc::ok, "finalize");
    return failures ? 1 : 0;
  }
  if (mode == "bind") {
    cpu_set_t cpus;
    check(sched_getaffinity(0, sizeof cpus, &cpus) == 0, "sched_getaffinity");
    int count = CPU_COUNT(&cpus);
    std::printf("boot_probe: rank %d may run on %d cpus\n", rank, count);
    if (argc > 2 && std::strcmp(argv[2], "one") == 0) check(count == 1, "bound to one CPU");
    check(boot->finalize() == Errc::ok, "finalize");
    return failures ? 1 : 0;
  }
  if (mode == "threads") {
    int threads = 0;
    if (FILE* f = std::fopen("/proc/self/status", "r")) {
      char line[256];
      while (std::fgets(line, sizeof line, f))
        if (std::sscanf(line, "Threads: %d", &threads) == 1) break;
      std::fclose(f);
    }
    std::printf("boot_probe: rank %d threads %d\n", rank, threads);
    check(boot->finalize() == Errc::ok, "finalize");
    return failures ? 1 : 0;
  }
  std::fprintf(stderr, "boot_probe: unknown mode '%s'\n", mode.c_str());
  return 2;
}
