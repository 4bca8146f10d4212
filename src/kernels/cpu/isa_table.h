// The one way an op picks its kernel for an ISA level: a table with an entry per
// level, built once from the levels the op has kernels for. A level without a kernel
// of its own runs the one of the nearest level below it, since each level includes
// every level below (util/cpu_features.h): AVX-VNNI machines run the AVX2 kernels of
// an op that has no AVX-VNNI one, never the scalar reference.
#pragma once
#include <array>
#include <initializer_list>
#include <optional>
#include <utility>

#include "util/cpu_features.h"
#include "util/error.h"

namespace db::kernels {

template <class Fn>
class IsaTable {
 public:
  // `kernels`: (the lowest level a kernel runs at, the kernel), one of them at Scalar.
  IsaTable(std::initializer_list<std::pair<IsaLevel, Fn>> kernels) {
    bool has_scalar = false;
    for (const auto& [level, fn] : kernels) {
      has_scalar = has_scalar || level == IsaLevel::Scalar;
      for (int l = static_cast<int>(level); l < kIsaLevelCount; ++l) {
        // A higher level's own kernel wins over one inherited from below.
        if (!set_at_[l] || static_cast<int>(set_at_[l].value()) < static_cast<int>(level)) {
          by_level_[l] = fn;
          set_at_[l] = level;
        }
      }
    }
    if (!has_scalar) throw Error("IsaTable: every op needs a scalar kernel");
  }

  // The kernel `level` runs.
  const Fn& at(IsaLevel level) const { return by_level_[static_cast<int>(level)]; }

 private:
  std::array<Fn, kIsaLevelCount> by_level_{};
  std::array<std::optional<IsaLevel>, kIsaLevelCount> set_at_{};
};

}  // namespace db::kernels
