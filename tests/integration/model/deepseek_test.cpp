// The tiny DeepSeek-V2 / V3 fixtures (scripts/gen_deepseek_fixtures.py): logits
// against transformers' float32 reference through every stored format (HF
// checkpoint with per-expert tensors, legacy GGUF with attn_kv_b, split GGUF
// with attn_k_b / attn_v_b, Q8_0 GGUF), the configuration each format yields,
// the latent KV cache's size, schedule invariance, and the note about unused
// multi-token-prediction tensors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <tuple>

#include "bundle/model_bundle.h"
#include "engine/engine.h"
#include "gguf_copy.h"
#include "io/gguf_writer.h"
#include "io/hf_checkpoint.h"
#include "model/model_source.h"
#include "model_test_util.h"
#include "scratch_dir.h"
#include "util/error.h"

namespace db::test {
namespace {

// Lines of `err` that are notes ("note: ...").
int count_notes(const std::string& err) {
  int n = 0;
  for (size_t at = err.find("note:"); at != std::string::npos; at = err.find("note:", at + 1)) ++n;
  return n;
}

using Param = std::tuple<std::string, std::string, DType>;  // fixture, format, KV dtype

// Q8_0: the generator's numpy forward over the dequantized q8_0 weights differs from the
// f32 reference by 0.097 (V2) and 0.14 (V3), with every routing decision unchanged; our
// kernels also round activations to 8 bits, so the bound is 0.25 (logits span about +-10).
double tolerance(const Fixture& f, const std::string& format, DType kv_dtype) {
  if (format == "q8_0") return 0.25 + (reference_tolerance(f, "f32", kv_dtype) - 1e-3);
  return reference_tolerance(f, "f32", kv_dtype);  // 1e-3 with an f32 KV cache
}

class DeepseekReferenceTest : public ::testing::TestWithParam<Param> {};

TEST_P(DeepseekReferenceTest, AllSequencesInOneBatchMatchReference) {
  const auto& [name, format, kv_dtype] = GetParam();
  const Fixture f = load_fixture(name);
  auto model = load_model(fixture_model_path(f, format));
  ASSERT_EQ(model->config().arch, "deepseek2");
  ASSERT_EQ(model->config().vocab, f.vocab);
  PagedRunner runner(*model, 16, 64, kv_dtype, 2, 7);
  const SeqLogits got = run_all_at_once(runner, f.sequences);
  const double diff = max_abs_diff(got, f.reference), tol = tolerance(f, format, kv_dtype);
  std::printf("[ max diff ] %s %s kv=%s: %.3g (tolerance %.3g)\n", name.c_str(), format.c_str(),
              dtype_name(kv_dtype).c_str(), diff, tol);
  EXPECT_LT(diff, tol);
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  std::string format = std::get<1>(info.param);
  for (char& ch : format)
    if (ch == '-') ch = '_';
  return std::get<0>(info.param) + "_" + format + "_kv" + dtype_name(std::get<2>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, DeepseekReferenceTest,
                         ::testing::Combine(::testing::Values("deepseek_v2_tiny", "deepseek_v3_tiny"),
                                            ::testing::Values("safetensors", "f32", "f32-split-kv", "q8_0"),
                                            ::testing::Values(DType::F32)),
                         param_name);

// 16-bit and int8 KV caches round the cached latent; the shared tolerance model covers them.
INSTANTIATE_TEST_SUITE_P(KvDtypes, DeepseekReferenceTest,
                         ::testing::Combine(::testing::Values("deepseek_v2_tiny", "deepseek_v3_tiny"),
                                            ::testing::Values("f32"),
                                            ::testing::Values(DType::F16, DType::BF16, DType::Q8_0)),
                         param_name);

// What the fixtures' config.json and GGUF metadata say (reference.json "config").
void expect_fixture_config(const ModelConfig& c, bool v3, const std::string& format) {
  SCOPED_TRACE(format);
  EXPECT_EQ(c.arch, "deepseek2");
  EXPECT_EQ(c.n_layers, 3);
  EXPECT_EQ(c.hidden, 64);
  EXPECT_EQ(c.n_heads, 4);
  EXPECT_EQ(c.n_kv_heads, 4);
  EXPECT_EQ(c.head_dim, 24);
  EXPECT_EQ(c.ffn_hidden, 96);
  EXPECT_EQ(c.rope_dims, 8);
  EXPECT_EQ(c.rope_style, kernels::RopeStyle::INTERLEAVED);
  EXPECT_EQ(c.rope_scaling.type, RopeScalingType::YARN);
  EXPECT_FLOAT_EQ(c.rope_scaling.factor, 4.0f);
  EXPECT_EQ(c.rope_scaling.original_context, 64);
  EXPECT_FLOAT_EQ(c.rope_scaling.attn_factor, 1.0f);  // m(f, mscale) / m(f, mscale_all_dim)
  EXPECT_FLOAT_EQ(c.rope_theta, v3 ? 20000.0f : 10000.0f);
  EXPECT_EQ(c.mla.q_lora_rank, v3 ? 24 : 0);
  EXPECT_EQ(c.mla.kv_lora_rank, 32);
  EXPECT_EQ(c.mla.qk_nope_dim, 16);
  EXPECT_EQ(c.mla.qk_rope_dim, 8);
  EXPECT_EQ(c.mla.v_head_dim, 16);
  EXPECT_NEAR(c.mla.softmax_scale, 0.24609782191507454, 1e-6);  // reference.json derived.softmax_scale
  EXPECT_EQ(c.moe.n_experts, 8);
  EXPECT_EQ(c.moe.n_experts_used, v3 ? 2 : 3);
  EXPECT_EQ(c.moe.n_shared_experts, 1);
  EXPECT_EQ(c.moe.expert_ffn, 32);
  EXPECT_EQ(c.moe.leading_dense_layers, 1);
  EXPECT_EQ(c.moe.gating, v3 ? ExpertGating::Sigmoid : ExpertGating::Softmax);
  EXPECT_EQ(c.moe.n_groups, v3 ? 2 : 4);
  EXPECT_EQ(c.moe.n_groups_used, v3 ? 1 : 2);
  EXPECT_EQ(c.moe.norm_weights, v3);
  EXPECT_FLOAT_EQ(c.moe.weights_scale, v3 ? 2.5f : 1.5f);
  EXPECT_FLOAT_EQ(c.mla_norm_eps, 1e-6f);
}

TEST(DeepseekConfigTest, EveryFormatReadsTheSameConfig) {
  for (const char* name : {"deepseek_v2_tiny", "deepseek_v3_tiny"}) {
    const Fixture f = load_fixture(name);
    for (const char* format : {"safetensors", "f32", "f32-split-kv", "q8_0"}) {
      auto src = ModelSource::open(fixture_model_path(f, format));
      expect_fixture_config(read_model_config(*src), std::string(name) == "deepseek_v3_tiny",
                            std::string(name) + " " + format);
    }
  }
}

TEST(DeepseekConfigTest, LatentKvCacheBytesPerToken) {
  const Fixture f = load_fixture("deepseek_v3_tiny");
  auto model = load_model(fixture_model_path(f, "f32"));
  const KVCacheShape shape = model->kv_cache_shape();
  EXPECT_EQ(shape.layout, KVLayout::Latent);
  EXPECT_EQ(shape.k_width, 32 + 8);
  EXPECT_EQ(shape.v_width, 32);
  EXPECT_EQ(shape.bytes_per_token(DType::F16), size_t{3} * (32 + 8) * 2);
  EXPECT_EQ(shape.bytes_per_token(DType::F32), size_t{3} * (32 + 8) * 4);
  // A key/value store of the same width is refused.
  KVStore wrong(KVCacheShape::key_value(3, 1, 40), 8, 16, DType::F32);
  Batch b;
  b.token_ids = {1};
  b.positions = {0};
  b.query_start = {0, 1};
  b.logits_indices = {0};
  AttentionMetadata a;
  a.context_lens = {1};
  a.block_tables = {{0}};
  a.slot_mapping = {0};
  ThreadPool pool(1);
  std::vector<float> logits;
  EXPECT_THROW(model->forward(b, a, wrong, pool, logits), Error);
}

// The same sequences one by one and as chunked prefills mixed with decodes: bit for bit
// the logits of one batch (attention, routing and experts are per-token deterministic).
TEST(DeepseekBatchingTest, ScheduleDoesNotChangeLogits) {
  for (const char* name : {"deepseek_v2_tiny", "deepseek_v3_tiny"})
    for (const DType kv : {DType::F16, DType::Q8_0}) {  // Q8_0: each latent row quantized on its own
      const Fixture f = load_fixture(name);
      auto model = load_model(fixture_model_path(f, "f32-split-kv"));
      PagedRunner together(*model, 16, 24, kv, 2, 1);
      const SeqLogits a = run_all_at_once(together, f.sequences);
      PagedRunner alone(*model, 16, 24, kv, 1, 2);
      PagedRunner chunked(*model, 16, 24, kv, 3, 3);
      EXPECT_TRUE(bit_identical(a, run_one_by_one(alone, f.sequences))) << name << " " << dtype_name(kv);
      EXPECT_TRUE(bit_identical(a, run_chunked_mixed(chunked, f.sequences))) << name << " " << dtype_name(kv);
    }
}

// The converter's choice for a quantized file: norms, 1-D tensors and the router stay F32,
// rows that are not whole Q8_0 blocks F16 (attn_k_b: rows of qk_nope = 16), the rest `t`.
DType converter_type(const std::string& name, const TensorView& v, DType t) {
  if (v.shape.size() == 1 || name.find("_norm.") != std::string::npos || name.find("ffn_gate_inp") != std::string::npos)
    return DType::F32;
  return t == DType::Q8_0 && v.cols() % 32 != 0 ? DType::F16 : t;
}

// The split-kv layout (per-head attn_k_b / attn_v_b views) in F16 and Q8_0, which the
// fixtures store only in F32: the per-head row views of stored 3-D tensors in other
// dtypes (and, where the ISA level repacks them, their panels).
TEST(DeepseekLoadTest, SplitKvInF16AndQ8_0) {
  for (const char* name : {"deepseek_v2_tiny", "deepseek_v3_tiny"})
    for (const DType t : {DType::F16, DType::Q8_0}) {
      const Fixture f = load_fixture(name);
      ScratchDir dir("deepseek_split_retyped");
      const std::string path = dir.file("split.gguf");
      copy_gguf(
          fixture_model_path(f, "f32-split-kv"), path, [](GGUFWriter&) {}, nullptr,
          [&](const std::string& n, const TensorView& v) { return converter_type(n, v, t); });
      auto model = load_model(path);
      PagedRunner runner(*model, 16, 64, DType::F32, 2, 7);
      const double diff = max_abs_diff(run_all_at_once(runner, f.sequences), f.reference);
      std::printf("[ max diff ] %s split-kv %s: %.3g\n", name, dtype_name(t).c_str(), diff);
      // F16 holds the fixtures' weights exactly (gen_model_fixtures.py representable()).
      EXPECT_LT(diff, t == DType::F16 ? 1e-3 : 0.25) << name << " " << dtype_name(t);
    }
}

// GGUF metadata variants: DeepSeek-V2 files older than expert_gating_func (softmax),
// and an unknown gating function (named in the error).
TEST(DeepseekConfigTest, GgufGatingFunc) {
  const Fixture f = load_fixture("deepseek_v2_tiny");
  ScratchDir dir("deepseek_gating");
  const std::string key = "deepseek2.expert_gating_func";
  const std::string no_key = dir.file("no-gating.gguf"), bad = dir.file("bad-gating.gguf");
  auto drop = [&](const std::string& n) { return n != key; };
  copy_gguf(fixture_model_path(f, "f32"), no_key, [](GGUFWriter&) {}, drop);
  copy_gguf(fixture_model_path(f, "f32"), bad, [&](GGUFWriter& w) { w.add_uint32(key, 3); }, drop);
  EXPECT_EQ(read_model_config(*ModelSource::open(no_key)).moe.gating, ExpertGating::Softmax);
  try {
    read_model_config(*ModelSource::open(bad));
    FAIL() << "accepted expert_gating_func 3";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
  }
}

// A copy of a GGUF file plus tensors of a V3 multi-token-prediction layer past block_count.
void write_with_nextn(const std::string& from, const std::string& to) {
  copy_gguf(from, to, [](GGUFWriter& w) {
    w.add_zero_tensor("blk.3.nextn.eh_proj.weight", DType::F32, {64, 128});
    w.add_zero_tensor("blk.3.attn_norm.weight", DType::F32, {64});
  });
}

TEST(DeepseekLoadTest, UnusedNextnLayerLoadsWithANote) {
  const Fixture f = load_fixture("deepseek_v3_tiny");
  ScratchDir dir("deepseek_nextn");
  const std::string path = dir.file("with-nextn.gguf");
  write_with_nextn(fixture_model_path(f, "f32"), path);
  ::testing::internal::CaptureStderr();
  auto model = load_model(path);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("skipping 2 tensors"), std::string::npos) << err;
  EXPECT_EQ(count_notes(err), 1) << err;  // one note for all of them, beside the load report
  PagedRunner runner(*model, 16, 64, DType::F32, 2, 7);
  EXPECT_LT(max_abs_diff(run_all_at_once(runner, f.sequences), f.reference), 1e-3);
}

TEST(DeepseekLoadTest, WrongShapeNamesTensorAndShapes) {
  const Fixture f = load_fixture("deepseek_v2_tiny");
  ScratchDir dir("deepseek_bad_shape");
  const std::string path = dir.file("bad.gguf");
  const std::string bad = "blk.1.attn_kv_b.weight";
  copy_gguf(
      fixture_model_path(f, "f32"), path, [&](GGUFWriter& w) { w.add_zero_tensor(bad, DType::F32, {4 * 32 - 1, 32}); },
      [&](const std::string& name) { return name != bad; });
  try {
    load_model(path);
    FAIL() << "loaded a model with a short attn_kv_b";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("blk.1.attn_kv_b.weight"), std::string::npos) << msg;
    EXPECT_NE(msg.find("expected"), std::string::npos) << msg;
  }
}

// The engine (scheduler, latent KV pool sized from the model's shape, prefix caching,
// chunked prefill) generates what greedy decoding through PagedRunner gives.
TEST(DeepseekEngineTest, GreedyGenerationMatchesPagedRunner) {
  const Fixture f = load_fixture("deepseek_v3_tiny");
  ScratchDir dir("deepseek_engine");
  const std::string path = dir.file("with-tokenizer.gguf");
  write_with_tokenizer(fixture_model_path(f, "f32"), path);
  auto bundle = ModelBundle::open(path, 2);
  constexpr int kNew = 12;

  std::vector<std::vector<int32_t>> expected;
  PagedRunner runner(bundle->model(), 16, 64, DType::F16, 2, 9);
  for (const auto& prompt : f.sequences) {
    const int id = runner.add_sequence(prompt);
    runner.step({{id, static_cast<int>(prompt.size())}});
    std::vector<int32_t> out;
    for (int i = 0; i < kNew; ++i) {
      out.push_back(runner.greedy_next(id));
      if (i + 1 < kNew) {
        runner.append(id, out.back());
        runner.step({{id, 1}});
      }
    }
    expected.push_back(out);
  }

  EngineConfig cfg;
  cfg.threads = 2;
  cfg.kv_dtype = DType::F16;
  cfg.kv_cache_memory = 64 * 1024;  // 64 KiB / (3 layers x 40 x 2 bytes) = 273 tokens
  cfg.max_num_batched_tokens = 32;  // the 70-token prompt is prefilled in chunks
  Engine engine(*bundle, cfg);
  std::mutex mu;
  std::map<RequestId, std::vector<int32_t>> got;
  std::vector<RequestId> ids;
  for (const auto& prompt : f.sequences) {
    EngineRequest r;
    r.prompt = prompt;
    r.sampling.temperature = 0;
    r.max_tokens = kNew;
    r.ignore_eos = true;
    ids.push_back(engine.submit(r, [&](RequestId id, const SampleOutput& out, const RequestStats&, bool) {
      std::lock_guard<std::mutex> lock(mu);
      got[id].insert(got[id].end(), out.new_token_ids.begin(), out.new_token_ids.end());
    }));
  }
  engine.wait_idle();
  for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(got[ids[i]], expected[i]) << "sequence " << i;
}

// Writes one safetensors file holding `tensors` (name, view) as they are.
void write_safetensors(const std::string& path, const std::vector<std::pair<std::string, TensorView>>& tensors) {
  nlohmann::json header = nlohmann::json::object();
  size_t offset = 0;
  for (const auto& [name, t] : tensors) {
    const char* dt = t.dtype == DType::BF16 ? "BF16" : t.dtype == DType::F32 ? "F32" : nullptr;
    ASSERT_NE(dt, nullptr) << name;
    header[name] = {{"dtype", dt}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.nbytes()}}};
    offset += t.nbytes();
  }
  std::string h = header.dump();
  h.resize((h.size() + 7) / 8 * 8, ' ');
  std::ofstream out(path, std::ios::binary);
  const uint64_t len = h.size();
  out.write(reinterpret_cast<const char*>(&len), 8);
  out.write(h.data(), static_cast<std::streamsize>(h.size()));
  for (const auto& [name, t] : tensors)
    out.write(static_cast<const char*>(t.data), static_cast<std::streamsize>(t.nbytes()));
  ASSERT_TRUE(out.good()) << path;
}

