// Run-time detection of the x86 vector extensions the compute kernels can use,
// and the choice of one ISA level for the whole process.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace db {

// Kernel ISA levels, each a superset of the previous one.
enum class IsaLevel : int {
  Scalar = 0,      // portable C++, the reference
  Avx2 = 1,        // AVX2 + FMA + F16C
  Avx512 = 2,      // Avx2 + AVX-512 F/BW/VL
  Avx512Vnni = 3,  // Avx512 + AVX-512-VNNI (vpdpbusd)
  Amx = 4,         // Avx512Vnni + AMX-INT8 tiles (granted by the OS)
};
inline constexpr int kIsaLevelCount = 5;

struct CpuFeatures {
  bool avx2 = false;         // AVX2, usable (OS saves YMM state)
  bool fma = false;          // FMA3
  bool f16c = false;         // F16C half <-> float conversions
  bool avx512f = false;      // AVX-512 Foundation, usable (OS saves ZMM/opmask state)
  bool avx512bw = false;     // AVX-512 byte/word
  bool avx512vl = false;     // AVX-512 on 128/256-bit registers
  bool avx512vnni = false;   // AVX-512 VNNI (vpdpbusd, vpdpwssd)
  bool avx512bf16 = false;   // AVX-512 BF16 (vdpbf16ps)
  bool amx_tile = false;     // AMX tiles present and the OS granted this process their state
  bool amx_int8 = false;     // AMX int8 tile products (meaningful only with amx_tile)
  bool amx_bf16 = false;     // AMX bf16 tile products (meaningful only with amx_tile)
  long l2_bytes = 0;         // one core's L2 cache as the C library reports it (0: unknown)
  IsaLevel best = IsaLevel::Scalar;   // highest kernel level this CPU supports
  IsaLevel level = IsaLevel::Scalar;  // level the kernels use (best, or lower if DB_ISA asks)
  std::string level_name = "scalar";  // isa_name(level)
};

// Probes the CPU (cpuid + xgetbv) and, on Linux, asks the kernel for AMX tile
// state. Ignores DB_ISA; level == best.
CpuFeatures detect_cpu_features();

// Applies a DB_ISA value (nullptr or empty = no override) to detected features.
// Throws db::Error for an unknown name or a level above `detected.best`.
CpuFeatures apply_isa_override(const CpuFeatures& detected, const char* db_isa);

// The process-wide features: detected once, with the DB_ISA environment
// variable applied. Throws db::Error (on every call) if DB_ISA is invalid.
const CpuFeatures& cpu_features();

// True if this CPU can run kernels of `level` (ignores DB_ISA).
bool isa_supported(IsaLevel level);

// "scalar", "avx2", "avx512", "avx512vnni", "amx".
const char* isa_name(IsaLevel level);
std::optional<IsaLevel> parse_isa(std::string_view name);

}  // namespace db
