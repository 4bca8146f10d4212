#include "server/batch_api/batch_store.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "api/response.h"
#include "server/batch_api/atomic_file.h"
#include "server/batch_api/file_store.h"
#include "util/error.h"

namespace db::server {

namespace fs = std::filesystem;

BatchStore::BatchStore(std::string dir) : dir_(std::move(dir)) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) throw Error(dir_ + ": cannot create the batches directory: " + ec.message());
  std::vector<fs::path> incomplete;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    if (!entry.is_directory()) continue;
    const fs::path meta = entry.path() / "batch.json";
    if (!fs::exists(meta)) {
      incomplete.push_back(entry.path());
      continue;
    }
    BatchRecord b;
    try {
      b = batch_from_stored(read_whole_file(meta.string()));
    } catch (const Error& e) {
      throw Error(meta.string() + ": " + e.what() + "; move the batch directory away to drop it");
    }
    next_seq_ = std::max(next_seq_, b.seq + 1);
    batches_[b.id] = std::move(b);
  }
  for (const fs::path& p : incomplete) fs::remove_all(p, ec);
}

std::string BatchStore::batch_dir(const std::string& id) const { return (fs::path(dir_) / id).string(); }
std::string BatchStore::input_path(const std::string& id) const {
  return (fs::path(dir_) / id / "input.jsonl").string();
}
std::string BatchStore::journal_path(const std::string& id) const {
  return (fs::path(dir_) / id / "journal.jsonl").string();
}

BatchRecord BatchStore::create(BatchRecord b, const std::string& input_source) {
  b.id = api::new_response_id("batch_");
  b.created_at = api::unix_time_now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    b.seq = next_seq_++;
  }
  const std::string dir = batch_dir(b.id);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error(dir + ": cannot create the batch directory: " + ec.message());
  // A hard link keeps the input even when the uploaded file is deleted later.
  if (::link(input_source.c_str(), input_path(b.id).c_str()) != 0) {
    fs::copy_file(input_source, input_path(b.id), fs::copy_options::overwrite_existing, ec);
    if (ec) throw Error(input_path(b.id) + ": cannot copy the batch input: " + ec.message());
  }
  sync_directory(dir);
  save(b);
  sync_directory(dir_);
  return b;
}

void BatchStore::save(const BatchRecord& b) {
  DB_CHECK(is_safe_id(b.id), "batch id must be a generated id");
  write_file_atomic((fs::path(batch_dir(b.id)) / "batch.json").string(), batch_to_stored(b));
  std::lock_guard<std::mutex> lock(mu_);
  batches_[b.id] = b;
}

std::optional<BatchRecord> BatchStore::get(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = batches_.find(id);
  if (it == batches_.end()) return std::nullopt;
  return it->second;
}

std::vector<BatchRecord> BatchStore::list() const {
  std::vector<BatchRecord> out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, b] : batches_) out.push_back(b);
  }
  std::sort(out.begin(), out.end(), [](const BatchRecord& a, const BatchRecord& b) { return a.seq > b.seq; });
  return out;
}

}  // namespace db::server
