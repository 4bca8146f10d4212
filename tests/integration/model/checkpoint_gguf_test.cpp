// Hugging Face checkpoints converted into GGUF files (model/checkpoint_gguf.h,
// `deepbatch convert DIR -o OUT.gguf [--pack]`): for every quantized fixture,
// the file, pre-packed or not, loads with the directory's outputs (the same
// converted bytes, the same logits and greedy tokens), carries its tokenizer
// and chat template, and a sharded checkpoint converts as the single file
// does; broken checkpoints fail naming the problem and leave no file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bundle/model_bundle.h"
#include "io/gguf.h"
#include "io/hf_checkpoint.h"
#include "kernels/packed_weights.h"
#include "kernels/quantize.h"
#include "model/checkpoint_converter.h"
#include "model/checkpoint_gguf.h"
#include "model/config.h"
#include "model/gguf_model_writer.h"
#include "model/moe_feed_forward.h"
#include "model/model_source.h"
#include "model_test_util.h"
#include "quant_fixture_util.h"
#include "scratch_dir.h"
#include "util/cpu_features.h"
#include "util/error.h"

namespace db::test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const char* const kConvertFixtures[] = {"deepseek_v3_tiny_fp8", "qwen2_tiny_awq", "llama_tiny_gptq",
                                        "llama_tiny_gptq_act"};

std::vector<std::vector<int32_t>> fixture_sequences(const std::string& name) {
  std::ifstream in(quant_fixture_dir(name) + "/reference.json");
  return json::parse(in)["sequences"].get<std::vector<std::vector<int32_t>>>();
}

struct Outputs {
  SeqLogits logits;             // every position of the fixture's sequences, chunked and mixed
  std::vector<int32_t> greedy;  // 12 tokens after the first sequence
};

Outputs outputs_of(const std::string& path, const std::vector<std::vector<int32_t>>& seqs) {
  auto model = load_model(path);
  Outputs o;
  {
    PagedRunner r(*model, 16, 64, DType::F32, 2, 53);
    o.logits = run_chunked_mixed(r, seqs);
  }
  PagedRunner r(*model, 16, 64, DType::F32, 2, 53);
  o.greedy = greedy_decode(r, seqs.front(), 12);
  return o;
}

std::string convert(const std::string& dir, const std::string& out, std::optional<IsaLevel> level) {
  ThreadPool pool(2);
  const CheckpointGgufReport r = convert_checkpoint_to_gguf(dir, out, LoadOptions{}, level, &pool);
  EXPECT_GT(r.tensors, 10);
  EXPECT_EQ(r.bytes, fs::file_size(out));
  if (!level) EXPECT_EQ(r.packed, 0) << out;
  return out;
}

// llama's GGUF files hold attn_q / attn_k rows as llama.cpp permutes them and
// rotate adjacent pairs: the same products, but each head's q.k sums run in
// another order, so scores differ in the last bits, and where a quantized
// matmul then rounds its input to 8 bits such a bit may move a value by one
// step (measured on llama_tiny_gptq: 1.6e-4; rows in the wrong order would
// give differences of the logits' own size). Every other architecture computes
// exactly what the directory computes.
bool rows_paired(const std::string& fixture) { return fixture.rfind("llama", 0) == 0; }

TEST(CheckpointGguf, ConvertedFilesGiveTheDirectorysOutputs) {
  const ScratchDir tmp("ckpt_gguf");
  for (const char* name : kConvertFixtures) {
    SCOPED_TRACE(name);
    const std::string dir = quant_fixture_dir(name);
    const auto seqs = fixture_sequences(name);
    const Outputs want = outputs_of(dir, seqs);
    const std::string plain = convert(dir, tmp.file(std::string(name) + ".gguf"), std::nullopt);
    const std::string packed =
        convert(dir, tmp.file(std::string(name) + ".packed.gguf"), cpu_features().level);
    for (const std::string& file : {plain, packed}) {
      SCOPED_TRACE(file);
      const Outputs got = outputs_of(file, seqs);
      EXPECT_EQ(got.greedy, want.greedy);
      if (rows_paired(name)) {
        const double err = max_abs_diff(got.logits, want.logits);
        std::printf("%s: max |logit - directory logit| = %.3g\n", file.c_str(), err);
        EXPECT_LE(err, 2e-3);
      } else {
        EXPECT_TRUE(bit_identical(got.logits, want.logits)) << max_abs_diff(got.logits, want.logits);
      }
    }
  }
}

