// K-quant weights (Q4_K, Q5_K, Q6_K) through whole forwards. The fixtures'
// hidden size (64) is too small for 256-element super-blocks, so a small llama
// GGUF with random K-quant matrices is written here, next to a copy holding the
// same weights dequantized to F32. Checked: finite, varied logits; batch
// schedules, thread counts and KV dtypes that do not change them by a bit; and
// agreement with the F32 copy within the error of quantizing activations to
// 8 bits (the K-quant products do that, the F32 ones do not).
//
// The K-quant matrices run in the layout the process's ISA level prefers
// (Panels16 at AVX-512 VNNI, GGUF rows otherwise; kernels/packed_weights.h).
// That level is fixed for the process (DB_ISA), so ctest runs the F32
// comparison a second time under DB_ISA=avx2 (see CMakeLists.txt): both layouts
// are then held to the same tolerance against the same F32 weights.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "io/gguf_writer.h"
#include "kernels/dequantize.h"
#include "kernels/packed_weights.h"
#include "kernels/quant_blocks.h"
#include "model_test_util.h"
#include "scratch_dir.h"
#include "test_weights.h"
#include "util/cpu_features.h"
#include "util/fp16.h"

namespace db::test {
namespace {

// The generated model: every matrix row a multiple of 256 elements long.
constexpr int kHidden = 256, kLayers = 2, kHeads = 4, kKVHeads = 2, kHeadDim = 64, kFFN = 512, kVocab = 300;
constexpr int kQDim = kHeads * kHeadDim, kKVDim = kKVHeads * kHeadDim;

// One tensor of the model: its stored dtype and bytes, and the values they mean.
struct Weight {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;  // outermost first
  std::vector<uint8_t> bytes;  // empty for F32 (the values are the bytes)
  std::vector<float> values;   // numel floats
};

// Sets the fp16 dmin of every Q4_K / Q5_K super-block in `bytes` so that the
// block's 256 values sum to about zero, as a trained matrix's roughly do. With
// random codes and mins most weights would have one sign: every product would
// then be dominated by one direction, attention scores would be huge and
// attention a near-tie argmax that 8-bit activations flip. Q6_K codes are
// centred by construction (q - 32, signed scales).
void center_k_blocks(DType t, std::vector<uint8_t>& bytes) {
  if (t != DType::Q4_K && t != DType::Q5_K) return;
  static_assert(offsetof(kernels::BlockQ4_K, dmin) == offsetof(kernels::BlockQ5_K, dmin));
  float v[kernels::kQKK];
  // Sum of the block's values with its dmin set to `dmin`.
  auto block_sum = [&](uint8_t* block, float dmin) {
    const uint16_t h = f32_to_fp16(dmin);
    std::memcpy(block + offsetof(kernels::BlockQ4_K, dmin), &h, sizeof h);
    kernels::dequantize_row_data(t, block, v, kernels::kQKK);
    return std::accumulate(v, v + kernels::kQKK, 0.0);
  };
  for (size_t off = 0; off < bytes.size(); off += block_bytes(t)) {
    uint8_t* block = bytes.data() + off;
    const double scaled = block_sum(block, 0.0f);      // d * sum(scale * code)
    const double mins = scaled - block_sum(block, 1.0f);  // sum(min) over the 256 values
    block_sum(block, mins > 0.0 ? static_cast<float>(scaled / mins) : 0.0f);
  }
}

// A {rows, cols} K-quant matrix of random super-blocks (random codes, sub-block
// scales and mins; small fp16 d) from the kernel tests' generator, centred.
Weight kquant_matrix(const std::string& name, DType dtype, int64_t rows, int64_t cols, uint32_t seed) {
  Weight w{name, dtype, {rows, cols}, kernels::testing::make_weights(dtype, rows, cols, seed).bytes,
           std::vector<float>(static_cast<size_t>(rows * cols))};
  center_k_blocks(dtype, w.bytes);
  kernels::dequantize_row_data(dtype, w.bytes.data(), w.values.data(), rows * cols);
  return w;
}

// An F32 RMS-norm weight of n elements, each in [0.5, 1.5] * scale.
Weight norm_weight(const std::string& name, int64_t n, float scale, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(0.5f * scale, 1.5f * scale);
  Weight w{name, DType::F32, {n}, {}, std::vector<float>(static_cast<size_t>(n))};
  for (float& v : w.values) v = u(rng);
  return w;
}

// Every tensor of the llama model above, deterministic in `seed`. The formats
// are mixed the way llama.cpp's K-quant mixes do (Q6_K for attn_v, ffn_down and
// the head) and so that the fused gate/up product meets equal and unequal dtypes.
// The random K-quant weights are far larger than a trained model's (several
// units), so the norms scale the matrices' inputs down: attention scores of a
// few units (attention neither uniform nor a near-tie argmax) and logits of
// tens of units.
std::vector<Weight> kquant_llama_weights(uint32_t seed) {
  constexpr float kAttnNormScale = 0.005f, kNormScale = 0.01f;
  std::mt19937 rng(seed);
  std::vector<Weight> ws;
  auto matrix = [&](const std::string& name, DType dtype, int64_t rows, int64_t cols) {
    ws.push_back(kquant_matrix(name, dtype, rows, cols, static_cast<uint32_t>(rng())));
  };
  matrix("token_embd.weight", DType::Q4_K, kVocab, kHidden);
  for (int l = 0; l < kLayers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    ws.push_back(norm_weight(p + "attn_norm.weight", kHidden, kAttnNormScale, rng));
    matrix(p + "attn_q.weight", DType::Q4_K, kQDim, kHidden);
    matrix(p + "attn_k.weight", DType::Q5_K, kKVDim, kHidden);
    matrix(p + "attn_v.weight", DType::Q6_K, kKVDim, kHidden);
    matrix(p + "attn_output.weight", DType::Q4_K, kHidden, kQDim);
    ws.push_back(norm_weight(p + "ffn_norm.weight", kHidden, kNormScale, rng));
    matrix(p + "ffn_gate.weight", DType::Q4_K, kFFN, kHidden);
    matrix(p + "ffn_up.weight", l == 0 ? DType::Q4_K : DType::Q5_K, kFFN, kHidden);
    matrix(p + "ffn_down.weight", DType::Q6_K, kHidden, kFFN);
  }
  ws.push_back(norm_weight("output_norm.weight", kHidden, kNormScale, rng));
  matrix("output.weight", DType::Q6_K, kVocab, kHidden);
  return ws;
}

// Writes a llama GGUF of `weights`: in their stored dtypes, or all as F32 values.
void write_llama_gguf(const std::string& path, const std::vector<Weight>& weights, bool as_f32) {
  GGUFWriter w;
  w.add_string("general.architecture", "llama");
  w.add_uint32("llama.context_length", 256);
  w.add_uint32("llama.embedding_length", kHidden);
  w.add_uint32("llama.block_count", kLayers);
  w.add_uint32("llama.feed_forward_length", kFFN);
  w.add_uint32("llama.rope.dimension_count", kHeadDim);
  w.add_uint32("llama.attention.head_count", kHeads);
  w.add_uint32("llama.attention.head_count_kv", kKVHeads);
  w.add_float32("llama.rope.freq_base", 10000.0f);
  w.add_float32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  w.add_uint32("llama.vocab_size", kVocab);
  for (const Weight& t : weights) {
    if (as_f32 || t.dtype == DType::F32)
      w.add_tensor(t.name, DType::F32, t.shape, t.values.data(), t.values.size() * sizeof(float));
    else
      w.add_tensor(t.name, t.dtype, t.shape, t.bytes.data(), t.bytes.size());
  }
  w.write(path);
}

// n sequences of the given lengths, random token ids below the vocabulary size.
std::vector<std::vector<int32_t>> random_sequences(const std::vector<int>& lengths, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> token(0, kVocab - 1);
  std::vector<std::vector<int32_t>> seqs;
  for (int n : lengths) {
    seqs.emplace_back(static_cast<size_t>(n));
    for (int32_t& t : seqs.back()) t = token(rng);
  }
  return seqs;
}

// Largest |logit| over all sequences: the scale errors are measured against.
double logit_scale(const SeqLogits& l) {
  double m = 0.0;
  for (const auto& rows : l)
    for (float v : rows) m = std::max(m, std::abs(static_cast<double>(v)));
  return m;
}

// sqrt(sum (a - b)^2 / sum b^2) over the elements a and b share (shapes are
// checked by max_abs_diff); infinity when b is all zero.
double relative_rms_diff(const SeqLogits& a, const SeqLogits& b) {
  double err = 0.0, ref = 0.0;
  for (size_t s = 0; s < a.size() && s < b.size(); ++s)
    for (size_t i = 0; i < a[s].size() && i < b[s].size(); ++i) {
      err += std::pow(static_cast<double>(a[s][i]) - b[s][i], 2);
      ref += std::pow(static_cast<double>(b[s][i]), 2);
    }
  return ref > 0.0 ? std::sqrt(err / ref) : std::numeric_limits<double>::infinity();
}

// True if every logit is finite and at least two of them differ.
bool finite_and_varied(const SeqLogits& l) {
  bool varied = false;
  for (const auto& rows : l) {
    if (rows.empty()) return false;
    for (float v : rows) {
      if (!std::isfinite(v)) return false;
      varied |= v != rows.front();
    }
  }
  return varied;
}

// The two model files, written once for all tests of this file.
class ModelKQuantTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<ScratchDir>("kquant_model");
    const std::vector<Weight> weights = kquant_llama_weights(20240611);
    write_llama_gguf(kquant_path(), weights, /*as_f32=*/false);
    write_llama_gguf(f32_path(), weights, /*as_f32=*/true);
  }
  static void TearDownTestSuite() { dir_.reset(); }

