#include "io/hf_checkpoint.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "util/error.h"

namespace db {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

json read_json_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open file");
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    return json::parse(ss.str());
  } catch (const json::exception& e) {
    throw Error(path + ": expected valid JSON, got a parse error: " + e.what());
  }
}

json read_json_object(const std::string& path) {
  json j = read_json_file(path);
  if (!j.is_object()) throw Error(path + ": expected a JSON object, got " + std::string(j.type_name()));
  return j;
}

std::optional<std::string> existing(const fs::path& p) {
  std::error_code ec;
  if (fs::is_regular_file(p, ec)) return p.string();
  return std::nullopt;
}

// Shard names are files inside the checkpoint directory: relative, without "..".
bool is_safe_shard_name(const std::string& name) {
  fs::path p(name);
  if (name.empty() || p.is_absolute()) return false;
  for (const auto& part : p)
    if (part == "..") return false;
  return true;
}

}  // namespace

HFCheckpoint::~HFCheckpoint() = default;

std::unique_ptr<HFCheckpoint> HFCheckpoint::open(const std::string& dir) {
  std::unique_ptr<HFCheckpoint> c(new HFCheckpoint());
  c->dir_ = dir;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error(dir + ": expected a checkpoint directory, got none at that path");
  const fs::path root(dir);

  auto config_path = existing(root / "config.json");
  if (!config_path) throw Error((root / "config.json").string() + ": expected the model config, got no such file");
  c->config_ = std::make_unique<json>(read_json_object(*config_path));

  c->tokenizer_json_path_ = existing(root / "tokenizer.json");
  c->tokenizer_config_path_ = existing(root / "tokenizer_config.json");
  if (c->tokenizer_config_path_)
    c->tokenizer_config_ = std::make_unique<json>(read_json_object(*c->tokenizer_config_path_));

  if (auto single = existing(root / "model.safetensors")) {
    c->open_single(*single);
  } else if (auto index = existing(root / "model.safetensors.index.json")) {
    c->open_sharded(*index);
  } else {
    throw Error(dir + ": expected model.safetensors or model.safetensors.index.json, got neither");
  }
  return c;
}

void HFCheckpoint::open_single(const std::string& path) {
  shards_.push_back(SafetensorsFile::open(path));
  for (const auto& name : shards_.back()->tensor_names()) tensor_shard_.emplace(name, 0);
}

void HFCheckpoint::open_sharded(const std::string& index_path) {
  json index = read_json_object(index_path);
  auto wm = index.find("weight_map");
  if (wm == index.end() || !wm->is_object())
    throw Error(index_path + ": weight_map: expected an object of tensor name -> shard file, got " +
                (wm == index.end() ? std::string("none") : std::string(wm->type_name())));
  std::map<std::string, size_t> shard_of_file;
  for (const auto& [tensor, file] : wm->items()) {
    if (!file.is_string() || !is_safe_shard_name(file.get<std::string>()))
      throw Error(index_path + ": weight_map['" + tensor + "']: expected a shard file name inside " + dir_ +
                  ", got " + file.dump());
    const std::string name = file.get<std::string>();
    auto it = shard_of_file.find(name);
    if (it == shard_of_file.end()) {
      shards_.push_back(SafetensorsFile::open((fs::path(dir_) / name).string()));
      it = shard_of_file.emplace(name, shards_.size() - 1).first;
    }
    if (!shards_[it->second]->find(tensor))
      throw Error(shards_[it->second]->path() + ": tensor '" + tensor + "': expected by " + index_path +
                  ", got no such tensor in the shard");
    tensor_shard_.emplace(tensor, it->second);
  }
}

std::vector<std::string> HFCheckpoint::tensor_names() const {
  std::vector<std::string> names;
  names.reserve(tensor_shard_.size());
  for (const auto& [name, unused] : tensor_shard_) names.push_back(name);
  return names;
}

std::optional<TensorView> HFCheckpoint::find(const std::string& name) const {
  auto it = tensor_shard_.find(name);
  if (it == tensor_shard_.end()) return std::nullopt;
  return shards_[it->second]->find(name);
}

TensorView HFCheckpoint::tensor(const std::string& name) const {
  auto v = find(name);
  if (!v) throw Error(dir_ + ": tensor '" + name + "': expected a tensor of that name, got none in the checkpoint");
  return *v;
}

std::string HFCheckpoint::file_of(const std::string& name) const {
  auto it = tensor_shard_.find(name);
  return it == tensor_shard_.end() ? dir_ : shards_[it->second]->path();
}

std::optional<std::string> hf_chat_template(const std::string& dir) {
  const fs::path path = fs::path(dir) / "tokenizer_config.json";
  if (!existing(path)) return std::nullopt;
  const json cfg = read_json_object(path.string());
  auto it = cfg.find("chat_template");
  if (it == cfg.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_array())
    for (const auto& t : *it)
      if (t.is_object() && t.value("name", "") == "default" && t.contains("template") && t["template"].is_string())
        return t["template"].get<std::string>();
  throw Error(path.string() + ": chat_template must be a string or a list with a \"default\" entry");
}

}  // namespace db