// Plain checkpoints too (the model fixtures, given the quantized fixtures'
// byte-level tokenizer): the file gives the directory's outputs, and its
// configuration is the one read from the fixture's own F32 GGUF file, but for
// MLA's softmax scale: that file's yarn_log_multiplier (0.1 * mscale_all_dim,
// as llama.cpp writes it) gives a scale one float step from the directory's;
// the converter writes the multiplier that gives the directory's exactly.
TEST(CheckpointGguf, PlainCheckpointsConvertLikeTheirGgufFixtures) {
  const ScratchDir tmp("ckpt_gguf_plain");
  for (const char* name : {"llama_tiny", "qwen2_tiny", "deepseek_v2_tiny", "deepseek_v3_tiny"}) {
    SCOPED_TRACE(name);
    const Fixture f = load_fixture(name);
    const fs::path dir = tmp.path() / name;
    fs::create_directories(dir);
    for (const char* file : {"config.json", "model.safetensors"}) fs::copy_file(fs::path(f.dir) / file, dir / file);
    fs::copy_file(fs::path(quant_fixture_dir("qwen2_tiny_awq")) / "tokenizer.json", dir / "tokenizer.json");
    const std::string file = convert(dir.string(), tmp.file(std::string(name) + ".gguf"), std::nullopt);
    const std::string packed = convert(dir.string(), tmp.file(std::string(name) + ".p.gguf"), cpu_features().level);
    const Outputs want = outputs_of(dir.string(), f.sequences), got = outputs_of(packed, f.sequences);
    EXPECT_EQ(got.greedy, want.greedy);
    if (rows_paired(name)) {
      EXPECT_LE(max_abs_diff(got.logits, want.logits), 2e-3);
    } else {
      EXPECT_TRUE(bit_identical(got.logits, want.logits)) << max_abs_diff(got.logits, want.logits);
    }
    const ModelConfig ours = read_model_config(*ModelSource::open(file));
    ModelConfig theirs = read_model_config(*ModelSource::open(fixture_model_path(f, "f32")));
    EXPECT_LE(std::fabs(theirs.mla.softmax_scale - ours.mla.softmax_scale), 1e-7f);
    theirs.mla.softmax_scale = ours.mla.softmax_scale;
    EXPECT_EQ(config_difference(theirs, ours), "");
    EXPECT_EQ(config_difference(read_model_config(*ModelSource::open(dir.string())), ours, rows_paired(name)), "");
  }
}

// The converted matrices are the bytes loading the directory converts.
TEST(CheckpointGguf, MatricesHoldTheBytesTheDirectoryLoads) {
  const ScratchDir tmp("ckpt_gguf_bytes");
  for (const char* name : kConvertFixtures) {
    SCOPED_TRACE(name);
    const std::string dir = quant_fixture_dir(name);
    const std::string file = convert(dir, tmp.file(std::string(name) + ".gguf"), std::nullopt);
    auto from_dir = ModelSource::open(dir);
    auto from_file = ModelSource::open(file);
    int compared = 0;
    for (const std::string m : {"blk.0.attn_output.weight", "blk.1.ffn_down.weight", "blk.1.attn_q_b.weight"}) {
      if (!from_dir->contains(m)) continue;
      const TensorView a = from_dir->tensor(m), b = from_file->tensor(m);
      ASSERT_EQ(a.dtype, b.dtype) << m;
      ASSERT_EQ(a.shape, b.shape) << m;
      EXPECT_EQ(std::memcmp(a.data, b.data, a.nbytes()), 0) << m;
      ++compared;
    }
    EXPECT_GE(compared, 2);
  }
}

