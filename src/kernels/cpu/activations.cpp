#include "kernels/cpu/activations.h"

#include <cmath>
#include <string>

#include "util/error.h"

namespace db::kernels {

#if defined(__x86_64__)
namespace avx2 {
void swiglu(const float* gate, const float* up, int64_t n, float* out);
}  // namespace avx2
namespace avx512 {
void swiglu(const float* gate, const float* up, int64_t n, float* out);
}  // namespace avx512
#endif

namespace {

void swiglu_scalar(const float* gate, const float* up, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    out[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

}  // namespace

void swiglu_isa(IsaLevel level, const float* gate, const float* up, int64_t n, float* out) {
  if (!isa_supported(level))
    throw Error(std::string("swiglu: ISA level ") + isa_name(level) + " is not supported by this CPU");
#if defined(__x86_64__)
  if (level >= IsaLevel::Avx512) return avx512::swiglu(gate, up, n, out);
  if (level == IsaLevel::Avx2) return avx2::swiglu(gate, up, n, out);
#endif
  swiglu_scalar(gate, up, n, out);
}

void swiglu(const float* gate, const float* up, int64_t n, float* out) {
  swiglu_isa(cpu_features().level, gate, up, n, out);
}

}  // namespace db::kernels
