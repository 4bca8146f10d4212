// A read-only memory mapping of a whole file (MAP_PRIVATE, PROT_READ).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace db {

class MappedFile {
 public:
  // Throws db::Error with the path and errno text when the file cannot be opened or mapped.
  static std::unique_ptr<MappedFile> open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // Hint the kernel to read the whole mapping ahead (MADV_WILLNEED).
  void prefetch() const;

 private:
  MappedFile() = default;
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace db
