#include "io/hf_checkpoint.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "io_test_util.h"

namespace db {
namespace {

using json = nlohmann::json;
using test::expect_error;

// Writes a safetensors file of F32 tensors, each {n} elements filled with `fill`.
void write_shard(const std::string& path, const std::vector<std::pair<std::string, float>>& tensors, int64_t n) {
  json h = json::object();
  std::vector<float> data;
  for (const auto& [name, fill] : tensors) {
    size_t begin = data.size() * sizeof(float);
    data.insert(data.end(), static_cast<size_t>(n), fill);
    h[name] = {{"dtype", "F32"}, {"shape", {n}}, {"data_offsets", {begin, data.size() * sizeof(float)}}};
  }
  const std::string text = h.dump();
  const uint64_t len = text.size();
  const size_t nbytes = data.size() * sizeof(float);
  std::vector<uint8_t> out(8 + text.size() + nbytes);
  std::memcpy(out.data(), &len, 8);
  std::memcpy(out.data() + 8, text.data(), text.size());
  if (nbytes) std::memcpy(out.data() + 8 + text.size(), data.data(), nbytes);
  test::write_bytes(path, out);
}

float first_value(const TensorView& v) {
  float x;
  std::memcpy(&x, v.data, sizeof x);
  return x;
}

class HFCheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_text(dir_.file("config.json"), R"({"model_type": "llama", "hidden_size": 64})");
  }
  void write_index(const json& weight_map) {
    json index = {{"metadata", {{"total_size", 0}}}, {"weight_map", weight_map}};
    test::write_text(dir_.file("model.safetensors.index.json"), index.dump());
  }
  void write_two_shards() {
    write_shard(dir_.file("model-00001-of-00002.safetensors"), {{"embed", 1.0f}, {"layer.0", 2.0f}}, 4);
    write_shard(dir_.file("model-00002-of-00002.safetensors"), {{"layer.1", 3.0f}, {"head", 4.0f}}, 4);
    write_index({{"embed", "model-00001-of-00002.safetensors"},
                 {"layer.0", "model-00001-of-00002.safetensors"},
                 {"layer.1", "model-00002-of-00002.safetensors"},
                 {"head", "model-00002-of-00002.safetensors"}});
  }
  std::string dir() const { return dir_.path().string(); }
  test::ScratchDir dir_{"io"};
};

