// BootClient on its own: singleton mode, bad launcher environments, and a launcher that
// goes away (a fake one speaking the wire protocol from a thread).
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "boot/boot.hpp"
#include "boot/boot_wire.hpp"

using sluice::Errc;
using sluice::detail::BootClient;
namespace wire = sluice::detail::bootwire;

namespace {

void clear_launcher_environment() {
  for (const char* name : {"SLUICE_RANK", "SLUICE_SIZE", "SLUICE_LOCAL_RANK", "SLUICE_LOCAL_SIZE",
                           "SLUICE_JOB_ID", "SLUICE_JOB_KEY", "SLUICE_BOOT_ADDR"})
    unsetenv(name);
}

void set_launcher_environment(const std::string& address, int rank, int size) {
  setenv("SLUICE_RANK", std::to_string(rank).c_str(), 1);
  setenv("SLUICE_SIZE", std::to_string(size).c_str(), 1);
  setenv("SLUICE_LOCAL_RANK", std::to_string(rank).c_str(), 1);
  setenv("SLUICE_LOCAL_SIZE", std::to_string(size).c_str(), 1);
  setenv("SLUICE_JOB_ID", "test-job", 1);
  setenv("SLUICE_JOB_KEY", "0123456789abcdef0123456789abcdef", 1);
  setenv("SLUICE_BOOT_ADDR", address.c_str(), 1);
}

class BootClientTest : public ::testing::Test {
 protected:
  void SetUp() override { clear_launcher_environment(); }
  void TearDown() override { clear_launcher_environment(); }
};

// Reads one whole frame from a blocking socket; false at end of stream.
bool read_frame(int fd, wire::Frame& frame) {
  wire::FrameReader reader;
  for (;;) {
    if (reader.next(frame) == wire::FrameReader::Status::frame) return true;
    char byte;
    if (read(fd, &byte, 1) != 1) return false;
    reader.feed(&byte, 1);
  }
}

// A launcher stand-in: accepts one rank, answers hello, then runs `after_hello`.
class FakeLauncher {
 public:
  template <class AfterHello>
  explicit FakeLauncher(AfterHello after_hello) {
    directory_ =
        std::filesystem::temp_directory_path() / ("boot-client-test-" + std::to_string(getpid()));
    std::filesystem::create_directories(directory_);
    path_ = (directory_ / "boot.sock").string();
    listener_ = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path_.c_str(), sizeof address.sun_path - 1);
    unlink(path_.c_str());
    EXPECT_EQ(bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    EXPECT_EQ(listen(listener_, 4), 0);
    thread_ = std::thread([this, after_hello] {
      int fd = accept(listener_, nullptr, nullptr);
      wire::Frame hello;
      if (fd >= 0 && read_frame(fd, hello) && hello.type == wire::MsgType::hello) {
        // hello_ok hands out the job key; here the one the rank presented.
        std::string ok =
            wire::make_frame(wire::MsgType::hello_ok, hello.payload.substr(4, wire::job_key_size));
        (void)!write(fd, ok.data(), ok.size());
        after_hello(fd);
      }
      if (fd >= 0) close(fd);
    });
  }
  ~FakeLauncher() {
    thread_.join();
    close(listener_);
    std::filesystem::remove_all(directory_);
  }
  const std::string& path() const { return path_; }

