#include "util/cpu_features.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include "util/error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define DB_X86 1
#endif

#if defined(__linux__) && defined(DB_X86)
#include <sys/syscall.h>
#endif
#if defined(__linux__)
#include <unistd.h>
#endif

namespace db {

namespace {

#if defined(DB_X86)
struct CpuidRegs {
  uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
};

CpuidRegs cpuid(uint32_t leaf, uint32_t subleaf) {
  CpuidRegs r;
  if (!__get_cpuid_count(leaf, subleaf, &r.eax, &r.ebx, &r.ecx, &r.edx)) return CpuidRegs{};
  return r;
}

// XCR0: which register states the OS saves on context switch.
uint64_t read_xcr0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

bool bit(uint32_t reg, int n) { return (reg >> n) & 1u; }

// Linux keeps AMX tile data disabled until a process asks for it.
bool request_amx_permission() {
#if defined(__linux__)
  constexpr long kArchReqXcompPerm = 0x1023;
  constexpr long kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}
#endif

// The most preferred level f supports.
IsaLevel best_level(const CpuFeatures& f) {
  for (int i = kIsaLevelCount - 1; i > 0; --i)
    if (isa_supported_by(f, static_cast<IsaLevel>(i))) return static_cast<IsaLevel>(i);
  return IsaLevel::Scalar;
}

const CpuFeatures& detected_once() {
  static const CpuFeatures f = detect_cpu_features();
  return f;
}

}  // namespace

CpuFeatures detect_cpu_features() {
  CpuFeatures f;
#if defined(DB_X86)
  const uint32_t max_leaf = cpuid(0, 0).eax;
  const CpuidRegs l1 = cpuid(1, 0);
  const bool osxsave = bit(l1.ecx, 27);
  const uint64_t xcr0 = osxsave ? read_xcr0() : 0;
  const bool ymm_os = (xcr0 & 0x6) == 0x6;             // SSE + AVX state
  const bool zmm_os = ymm_os && (xcr0 & 0xE0) == 0xE0;  // opmask + ZMM_Hi256 + Hi16_ZMM
  const bool amx_os = (xcr0 & 0x60000) == 0x60000;      // XTILECFG + XTILEDATA

  const bool avx = bit(l1.ecx, 28) && ymm_os;
  f.fma = avx && bit(l1.ecx, 12);
  f.f16c = avx && bit(l1.ecx, 29);
  if (max_leaf >= 7) {
    const CpuidRegs l7 = cpuid(7, 0);
    const CpuidRegs l7s1 = cpuid(7, 1);
    f.avx2 = avx && bit(l7.ebx, 5);
    f.avx_vnni = avx && bit(l7s1.eax, 4);
    f.avx512f = zmm_os && bit(l7.ebx, 16);
    f.avx512bw = f.avx512f && bit(l7.ebx, 30);
    f.avx512vl = f.avx512f && bit(l7.ebx, 31);
    f.avx512vnni = f.avx512f && bit(l7.ecx, 11);
    f.avx512bf16 = f.avx512f && bit(l7s1.eax, 5);
    const bool amx_cpu = bit(l7.edx, 24);
    if (amx_cpu && amx_os && request_amx_permission()) {
      f.amx_tile = true;
      f.amx_int8 = bit(l7.edx, 25);
      f.amx_bf16 = bit(l7.edx, 22);
    }
  }
#endif
#if defined(__linux__) && defined(_SC_LEVEL2_CACHE_SIZE)
  f.l2_bytes = std::max(0L, sysconf(_SC_LEVEL2_CACHE_SIZE));
#endif
  f.best = best_level(f);
  f.level = f.best;
  f.level_name = isa_name(f.level);
  return f;
}

CpuFeatures apply_isa_override(const CpuFeatures& detected, const char* db_isa) {
  CpuFeatures f = detected;
  if (db_isa == nullptr || *db_isa == '\0') return f;
  const auto requested = parse_isa(db_isa);
  if (!requested)
    throw Error(std::string("DB_ISA=") + db_isa + " is not a known ISA level; use one of scalar, avx2, avx2vnni, avx512, avx512vnni, amx");
  if (!isa_supported_by(detected, *requested))
    throw Error(std::string("DB_ISA=") + db_isa + " asks for more than this CPU supports (best level: " +
                isa_name(detected.best) + ")");
  f.level = *requested;
  f.level_name = isa_name(f.level);
  return f;
}

const CpuFeatures& cpu_features() {
  static const CpuFeatures f = apply_isa_override(detected_once(), std::getenv("DB_ISA"));
  return f;
}

bool isa_supported_by(const CpuFeatures& f, IsaLevel level) {
  const bool avx2 = f.avx2 && f.fma && f.f16c;
  const bool avx512 = avx2 && f.avx512f && f.avx512bw && f.avx512vl;
  switch (level) {
    case IsaLevel::Scalar: return true;
    case IsaLevel::Avx2: return avx2;
    case IsaLevel::Avx2Vnni: return avx2 && f.avx_vnni;
    case IsaLevel::Avx512: return avx512;
    case IsaLevel::Avx512Vnni: return avx512 && f.avx512vnni;
    case IsaLevel::Amx: return avx512 && f.avx512vnni && f.amx_tile && f.amx_int8;
  }
  return false;
}

bool isa_supported(IsaLevel level) { return isa_supported_by(detected_once(), level); }

const char* isa_name(IsaLevel level) {
  switch (level) {
    case IsaLevel::Scalar: return "scalar";
    case IsaLevel::Avx2: return "avx2";
    case IsaLevel::Avx2Vnni: return "avx2vnni";
    case IsaLevel::Avx512: return "avx512";
    case IsaLevel::Avx512Vnni: return "avx512vnni";
    case IsaLevel::Amx: return "amx";
  }
  return "unknown";
}

std::optional<IsaLevel> parse_isa(std::string_view name) {
  for (int i = 0; i < kIsaLevelCount; ++i) {
    const auto level = static_cast<IsaLevel>(i);
    if (name == isa_name(level)) return level;
  }
  return std::nullopt;
}

}  // namespace db
