// Which kernel each ISA level selects. Bit-equality tests cannot see a level that
// silently runs the scalar reference; these check the selection itself: every level
// runs the kernel of the highest level at or below it that has one.
#include <gtest/gtest.h>

#include "kernels/cpu/activations.h"
#include "kernels/cpu/attention_ops.h"
#include "kernels/cpu/isa_table.h"
#include "kernels/cpu/rms_norm.h"

namespace db::kernels {
namespace {

int f_scalar() { return 0; }
int f_avx2() { return 1; }
int f_avx512() { return 3; }
int f_vnni() { return 4; }

TEST(IsaTable, EachLevelTakesTheNearestKernelAtOrBelowIt) {
  using Fn = int (*)();
  const IsaTable<Fn> t{{IsaLevel::Scalar, &f_scalar}, {IsaLevel::Avx2, &f_avx2}, {IsaLevel::Avx512, &f_avx512},
                       {IsaLevel::Avx512Vnni, &f_vnni}};
  EXPECT_EQ(t.at(IsaLevel::Scalar), &f_scalar);
  EXPECT_EQ(t.at(IsaLevel::Avx2), &f_avx2);
  EXPECT_EQ(t.at(IsaLevel::Avx2Vnni), &f_avx2);
  EXPECT_EQ(t.at(IsaLevel::Avx512), &f_avx512);
  EXPECT_EQ(t.at(IsaLevel::Avx512Vnni), &f_vnni);
  EXPECT_EQ(t.at(IsaLevel::Amx), &f_vnni);
  // Order of the entries does not matter.
  const IsaTable<Fn> reversed{{IsaLevel::Avx512, &f_avx512}, {IsaLevel::Avx2, &f_avx2}, {IsaLevel::Scalar, &f_scalar}};
  EXPECT_EQ(reversed.at(IsaLevel::Avx2Vnni), &f_avx2);
  EXPECT_EQ(reversed.at(IsaLevel::Amx), &f_avx512);
  EXPECT_THROW((IsaTable<Fn>{{IsaLevel::Avx2, &f_avx2}}), Error);
}

#if defined(__x86_64__)
// Levels with a vector kernel of their own, per op: Scalar, Avx2 and Avx512.
template <class Fn>
void expect_selection(Fn (*kernel)(IsaLevel), const char* op) {
  const Fn scalar = kernel(IsaLevel::Scalar), avx2 = kernel(IsaLevel::Avx2), avx512 = kernel(IsaLevel::Avx512);
  EXPECT_NE(avx2, scalar) << op;
  EXPECT_NE(avx512, avx2) << op;
  EXPECT_EQ(kernel(IsaLevel::Avx2Vnni), avx2) << op << ": AVX-VNNI machines must not fall back to scalar";
  EXPECT_EQ(kernel(IsaLevel::Avx512Vnni), avx512) << op;
  EXPECT_EQ(kernel(IsaLevel::Amx), avx512) << op;
}

const AttentionOps* attention_kernel(IsaLevel level) { return &attention_ops(level); }

TEST(KernelSelection, RmsNormSwigluAndAttentionUseTheirVectorKernelsAtEveryLevelAbove) {
  expect_selection(&rms_norm_rows_kernel, "rms_norm");
  expect_selection(&swiglu_kernel, "swiglu");
  expect_selection(&attention_kernel, "attention");
  EXPECT_EQ(&attention_ops(IsaLevel::Scalar), &attention_ops_scalar());
  EXPECT_EQ(&attention_ops(IsaLevel::Avx2Vnni), &attention_ops_avx2());
  EXPECT_EQ(&attention_ops(IsaLevel::Amx), &attention_ops_avx512());
}
#endif

}  // namespace
}  // namespace db::kernels
