#include "util/cpu_features.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "util/error.h"

namespace db {
namespace {

// Features with exactly the flags `best` needs (Avx2Vnni: AVX2 and AVX-VNNI
// only; the AVX-512 levels: no AVX-VNNI).
CpuFeatures with_best(IsaLevel best) {
  CpuFeatures f;
  const int b = static_cast<int>(best);
  f.avx2 = f.fma = f.f16c = b >= static_cast<int>(IsaLevel::Avx2);
  f.avx_vnni = best == IsaLevel::Avx2Vnni;
  f.avx512f = f.avx512bw = f.avx512vl = b >= static_cast<int>(IsaLevel::Avx512);
  f.avx512vnni = b >= static_cast<int>(IsaLevel::Avx512Vnni);
  f.amx_tile = f.amx_int8 = best == IsaLevel::Amx;
  f.best = f.level = best;
  f.level_name = isa_name(best);
  return f;
}

TEST(CpuFeatures, EachLevelNeedsItsOwnFeatures) {
  for (int i = 0; i < kIsaLevelCount; ++i) {
    const auto level = static_cast<IsaLevel>(i);
    EXPECT_TRUE(isa_supported_by(with_best(level), level)) << isa_name(level);
  }
  // AVX-VNNI and AVX-512 come separately: neither level implies the other.
  EXPECT_FALSE(isa_supported_by(with_best(IsaLevel::Avx512Vnni), IsaLevel::Avx2Vnni));
  EXPECT_FALSE(isa_supported_by(with_best(IsaLevel::Avx2Vnni), IsaLevel::Avx512));
  EXPECT_TRUE(isa_supported_by(with_best(IsaLevel::Avx2Vnni), IsaLevel::Avx2));
  CpuFeatures both = with_best(IsaLevel::Avx512Vnni);
  both.avx_vnni = true;
  EXPECT_TRUE(isa_supported_by(both, IsaLevel::Avx2Vnni));
}

TEST(CpuFeatures, OverrideToAvx2VnniNeedsAvxVnni) {
  EXPECT_THROW(apply_isa_override(with_best(IsaLevel::Avx512Vnni), "avx2vnni"), Error);
  CpuFeatures both = with_best(IsaLevel::Avx512Vnni);
  both.avx_vnni = true;
  EXPECT_EQ(apply_isa_override(both, "avx2vnni").level, IsaLevel::Avx2Vnni);
}

TEST(CpuFeatures, IsaNamesRoundTrip) {
  for (int i = 0; i < kIsaLevelCount; ++i) {
    const auto level = static_cast<IsaLevel>(i);
    EXPECT_EQ(parse_isa(isa_name(level)), level);
  }
  EXPECT_FALSE(parse_isa("avx512_vnni").has_value());
  EXPECT_FALSE(parse_isa("").has_value());
}

TEST(CpuFeatures, OverrideLowersTheLevel) {
  const CpuFeatures f = apply_isa_override(with_best(IsaLevel::Avx512Vnni), "avx2");
  EXPECT_EQ(f.level, IsaLevel::Avx2);
  EXPECT_EQ(f.level_name, "avx2");
  EXPECT_EQ(f.best, IsaLevel::Avx512Vnni);
  EXPECT_EQ(apply_isa_override(with_best(IsaLevel::Avx2), "scalar").level, IsaLevel::Scalar);
}

TEST(CpuFeatures, NoOverrideKeepsTheBest) {
  EXPECT_EQ(apply_isa_override(with_best(IsaLevel::Avx512), nullptr).level, IsaLevel::Avx512);
  EXPECT_EQ(apply_isa_override(with_best(IsaLevel::Avx512), "").level, IsaLevel::Avx512);
}

TEST(CpuFeatures, OverrideRejectsUnknownAndUnsupportedLevels) {
  EXPECT_THROW(apply_isa_override(with_best(IsaLevel::Avx512Vnni), "sse9"), Error);
  try {
    apply_isa_override(with_best(IsaLevel::Avx2), "avx512vnni");
    FAIL() << "expected db::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("best level: avx2"), std::string::npos) << e.what();
  }
}

// Run by ctest once without DB_ISA and once with DB_ISA=avx2 (see CMakeLists.txt).
TEST(CpuFeatures, ProcessLevelHonoursDbIsa) {
  const char* env = std::getenv("DB_ISA");
  const CpuFeatures& f = cpu_features();
  if (env == nullptr || *env == '\0') {
    EXPECT_EQ(f.level, f.best);
  } else if (isa_supported(*parse_isa(env))) {
    EXPECT_EQ(f.level, *parse_isa(env));
    EXPECT_EQ(f.level_name, env);
  }
}

TEST(CpuFeatures, LevelsAreConsistentWithTheFlags) {
  const CpuFeatures f = detect_cpu_features();
  EXPECT_EQ(f.level, f.best);
  const int best = static_cast<int>(f.best);
  if (best >= static_cast<int>(IsaLevel::Avx2)) {
    EXPECT_TRUE(f.avx2 && f.fma && f.f16c);
  }
  if (best >= static_cast<int>(IsaLevel::Avx512)) {
    EXPECT_TRUE(f.avx512f && f.avx512bw && f.avx512vl);
  }
  if (best >= static_cast<int>(IsaLevel::Avx512Vnni)) {
    EXPECT_TRUE(f.avx512vnni);
  }
  if (best >= static_cast<int>(IsaLevel::Amx)) {
    EXPECT_TRUE(f.amx_tile && f.amx_int8);
  }
  if (f.best == IsaLevel::Avx2Vnni) {
    EXPECT_TRUE(f.avx_vnni);
  }
  for (int i = 0; i < kIsaLevelCount; ++i) {
    const auto level = static_cast<IsaLevel>(i);
    if (i > best) {
      EXPECT_FALSE(isa_supported(level)) << isa_name(level);
    }
    EXPECT_EQ(isa_supported(level), isa_supported_by(f, level)) << isa_name(level);
  }
}

#if defined(__linux__) && defined(__x86_64__)
std::set<std::string> proc_cpuinfo_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    std::set<std::string> flags;
    for (std::string w; words >> w;) flags.insert(w);
    return flags;
  }
  return {};
}

