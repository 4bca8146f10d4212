// Quantized checkpoints in the released tools' formats (FP8 block-scaled, AWQ,
// GPTQ with and without desc_act; scripts/gen_quant_checkpoint_fixtures.py):
// the weights each conversion produces against the dequantized values the
// generator recorded, the logits of every target type against the logits of
// the dequantized weights loaded as F32, the converter's memory, and the
// errors of broken checkpoints.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "io/hf_checkpoint.h"
#include "kernels/matmul.h"
#include "kernels/packed_weights.h"
#include "kernels/quant_blocks.h"
#include "model/checkpoint_converter.h"
#include "model/model_source.h"
#include "model/registry.h"
#include "model_test_util.h"
#include "quant_fixture_util.h"
#include "util/error.h"
#include "util/fp16.h"

namespace db::test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

json quant_reference(const std::string& name) {
  std::ifstream in(quant_fixture_dir(name) + "/reference.json");
  return json::parse(in);
}

// The fixture's model with its matrices converted to `type` (nullopt: the default).
std::unique_ptr<Model> load_quantized(const std::string& name, std::optional<DType> type) {
  LoadOptions o;
  o.quantize = type;
  return load_model(quant_fixture_dir(name), nullptr, o);
}

SeqLogits quant_logits(Model& m, const json& ref) {
  PagedRunner r(m, /*block_size=*/16, /*num_blocks=*/64, DType::F32, /*threads=*/2, /*shuffle_seed=*/53);
  return run_all_at_once(r, ref["sequences"].get<std::vector<std::vector<int32_t>>>());
}

const char* const kQuantFixtures[] = {"deepseek_v3_tiny_fp8", "qwen2_tiny_awq", "llama_tiny_gptq",
                                      "llama_tiny_gptq_act"};

// Converted to F32, every quantized matrix holds exactly the generator's dequantized
// values (checked through two sums, the second weighted by position).
TEST(QuantCheckpoint, F32ConversionMatchesTheDequantizedWeights) {
  for (const char* name : kQuantFixtures) {
    SCOPED_TRACE(name);
    const json ref = quant_reference(name);
    auto src = ModelSource::open(quant_fixture_dir(name), LoadOptions{DType::F32});
    ASSERT_NE(src->converter(), nullptr);
    int64_t checked = 0;
    for (const auto& [tensor, sums] : ref["dequantized"].items()) {
      auto t = src->find_stored(tensor);
      ASSERT_TRUE(t.has_value()) << tensor;
      ASSERT_EQ(t->dtype, DType::F32) << tensor;
      double sum = 0, weighted = 0;
      const auto* v = static_cast<const float*>(t->data);
      for (int64_t k = 0; k < t->numel(); ++k) {
        sum += v[k];
        weighted += static_cast<double>(v[k]) * static_cast<double>(k % 7 + 1);
      }
      const double s = sums["sum"].get<double>(), w = sums["weighted"].get<double>();
      EXPECT_NEAR(sum, s, 1e-9 * (1 + std::fabs(s))) << tensor;
      EXPECT_NEAR(weighted, w, 1e-9 * (1 + std::fabs(w))) << tensor;
      ++checked;
    }
    EXPECT_GT(checked, 10);
  }
}