// Converting holds one converted matrix at a time (the bench's multi-shard
// checkpoint shows the process's peak: bench/quant/fp8_load_bench.py --convert).
TEST(CheckpointGguf, ConversionHoldsOneMatrixAtATime) {
  const ScratchDir tmp("ckpt_gguf_peak");
  const std::string dir = quant_fixture_dir("deepseek_v3_tiny_fp8");
  size_t largest = 0;
  {
    auto src = ModelSource::open(dir);
    for (const std::string& name : src->hf()->tensor_names())
      if (src->converter()->converts(name)) largest = std::max(largest, src->find_stored(name)->nbytes());
  }
  const CheckpointGgufReport r =
      convert_checkpoint_to_gguf(dir, tmp.file("v3.gguf"), LoadOptions{}, cpu_features().level);
  EXPECT_NE(r.conversion.find("FP8 checkpoint: 72 matrices converted"), std::string::npos) << r.conversion;
  EXPECT_GT(r.peak_converted_bytes, 0u);
  EXPECT_LE(r.peak_converted_bytes, largest);
}

TEST(CheckpointGguf, PackedFileMapsTheMatricesInPlace) {
  const IsaLevel level = cpu_features().level;
  if (!kernels::prefers_packed(DType::Q8_0, level)) GTEST_SKIP() << "this level keeps Q8_0 matrices in rows";
  const ScratchDir tmp("ckpt_gguf_packed");
  const std::string file = convert(quant_fixture_dir("deepseek_v3_tiny_fp8"), tmp.file("v3.gguf"), level);
  const auto g = GGUFFile::open(file);
  EXPECT_EQ(g->opt_string(kGGUFPanelLevelKey), std::string(isa_name(level)));
  EXPECT_EQ(g->find_tensor("blk.0.attn_output.weight")->layout, TensorLayout::Panels16);
  EXPECT_EQ(g->find_tensor("blk.1.ffn_up_exps.weight")->layout, TensorLayout::Panels16);
  EXPECT_EQ(g->find_tensor("token_embd.weight")->layout, TensorLayout::Rows);
  // MLA's absorbed matrices are stored split, so the load builds nothing either
  EXPECT_EQ(g->find_tensor("blk.0.attn_kv_b.weight"), nullptr);
  ASSERT_NE(g->find_tensor("blk.0.attn_k_b.weight"), nullptr);
  ASSERT_NE(g->find_tensor("blk.0.attn_v_b.weight"), nullptr);
  ::testing::internal::CaptureStderr();
  load_model(file);
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("weights ready in"), std::string::npos) << log;
  EXPECT_EQ(log.find("built"), std::string::npos) << log;
  EXPECT_EQ(log.find("repacked"), std::string::npos) << log;
}

TEST(CheckpointGguf, ShardedCheckpointConvertsAsTheSingleFile) {
  const ScratchDir tmp("ckpt_gguf_sharded");
  const fs::path sharded = tmp.path() / "deepseek_v3_tiny_fp8";  // the same name: the same general.name
  fs::create_directories(sharded);
  copy_sharded("deepseek_v3_tiny_fp8", sharded, 3);
  ASSERT_TRUE(fs::exists(sharded / "model-3-of-3.safetensors"));
  const std::string a = convert(quant_fixture_dir("deepseek_v3_tiny_fp8"), tmp.file("single.gguf"), std::nullopt);
  const std::string b = convert(sharded.string(), tmp.file("sharded.gguf"), std::nullopt);
  std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
  const std::string ba((std::istreambuf_iterator<char>(fa)), {}), bb((std::istreambuf_iterator<char>(fb)), {});
  EXPECT_TRUE(ba == bb) << "the files differ";
}