TEST_F(HFCheckpointTest, SingleFileWithTokenizer) {
  write_shard(dir_.file("model.safetensors"), {{"a", 1.5f}, {"b", -2.0f}}, 3);
  test::write_text(dir_.file("tokenizer.json"), "{}");
  test::write_text(dir_.file("tokenizer_config.json"), R"({"bos_token": "<s>"})");

  auto c = HFCheckpoint::open(dir());
  EXPECT_EQ(c->dir(), dir());
  EXPECT_EQ(c->config()["model_type"], "llama");
  EXPECT_EQ(c->config()["hidden_size"].get<int>(), 64);
  EXPECT_EQ(c->num_shards(), 1u);
  EXPECT_EQ(c->tensor_names(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(c->tensor("a").shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(first_value(c->tensor("b")), -2.0f);
  EXPECT_EQ(c->tokenizer_json_path(), dir_.file("tokenizer.json"));
  EXPECT_EQ(c->tokenizer_config_path(), dir_.file("tokenizer_config.json"));
  ASSERT_NE(c->tokenizer_config(), nullptr);
  EXPECT_EQ((*c->tokenizer_config())["bos_token"], "<s>");
}

TEST_F(HFCheckpointTest, ShardedWithoutTokenizer) {
  write_two_shards();
  auto c = HFCheckpoint::open(dir());
  EXPECT_EQ(c->num_shards(), 2u);
  EXPECT_EQ(c->tensor_names(), (std::vector<std::string>{"embed", "head", "layer.0", "layer.1"}));
  EXPECT_EQ(first_value(c->tensor("embed")), 1.0f);
  EXPECT_EQ(first_value(c->tensor("layer.0")), 2.0f);
  EXPECT_EQ(first_value(c->tensor("layer.1")), 3.0f);
  EXPECT_EQ(first_value(c->tensor("head")), 4.0f);
  EXPECT_FALSE(c->find("missing").has_value());
  expect_error([&] { c->tensor("missing"); }, {dir(), "'missing'"});
  EXPECT_FALSE(c->tokenizer_json_path().has_value());
  EXPECT_FALSE(c->tokenizer_config_path().has_value());
  EXPECT_EQ(c->tokenizer_config(), nullptr);
}

TEST_F(HFCheckpointTest, SingleFileWinsOverIndex) {
  write_two_shards();
  write_shard(dir_.file("model.safetensors"), {{"only", 9.0f}}, 1);
  auto c = HFCheckpoint::open(dir());
  EXPECT_EQ(c->tensor_names(), (std::vector<std::string>{"only"}));
}

TEST_F(HFCheckpointTest, MissingDirectory) {
  expect_error([&] { HFCheckpoint::open(dir_.file("nope")); }, {dir_.file("nope"), "checkpoint directory"});
}

TEST_F(HFCheckpointTest, MissingConfig) {
  std::filesystem::remove(dir_.file("config.json"));
  write_shard(dir_.file("model.safetensors"), {{"a", 1.0f}}, 1);
  expect_error([&] { HFCheckpoint::open(dir()); }, {dir_.file("config.json"), "no such file"});
}

TEST_F(HFCheckpointTest, BadConfigJson) {
  test::write_text(dir_.file("config.json"), "{\"hidden_size\": ");
  write_shard(dir_.file("model.safetensors"), {{"a", 1.0f}}, 1);
  expect_error([&] { HFCheckpoint::open(dir()); }, {dir_.file("config.json"), "valid JSON"});
}

TEST_F(HFCheckpointTest, BadTokenizerConfig) {
  write_shard(dir_.file("model.safetensors"), {{"a", 1.0f}}, 1);
  test::write_text(dir_.file("tokenizer_config.json"), "[]");
  expect_error([&] { HFCheckpoint::open(dir()); }, {dir_.file("tokenizer_config.json"), "JSON object"});
}

TEST_F(HFCheckpointTest, NoWeights) {
  expect_error([&] { HFCheckpoint::open(dir()); }, {dir(), "model.safetensors"});
}

TEST_F(HFCheckpointTest, IndexWithoutWeightMap) {
  test::write_text(dir_.file("model.safetensors.index.json"), R"({"metadata": {}})");
  expect_error([&] { HFCheckpoint::open(dir()); }, {dir_.file("model.safetensors.index.json"), "weight_map"});
}

TEST_F(HFCheckpointTest, IndexNamesMissingShard) {
  write_index({{"a", "model-00009.safetensors"}});
  expect_error([&] { HFCheckpoint::open(dir()); }, {dir_.file("model-00009.safetensors"), "No such file"});
}

TEST_F(HFCheckpointTest, IndexNamesTensorAbsentFromShard) {
  write_shard(dir_.file("shard.safetensors"), {{"a", 1.0f}}, 1);
  write_index({{"a", "shard.safetensors"}, {"b", "shard.safetensors"}});
  expect_error([&] { HFCheckpoint::open(dir()); }, {dir_.file("shard.safetensors"), "'b'", "index.json"});
}

TEST_F(HFCheckpointTest, IndexShardOutsideDirectory) {
  write_index({{"a", "../elsewhere.safetensors"}});
  expect_error([&] { HFCheckpoint::open(dir()); }, {"index.json", "weight_map['a']", "../elsewhere"});
}

TEST_F(HFCheckpointTest, CorruptShardIsNamed) {
  write_two_shards();
  test::write_text(dir_.file("model-00002-of-00002.safetensors"), "garbage!");
  expect_error([&] { HFCheckpoint::open(dir()); }, {dir_.file("model-00002-of-00002.safetensors"), "header"});
}

}  // namespace
}  // namespace db