// Logits of each target type against the dequantized weights in F32. The bounds
// are about twice the errors measured on these fixtures (README, "Formats").
// They include the kernels' own rounding: a quantized matmul also rounds each
// activation row to 8 bits, so even the lossless AWQ / GPTQ -> Q4_1 repack
// (whose weights Int4RepackIsExactUpToTheRoundingOfTheOffset checks) differs
// from F32 by that. FP8 -> Q8_0 rounds each weight once more to 8 bits, Q4_0 to
// 4 bits (on these random tiny weights that moves routing decisions: large);
// Q4_K needs rows of 256, which the tiny matrices are not, so there every
// matrix falls back to F16 (Q4_K itself: fp8_convert_test); GPTQ with desc_act
// goes through Q8_0.
TEST(QuantCheckpoint, LogitsMatchTheDequantizedReference) {
  struct Case {
    const char* fixture;
    std::optional<DType> type;
    double bound;
  };
  const Case cases[] = {
      {"deepseek_v3_tiny_fp8", std::nullopt, 0.3},       {"deepseek_v3_tiny_fp8", DType::Q4_0, 8.0},
      {"deepseek_v3_tiny_fp8", DType::Q4_K, 0.01},       {"deepseek_v3_tiny_fp8", DType::F16, 0.01},
      {"qwen2_tiny_awq", std::nullopt, 0.4},             {"llama_tiny_gptq", std::nullopt, 0.06},
      {"llama_tiny_gptq_act", std::nullopt, 0.07},
  };
  std::map<std::string, SeqLogits> reference;
  for (const Case& c : cases) {
    const json ref = quant_reference(c.fixture);
    if (!reference.count(c.fixture)) {
      auto f32 = load_quantized(c.fixture, DType::F32);
      reference[c.fixture] = quant_logits(*f32, ref);
    }
    auto m = load_quantized(c.fixture, c.type);
    const double err = max_abs_diff(quant_logits(*m, ref), reference[c.fixture]);
    std::printf("%s as %s: max |logit - dequantized F32 logit| = %.5f\n", c.fixture,
                c.type ? dtype_name(*c.type).c_str() : "default", err);
    EXPECT_LE(err, c.bound) << c.fixture;
  }
}

// AWQ / GPTQ repacked into Q4_1 without floats: each weight within the f16
// rounding of its block's offset m = -z * s of the dequantized (q - z) * s:
// |error| <= 2^-11 |m| (+ 2^-25 where m is subnormal in f16). GPTQ with a
// shuffled g_idx cannot form Q4_1 blocks and goes to Q8_0: within about half
// a Q8_0 step (d / 2 plus the f16 rounding of d over 127 steps).
TEST(QuantCheckpoint, Int4RepackIsExactUpToTheRoundingOfTheOffset) {
  for (const char* name : {"qwen2_tiny_awq", "llama_tiny_gptq", "llama_tiny_gptq_act"}) {
    SCOPED_TRACE(name);
    const bool act = std::string(name) == "llama_tiny_gptq_act";
    const json ref = quant_reference(name);
    auto packed = ModelSource::open(quant_fixture_dir(name));
    auto exact = ModelSource::open(quant_fixture_dir(name), LoadOptions{DType::F32});
    for (const auto& [tensor, unused] : ref["dequantized"].items()) {
      const TensorView q = *packed->find_stored(tensor), f = *exact->find_stored(tensor);
      ASSERT_EQ(q.dtype, act ? DType::Q8_0 : DType::Q4_1) << tensor;
      std::vector<float> row(static_cast<size_t>(q.cols()));
      for (int64_t r = 0; r < q.rows(); ++r) {
        kernels::dequantize_row(q, r, row.data());
        const float* want = static_cast<const float*>(f.data) + r * f.cols();
        for (int64_t c = 0; c < q.cols(); ++c) {
          const uint8_t* block = q.row(r) + (c / 32) * block_bytes(q.dtype);
          const float d = fp16_to_f32(static_cast<uint16_t>(block[0] | block[1] << 8));
          const float m = act ? 0.0f : fp16_to_f32(static_cast<uint16_t>(block[2] | block[3] << 8));
          const double bound = act ? 0.5 * d + 127.0 * d * 0x1p-11 : std::fabs(m) * 0x1p-11 + 0x1p-25;
          ASSERT_LE(std::fabs(row[static_cast<size_t>(c)] - want[c]), bound * (1 + 1e-6))
              << tensor << " [" << r << "][" << c << "]";
        }
      }
    }
  }
}

