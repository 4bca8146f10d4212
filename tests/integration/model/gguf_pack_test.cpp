// Pre-packed model files (`deepbatch convert --pack`, model/gguf_pack.h): a file
// packed for any ISA level loads at the running level (DB_ISA; ctest runs this
// suite again under avx512 and scalar, where packed quantized matrices must be
// unpacked) and computes logits bit-identical to the unpacked file; a file
// packed for the running level maps every matrix in place (MLA's absorbed
// matrices included: nothing is built); a file packed with MLA's attn_kv_b
// still loads; a file whose panel layout version differs from this build's is
// refused by name.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "default_model.h"
#include "io/gguf.h"
#include "io/gguf_writer.h"
#include "kernels/packed_weights.h"
#include "model/gguf_model_writer.h"
#include "model/gguf_pack.h"
#include "model/load_options.h"
#include "model/model.h"
#include "model/packed_cache.h"
#include "model_test_util.h"
#include "scratch_dir.h"
#include "tensor/panel_layout.h"
#include "util/cpu_features.h"
#include "util/error.h"

namespace db::test {
namespace {

std::vector<std::vector<int32_t>> pack_test_prompts(int vocab) {
  std::vector<std::vector<int32_t>> seqs(3);
  for (int s = 0; s < 3; ++s)
    for (int i = 0; i < 9 + 7 * s; ++i) seqs[s].push_back((17 + 31 * i + 101 * s) % vocab);
  return seqs;
}

SeqLogits pack_test_logits(const std::string& path, const std::vector<std::vector<int32_t>>& seqs) {
  auto model = load_model(path);
  PagedRunner r(*model, 16, 32, DType::F32, 2, 7);
  return run_chunked_mixed(r, seqs);
}

// The DeepSeek files: MLA's combined attn_kv_b in F32 and Q8_0, and llama.cpp's
// split attn_k_b / attn_v_b.
std::vector<std::string> pack_test_deepseek_models() {
  return {fixture_model_path(load_fixture("deepseek_v3_tiny"), "q8_0"),
          fixture_model_path(load_fixture("deepseek_v2_tiny"), "f32"),
          fixture_model_path(load_fixture("deepseek_v2_tiny"), "q8_0"),
          fixture_model_path(load_fixture("deepseek_v2_tiny"), "f32-split-kv")};
}

// The files every level-independence check runs on: both decoders, float and
// quantized weights, a tied head (the default model), MoE expert stacks and
// both forms of MLA's absorbed matrices.
std::vector<std::string> pack_test_models() {
  std::vector<std::string> m = pack_test_deepseek_models();
  m.push_back(fixture_model_path(load_fixture("llama_tiny"), "f32"));
  m.push_back(kDefaultModelPath);
  return m;
}

// The start-up line of loading `path` (model/weight_loading.h).
std::string load_log(const std::string& path) {
  ::testing::internal::CaptureStderr();
  load_model(path);
  return ::testing::internal::GetCapturedStderr();
}

TEST(GgufPackTest, EveryPackingLevelGivesTheUnpackedLogits) {
  ASSERT_TRUE(default_model_present());
  const ScratchDir dir("pack");
  for (const std::string& model : pack_test_models()) {
    const int vocab = load_model(model)->config().vocab;
    const auto seqs = pack_test_prompts(vocab);
    const SeqLogits unpacked = pack_test_logits(model, seqs);
    for (IsaLevel level : {IsaLevel::Avx2, IsaLevel::Avx512, IsaLevel::Avx512Vnni}) {
      const std::string out = dir.file(std::string("packed-") + isa_name(level) + ".gguf");
      const GgufPackReport r = pack_gguf(model, out, level);
      if (level == IsaLevel::Avx512Vnni) EXPECT_GT(r.packed, 0) << model;  // every panel type is packed there
      EXPECT_TRUE(bit_identical(pack_test_logits(out, seqs), unpacked))
          << model << " packed for " << isa_name(level) << ", run at " << cpu_features().level_name;
    }
  }
}

TEST(GgufPackTest, AFilePackedForThisLevelMapsEveryMatrixInPlace) {
  ASSERT_TRUE(default_model_present());
  const ScratchDir dir("pack");
  const std::string out = dir.file("packed.gguf");
  const GgufPackReport r = pack_gguf(kDefaultModelPath, out, cpu_features().level);
  if (r.packed == 0) GTEST_SKIP() << cpu_features().level_name << " repacks no matrix: nothing to map";
  const auto file = GGUFFile::open(out);
  EXPECT_EQ(file->get_uint(kGGUFPanelVersionKey), kPanelLayoutVersion);
  EXPECT_EQ(file->get_string(kGGUFPanelLevelKey), cpu_features().level_name);
  const GGUFTensorInfo* head = file->find_tensor("output.weight");  // the tied head, packed once in the file
  ASSERT_NE(head, nullptr);
  EXPECT_EQ(head->layout, TensorLayout::Panels16);
  EXPECT_EQ(file->find_tensor("token_embd.weight")->layout, TensorLayout::Rows);  // read by rows

  ::testing::internal::CaptureStderr();
  const auto model = load_model(out);
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find(std::to_string(r.packed) + " pre-packed matrices mapped in place"), std::string::npos) << log;
  EXPECT_EQ(log.find("repacked"), std::string::npos) << log;
  EXPECT_EQ(log.find("unpacked"), std::string::npos) << log;
}

// A DeepSeek file packed for the running level holds MLA's absorbed matrices
// already built (attn_k_b / attn_v_b, one packed matrix per head where the level
// packs their type), and loading it builds, repacks and unpacks nothing.
TEST(GgufPackTest, APackedDeepseekFileBuildsNothingAtLoad) {
  const ScratchDir dir("pack");
  const IsaLevel level = cpu_features().level;
  for (const std::string& model : pack_test_deepseek_models()) {
    const std::string out = dir.file("packed.gguf");
    pack_gguf(model, out, level);
    const auto file = GGUFFile::open(out);
    const int64_t heads = load_model(model)->config().n_heads;
    for (const GGUFTensorInfo& t : file->tensor_infos()) {
      EXPECT_EQ(t.name.find("attn_kv_b"), std::string::npos) << model << ": " << t.name;
      if (t.name.find("attn_k_b") == std::string::npos && t.name.find("attn_v_b") == std::string::npos) continue;
      ASSERT_EQ(t.shape.size(), 3u) << model << ": " << t.name;
      EXPECT_EQ(t.shape[0], heads) << model << ": " << t.name;
      EXPECT_EQ(t.layout, kernels::prefers_packed(t.dtype, level) ? TensorLayout::Panels16 : TensorLayout::Rows)
          << model << ": " << t.name;
    }
    ASSERT_NE(file->find_tensor("blk.0.attn_k_b.weight"), nullptr) << model;
    ASSERT_NE(file->find_tensor("blk.0.attn_v_b.weight"), nullptr) << model;

    const std::string log = load_log(out);
    EXPECT_NE(log.find("weights ready in"), std::string::npos) << log;
    EXPECT_EQ(log.find("built"), std::string::npos) << model << ": " << log;
    EXPECT_EQ(log.find("repacked"), std::string::npos) << model << ": " << log;
    EXPECT_EQ(log.find("unpacked"), std::string::npos) << model << ": " << log;
  }
  // The unpacked file with attn_kv_b builds them at every load, and says so.
  const std::string log = load_log(fixture_model_path(load_fixture("deepseek_v2_tiny"), "f32"));
  EXPECT_NE(log.find("matrices built from others"), std::string::npos) << log;
}

// A file packed before MLA's absorbed matrices were stored split holds attn_kv_b
// in rows beside its packed matrices (written here as that packer did: every
// tensor as it is); the loader builds them from it as from an unpacked file,
// with the same logits.
TEST(GgufPackTest, AFilePackedWithAttnKvBStillLoads) {
  const ScratchDir dir("pack");
  for (const std::string& model : pack_test_deepseek_models()) {
    const auto in = GGUFFile::open(model);
    if (in->find_tensor("blk.0.attn_kv_b.weight") == nullptr) continue;
    const std::string old = dir.file("packed-with-kv-b.gguf");
    {
      GgufModelWriter out(old, cpu_features().level, nullptr);
      for (const auto& [key, value] : in->metadata())
        if (key != "general.alignment") out.metadata().add_value(key, value);
      for (const GGUFTensorInfo& t : in->tensor_infos()) out.declare(t.name, t.shape.size());
      for (size_t i = 0; i < in->tensor_infos().size(); ++i) out.write(i, in->tensor(in->tensor_infos()[i].name));
      out.finish();
    }
    EXPECT_EQ(GGUFFile::open(old)->find_tensor("blk.0.attn_kv_b.weight")->layout, TensorLayout::Rows) << model;
    const std::string log = load_log(old);
    EXPECT_NE(log.find("matrices built from others"), std::string::npos) << model << ": " << log;
    const auto seqs = pack_test_prompts(load_model(model)->config().vocab);
    EXPECT_TRUE(bit_identical(pack_test_logits(old, seqs), pack_test_logits(model, seqs))) << model;
  }
}

TEST(GgufPackTest, RefusesAFileOfAnotherLayoutVersionOrPackedTwice) {
  ASSERT_TRUE(default_model_present());
  const ScratchDir dir("pack");
  const std::string packed = dir.file("packed.gguf");
  pack_gguf(kDefaultModelPath, packed, IsaLevel::Avx512Vnni);
  try {
    pack_gguf(packed, dir.file("twice.gguf"), IsaLevel::Avx512Vnni);
    FAIL() << "packing a pre-packed file was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("already pre-packed"), std::string::npos) << e.what();
  }

  // The same file with the version key one ahead: as a future build would write it.
  const auto in = GGUFFile::open(packed);
  GGUFWriter w(in->alignment());
  for (const auto& [key, value] : in->metadata()) {
    if (key == "general.alignment") continue;
    if (key == kGGUFPanelVersionKey)
      w.add_uint32(key, kPanelLayoutVersion + 1);
    else
      w.add_value(key, value);
  }
  for (const GGUFTensorInfo& t : in->tensor_infos()) w.reserve_tensor(t.name, t.dtype, t.shape, t.layout);
  const std::string future = dir.file("future.gguf");
  w.write(future);
  try {
    load_model(future);
    FAIL() << "a file of another panel layout version was accepted";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("panel layout version"), std::string::npos) << what;
    EXPECT_NE(what.find("convert --pack"), std::string::npos) << what;
  }
}

