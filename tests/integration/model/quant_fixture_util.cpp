#include "quant_fixture_util.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <vector>

namespace db::test {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::vector<char> fixture_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

void write_fixture_bytes(const fs::path& p, const std::vector<char>& b) {
  std::ofstream out(p, std::ios::binary);
  out.write(b.data(), static_cast<std::streamsize>(b.size()));
}

// The safetensors header of `b` (a whole file) and where its data starts.
json safetensors_header(const std::vector<char>& b, size_t* data_start) {
  uint64_t n = 0;
  std::memcpy(&n, b.data(), 8);
  *data_start = 8 + n;
  return json::parse(b.begin() + 8, b.begin() + 8 + static_cast<std::ptrdiff_t>(n));
}

}  // namespace

std::string quant_fixture_dir(const std::string& name) { return std::string(DB_TEST_DATA) + "/model/" + name; }

void copy_broken(const std::string& name, const fs::path& dir, const std::string& drop, size_t keep_bytes,
                 const json& qc) {
  const fs::path from = quant_fixture_dir(name);
  std::ifstream cin(from / "config.json");
  json config = json::parse(cin);
  config["quantization_config"].update(qc);
  std::ofstream(dir / "config.json") << config.dump(2);
  std::vector<char> b = fixture_bytes(from / "model.safetensors");
  size_t data_start = 0;
  json header = safetensors_header(b, &data_start);
  if (!drop.empty()) {
    ASSERT_EQ(header.erase(drop), 1u) << drop;
  }
  std::string text = header.dump();
  text.resize(data_start - 8, ' ');  // the same length: data offsets are unchanged
  std::memcpy(b.data() + 8, text.data(), text.size());
  if (keep_bytes != 0) b.resize(keep_bytes);
  write_fixture_bytes(dir / "model.safetensors", b);
}

void copy_sharded(const std::string& name, const fs::path& dir, int shards) {
  const fs::path from = quant_fixture_dir(name);
  fs::copy_file(from / "config.json", dir / "config.json", fs::copy_options::overwrite_existing);
  fs::copy_file(from / "tokenizer.json", dir / "tokenizer.json", fs::copy_options::overwrite_existing);
  const std::vector<char> b = fixture_bytes(from / "model.safetensors");
  size_t data_start = 0;
  const json header = safetensors_header(b, &data_start);
  const size_t per_shard = (b.size() - data_start) / static_cast<size_t>(shards) + 1;
  json weight_map = json::object();
  auto it = header.begin();
  for (int s = 0; s < shards; ++s) {
    const std::string file = "model-" + std::to_string(s + 1) + "-of-" + std::to_string(shards) + ".safetensors";
    json h = json::object();
    std::vector<char> data;
    for (; it != header.end() && (data.size() < per_shard || s == shards - 1); ++it) {
      if (it.key() == "__metadata__") continue;
      const size_t begin = it.value()["data_offsets"][0], end = it.value()["data_offsets"][1];
      json t = it.value();
      t["data_offsets"] = {data.size(), data.size() + (end - begin)};
      data.insert(data.end(), b.begin() + static_cast<std::ptrdiff_t>(data_start + begin),
                  b.begin() + static_cast<std::ptrdiff_t>(data_start + end));
      h[it.key()] = t;
      weight_map[it.key()] = file;
    }
    const std::string text = h.dump();
    std::vector<char> out(8);
    const uint64_t n = text.size();
    std::memcpy(out.data(), &n, 8);
    out.insert(out.end(), text.begin(), text.end());
    out.insert(out.end(), data.begin(), data.end());
    write_fixture_bytes(dir / file, out);
  }
  std::ofstream(dir / "model.safetensors.index.json") << json{{"metadata", json::object()}, {"weight_map", weight_map}}.dump(1);
}

}  // namespace db::test
