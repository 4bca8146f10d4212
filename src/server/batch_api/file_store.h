// Uploaded and generated files of the batch API, kept under one directory:
//   <dir>/<id>.data   the bytes
//   <dir>/<id>.json   the metadata (written atomically after the bytes), its owner included
// A file exists once its metadata does; bytes without metadata (a crash during an
// upload) are removed on load. Thread-safe.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace db::server {

struct FileObject {
  std::string id;          // "file-<24 hex>"
  int64_t bytes = 0;       // size of the content
  int64_t created_at = 0;  // Unix seconds
  std::string filename;    // as uploaded (or generated for batch outputs)
  std::string purpose;     // "batch" (uploads) or "batch_output" (batch results)
  uint64_t seq = 0;        // creation order within the store (ties of created_at)
  std::string owner;       // the tenant that created it ("" = the default tenant, and files stored without one)
};

// The OpenAI file object: {"id", "object": "file", "bytes", "created_at", "filename", "purpose", "status", ...}.
nlohmann::ordered_json file_json(const FileObject& f);

class FileStore {
 public:
  // Creates `dir` when missing and loads the files in it. Throws db::Error on unreadable metadata.
  explicit FileStore(std::string dir);

  // Stores `data` durably, owned by tenant `owner`, and returns its object. `id` ""
  // makes a new one; a given id replaces any file with that id (used to make batch
  // outputs idempotent).
  FileObject create(const std::string& filename, const std::string& purpose, std::string_view data,
                    std::string id = "", std::string owner = "");
  std::optional<FileObject> get(const std::string& id) const;
  // Every file, newest first (descending creation order).
  std::vector<FileObject> list() const;
  // Removes the file; false when there is none with that id.
  bool remove(const std::string& id);
  // Where the bytes of `id` are (whether or not the file exists).
  std::string content_path(const std::string& id) const;

 private:
  std::string meta_path(const std::string& id) const;
  std::string dir_;
  mutable std::mutex mu_;
  std::map<std::string, FileObject> files_;
  uint64_t next_seq_ = 1;
};

// True for ids the stores generate ("file-" / "batch_" + hex): guards paths built from request ids.
bool is_safe_id(const std::string& id);

}  // namespace db::server