  static std::string kquant_path() { return dir_->file("kquant.gguf"); }
  static std::string f32_path() { return dir_->file("dequantized-f32.gguf"); }

  static constexpr int kBlockSize = 16;
  static constexpr int64_t kBlocks = 16;  // the sequences need 6
  const std::vector<std::vector<int32_t>> seqs_ = random_sequences({23, 5, 40}, 7);

 private:
  static std::unique_ptr<ScratchDir> dir_;
};

std::unique_ptr<ScratchDir> ModelKQuantTest::dir_;

TEST_F(ModelKQuantTest, LoadsTheGeneratedConfig) {
  auto model = load_model(kquant_path());
  const ModelConfig& c = model->config();
  EXPECT_EQ(c.hidden, kHidden);
  EXPECT_EQ(c.n_layers, kLayers);
  EXPECT_EQ(c.head_dim, kHeadDim);
  EXPECT_EQ(c.n_kv_heads, kKVHeads);
  EXPECT_EQ(c.ffn_hidden, kFFN);
  EXPECT_EQ(c.vocab, kVocab);
  EXPECT_FALSE(c.tied_embeddings);
}

// Every schedule, with 1 and 2 threads, gives the logits of all sequences in
// one batch on 1 thread, bit for bit, for each KV dtype.
TEST_F(ModelKQuantTest, ScheduleAndThreadsDoNotChangeLogits) {
  auto model = load_model(kquant_path());
  for (DType kv : {DType::F32, DType::F16}) {
    PagedRunner base_runner(*model, kBlockSize, kBlocks, kv, 1, 1);
    const SeqLogits base = run_all_at_once(base_runner, seqs_);
    EXPECT_TRUE(finite_and_varied(base)) << dtype_name(kv);
    double worst = 0.0;
    for (int threads : {1, 2}) {
      PagedRunner together(*model, kBlockSize, kBlocks, kv, threads, 2);
      PagedRunner alone(*model, kBlockSize, kBlocks, kv, threads, 3);
      PagedRunner chunked(*model, kBlockSize, kBlocks, kv, threads, 4);
      const SeqLogits runs[] = {run_all_at_once(together, seqs_), run_one_by_one(alone, seqs_),
                                run_chunked_mixed(chunked, seqs_)};
      const char* names[] = {"all at once", "one by one", "chunked + decodes"};
      for (int i = 0; i < 3; ++i) {
        worst = std::max(worst, max_abs_diff(base, runs[i]));
        EXPECT_TRUE(bit_identical(base, runs[i])) << names[i] << ", " << threads << " threads, kv " << dtype_name(kv);
      }
    }
    std::printf("[ max diff ] kquant kv=%s: schedules and threads vs one batch %.3g (logit scale %.3g)\n",
                dtype_name(kv).c_str(), worst, logit_scale(base));
  }
}