 private:
  std::filesystem::path directory_;
  std::string path_;
  int listener_ = -1;
  std::thread thread_;
};

TEST_F(BootClientTest, LauncherVariablesAreRecognised) {
  for (const char* name :
       {"RANK", "SIZE", "LOCAL_RANK", "LOCAL_SIZE", "JOB_ID", "JOB_KEY", "BOOT_ADDR"})
    EXPECT_TRUE(sluice::detail::is_launcher_variable(name)) << name;
  for (const char* name : {"EAGER_LIMIT", "SLUICE_RANK", "rank", "DRIVERS", ""})
    EXPECT_FALSE(sluice::detail::is_launcher_variable(name)) << name;
}

TEST_F(BootClientTest, SingletonWithoutLauncher) {
  std::string error;
  auto boot = sluice::detail::join_job(error, /*exit_when_launcher_gone=*/false);
  ASSERT_TRUE(boot) << error;
  EXPECT_EQ(boot->rank(), 0);
  EXPECT_EQ(boot->size(), 1);
  EXPECT_EQ(boot->local_rank(), 0);
  EXPECT_EQ(boot->local_size(), 1);
  EXPECT_FALSE(boot->job_id().empty());
  std::string value;
  EXPECT_FALSE(boot->get("k", value));
  EXPECT_EQ(boot->put("k", std::string("a\0b\n", 4)), Errc::ok);
  EXPECT_EQ(boot->fence(), Errc::ok);
  ASSERT_TRUE(boot->get("k", value));
  EXPECT_EQ(value, std::string("a\0b\n", 4));
  EXPECT_EQ(boot->put("", "empty key"), Errc::invalid_argument);
  EXPECT_EQ(boot->finalize(), Errc::ok);
}

TEST_F(BootClientTest, SizeWithoutAddressIsAnError) {
  setenv("SLUICE_SIZE", "4", 1);
  std::string error;
  EXPECT_FALSE(sluice::detail::join_job(error, /*exit_when_launcher_gone=*/false));
  EXPECT_NE(error.find("SLUICE_BOOT_ADDR"), std::string::npos) << error;
}

TEST_F(BootClientTest, UnreachableLauncherIsAnError) {
  set_launcher_environment("/nonexistent/sluicerun/boot.sock", 0, 2);
  std::string error;
  EXPECT_FALSE(sluice::detail::join_job(error, /*exit_when_launcher_gone=*/false));
  EXPECT_NE(error.find("/nonexistent/sluicerun/boot.sock"), std::string::npos) << error;
}

TEST_F(BootClientTest, BadRankIsAnError) {
  set_launcher_environment("/nonexistent", 5, 2);
  std::string error;
  EXPECT_FALSE(sluice::detail::join_job(error, /*exit_when_launcher_gone=*/false));
  EXPECT_NE(error.find("SLUICE_RANK=5"), std::string::npos) << error;
}

TEST_F(BootClientTest, LauncherGoneMeansPeerDead) {
  // The launcher accepts the rank, then dies while the rank waits in a fence.
  FakeLauncher launcher([](int fd) {
    wire::Frame frame;
    while (read_frame(fd, frame) && frame.type != wire::MsgType::fence) {
    }
  });
  set_launcher_environment(launcher.path(), 0, 2);
  std::string error;
  auto boot = sluice::detail::join_job(error, /*exit_when_launcher_gone=*/false);
  ASSERT_TRUE(boot) << error;
  EXPECT_EQ(boot->rank(), 0);
  EXPECT_EQ(boot->size(), 2);
  EXPECT_EQ(boot->job_id(), "test-job");
  EXPECT_EQ(boot->put("k", "v"), Errc::ok);
  EXPECT_EQ(boot->fence(), Errc::peer_dead);
  // Once broken, every call fails at once instead of hanging.
  std::string value;
  EXPECT_FALSE(boot->get("k", value));
  EXPECT_EQ(boot->put("k", "v"), Errc::peer_dead);
  EXPECT_EQ(boot->fence(), Errc::peer_dead);
}

TEST_F(BootClientTest, ValuesTravelByteExact) {
  // The fake answers get with the value of the last put, whatever bytes it holds.
  FakeLauncher launcher([](int fd) {
    wire::Frame frame;
    std::string last_value;
    while (read_frame(fd, frame)) {
      std::string reply;
      if (frame.type == wire::MsgType::put) {
        std::string_view payload(frame.payload);
        std::uint32_t key_size = 0;
        wire::take_u32(payload, key_size);
        last_value = std::string(payload.substr(key_size));
      } else if (frame.type == wire::MsgType::fence) {
        reply = wire::make_frame(wire::MsgType::fence_ok);
      } else if (frame.type == wire::MsgType::get) {
        reply = wire::make_frame(wire::MsgType::get_found, last_value);
      } else if (frame.type == wire::MsgType::finalize) {
        reply = wire::make_frame(wire::MsgType::finalize_ok);
      }
      (void)!write(fd, reply.data(), reply.size());
    }
  });
  set_launcher_environment(launcher.path(), 1, 2);
  std::string error;
  auto boot = sluice::detail::join_job(error, /*exit_when_launcher_gone=*/false);
  ASSERT_TRUE(boot) << error;
  std::string big(64 * 1024, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7);
  EXPECT_EQ(boot->put("big", big), Errc::ok);
  EXPECT_EQ(boot->fence(), Errc::ok);
  std::string value;
  ASSERT_TRUE(boot->get("big", value));
  EXPECT_EQ(value, big);
  EXPECT_EQ(boot->put("huge", std::string(wire::max_value_size + 1, 'x')), Errc::invalid_argument);
  EXPECT_EQ(boot->finalize(), Errc::ok);
  EXPECT_EQ(boot->finalize(), Errc::ok);  // idempotent
}

}  // namespace
