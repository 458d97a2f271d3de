// The uring memory domain: registrations really pin (VmPin grows and shrinks by the
// registered size), slots are reused, the local key is usable by a fixed-buffer operation,
// and without CAP_IPC_LOCK RLIMIT_MEMLOCK bounds what may be pinned.
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "mem/reg_emulation.hpp"
#include "mem/uring_domain.hpp"

namespace sluice::mem {
namespace {

// /proc/self/status VmPin in bytes: pages pinned by the kernel for this process.
long vm_pin_bytes() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmPin:", 0) == 0) return std::stol(line.substr(6)) * 1024;
  return -1;
}

std::unique_ptr<UringDomain> open_domain(unsigned slots = 64) {
  std::string why;
  auto d = UringDomain::open({.slots = slots, .ring_entries = 8}, why);
  EXPECT_TRUE(d) << why;
  return d;
}

struct Mapping {
  explicit Mapping(std::size_t n) : size(n) {
    void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) data = static_cast<std::byte*>(p);
  }
  ~Mapping() {
    if (data) munmap(data, size);
  }
  std::span<const std::byte> span() const { return {data, size}; }
  std::byte* data = nullptr;
  std::size_t size;
};

TEST(UringDomain, RegistrationPinsPagesUntilTheLastHandleGoes) {
  auto d = open_domain();
  ASSERT_TRUE(d);
  constexpr std::size_t kSize = 4u << 20;
  Mapping m(kSize);
  ASSERT_TRUE(m.data);
  const long before = vm_pin_bytes();
  ASSERT_GE(before, 0) << "no VmPin in /proc/self/status";
  Registration reg;
  ASSERT_EQ(d->register_memory(m.span(), reg), Errc::ok);
  EXPECT_TRUE(reg.pinned());
  EXPECT_EQ(reg.base(), m.data);
  EXPECT_EQ(reg.length(), kSize);
  // Pinning faults the pages in (FOLL_LONGTERM | FOLL_WRITE) and charges them to pinned_vm.
  EXPECT_EQ(vm_pin_bytes() - before, static_cast<long>(kSize));
  EXPECT_EQ(d->pinned_bytes(), kSize);
  EXPECT_EQ(d->slots_in_use(), 1u);
  {
    Registration copy = reg;  // shares the registration
    EXPECT_EQ(reg.use_count(), 2u);
    reg.reset();
    EXPECT_EQ(vm_pin_bytes() - before, static_cast<long>(kSize)) << "a copy still holds it";
  }
  EXPECT_EQ(vm_pin_bytes(), before);
  EXPECT_EQ(d->pinned_bytes(), 0u);
  EXPECT_EQ(d->slots_in_use(), 0u);
}

TEST(UringDomain, SlotsAreDistinctReusedAndBounded) {
  auto d = open_domain(4);
  ASSERT_TRUE(d);
  Mapping m(4 * 4096);
  ASSERT_TRUE(m.data);
  std::vector<Registration> regs(4);
  std::vector<uint64_t> keys;
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(d->register_memory(m.span().subspan(i * 4096, 4096), regs[i]), Errc::ok);
    keys.push_back(regs[i].local_key().value);
    EXPECT_LT(keys.back(), 4u);
    for (int j = 0; j < i; ++j) EXPECT_NE(keys[j], keys.back());
  }
  Registration extra;
  EXPECT_EQ(d->register_memory(m.span(), extra), Errc::no_memory) << "the table is full";
  EXPECT_FALSE(extra.pinned());
  EXPECT_EQ(d->failures(), 1u);
  const uint64_t freed = regs[2].local_key().value;
  regs[2].reset();
  ASSERT_EQ(d->register_memory(m.span(), extra), Errc::ok);
  EXPECT_EQ(extra.local_key().value, freed) << "the released slot is reused";
  EXPECT_EQ(d->registrations(), 5u);
}