// The K-quant model (in the layout this process's ISA level uses) against the
// same weights in F32. The K-quant products round each activation row to 8 bits
// per 256 elements, and the random super-block scales make some channels ~25x
// larger than others (like a trained model's outliers), which coarsens that
// rounding. Measured with this seed (and nine other weight seeds): RMS
// difference 4.5% (4.7-5.3%) of the RMS logit, largest difference 4.3%
// (5.5-8.3%) of the largest |logit|.
TEST_F(ModelKQuantTest, MatchesDequantizedF32) {
  auto kquant = load_model(kquant_path());
  auto f32 = load_model(f32_path());
  PagedRunner a(*kquant, kBlockSize, kBlocks, DType::F32, 2, 5);
  PagedRunner b(*f32, kBlockSize, kBlocks, DType::F32, 2, 5);
  const SeqLogits got = run_all_at_once(a, seqs_), want = run_all_at_once(b, seqs_);
  ASSERT_TRUE(finite_and_varied(want));
  ASSERT_TRUE(finite_and_varied(got));
  const IsaLevel level = cpu_features().level;
  const char* layout = kernels::prefers_packed(DType::Q4_K, level) ? "Panels16" : "rows";
  const double diff = max_abs_diff(got, want), scale = logit_scale(want), rms = relative_rms_diff(got, want);
  std::printf("[ max diff ] kquant (%s, %s) vs dequantized f32: %.3g (%.3g of the logit scale %.3g), RMS %.3g\n",
              isa_name(level), layout, diff, diff / scale, scale, rms);
  EXPECT_LT(rms, 0.08) << layout;
  EXPECT_LT(diff, 0.15 * scale) << layout;
}

}  // namespace
}  // namespace db::test
