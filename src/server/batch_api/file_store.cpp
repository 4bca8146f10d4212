#include "server/batch_api/file_store.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "api/response.h"
#include "server/batch_api/atomic_file.h"
#include "util/error.h"

namespace db::server {

namespace fs = std::filesystem;

nlohmann::ordered_json file_json(const FileObject& f) {
  nlohmann::ordered_json j;
  j["id"] = f.id;
  j["object"] = "file";
  j["bytes"] = f.bytes;
  j["created_at"] = f.created_at;
  j["filename"] = f.filename;
  j["purpose"] = f.purpose;
  j["status"] = "processed";
  j["status_details"] = nullptr;
  j["expires_at"] = nullptr;
  return j;
}

bool is_safe_id(const std::string& id) {
  if (id.empty() || id.size() > 64) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}

namespace {

FileObject from_stored(const nlohmann::json& j) {
  FileObject f;
  f.id = j.at("id").get<std::string>();
  f.bytes = j.at("bytes").get<int64_t>();
  f.created_at = j.at("created_at").get<int64_t>();
  f.filename = j.at("filename").get<std::string>();
  f.purpose = j.at("purpose").get<std::string>();
  f.seq = j.at("seq").get<uint64_t>();
  f.owner = j.value("owner", "");
  return f;
}

std::string to_stored(const FileObject& f) {
  nlohmann::ordered_json j = file_json(f);
  j["seq"] = f.seq;
  j["owner"] = f.owner;
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace

FileStore::FileStore(std::string dir) : dir_(std::move(dir)) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) throw Error(dir_ + ": cannot create the files directory: " + ec.message());
  for (const auto& entry : fs::directory_iterator(dir_)) {
    const fs::path p = entry.path();
    if (p.extension() != ".json") continue;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(read_whole_file(p.string()));
      FileObject f = from_stored(j);
      if (!fs::exists(content_path(f.id))) continue;
      next_seq_ = std::max(next_seq_, f.seq + 1);
      files_[f.id] = std::move(f);
    } catch (const nlohmann::json::exception& e) {
      throw Error(p.string() + ": unreadable file metadata (" + e.what() + "); move it away to drop that file");
    }
  }
  // Bytes or temporaries of files whose metadata never got written.
  for (const auto& entry : fs::directory_iterator(dir_)) {
    const fs::path p = entry.path();
    const std::string stem = p.stem().string();
    if (p.extension() == ".tmp" || (p.extension() == ".data" && !files_.count(stem))) fs::remove(p, ec);
  }
}

std::string FileStore::content_path(const std::string& id) const { return (fs::path(dir_) / (id + ".data")).string(); }
std::string FileStore::meta_path(const std::string& id) const { return (fs::path(dir_) / (id + ".json")).string(); }

FileObject FileStore::create(const std::string& filename, const std::string& purpose, std::string_view data,
                             std::string id, std::string owner) {
  if (id.empty()) id = api::new_response_id("file-");
  DB_CHECK(is_safe_id(id), "file id must be a generated id");
  FileObject f;
  f.id = id;
  f.bytes = static_cast<int64_t>(data.size());
  f.created_at = api::unix_time_now();
  f.filename = filename;
  f.purpose = purpose;
  f.owner = std::move(owner);
  {
    std::lock_guard<std::mutex> lock(mu_);
    f.seq = next_seq_++;
  }
  write_file_atomic(content_path(id), data);
  write_file_atomic(meta_path(id), to_stored(f));
  std::lock_guard<std::mutex> lock(mu_);
  files_[id] = f;
  return f;
}

std::optional<FileObject> FileStore::get(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = files_.find(id);
  if (it == files_.end()) return std::nullopt;
  return it->second;
}

std::vector<FileObject> FileStore::list() const {
  std::vector<FileObject> out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, f] : files_) out.push_back(f);
  }
  std::sort(out.begin(), out.end(), [](const FileObject& a, const FileObject& b) { return a.seq > b.seq; });
  return out;
}

bool FileStore::remove(const std::string& id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!files_.erase(id)) return false;
  }
  std::error_code ec;
  fs::remove(meta_path(id), ec);  // the file is gone once its metadata is
  sync_directory(dir_);
  fs::remove(content_path(id), ec);
  return true;
}

}  // namespace db::server