// transformers >= 5 saves the routed experts fused (mlp.experts.gate_up_proj {E, 2 ffn,
// hidden}, gate rows first; mlp.experts.down_proj {E, hidden, ffn}): the same model.
TEST(DeepseekLoadTest, FusedCheckpointExpertsMatchReference) {
  const Fixture f = load_fixture("deepseek_v2_tiny");
  auto hf = HFCheckpoint::open(f.dir);
  std::vector<std::pair<std::string, TensorView>> out;
  std::vector<std::vector<uint8_t>> fused;  // owns the fused tensors' bytes
  const int n_exp = 8;
  for (const std::string& name : hf->tensor_names())
    if (name.find(".mlp.experts.") == std::string::npos) out.emplace_back(name, hf->tensor(name));
  for (int layer = 1; layer < 3; ++layer) {
    const std::string p = "model.layers." + std::to_string(layer) + ".mlp.experts.";
    for (const bool down : {false, true}) {
      std::vector<uint8_t>& bytes = fused.emplace_back();
      TensorView t;
      for (int e = 0; e < n_exp; ++e)
        for (const char* proj :
             down ? std::vector<const char*>{"down_proj"} : std::vector<const char*>{"gate_proj", "up_proj"}) {
          const TensorView x = hf->tensor(p + std::to_string(e) + "." + proj + ".weight");
          const auto* b = static_cast<const uint8_t*>(x.data);
          bytes.insert(bytes.end(), b, b + x.nbytes());
          t.dtype = x.dtype;
          t.shape = {n_exp, down ? x.shape[0] : 2 * x.shape[0], x.shape[1]};
        }
      t.data = bytes.data();
      out.emplace_back(p + (down ? "down_proj" : "gate_up_proj"), t);
    }
  }
  ScratchDir dir("deepseek_fused");
  std::filesystem::copy_file(f.dir + "/config.json", dir.file("config.json"));
  write_safetensors(dir.file("model.safetensors"), out);
  auto model = load_model(dir.path().string());
  PagedRunner runner(*model, 16, 64, DType::F32, 2, 7);
  EXPECT_LT(max_abs_diff(run_all_at_once(runner, f.sequences), f.reference), 1e-3);
}