// Loading holds about one converted matrix at a time: each is freed once packed
// (what the model keeps unpacked at this ISA level stays, and is counted; the
// DB_ISA=scalar run of this test below packs nothing and keeps them all).
TEST(QuantCheckpoint, ConversionHoldsAboutOneMatrixAtATime) {
  const std::string dir = quant_fixture_dir("deepseek_v3_tiny_fp8");
  const json ref = quant_reference("deepseek_v3_tiny_fp8");
  size_t largest = 0, total = 0;
  {
    auto probe = ModelSource::open(dir);
    for (const auto& [tensor, unused] : ref["dequantized"].items()) {
      const size_t n = probe->find_stored(tensor)->nbytes();
      largest = std::max(largest, n);
      total += n;
    }
  }
  auto src = ModelSource::open(dir);
  CheckpointConverter* conv = src->converter();
  ModelFactory build = src->arch().build;
  auto model = build(std::move(src), nullptr);
  EXPECT_EQ(conv->converted_count(), static_cast<int64_t>(ref["dequantized"].size()));
  EXPECT_LE(conv->peak_bytes_held(), conv->bytes_held() + 2 * largest);
  if (kernels::prefers_packed(DType::Q8_0, cpu_features().level) &&
      kernels::prefers_packed(DType::F16, cpu_features().level)) {
    EXPECT_EQ(conv->bytes_held(), 0u);
  }
  if (kernels::prefers_packed(DType::Q8_0, cpu_features().level)) {  // else the model keeps them all
    EXPECT_LT(conv->peak_bytes_held(), total / 4) << "the whole model was held at once";
  }
  EXPECT_NE(conv->summary().find("FP8 checkpoint: 72 matrices converted"), std::string::npos) << conv->summary();
}

// ---- broken checkpoints ----

struct QuantTempDir {
  fs::path path;
  QuantTempDir() {
    static int counter = 0;
    path = fs::temp_directory_path() / ("db_quant_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(path);
  }
  ~QuantTempDir() { fs::remove_all(path); }
};

void expect_load_error(const fs::path& dir, const std::vector<std::string>& parts) {
  try {
    load_model(dir.string());
    FAIL() << "expected db::Error";
  } catch (const Error& e) {
    for (const std::string& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

TEST(QuantCheckpoint, MissingScaleTensorNamesIt) {
  QuantTempDir t;
  const std::string w = "model.layers.0.self_attn.o_proj.weight";
  copy_broken("deepseek_v3_tiny_fp8", t.path, w + "_scale_inv", 0);
  expect_load_error(t.path, {"model.safetensors", "'" + w + "'", w + "_scale_inv", "got none"});
}

TEST(QuantCheckpoint, TruncatedFp8ShardNamesTheTensor) {
  QuantTempDir t;
  const size_t size = fs::file_size(fs::path(quant_fixture_dir("deepseek_v3_tiny_fp8")) / "model.safetensors");
  copy_broken("deepseek_v3_tiny_fp8", t.path, "", size - 100);
  expect_load_error(t.path, {"model.safetensors", "tensor '", "data_offsets out of range"});
}

TEST(QuantCheckpoint, UnsupportedGroupSizeOrBitsAreRefused) {
  QuantTempDir a, b, c;
  copy_broken("qwen2_tiny_awq", a.path, "", 0, {{"group_size", 16}});
  expect_load_error(a.path, {"config.json", "quantization_config.group_size", "32, 64 or 128", "got 16"});
  copy_broken("llama_tiny_gptq", b.path, "", 0, {{"bits", 8}});
  expect_load_error(b.path, {"config.json", "quantization_config.bits", "got 8"});
  copy_broken("deepseek_v3_tiny_fp8", c.path, "", 0, {{"weight_block_size", json::array()}});
  expect_load_error(c.path, {"config.json", "weight_block_size"});
}

// A group size that does not match the stored scales: the layer's tensors are named.
TEST(QuantCheckpoint, GroupSizeDisagreeingWithTheScalesNamesTheLayer) {
  QuantTempDir t;
  copy_broken("llama_tiny_gptq", t.path, "", 0, {{"group_size", 64}});
  expect_load_error(t.path, {"model.safetensors", "model.layers.0.", "qzeros", "expected shape"});
}

TEST(QuantCheckpoint, MissingZerosNameTheLayer) {
  QuantTempDir t;
  copy_broken("qwen2_tiny_awq", t.path, "model.layers.1.mlp.down_proj.qzeros", 0);
  expect_load_error(t.path, {"model.safetensors", "model.layers.1.mlp.down_proj", "qzeros", "got none"});
}

TEST(QuantCheckpoint, QuantizeOptionOnAPlainCheckpointIsRefused) {
  try {
    load_model(quant_fixture_dir("qwen2_tiny"), nullptr, LoadOptions{DType::Q8_0});
    FAIL() << "expected db::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("applies to FP8, AWQ and GPTQ checkpoints"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace db::test
