// [NewMadeleine]'s cost model (src/proto/cost_model.hpp): the fit recovers known parameters
// from synthetic data, the model follows the paper's equations where they apply, the
// profile round-trips, and a bad profile is refused with a message saying where and why.
// Nothing here measures time.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>

#include "proto/cost_model.hpp"

namespace sluice::proto {
namespace {

TEST(CostModelFit, RecoversLatencyAndBandwidth) {
  // T(L) = 68 µs + L / 20000 MB/s (the paper's InfiniBand registration) with ±2 % noise.
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> noise(0.98, 1.02);
  std::vector<std::pair<double, double>> pts;
  for (double L = 4096; L <= 64.0 * (1 << 20); L *= 2)
    pts.emplace_back(L, (68 + L / 20000) * noise(rng));
  const LinearCost c = fit_linear(pts);
  EXPECT_NEAR(c.latency_us, 68, 68 * 0.05);
  EXPECT_NEAR(c.MBps, 20000, 20000 * 0.05);
}

TEST(CostModelFit, ExactDataExactFit) {
  std::vector<std::pair<double, double>> pts;
  for (double L : {65536.0, 262144.0, 1048576.0, 4194304.0}) pts.emplace_back(L, 0.3 + L / 58000);
  const LinearCost c = fit_linear(pts);
  EXPECT_NEAR(c.latency_us, 0.3, 1e-6);
  EXPECT_NEAR(c.MBps, 58000, 1e-3);
}

TEST(CostModelFit, TooFewPointsGivesNothing) {
  EXPECT_EQ(fit_linear({{4096, 1.0}}).MBps, 0);
  EXPECT_EQ(fit_linear({{4096, 1.0}, {4096, 1.0}}).MBps, 0);  // one distinct size
}

DriverCost fast_copy_driver() {
  DriverCost d;
  d.driver = "tcp";
  d.lambda_us = 10;
  d.copy_MBps = 1000;
  d.zc_MBps = 2000;
  d.gap_us = 2;
  d.max_chunk = std::size_t{1} << 30;  // no cap: the paper's unfolded superpipeline
  return d;
}

CostModel flat_copy_model(double copy_MBps) {
  CostModel m;
  m.copy_table = {{4096, copy_MBps}};
  m.drivers = {fast_copy_driver()};
  m.staging_buffers = 1000;  // never waits for a buffer: the paper's assumption
  return m;
}

TEST(CostModel, SuperpipelineFollowsEquation8WhenCopyIsFaster) {
  // Copy 4x the network (q = 4 is eq. 5's full overlap): every chunk's copy hides behind the
  // previous send, so the time is 2 λ + the sends' bytes + n gaps + λ (eq. 8 without the
  // copies: the first during the rendezvous, none at a stream receiver).
  CostModel m = flat_copy_model(8000);
  const DriverCost& d = m.drivers[0];
  const std::size_t L = 16 << 20;
  m.c0 = 16384;
  m.q = 4;
  const Prediction p = m.predict(CostProtocol::superpipeline, d, L);
  const double n = CostModel::chunks_for(L, 16384, 4);  // eq. 7
  EXPECT_EQ(p.chunks, static_cast<std::size_t>(n));
  // (n - 1 gaps: one message is one packet of the zero-copy path already)
  const double expect = 3 * d.lambda_us + (n - 1) * d.gap_us + L / d.zc_MBps;
  EXPECT_NEAR(p.us, expect, expect * 0.02);
  // Fewer gaps than the fixed pipeline of C_0: O(log L) against O(L).
  m.pipeline_chunk = 16384;
  EXPECT_LT(p.us, m.predict(CostProtocol::pipeline, d, L).us);
}

TEST(CostModel, Equations3And5And7) {
  CostModel m = flat_copy_model(8000);
  const DriverCost& d = m.drivers[0];
  EXPECT_NEAR(m.optimal_chunk(d, 1 << 20), std::sqrt((1 << 20) * 2.0 * 8000 / 2), 1e-6);
  EXPECT_NEAR(m.ratio_q(d, 1 << 20), 4.0, 1e-9);
  EXPECT_EQ(CostModel::chunks_for(12288 * (1 + 2 + 4), 12288, 2), 3);
  EXPECT_EQ(CostModel::chunks_for(1 << 20, 65536, 1), 16);
  EXPECT_NEAR(m.overlap_c0(d, 1 << 20), 8000 * 2 * 10.0, 1e-9);
}

TEST(CostModel, RegisterPaysTheRegistration) {
  CostModel m = flat_copy_model(8000);
  m.reg = {68, 20000};
  m.dereg = {10, 100000};
  const std::size_t L = 1 << 20;
  const double cached = m.predict(CostProtocol::cached, "tcp", L).us;
  EXPECT_NEAR(m.predict(CostProtocol::register_each, "tcp", L).us,
              cached + 2 * (68 + L / 20000.0) + 10 + L / 100000.0, 1e-6);
  // ondemand: never slower than the copy path's data time, never faster than zero-copy
  const double od = m.predict(CostProtocol::ondemand, "tcp", L).us;
  EXPECT_GE(od, cached - 1e-9);
  // "tcp+rel" is tcp's figures; an unknown driver takes the first one's; the built-in
  // defaults hold one set for any driver
  EXPECT_EQ(m.driver("tcp+rel"), &m.drivers[0]);
  EXPECT_NE(CostModel().driver("udp+rel"), nullptr);
  EXPECT_EQ(m.driver("udp"), nullptr);
  EXPECT_EQ(m.predict(CostProtocol::copy, "udp", L).us, m.predict(CostProtocol::copy, "tcp", L).us);
}

TEST(CostModel, MeasuredPointsAreFollowed) {
  CostModel m = flat_copy_model(8000);
  DriverCost& d = m.drivers[0];
  d.copy_points = {{65536, 40}, {1 << 20, 300}, {4 << 20, 5000}};  // a cliff the line misses
  EXPECT_NEAR(m.predict(CostProtocol::copy, d, 4 << 20).us, 5000, 1e-6);
  EXPECT_NEAR(m.predict(CostProtocol::copy, d, 1 << 20).us, 300, 1e-6);
  const double mid = m.predict(CostProtocol::copy, d, 2 << 20).us;
  EXPECT_GT(mid, 300);
  EXPECT_LT(mid, 5000);
  // beyond the points: the last one plus the line's slope
  EXPECT_NEAR(m.predict(CostProtocol::copy, d, 8 << 20).us, 5000 + (4 << 20) / d.copy_MBps, 1e-6);
  // no zero-copy points: the line
  EXPECT_NEAR(m.predict(CostProtocol::cached, d, 1 << 20).us,
              3 * d.lambda_us + d.zc_over_us + (1 << 20) / d.zc_MBps, 1e-6);
}

TEST(CostModel, ChoosesParametersAndThresholds) {
  CostModel m = flat_copy_model(8000);
  m.drivers[0].max_chunk = 256 << 10;
  m.staging_buffers = 3;
  m.choose_parameters();
  EXPECT_GE(m.c0, 4096u);
  EXPECT_LE(m.c0, 4u << 20);
  EXPECT_GE(m.q, 1.0);
  EXPECT_LE(m.q, 4.0);
  EXPECT_EQ(m.block % 4096, 0u);
  // The zero-copy path is twice the copy path here, so staging wins from some size on.
  EXPECT_LT(m.drivers[0].staged_min, std::size_t{16} << 20);
  // A network whose copy path beats its zero-copy path: never worth staging.
  CostModel slow = flat_copy_model(8000);
  slow.drivers[0].zc_MBps = 300;
  slow.choose_parameters();
  EXPECT_EQ(slow.drivers[0].staged_min, SIZE_MAX);
}

TEST(CostModel, StagedProtocolsFollowTheZeroCopyPathsCliffAtL) {
  // The zero-copy path's points fall 10x from 2 to 16 MiB (loopback past tcp_wmem and L2):
  // the staged protocols fall with them (measured: staged / cache 0.8-1.3 at 8-16 MiB), they
  // are not given the staging buffers' small-message bandwidth.
  CostModel m = flat_copy_model(8000);
  m.staging_buffers = 3;
  DriverCost& d = m.drivers[0];
  d.max_chunk = 512 << 10;
  d.zc_over_us = 0;
  d.zc_points = {{1 << 20, 3 * d.lambda_us + (1 << 20) / 2000.0},
                 {2 << 20, 3 * d.lambda_us + (2 << 20) / 2000.0},
                 {16 << 20, 3 * d.lambda_us + (16 << 20) / 200.0}};
  const std::size_t L = 16 << 20;
  const double cached = m.predict(CostProtocol::cached, d, L).us;
  const double staged = m.predict(CostProtocol::pipeline, d, L).us;
  EXPECT_GT(staged, 0.95 * cached);
  EXPECT_LT(staged, 1.3 * cached);
}

TEST(CostModel, FittedSerialCopyShareIsAShareOfOneCopy) {
  CostModel m = flat_copy_model(8000);
  DriverCost& d = m.drivers[0];
  d.max_chunk = 512 << 10;
  m.staging_buffers = 3;
  const std::size_t L = 1 << 20;
  const double copy_us = L / 8000.0;
  // Made with g = 3 µs and κ = 0.5: both recovered.
  std::vector<std::pair<std::size_t, double>> pts;
  for (std::size_t c : {16u << 10, 32u << 10, 64u << 10, 128u << 10, 256u << 10, 512u << 10}) {
    DriverCost truth = d;
    truth.gap_us = 0;
    const Prediction p = m.staged(truth, L, c, 1.0);
    const double n = static_cast<double>(p.chunks - CostModel::min_chunks(d, L));
    pts.emplace_back(c, p.us + 0.5 * copy_us + 3 * n);
  }
  fit_gap_and_serial(m, d, L, pts);
  EXPECT_NEAR(d.gap_us, 3, 0.05);
  EXPECT_NEAR(d.copy_serial, 0.5, 0.02);
  // A loaded machine adds 300 µs to every run: not a copy (131 µs here). κ stops at 1 and g
  // stays what the chunk counts say, not 0 and not the delay spread over the chunks.
  for (auto& [c, us] : pts) us += 300;
  fit_gap_and_serial(m, d, L, pts);
  EXPECT_DOUBLE_EQ(d.copy_serial, 1.0);
  EXPECT_GT(d.gap_us, 3);
  EXPECT_LT(d.gap_us, 30);
}

TEST(CostModel, NicDriverIsTheNaiveCopyAgainstDma) {
  CostModel m = flat_copy_model(8000);
  const DriverCost nic = nic_driver(m, "nic", 1.5, 12500, 1.0);
  m.drivers = {nic};
  const std::size_t L = 4 << 20;
  const double x = static_cast<double>(L);
  EXPECT_NEAR(m.predict(CostProtocol::cached, nic, L).us, 4.5 + x / 12500, 1e-6);
  EXPECT_NEAR(m.predict(CostProtocol::copy, nic, L).us, 4.5 + 2 * x / 8000 + x / 12500, 1e-3);
  EXPECT_TRUE(nic.recv_copy);
  EXPECT_EQ(nic.copy_serial, 0);
  // The superpipeline hides the copy behind the wire (q = B_copy / B_net < 1 here: the copy
  // is the slower stage, so it takes the copy's time, not copy + wire).
  m.choose_parameters();
  const double sp = m.predict(CostProtocol::superpipeline, nic, L).us;
  EXPECT_LT(sp, m.predict(CostProtocol::copy, nic, L).us);
  EXPECT_GT(sp, x / 8000);
}

TEST(CostModelProfile, RoundTrip) {
  CostModel m = flat_copy_model(8000);
  m.copy_table = {{4096, 21000.5}, {1 << 20, 11000}, {256u << 20, 5000}};
  m.reg = {68.1, 20480};
  m.dereg = {0.25, 123456};
  m.reg_emulate = "EMULATED 68 us + 200 ns/page (SLUICE_REG_EMULATE)";
  m.c0 = 24576;
  m.q = 1.75;
  m.block = 8192;
  m.pipeline_chunk = 131072;
  m.staging_buffers = 4;
  DriverCost udp = fast_copy_driver();
  udp.driver = "udp";
  udp.recv_copy = true;
  udp.staged_min = SIZE_MAX;
  udp.copy_over_us = -3.5;
  udp.copy_serial = 0.8;
  udp.copy_points = {{65536, 40}, {1 << 20, 300}, {4 << 20, 5000}};
  udp.zc_points = {{65536, 60}, {1 << 20, 900}};
  m.drivers.push_back(udp);
  m.drivers[0].staged_min = 300000;

  char dir[] = "/tmp/sluice_profile_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/tune.profile";
  std::string why;
  ASSERT_TRUE(save_profile(path, m, why)) << why;
  CostModel back;
  ASSERT_TRUE(load_profile(path, back, why)) << why;
  EXPECT_EQ(back.source, path);
  EXPECT_EQ(profile_text(back), profile_text(m));
  EXPECT_EQ(back.reg_emulate, m.reg_emulate);
  EXPECT_EQ(back.c0, 24576u);
  EXPECT_DOUBLE_EQ(back.q, 1.75);
  ASSERT_EQ(back.drivers.size(), 2u);
  EXPECT_EQ(back.drivers[1].staged_min, SIZE_MAX);
  EXPECT_TRUE(back.drivers[1].recv_copy);
  for (std::size_t L : {65536u, 1u << 20, 16u << 20})
    for (CostProtocol p : kCostProtocols)
      EXPECT_NEAR(back.predict(p, "udp", L).us, m.predict(p, "udp", L).us,
                  1e-4 * m.predict(p, "udp", L).us)
          << cost_protocol_name(p) << " " << L;
  std::remove(path.c_str());
  rmdir(dir);
}

TEST(CostModelProfile, BadProfilesSayWhereAndWhy) {
  CostModel base = flat_copy_model(8000);
  base.staging_buffers = 3;
  const std::string good = profile_text(base);
  auto refused = [&](const std::string& text, const std::string& expect) {
    CostModel m;
    m.c0 = 777;
    std::string why;
    EXPECT_FALSE(parse_profile(text, m, why)) << text;
    EXPECT_NE(why.find(expect), std::string::npos) << "message: " << why;
    EXPECT_EQ(m.c0, 777u);  // untouched
  };
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    const auto at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  refused(replace("q = 1.5", "q = fast"), "q = 'fast': expected a number from 1 to 4");
  refused(replace("q = 1.5", "q = 9"), "expected a number from 1 to 4");
  refused(replace("version = 1", "version = 2"), "version 2");
  refused(replace("c0 = 12288", "c0 = 12K"), "c0 = '12K': expected a size in bytes");
  refused(replace("c0 = 12288\n", ""), "missing key 'c0'");
  refused(replace("block = 4096", "blokc = 4096"), "unknown key 'blokc'");
  refused(replace("driver.tcp.gap_us", "driver.tcp.gap"), "unknown key 'driver.tcp.gap'");
  refused(replace("driver.tcp.gap_us = 2\n", ""), "missing key 'driver.tcp.gap_us'");
  refused(replace("block = 4096", "block"), "line ");
  refused(good + "q = 1.5\n", "'q' given twice");
  refused(replace("staging_buffers = 3", "staging_buffers = 1"),
          "staging_buffers = '1': expected a whole number from 2 to 16");
  refused("", "missing key 'version'");
  CostModel m;
  std::string why;
  EXPECT_TRUE(parse_profile(good, m, why)) << why;
  EXPECT_FALSE(load_profile("/nonexistent/sluice/tune.profile", m, why));
  EXPECT_NE(why.find("/nonexistent/sluice/tune.profile: No such file"), std::string::npos) << why;
}

}  // namespace
}  // namespace sluice::proto