// tokenizer_config.json (BOS / EOS, add_bos_token, the chat template) and
// generation_config.json travel into the file: the bundle opened on it
// encodes, renders and stops as the one opened on the directory.
TEST(CheckpointGguf, TokenizerAndChatTemplateTravel) {
  const ScratchDir tmp("ckpt_gguf_tok");
  const fs::path dir = tmp.path() / "awq";
  fs::create_directories(dir);
  for (const char* f : {"config.json", "model.safetensors", "tokenizer.json"})
    fs::copy_file(fs::path(quant_fixture_dir("qwen2_tiny_awq")) / f, dir / f);
  std::ofstream(dir / "tokenizer_config.json") << json{
      {"bos_token", "<"},
      {"eos_token", ">"},
      {"add_bos_token", true},
      {"chat_template",
       "{% for m in messages %}[{{ m.role }}]{{ m.content }}\n{% endfor %}{% if add_generation_prompt %}[a]{% endif %}"}}
                                                       .dump();
  std::ofstream(dir / "generation_config.json") << R"({"eos_token_id": [62, 10]})";
  const std::string file = convert(dir.string(), tmp.file("awq.gguf"), std::nullopt);
  const auto a = ModelBundle::open(dir.string(), 2), b = ModelBundle::open(file, 2);
  const std::vector<ChatMessage> chat = {{"system", "be brief", {}, ""}, {"user", "hi there!", {}, ""}};
  EXPECT_EQ(b->render_chat(chat, true), a->render_chat(chat, true));
  EXPECT_EQ(b->encode_chat(chat), a->encode_chat(chat));
  EXPECT_EQ(b->encode_prompt("hello, world 123"), a->encode_prompt("hello, world 123"));
  EXPECT_EQ(b->encode_prompt("x").front(), 60);  // BOS "<" added
  EXPECT_EQ(b->tokenizer().eos_ids(), a->tokenizer().eos_ids());
  EXPECT_TRUE(b->tokenizer().is_eos(10));
}

// A tokenizer the GGUF keys cannot hold is refused before anything is written.
TEST(CheckpointGguf, TokenizerGgufCannotHoldIsRefused) {
  const ScratchDir tmp("ckpt_gguf_badtok");
  const fs::path dir = tmp.path() / "awq";
  fs::create_directories(dir);
  for (const char* f : {"config.json", "model.safetensors"})
    fs::copy_file(fs::path(quant_fixture_dir("qwen2_tiny_awq")) / f, dir / f);
  std::ifstream in(fs::path(quant_fixture_dir("qwen2_tiny_awq")) / "tokenizer.json");
  json tok = json::parse(in);
  tok["added_tokens"] = json::array({{{"id", 33}, {"content", "!"}, {"special", false}, {"lstrip", true}}});
  std::ofstream(dir / "tokenizer.json") << tok.dump();
  const std::string out = tmp.file("out.gguf");
  try {
    convert_checkpoint_to_gguf(dir.string(), out, LoadOptions{}, std::nullopt);
    FAIL() << "expected db::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("added token \"!\""), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("lstrip"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out + ".tmp"));
}