// --pack (LoadOptions::pack): the first load writes the copy into the cache,
// the second maps it; both compute the unpacked file's logits.
TEST(GgufPackTest, PackOptionWritesTheCopyOnceThenMapsIt) {
  const ScratchDir dir("pack_cache");
  const char* old_cache = std::getenv("XDG_CACHE_HOME");
  const std::string saved = old_cache ? old_cache : "";
  ::setenv("XDG_CACHE_HOME", dir.path().c_str(), 1);
  const std::string model = fixture_model_path(load_fixture("deepseek_v3_tiny"), "q8_0");
  const auto seqs = pack_test_prompts(load_model(model)->config().vocab);
  const SeqLogits unpacked = pack_test_logits(model, seqs);
  LoadOptions pack;
  pack.pack = true;
  for (int load = 0; load < 2; ++load) {
    ::testing::internal::CaptureStderr();
    auto m = load_model(model, nullptr, pack);
    const std::string log = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(log.find("pre-packed copy " + dir.path().string() + "/deepbatch/packed/model-q8_0-"), std::string::npos)
        << log;
    if (kernels::prefers_packed(DType::Q8_0, cpu_features().level))
      EXPECT_NE(log.find("pre-packed matrices mapped in place"), std::string::npos) << log;
    EXPECT_EQ(log.find("repacked"), std::string::npos) << log;  // MLA's absorbed matrices come packed too
    EXPECT_EQ(log.find("built"), std::string::npos) << log;
    PagedRunner r(*m, 16, 32, DType::F32, 2, 7);
    EXPECT_TRUE(bit_identical(run_chunked_mixed(r, seqs), unpacked)) << "load " << load;
  }
  int copies = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path() / "deepbatch" / "packed")) {
    EXPECT_EQ(e.path().extension(), ".gguf") << e.path();  // no temporary left behind
    ++copies;
  }
  EXPECT_EQ(copies, 1);
  EXPECT_THROW(load_model(load_fixture("deepseek_v3_tiny").dir, nullptr, pack), Error);  // a checkpoint directory
  if (old_cache) ::setenv("XDG_CACHE_HOME", saved.c_str(), 1); else ::unsetenv("XDG_CACHE_HOME");
}