// A checkpoint's multi-token-prediction layer (model.layers.<num_hidden_layers>.*, as in
// DeepSeek-V3's release) is skipped with one note.
TEST(DeepseekLoadTest, CheckpointMtpLayerLoadsWithANote) {
  const Fixture f = load_fixture("deepseek_v3_tiny");
  auto hf = HFCheckpoint::open(f.dir);
  std::vector<std::pair<std::string, TensorView>> out;
  for (const std::string& name : hf->tensor_names()) out.emplace_back(name, hf->tensor(name));
  const float extra[4] = {1, 2, 3, 4};
  TensorView t;
  t.dtype = DType::F32;
  t.shape = {2, 2};
  t.data = extra;
  out.emplace_back("model.layers.3.eh_proj.weight", t);
  out.emplace_back("model.layers.3.enorm.weight", t);
  out.emplace_back("model.layers.3.mlp.experts.0.up_proj.weight", t);
  ScratchDir dir("deepseek_mtp");
  std::filesystem::copy_file(f.dir + "/config.json", dir.file("config.json"));
  write_safetensors(dir.file("model.safetensors"), out);
  ::testing::internal::CaptureStderr();
  auto model = load_model(dir.path().string());
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("skipping 3 tensors"), std::string::npos) << err;
  EXPECT_EQ(count_notes(err), 1) << err;  // one note for all of them, beside the load report
  PagedRunner runner(*model, 16, 64, DType::F32, 2, 7);
  EXPECT_LT(max_abs_diff(run_all_at_once(runner, f.sequences), f.reference), 1e-3);
}

