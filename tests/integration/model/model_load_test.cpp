// Loading: configuration from GGUF metadata and config.json, weight mapping,
// and the errors a broken file, checkpoint or batch produces.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "io/gguf.h"
#include "io/gguf_writer.h"
#include "model/rope_frequencies.h"
#include "model_test_util.h"
#include "util/error.h"

namespace db::test {
namespace {

namespace fs = std::filesystem;

// A fresh directory under the system temp dir, removed with the object.
struct TempDir {
  fs::path path;
  TempDir() {
    static int counter = 0;
    path =
        fs::temp_directory_path() / ("db_model_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

struct GGUFEdit {
  std::set<std::string> drop_keys;
  std::map<std::string, GGUFValue> set_values;
  std::set<std::string> drop_tensors;
  std::string halve_rows_of;  // keeps only the first half of this tensor's rows
};

void rewrite_gguf(const std::string& src, const std::string& dst, const GGUFEdit& e) {
  auto f = GGUFFile::open(src);
  GGUFWriter w;
  for (const auto& [key, value] : f->metadata()) {
    if (key == "general.alignment" || e.drop_keys.count(key)) continue;
    auto it = e.set_values.find(key);
    w.add_value(key, it == e.set_values.end() ? value : it->second);
  }
  for (const auto& info : f->tensor_infos()) {
    if (e.drop_tensors.count(info.name)) continue;
    TensorView t = f->tensor(info.name);
    std::vector<int64_t> shape = t.shape;
    if (info.name == e.halve_rows_of) shape.front() /= 2;
    TensorView out = t;
    out.shape = shape;
    w.add_tensor(info.name, t.dtype, shape, t.data, out.nbytes());
  }
  w.write(dst);
}

std::string load_error(const std::string& path) {
  try {
    load_model(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ModelLoadTest, LlamaConfigFromGGUFAndCheckpoint) {
  const Fixture f = load_fixture("llama_tiny");
  auto g = load_model(fixture_model_path(f, "f32"));
  auto h = load_model(fixture_model_path(f, "safetensors"));
  for (const ModelConfig* c : {&g->config(), &h->config()}) {
    EXPECT_EQ(c->arch, "llama");
    EXPECT_EQ(c->n_layers, 2);
    EXPECT_EQ(c->hidden, 64);
    EXPECT_EQ(c->n_heads, 4);
    EXPECT_EQ(c->n_kv_heads, 2);
    EXPECT_EQ(c->head_dim, 16);
    EXPECT_EQ(c->ffn_hidden, 96);
    EXPECT_EQ(c->vocab, 256);
    EXPECT_EQ(c->max_context, 256);
    EXPECT_FLOAT_EQ(c->rms_eps, 1e-5f);
    EXPECT_FLOAT_EQ(c->rope_theta, 50000.0f);
    EXPECT_EQ(c->rope_dims, 16);
    EXPECT_FALSE(c->qkv_bias);
    EXPECT_FALSE(c->tied_embeddings);
  }
  EXPECT_EQ(g->config().rope_style, kernels::RopeStyle::INTERLEAVED);
  EXPECT_EQ(g->config().rope_scaling.freq_factors.size(), 8u);  // rope_freqs.weight
  EXPECT_EQ(h->config().rope_style, kernels::RopeStyle::NEOX);
  EXPECT_EQ(h->config().rope_scaling.type, RopeScalingType::LLAMA3);
  EXPECT_FLOAT_EQ(h->config().rope_scaling.factor, 4.0f);
  EXPECT_EQ(h->config().rope_scaling.original_context, 64);

  // llama3 scaling computed from config.json equals GGUF's precomputed divisors.
  const std::vector<float> a = rope_inv_freq(g->config()), b = rope_inv_freq(h->config());
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-6f * b[i]) << i;
  EXPECT_NE(a[7], 1.0f / std::pow(50000.0f, 14.0f / 16.0f));  // the scaling did something
}

TEST(ModelLoadTest, Qwen2ConfigFromGGUFAndLegacyCheckpoint) {
  const Fixture f = load_fixture("qwen2_tiny");
  for (const char* format : {"q8_0", "safetensors"}) {
    auto m = load_model(fixture_model_path(f, format));
    const ModelConfig& c = m->config();
    EXPECT_EQ(c.arch, "qwen2") << format;
    EXPECT_EQ(c.n_kv_heads, 1) << format;
    EXPECT_FLOAT_EQ(c.rope_theta, 30000.0f) << format;
    EXPECT_FLOAT_EQ(c.rms_eps, 1e-6f) << format;
    EXPECT_EQ(c.rope_style, kernels::RopeStyle::NEOX) << format;
    EXPECT_EQ(c.rope_scaling.type, RopeScalingType::NONE) << format;
    EXPECT_TRUE(c.qkv_bias) << format;
    EXPECT_TRUE(c.tied_embeddings) << format;
  }
}

TEST(ModelLoadTest, MissingGGUFKeyNamesFileAndKey) {
  const Fixture f = load_fixture("llama_tiny");
  TempDir tmp;
  const std::string path = (tmp.path / "no_blocks.gguf").string();
  GGUFEdit edit;
  edit.drop_keys = {"llama.block_count"};
  rewrite_gguf(fixture_model_path(f, "f32"), path, edit);
  const std::string err = load_error(path);
  EXPECT_NE(err.find(path), std::string::npos) << err;
  EXPECT_NE(err.find("'llama.block_count'"), std::string::npos) << err;
}

TEST(ModelLoadTest, WrongTensorShapeNamesTensorExpectedAndGot) {
  const Fixture f = load_fixture("llama_tiny");
  TempDir tmp;
  const std::string path = (tmp.path / "short_k.gguf").string();
  GGUFEdit edit;
  edit.halve_rows_of = "blk.1.attn_k.weight";
  rewrite_gguf(fixture_model_path(f, "q8_0"), path, edit);
  const std::string err = load_error(path);
  EXPECT_NE(err.find("'blk.1.attn_k.weight'"), std::string::npos) << err;
  EXPECT_NE(err.find("[16, 64]"), std::string::npos) << err;
  EXPECT_NE(err.find("expected [32, 64]"), std::string::npos) << err;
}

TEST(ModelLoadTest, MissingTensorAndUnknownArchitecture) {
  const Fixture f = load_fixture("qwen2_tiny");
  TempDir tmp;
  const std::string no_bias = (tmp.path / "no_bias.gguf").string();
  GGUFEdit drop_bias;
  drop_bias.drop_tensors = {"blk.1.attn_v.bias"};
  rewrite_gguf(fixture_model_path(f, "f16"), no_bias, drop_bias);
  EXPECT_NE(load_error(no_bias).find("'blk.1.attn_v.bias'"), std::string::npos) << load_error(no_bias);

  const std::string gpt2 = (tmp.path / "gpt2.gguf").string();
  GGUFValue arch{GGUFType::STRING, std::string("gpt2")};
  GGUFEdit rename;
  rename.set_values = {{"general.architecture", arch}};
  rewrite_gguf(fixture_model_path(f, "f16"), gpt2, rename);
  const std::string err = load_error(gpt2);
  EXPECT_NE(err.find("architecture 'gpt2' is not supported"), std::string::npos) << err;
  EXPECT_NE(err.find("llama, qwen2"), std::string::npos) << err;
}

TEST(ModelLoadTest, CheckpointMissingConfigKeyNamesConfigAndKey) {
  const Fixture f = load_fixture("llama_tiny");
  TempDir tmp;
  nlohmann::json cfg = nlohmann::json::parse(std::ifstream(f.dir + "/config.json"));
  cfg.erase("hidden_size");
  std::ofstream(tmp.path / "config.json") << cfg.dump();
  fs::copy_file(f.dir + "/model.safetensors", tmp.path / "model.safetensors");
  const std::string err = load_error(tmp.path.string());
  EXPECT_NE(err.find("config.json"), std::string::npos) << err;
  EXPECT_NE(err.find("'hidden_size'"), std::string::npos) << err;
}

TEST(ModelLoadTest, PathThatIsNotAModel) {
  EXPECT_NE(load_error(std::string(DB_TEST_DATA) + "/model/llama_tiny/reference.json").find("not a model"),
            std::string::npos);
  EXPECT_NE(load_error(std::string(DB_TEST_DATA) + "/model/absent.gguf").find("no such"), std::string::npos);
}

class BadBatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = load_model(fixture_model_path(load_fixture("llama_tiny"), "f32"));
    kv_ = std::make_unique<KVStore>(model_->kv_cache_shape(), 8, 16);
    batch_ = {{5, 6, 7}, {0, 1, 2}, {0, 3}, {2}};
    attn_.block_size = 16;
    attn_.context_lens = {3};
    attn_.block_tables = {{4}};
    attn_.slot_mapping = {64, 65, 66};
  }
  std::string error() {
    try {
      model_->forward(batch_, attn_, *kv_, pool_, logits_);
    } catch (const Error& e) {
      return e.what();
    }
    return "(no error)";
  }
  std::unique_ptr<Model> model_;
  std::unique_ptr<KVStore> kv_;
  ThreadPool pool_{1};
  Batch batch_;
  AttentionMetadata attn_;
  std::vector<float> logits_;
};

TEST_F(BadBatchTest, ValidBatchRuns) {
  EXPECT_EQ(error(), "(no error)");
  EXPECT_EQ(logits_.size(), 256u);
}

TEST_F(BadBatchTest, TokenOutsideVocabulary) {
  batch_.token_ids[1] = 256;
  EXPECT_NE(error().find("outside the vocabulary"), std::string::npos);
}

TEST_F(BadBatchTest, SlotDisagreesWithBlockTable) {
  attn_.slot_mapping[2] = 3;
  EXPECT_NE(error().find("slot"), std::string::npos);
}

TEST_F(BadBatchTest, BlockTableTooShortOrOutOfRange) {
  attn_.context_lens = {17};
  EXPECT_NE(error().find("cannot hold"), std::string::npos);
  attn_.context_lens = {3};
  attn_.block_tables = {{8}};
  EXPECT_NE(error().find("outside the store"), std::string::npos);
}

TEST_F(BadBatchTest, OffsetsAndLogitsIndices) {
  batch_.query_start = {0, 2};
  EXPECT_NE(error().find("query_start ends"), std::string::npos);
  batch_.query_start = {0, 3};
  batch_.logits_indices = {3};
  EXPECT_NE(error().find("logits index"), std::string::npos);
}

TEST_F(BadBatchTest, KVStoreOfAnotherShape) {
  kv_ = std::make_unique<KVStore>(KVCacheShape::key_value(2, 4, 16), 8, 16);
  EXPECT_NE(error().find("KV store shaped for"), std::string::npos);
  KVCacheShape latent = model_->kv_cache_shape();  // same widths, other layout
  latent.layout = KVLayout::Latent;
  kv_ = std::make_unique<KVStore>(latent, 8, 16);
  EXPECT_NE(error().find("KV store shaped for Latent"), std::string::npos) << error();
}

}  // namespace
}  // namespace db::test
