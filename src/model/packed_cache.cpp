#include "model/packed_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

#include "model/gguf_pack.h"
#include "tensor/panel_layout.h"
#include "util/error.h"

namespace db {

namespace {

constexpr size_t kKeyedPrefixBytes = size_t{1} << 20;

uint64_t fnv1a(uint64_t h, const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

// The key of the source's identity (size, mtime, first MiB), the level and the layout.
std::string packed_copy_key(const std::string& path, IsaLevel level) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw Error(sys_error(path, "cannot read file"));
  std::ifstream in(path, std::ios::binary);
  std::vector<char> prefix(std::min<size_t>(kKeyedPrefixBytes, static_cast<size_t>(st.st_size)));
  if (!in.read(prefix.data(), static_cast<std::streamsize>(prefix.size())))
    throw Error(sys_error(path, "cannot read file"));
  uint64_t h = 0xcbf29ce484222325ull;
  const int64_t identity[] = {static_cast<int64_t>(st.st_size), static_cast<int64_t>(st.st_mtim.tv_sec),
                              static_cast<int64_t>(st.st_mtim.tv_nsec)};
  h = fnv1a(h, identity, sizeof identity);
  h = fnv1a(h, prefix.data(), prefix.size());
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return std::string(hex) + "." + isa_name(level) + ".v" + std::to_string(kPanelLayoutVersion);
}

}  // namespace

std::string packed_cache_dir(const char* xdg_cache_home, const char* home) {
  if (xdg_cache_home != nullptr && xdg_cache_home[0] == '/') return std::string(xdg_cache_home) + "/deepbatch/packed";
  if (home != nullptr && home[0] != '\0') return std::string(home) + "/.cache/deepbatch/packed";
  return "deepbatch-cache/packed";
}

std::string packed_copy(const std::string& path, IsaLevel level, ThreadPool* pool) {
  namespace fs = std::filesystem;
  const fs::path dir = packed_cache_dir(std::getenv("XDG_CACHE_HOME"), std::getenv("HOME"));
  const std::string stem = fs::path(path).stem().string();
  const fs::path copy = dir / (stem + "-" + packed_copy_key(path, level) + ".gguf");
  if (fs::exists(copy)) return copy.string();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error(dir.string() + ": cannot create the pre-packed model cache: " + ec.message());
  const fs::path tmp = copy.string() + ".tmp." + std::to_string(::getpid());
  try {
    pack_gguf(path, tmp.string(), level, pool);
  } catch (...) {
    fs::remove(tmp, ec);
    throw;
  }
  fs::rename(tmp, copy, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw Error(copy.string() + ": cannot store the pre-packed copy: " + ec.message());
  }
  return copy.string();
}

}  // namespace db