// Large matrices are written (and packed) a chunk of rows at a time: chunks of
// one panel group give the file one pass over the whole matrix gives.
TEST(GgufModelWriterChunks, SmallChunksWriteTheSameFile) {
  const ScratchDir tmp("writer_chunks");
  const int64_t rows = 100, cols = 64, experts = 3;
  std::vector<float> x(static_cast<size_t>(experts * rows * cols));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7919) % 1000) / 500.0f - 1.0f;
  std::vector<uint8_t> q(static_cast<size_t>(experts * rows) * row_bytes(DType::Q8_0, cols));
  for (int64_t r = 0; r < experts * rows; ++r)
    kernels::quantize_row(DType::Q8_0, x.data() + r * cols, q.data() + r * row_bytes(DType::Q8_0, cols), cols);
  const TensorView stack{DType::Q8_0, {experts, rows, cols}, q.data()};
  auto write = [&](const std::string& name, std::optional<IsaLevel> level, int64_t chunk_bytes) {
    GgufModelWriter w(tmp.file(name), level, nullptr, chunk_bytes);
    w.metadata().add_string("general.architecture", "llama");
    w.declare("blk.0.attn_q.weight", 2);
    w.declare("blk.0.ffn_up_exps.weight", 3);
    w.declare("blk.0.ffn_down_exps.weight", 3, experts);
    w.write(0, TensorView{DType::Q8_0, {rows, cols}, q.data()});
    w.write(1, stack);
    for (int64_t e = 0; e < experts; ++e) w.write(2, expert_slice(stack, e), e);
    w.finish();
    std::ifstream in(tmp.file(name), std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  };
  const std::string rows_whole = write("a.gguf", std::nullopt, int64_t{1} << 30);
  EXPECT_EQ(write("b.gguf", std::nullopt, 1), rows_whole);
  const IsaLevel level = cpu_features().level;
  const std::string packed_whole = write("c.gguf", level, int64_t{1} << 30);
  EXPECT_EQ(write("d.gguf", level, 1), packed_whole);
  const auto g = GGUFFile::open(tmp.file("d.gguf"));
  const bool packs = kernels::prefers_packed(DType::Q8_0, level);
  EXPECT_EQ(g->find_tensor("blk.0.ffn_down_exps.weight")->layout, packs ? TensorLayout::Panels16 : TensorLayout::Rows);
  EXPECT_EQ(g->find_tensor("blk.0.ffn_down_exps.weight")->shape, (std::vector<int64_t>{experts, rows, cols}));
}

// ---- broken checkpoints: the error names the problem, no file is left ----

void expect_convert_error(const fs::path& dir, const std::vector<std::string>& parts) {
  const ScratchDir out_dir("ckpt_gguf_err");
  const std::string out = out_dir.file("out.gguf");
  try {
    convert_checkpoint_to_gguf(dir.string(), out, LoadOptions{}, cpu_features().level);
    FAIL() << "expected db::Error";
  } catch (const Error& e) {
    for (const std::string& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out + ".tmp"));
}

TEST(CheckpointGguf, DirectoryWithoutConfigIsRefused) {
  const ScratchDir tmp("ckpt_gguf_noconfig");
  fs::copy_file(fs::path(quant_fixture_dir("qwen2_tiny_awq")) / "model.safetensors", tmp.path() / "model.safetensors");
  expect_convert_error(tmp.path(), {"config.json", "expected the model config", "no such file"});
}

TEST(CheckpointGguf, TruncatedShardIsRefused) {
  const ScratchDir tmp("ckpt_gguf_trunc");
  const size_t size = fs::file_size(fs::path(quant_fixture_dir("deepseek_v3_tiny_fp8")) / "model.safetensors");
  copy_broken("deepseek_v3_tiny_fp8", tmp.path(), "", size - 100);
  fs::copy_file(fs::path(quant_fixture_dir("deepseek_v3_tiny_fp8")) / "tokenizer.json", tmp.path() / "tokenizer.json");
  expect_convert_error(tmp.path(), {"model.safetensors", "tensor '", "data_offsets out of range"});
}

TEST(CheckpointGguf, MissingScaleTensorIsRefused) {
  const ScratchDir tmp("ckpt_gguf_noscale");
  const std::string w = "model.layers.1.mlp.experts.3.down_proj.weight";
  copy_broken("deepseek_v3_tiny_fp8", tmp.path(), w + "_scale_inv", 0);
  fs::copy_file(fs::path(quant_fixture_dir("deepseek_v3_tiny_fp8")) / "tokenizer.json", tmp.path() / "tokenizer.json");
  expect_convert_error(tmp.path(), {"model.safetensors", "'" + w + "'", w + "_scale_inv", "got none"});
}

TEST(CheckpointGguf, CheckpointWithoutTokenizerIsRefused) {
  const ScratchDir tmp("ckpt_gguf_notok");
  copy_broken("qwen2_tiny_awq", tmp.path(), "", 0);
  expect_convert_error(tmp.path(), {"no tokenizer.json"});
}

}  // namespace
}  // namespace db::test