// config.json variants: the fixture's weights under another config.
ModelConfig hf_config_with(const std::string& fixture, const std::function<void(nlohmann::json&)>& edit) {
  const Fixture f = load_fixture(fixture);
  ScratchDir dir("deepseek_config");
  nlohmann::json j = nlohmann::json::parse(std::ifstream(f.dir + "/config.json"));
  edit(j);
  std::ofstream(dir.file("config.json")) << j.dump();
  std::filesystem::copy_file(f.dir + "/model.safetensors", dir.file("model.safetensors"));
  return read_model_config(*ModelSource::open(dir.path().string()));
}

TEST(DeepseekConfigTest, CheckpointVariants) {
  // topk_method greedy: no group limit.
  ModelConfig c = hf_config_with("deepseek_v2_tiny", [](nlohmann::json& j) { j["topk_method"] = "greedy"; });
  EXPECT_EQ(c.moe.n_groups, 1);
  EXPECT_EQ(c.moe.n_groups_used, 1);
  // transformers' V2 router ignores norm_topk_prob.
  c = hf_config_with("deepseek_v2_tiny", [](nlohmann::json& j) { j["norm_topk_prob"] = true; });
  EXPECT_FALSE(c.moe.norm_weights);
  // V3 without interleaved rope: half-split pairs.
  c = hf_config_with("deepseek_v3_tiny", [](nlohmann::json& j) { j["rope_interleave"] = false; });
  EXPECT_EQ(c.rope_style, kernels::RopeStyle::NEOX);
  // The q_a / kv_a norms keep eps 1e-6 whatever rms_norm_eps says (as transformers).
  c = hf_config_with("deepseek_v3_tiny", [](nlohmann::json& j) { j["rms_norm_eps"] = 1e-5; });
  EXPECT_FLOAT_EQ(c.mla_norm_eps, 1e-6f);
  EXPECT_FLOAT_EQ(c.rms_eps, 1e-5f);
  // mscale != mscale_all_dim: cos/sin factor m(f, mscale) / m(f, mscale_all_dim); no YaRN scale without mscale_all_dim.
  c = hf_config_with("deepseek_v3_tiny", [](nlohmann::json& j) {
    j["rope_scaling"]["mscale"] = 1.0;
    j["rope_scaling"].erase("mscale_all_dim");
  });
  EXPECT_NEAR(c.rope_scaling.attn_factor, 0.1 * std::log(4.0) + 1.0, 1e-6);
  EXPECT_NEAR(c.mla.softmax_scale, 1.0 / std::sqrt(24.0), 1e-7);
  // No rope scaling at all.
  c = hf_config_with("deepseek_v2_tiny", [](nlohmann::json& j) { j.erase("rope_scaling"); });
  EXPECT_EQ(c.rope_scaling.type, RopeScalingType::NONE);
  EXPECT_NEAR(c.mla.softmax_scale, 1.0 / std::sqrt(24.0), 1e-7);
  // Unsupported router settings are named.
  EXPECT_THROW(hf_config_with("deepseek_v2_tiny", [](nlohmann::json& j) { j["scoring_func"] = "relu"; }), Error);
  EXPECT_THROW(hf_config_with("deepseek_v2_tiny", [](nlohmann::json& j) { j["topk_group"] = 0; }), Error);
}

}  // namespace
}  // namespace db::test
