// A private scratch directory for one test's files.
#pragma once
#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace db::test {

// A fresh, empty directory under the system temp dir (deepbatch_<name>_XXXXXX), removed
// with everything in it on destruction.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name) {
    std::string tmpl = (std::filesystem::temp_directory_path() / ("deepbatch_" + name + "_XXXXXX")).string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("cannot create a temporary directory from " + tmpl);
    path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace db::test
