#include "kernels/cpu/activations.h"

#include <cmath>
#include <string>

#include "kernels/cpu/isa_table.h"
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

const IsaTable<SwigluFn>& swiglu_table() {
  static const IsaTable<SwigluFn> table{
      {IsaLevel::Scalar, &swiglu_scalar},
#if defined(__x86_64__)
      {IsaLevel::Avx2, &avx2::swiglu},
      {IsaLevel::Avx512, &avx512::swiglu},
#endif
  };
  return table;
}

}  // namespace

SwigluFn swiglu_kernel(IsaLevel level) { return swiglu_table().at(level); }

void swiglu_isa(IsaLevel level, const float* gate, const float* up, int64_t n, float* out) {
  if (!isa_supported(level))
    throw Error(std::string("swiglu: ISA level ") + isa_name(level) + " is not supported by this CPU");
  swiglu_kernel(level)(gate, up, n, out);
}

void swiglu(const float* gate, const float* up, int64_t n, float* out) {
  swiglu_isa(cpu_features().level, gate, up, n, out);
}

}  // namespace db::kernels
