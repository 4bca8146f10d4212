#include "kernels/cpu/attention_ops.h"

#include "kernels/cpu/isa_table.h"

namespace db::kernels {

const AttentionOps& attention_ops(IsaLevel level) {
  static const IsaTable<const AttentionOps*> table{
      {IsaLevel::Scalar, &attention_ops_scalar()},
#if defined(__x86_64__)
      {IsaLevel::Avx2, &attention_ops_avx2()},
      {IsaLevel::Avx512, &attention_ops_avx512()},
#endif
  };
  return *table.at(level);
}

}  // namespace db::kernels
