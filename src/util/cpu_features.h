// Run-time detection of the x86 vector extensions the compute kernels can use,
// and the choice of one ISA level for the whole process.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace db {

// Kernel ISA levels, in increasing order of preference. Each needs the
// features named; all but Avx2Vnni also need those of the level before it.
// Avx2Vnni stands apart: AVX-VNNI (the VEX-encoded vpdpbusd) comes with
// AVX-512 on some CPUs (Zen 4 and 5, Sapphire Rapids), alone on others (Intel
// client cores from Alder Lake on), and not at all on older AVX-512 ones.
// Code that picks an implementation by `level >= X` treats Avx2Vnni as Avx2
// everywhere except in the quantized panel kernels.
enum class IsaLevel : int {
  Scalar = 0,      // portable C++, the reference
  Avx2 = 1,        // AVX2 + FMA + F16C
  Avx2Vnni = 2,    // Avx2 + AVX-VNNI (vpdpbusd on 256-bit registers)
  Avx512 = 3,      // Avx2 + AVX-512 F/BW/VL
  Avx512Vnni = 4,  // Avx512 + AVX-512-VNNI (vpdpbusd)
  Amx = 5,         // Avx512Vnni + AMX-INT8 tiles (granted by the OS)
};
inline constexpr int kIsaLevelCount = 6;
inline constexpr IsaLevel kIsaLevels[kIsaLevelCount] = {IsaLevel::Scalar, IsaLevel::Avx2,       IsaLevel::Avx2Vnni,
                                                        IsaLevel::Avx512, IsaLevel::Avx512Vnni, IsaLevel::Amx};

struct CpuFeatures {
  bool avx2 = false;         // AVX2, usable (OS saves YMM state)
  bool fma = false;          // FMA3
  bool f16c = false;         // F16C half <-> float conversions
  bool avx512f = false;      // AVX-512 Foundation, usable (OS saves ZMM/opmask state)
  bool avx512bw = false;     // AVX-512 byte/word
  bool avx512vl = false;     // AVX-512 on 128/256-bit registers
  bool avx_vnni = false;     // AVX-VNNI (VEX vpdpbusd, vpdpwssd on 128/256-bit registers)
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

// True if a CPU with features f can run kernels of `level`.
bool isa_supported_by(const CpuFeatures& f, IsaLevel level);

// True if this CPU can run kernels of `level` (ignores DB_ISA).
bool isa_supported(IsaLevel level);

// "scalar", "avx2", "avx2vnni", "avx512", "avx512vnni", "amx".
const char* isa_name(IsaLevel level);
std::optional<IsaLevel> parse_isa(std::string_view name);

}  // namespace db
