// The CUDA matmul speed table: GEMV (1 token) and GEMM (64 tokens) per weight type on
// the DeepSeek-R1-Distill-Qwen-1.5B shape's matrices, as GB/s of weights read and
// GFLOP/s, beside the device's peak memory bandwidth. Prints "no CUDA device: ..." and
// exits 0 where none is present, or 1 with --require-device.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/cuda/matmul.h"
#include "kernels/cuda/runtime.h"
#include "tensor/dtype.h"
#include "util/error.h"
#include "util/random.h"

namespace {

using namespace db;
using namespace db::kernels::cuda;

// Random bytes are valid weights for every type timed here except for their fp16/bf16
// scales, which may decode to NaN or infinity: the kernels' time does not depend on
// the values.
std::vector<uint8_t> random_bytes(size_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<uint8_t> b(n);
  for (size_t i = 0; i < n; i += 8) {  // eight bytes per draw: the largest matrices are ~0.5 GB
    const uint64_t word = rng.next();
    std::memcpy(b.data() + i, &word, std::min<size_t>(8, n - i));
  }
  return b;
}

double seconds_per_call(DeviceMatrix& w, DeviceBuffer& x, DeviceBuffer& y, int64_t tokens, Stream& stream) {
  for (int i = 0; i < 3; ++i) matmul(w, x.as<float>(), tokens, y.as<float>(), stream);
  stream.synchronize();
  int iters = 0;
  const auto start = std::chrono::steady_clock::now();
  double elapsed = 0;
  do {
    for (int i = 0; i < 10; ++i) matmul(w, x.as<float>(), tokens, y.as<float>(), stream);
    stream.synchronize();
    iters += 10;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  } while (elapsed < 0.2);
  return elapsed / iters;
}

}  // namespace

int main(int argc, char** argv) {
  const bool require = argc > 1 && std::strcmp(argv[1], "--require-device") == 0;
  const std::string why = unavailable_reason();
  if (!why.empty()) {
    std::printf("%s\n", why.c_str());
    return require ? 1 : 0;
  }
  try {
    const DeviceInfo info = device_info();
    std::printf("device: %s (sm_%d%d, %d SMs, %.1f GiB), peak memory bandwidth %.0f GB/s (0: not reported)\n",
                info.name.c_str(),
                info.compute_major, info.compute_minor, info.sm_count, info.total_memory / 1073741824.0,
                info.memory_bandwidth_gbs);
    struct Shape {
      const char* name;
      int64_t rows, cols;
    };
    const Shape shapes[] = {{"attn_q/o 1536x1536", 1536, 1536},
                            {"ffn_gate/up 8960x1536", 8960, 1536},
                            {"ffn_down 1536x8960", 1536, 8960},
                            {"output 151936x1536", 151936, 1536}};
    const DType types[] = {DType::Q4_0, DType::Q8_0, DType::Q4_K, DType::BF16, DType::F16};
    const int64_t token_counts[] = {1, 64};
    std::printf("%-24s %-5s %6s %10s %9s %10s %8s\n", "matrix", "type", "tokens", "us/call", "GB/s", "GFLOP/s",
                "%peakBW");
    Stream stream;
    for (const Shape& shape : shapes) {
      for (DType t : types) {
        const size_t bytes = row_bytes(t, shape.cols) * static_cast<size_t>(shape.rows);
        const std::vector<uint8_t> host = random_bytes(bytes, 7);
        DeviceMatrix w = upload_matrix(t, host.data(), shape.rows, shape.cols);
        for (int64_t tokens : token_counts) {
          std::vector<float> xh(static_cast<size_t>(tokens * shape.cols), 0.5f);
          DeviceBuffer x = to_device(xh);
          DeviceBuffer y(static_cast<size_t>(tokens * shape.rows) * sizeof(float));
          const double s = seconds_per_call(w, x, y, tokens, stream);
          const double gbs = bytes / s / 1e9, gflops = 2.0 * shape.rows * shape.cols * tokens / s / 1e9;
          const double share = info.memory_bandwidth_gbs > 0 ? 100.0 * gbs / info.memory_bandwidth_gbs : 0.0;
          std::printf("%-24s %-5s %6lld %10.1f %9.1f %10.1f %7.1f%%\n", shape.name, dtype_name(t).c_str(),
                      static_cast<long long>(tokens), s * 1e6, gbs, gflops, share);
        }
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuda_speed: %s\n", e.what());
    return 1;
  }
  return 0;
}
