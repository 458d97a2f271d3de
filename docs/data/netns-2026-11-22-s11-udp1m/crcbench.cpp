#include <chrono>
#include <cstdio>
#include <vector>
#include "util/crc32c.hpp"
int main() {
  std::vector<unsigned char> buf(1 << 16);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = (unsigned char)(i * 131 + 7);
  for (size_t len : {100, 1372, 1400, 8192, 65000}) {
    std::uint32_t acc = 0;
    size_t reps = (1u << 28) / len;
    auto t0 = std::chrono::steady_clock::now();
    for (size_t r = 0; r < reps; ++r) acc += sluice::util::crc32c(buf.data() + (r & 63), len);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("len %6zu: %6.2f GB/s  %6.1f ns/call (%x)\n", len, reps * len / s / 1e9,
                s / reps * 1e9, acc);
  }
}