TEST(UringDomain, BadBuffersAreRefused) {
  auto d = open_domain();
  ASSERT_TRUE(d);
  Registration reg;
  EXPECT_EQ(d->register_memory({}, reg), Errc::invalid_argument);
  // Address space that is not mapped: the kernel cannot pin it (EFAULT).
  void* hole = mmap(nullptr, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(hole, MAP_FAILED);
  munmap(hole, 8192);
  EXPECT_NE(d->register_memory({static_cast<std::byte*>(hole), 8192}, reg), Errc::ok);
  EXPECT_EQ(d->last_error(), EFAULT);
  EXPECT_EQ(d->slots_in_use(), 0u) << "a refused registration gives its slot back";
}

// The local key names the slot to the kernel: WRITE_FIXED from it writes the registered
// bytes, and a buffer outside the slot's range is refused.
TEST(UringDomain, LocalKeyIsTheFixedBufferIndex) {
  auto d = open_domain();
  ASSERT_TRUE(d);
  Mapping m(8192);
  ASSERT_TRUE(m.data);
  for (std::size_t i = 0; i < m.size; ++i) m.data[i] = static_cast<std::byte>(i * 7 + 3);
  Registration reg;
  ASSERT_EQ(d->register_memory(m.span().subspan(0, 4096), reg), Errc::ok);
  int pipefd[2];
  ASSERT_EQ(pipe(pipefd), 0);
  auto write_fixed = [&](const std::byte* p, unsigned n) {
    io_uring_sqe* sqe = io_uring_get_sqe(&d->ring());
    io_uring_prep_write_fixed(sqe, pipefd[1], p, n, 0, static_cast<int>(reg.local_key().value));
    EXPECT_EQ(io_uring_submit(&d->ring()), 1);
    io_uring_cqe* cqe = nullptr;
    EXPECT_EQ(io_uring_wait_cqe(&d->ring(), &cqe), 0);
    const int res = cqe->res;
    io_uring_cqe_seen(&d->ring(), cqe);
    return res;
  };
  EXPECT_EQ(write_fixed(m.data + 100, 1000), 1000);
  std::vector<std::byte> got(1000);
  ASSERT_EQ(read(pipefd[0], got.data(), got.size()), 1000);
  EXPECT_EQ(std::memcmp(got.data(), m.data + 100, 1000), 0);
  EXPECT_EQ(write_fixed(m.data + 4096, 100), -EFAULT) << "outside the registered range";
  close(pipefd[0]);
  close(pipefd[1]);
}

// Drops CAP_IPC_LOCK from this (child) process: it then pins like an unprivileged user.
bool drop_ipc_lock() {
  __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (syscall(SYS_capget, &hdr, data) != 0) return false;
  data[CAP_IPC_LOCK / 32].effective &= ~(1u << (CAP_IPC_LOCK % 32));
  data[CAP_IPC_LOCK / 32].permitted &= ~(1u << (CAP_IPC_LOCK % 32));
  return syscall(SYS_capset, &hdr, data) == 0;
}

// Without CAP_IPC_LOCK a registration past RLIMIT_MEMLOCK fails with ENOMEM (no_memory);
// the limit is per user (the kernel's user_struct locked_vm), so the room left may be
// smaller than the limit when other processes of the user pin too.
TEST(UringDomain, MemlockLimitBoundsPinningWithoutCapIpcLock) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (!drop_ipc_lock()) _exit(10);
    rlimit lim{4u << 20, 4u << 20};
    if (setrlimit(RLIMIT_MEMLOCK, &lim) != 0) _exit(11);
    std::string why;
    auto d = UringDomain::open({.slots = 8, .ring_entries = 8}, why);
    if (!d) _exit(12);
    Mapping small(256 * 1024), big(8u << 20);
    Registration a, b;
    if (d->register_memory(small.span(), a) != Errc::ok) _exit(13);
    if (d->register_memory(big.span(), b) != Errc::no_memory) _exit(14);
    if (d->last_error() != ENOMEM) _exit(15);
    a.reset();
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "10/11: cannot drop CAP_IPC_LOCK / set the limit; 12: no ring; 13: a registration "
         "under the limit failed; 14/15: one over the limit did not fail with ENOMEM";
}

// With CAP_IPC_LOCK (root) the kernel does not charge RLIMIT_MEMLOCK: a registration
// twice the limit succeeds.
TEST(UringDomain, CapIpcLockIsNotBoundByMemlock) {
  __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  ASSERT_EQ(syscall(SYS_capget, &hdr, data), 0);
  if (!(data[CAP_IPC_LOCK / 32].effective & (1u << (CAP_IPC_LOCK % 32))))
    GTEST_SKIP() << "not running with CAP_IPC_LOCK";
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    rlimit lim{1u << 20, 1u << 20};
    if (setrlimit(RLIMIT_MEMLOCK, &lim) != 0) _exit(11);
    std::string why;
    auto d = UringDomain::open({.slots = 8, .ring_entries = 8}, why);
    if (!d) _exit(12);
    Mapping big(2u << 20);
    Registration b;
    _exit(d->register_memory(big.span(), b) == Errc::ok ? 0 : 13);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(RegEmulation, ParsesTheKnobAndRejectsNonsense) {
  RegEmulation e;
  std::string why;
  ASSERT_TRUE(parse_reg_emulation("68,200", e, why)) << why;
  EXPECT_DOUBLE_EQ(e.latency_ns, 68000);
  EXPECT_DOUBLE_EQ(e.ns_per_page, 200);
  EXPECT_TRUE(e.active());
  EXPECT_DOUBLE_EQ(e.target_ns(8192), 68000 + 400);
  EXPECT_NE(e.describe().find("EMULATED"), std::string::npos);
  ASSERT_TRUE(parse_reg_emulation("off", e, why));
  EXPECT_FALSE(e.active());
  EXPECT_EQ(e.describe(), "off");
  for (const char* bad : {"68", "x,1", "-1,5", "1,", ",2", "1,2,3"})
    EXPECT_FALSE(parse_reg_emulation(bad, e, why)) << bad;
}

// Every real registration lasts at least the emulated time (a lower bound: the busy-wait
// stops at the target, never before), and the time added is counted.
TEST(RegEmulation, StretchesEveryRealRegistration) {
  auto d = open_domain();
  ASSERT_TRUE(d);
  constexpr std::size_t kSize = 64 * 4096;
  Mapping m(kSize);
  ASSERT_TRUE(m.data);
  std::memset(m.data, 1, kSize);
  RegEmulation e;
  std::string why;
  ASSERT_TRUE(parse_reg_emulation("2000,1000", e, why));  // 2 ms + 64 us for 64 pages
  set_reg_emulation(e);
  const uint64_t added_before = reg_emulation_added_ns();
  Registration reg;
  const auto t0 = std::chrono::steady_clock::now();
  const Errc rc = d->register_memory(m.span(), reg);
  const auto took = std::chrono::steady_clock::now() - t0;
  set_reg_emulation(RegEmulation{});
  ASSERT_EQ(rc, Errc::ok);
  EXPECT_TRUE(reg.pinned());
  EXPECT_GE(took, std::chrono::microseconds(2064));
  EXPECT_GT(reg_emulation_added_ns(), added_before);
  // Off again: nothing more is added.
  const uint64_t added = reg_emulation_added_ns();
  Registration again;
  ASSERT_EQ(d->register_memory(m.span(), again), Errc::ok);
  EXPECT_EQ(reg_emulation_added_ns(), added);
}

}  // namespace
}  // namespace sluice::mem
