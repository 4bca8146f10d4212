// The architecture registry: every entry is complete and findable by its names, and
// its tensor-name map carries every tensor of a real GGUF file to the matching
// checkpoint tensor, one to one.
#include "model/registry.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "io/gguf.h"
#include "io/hf_checkpoint.h"
#include "model/config.h"
#include "model/model_source.h"
#include "scratch_dir.h"
#include "util/error.h"

namespace db {
namespace {

std::string fixture_dir(const std::string& name) { return std::string(DB_TEST_DATA) + "/model/" + name; }

TEST(ArchitectureRegistryTest, EveryEntryIsCompleteAndFindable) {
  std::set<std::string> names, model_types;
  for (const Architecture& a : architectures()) {
    SCOPED_TRACE(a.gguf_name);
    EXPECT_FALSE(a.gguf_name.empty());
    EXPECT_FALSE(a.hf_model_types.empty());
    EXPECT_NE(a.build, nullptr);
    EXPECT_NE(a.read_gguf, nullptr);
    EXPECT_NE(a.read_hf, nullptr);
    EXPECT_NE(a.write_gguf, nullptr);
    EXPECT_FALSE(a.hf_names.globals.empty());
    EXPECT_FALSE(a.hf_names.layer_suffixes.empty());
    EXPECT_TRUE(names.insert(a.gguf_name).second) << "duplicate architecture";
    EXPECT_EQ(find_architecture(a.gguf_name), &a);
    for (const std::string& t : a.hf_model_types) {
      EXPECT_TRUE(model_types.insert(t).second) << "model_type '" << t << "' in two entries";
      EXPECT_EQ(find_hf_architecture(t), &a) << t;
    }
  }
  EXPECT_EQ(supported_architectures(), std::vector<std::string>(names.begin(), names.end()));
  EXPECT_EQ(supported_hf_model_types(), std::vector<std::string>(model_types.begin(), model_types.end()));
  EXPECT_TRUE(names.count("llama") && names.count("qwen2"));
  EXPECT_EQ(find_architecture("gpt2"), nullptr);
  EXPECT_EQ(find_hf_architecture("gpt2"), nullptr);
}

// No two GGUF names share a checkpoint name, so the map can be read backwards.
TEST(ArchitectureRegistryTest, NameMapsAreOneToOne) {
  for (const Architecture& a : architectures()) {
    SCOPED_TRACE(a.gguf_name);
    std::set<std::string> hf;
    for (const auto& [gguf, name] : a.hf_names.globals) {
      EXPECT_TRUE(hf.insert(name).second) << gguf;
      EXPECT_NE(name.rfind("model.layers.", 0), 0u) << name << " would collide with per-layer names";
    }
    for (const auto& [gguf, suffix] : a.hf_names.layer_suffixes) EXPECT_TRUE(hf.insert(suffix).second) << gguf;
  }
  const TensorNameMap& m = find_architecture("llama")->hf_names;
  EXPECT_EQ(m.hf_name("blk.12.attn_q.weight"), "model.layers.12.self_attn.q_proj.weight");
  EXPECT_EQ(m.hf_name("output.weight"), "lm_head.weight");
  for (const char* bad : {"blk.x.attn_q.weight", "blk..attn_q.weight", "blk.0", "blk.0.nope.weight", "nope.weight"})
    EXPECT_EQ(m.hf_name(bad), "") << bad;
}

// Each fixture's GGUF file and checkpoint hold the same model: the entry maps every
// GGUF tensor to a distinct checkpoint tensor of the same shape, and reaches every
// checkpoint tensor.
TEST(ArchitectureRegistryTest, NameMapRoundTripsEveryFixtureTensor) {
  const std::set<std::string> gguf_only = {"rope_freqs.weight"};  // checkpoints derive it from config.json
  for (const char* fixture : {"llama_tiny", "qwen2_tiny"}) {
    SCOPED_TRACE(fixture);
    auto gguf = GGUFFile::open(fixture_dir(fixture) + "/model-f32.gguf");
    auto hf = HFCheckpoint::open(fixture_dir(fixture));
    const Architecture* a = find_architecture(gguf->get_string("general.architecture"));
    ASSERT_NE(a, nullptr);
    ASSERT_EQ(find_hf_architecture(hf->config().at("model_type").get<std::string>()), a);
    std::map<std::string, std::string> back;  // checkpoint name -> GGUF name
    for (const auto& info : gguf->tensor_infos()) {
      if (gguf_only.count(info.name)) continue;
      const std::string name = a->hf_names.hf_name(info.name);
      ASSERT_FALSE(name.empty()) << info.name << " has no checkpoint name";
      EXPECT_TRUE(back.emplace(name, info.name).second) << info.name << " and " << back[name] << " -> " << name;
      auto t = hf->find(name);
      ASSERT_TRUE(t.has_value()) << info.name << " -> " << name << " is not in the checkpoint";
      EXPECT_EQ(t->shape, gguf->tensor(info.name).shape) << info.name;
    }
    std::set<std::string> reached;
    for (const auto& [name, g] : back) reached.insert(name);
    const std::vector<std::string> stored = hf->tensor_names();
    EXPECT_EQ(reached, std::set<std::string>(stored.begin(), stored.end()));

    // ModelSource finds the same tensors through the entry of the checkpoint's model_type.
    auto src = ModelSource::open(fixture_dir(fixture));
    EXPECT_EQ(&src->arch(), a);
    for (const auto& [name, g] : back) EXPECT_EQ(src->stored_name(g), name);
  }
}

// The arch-specific halves of config reading: llama's GGUF rotation style, qwen2's biases.
TEST(ArchitectureRegistryTest, EntriesReadTheirOwnConfig) {
  auto config = [](const std::string& path) { return read_model_config(*ModelSource::open(path)); };
  const ModelConfig llama_gguf = config(fixture_dir("llama_tiny") + "/model-f32.gguf");
  const ModelConfig llama_hf = config(fixture_dir("llama_tiny"));
  const ModelConfig qwen2_gguf = config(fixture_dir("qwen2_tiny") + "/model-f32.gguf");
  const ModelConfig qwen2_hf = config(fixture_dir("qwen2_tiny"));
  EXPECT_EQ(llama_gguf.arch, "llama");
  EXPECT_EQ(llama_hf.arch, "llama");
  EXPECT_EQ(qwen2_hf.arch, "qwen2");
  EXPECT_EQ(llama_gguf.rope_style, kernels::RopeStyle::INTERLEAVED);
  EXPECT_EQ(llama_hf.rope_style, kernels::RopeStyle::NEOX);
  EXPECT_EQ(qwen2_gguf.rope_style, kernels::RopeStyle::NEOX);
  EXPECT_EQ(qwen2_hf.rope_style, kernels::RopeStyle::NEOX);
  EXPECT_FALSE(llama_gguf.qkv_bias);
  EXPECT_FALSE(llama_hf.qkv_bias);
  EXPECT_TRUE(qwen2_gguf.qkv_bias);
  EXPECT_TRUE(qwen2_hf.qkv_bias);  // config.json has no attention_bias: qwen2's own reader sets it
}

TEST(ArchitectureRegistryTest, UnknownModelTypeListsSupportedOnes) {
  test::ScratchDir dir("registry_test");
  std::ofstream(dir.file("config.json")) << R"({"model_type": "gpt2", "hidden_size": 64})";
  std::filesystem::copy_file(fixture_dir("llama_tiny") + "/model.safetensors", dir.file("model.safetensors"));
  std::string err = "(no error)";
  try {
    ModelSource::open(dir.path().string());
  } catch (const Error& e) {
    err = e.what();
  }
  EXPECT_NE(err.find("config.json: model_type 'gpt2' is not supported"), std::string::npos) << err;
  EXPECT_NE(err.find(join_names(supported_hf_model_types())), std::string::npos) << err;
  EXPECT_NE(err.find("llama, qwen2"), std::string::npos) << err;
}

}  // namespace
}  // namespace db