// The kernel's view of the CPU (which already accounts for OS support) must match cpuid + xgetbv.
TEST(CpuFeatures, MatchesProcCpuinfo) {
  const auto flags = proc_cpuinfo_flags();
  if (flags.empty()) GTEST_SKIP() << "no flags line in /proc/cpuinfo";
  const CpuFeatures f = detect_cpu_features();
  EXPECT_EQ(f.avx2, flags.count("avx2") == 1);
  EXPECT_EQ(f.fma, flags.count("fma") == 1);
  EXPECT_EQ(f.f16c, flags.count("f16c") == 1);
  EXPECT_EQ(f.avx512f, flags.count("avx512f") == 1);
  EXPECT_EQ(f.avx512bw, flags.count("avx512bw") == 1);
  EXPECT_EQ(f.avx512vl, flags.count("avx512vl") == 1);
  EXPECT_EQ(f.avx512vnni, flags.count("avx512_vnni") == 1);
  EXPECT_EQ(f.avx_vnni, flags.count("avx_vnni") == 1);
  EXPECT_EQ(f.avx512bf16, flags.count("avx512_bf16") == 1);
  if (f.amx_tile) {
    EXPECT_EQ(flags.count("amx_tile"), 1u);
  }
  if (f.amx_int8) {
    EXPECT_EQ(flags.count("amx_int8"), 1u);
  }
  if (f.amx_bf16) {
    EXPECT_EQ(flags.count("amx_bf16"), 1u);
  }
}
#endif

}  // namespace
}  // namespace db