TEST(GgufPackTest, CacheDirectoryFollowsXdg) {
  EXPECT_EQ(packed_cache_dir("/x/cache", "/home/u"), "/x/cache/deepbatch/packed");
  EXPECT_EQ(packed_cache_dir("relative", "/home/u"), "/home/u/.cache/deepbatch/packed");
  EXPECT_EQ(packed_cache_dir(nullptr, nullptr), "deepbatch-cache/packed");
}

TEST(GgufPackTest, OnlyWholeMatricesArePacked) {
  EXPECT_TRUE(loader_multiplies_whole("blk.3.attn_q.weight"));
  EXPECT_TRUE(loader_multiplies_whole("blk.11.ffn_down_exps.weight"));
  EXPECT_TRUE(loader_multiplies_whole("blk.27.nextn.eh_proj.weight"));
  EXPECT_TRUE(loader_multiplies_whole("blk.3.attn_k_b.weight"));  // per-head stacks, like the experts
  EXPECT_TRUE(loader_multiplies_whole("blk.3.attn_v_b.weight"));
  EXPECT_TRUE(loader_multiplies_whole("output.weight"));
  EXPECT_FALSE(loader_multiplies_whole("token_embd.weight"));      // rows looked up
  EXPECT_FALSE(loader_multiplies_whole("blk.3.attn_kv_b.weight"));  // rows split into the absorbed matrices
  EXPECT_FALSE(loader_multiplies_whole("blk.3.ffn_gate_inp.weight"));
  EXPECT_FALSE(loader_multiplies_whole("blk.3.attn_norm.weight"));
  EXPECT_FALSE(loader_multiplies_whole("blk.3.attn_q.bias"));
}

}  // namespace
}  // namespace db::test
