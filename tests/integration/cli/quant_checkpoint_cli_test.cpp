// The deepbatch binary on quantized checkpoints (tests/data/model/*_fp8, *_awq,
// *_gptq*): they load, the start-up line says how they were converted,
// --quantize picks the type or is refused with a clear message, and `convert`
// turns them into GGUF files that generate the same text.
#include <gtest/gtest.h>

#include <fstream>

#include "cli_test_util.h"

namespace db::test {
namespace {

std::string quant_cli_fixture(const std::string& name) { return std::string(DB_TEST_DATA) + "/model/" + name; }

TEST(QuantCheckpointCli, RunLoadsTheFp8CheckpointAndSaysSo) {
  const std::string dir = make_temp_dir("quant_cli_run");
  {
    std::ofstream in(dir + "/in.jsonl");
    in << R"({"custom_id": "a", "method": "POST", "url": "/v1/completions", )"
       << R"("body": {"model": "m", "prompt": "hello", "max_tokens": 3}})" << "\n";
  }
  const CliResult r = run_deepbatch({"run", "-m", quant_cli_fixture("deepseek_v3_tiny_fp8"), "-i", dir + "/in.jsonl",
                                     "-o", dir + "/out.jsonl", "--threads", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("FP8 checkpoint: 72 matrices converted (3 to F16, 69 to Q8_0)"), std::string::npos) << r.err;
  EXPECT_NE(read_text_file(dir + "/out.jsonl").find("\"custom_id\":\"a\""), std::string::npos);
}

TEST(QuantCheckpointCli, QuantizeChoosesTheType) {
  const CliResult r = run_deepbatch({"generate", "-m", quant_cli_fixture("deepseek_v3_tiny_fp8"), "-p", "hi", "-n",
                                     "2", "--threads", "2", "--quantize", "q4_0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("69 to Q4_0"), std::string::npos) << r.err;
  const CliResult a = run_deepbatch(
      {"generate", "-m", quant_cli_fixture("qwen2_tiny_awq"), "-p", "hi", "-n", "2", "--threads", "2"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_NE(a.err.find("AWQ checkpoint: 14 matrices repacked (14 to Q4_1)"), std::string::npos) << a.err;
}

TEST(QuantCheckpointCli, BadQuantizeTypeIsRefused) {
  const CliResult r = run_deepbatch({"generate", "-m", quant_cli_fixture("llama_tiny_gptq"), "-p", "hi", "-n", "2",
                                     "--quantize", "q3_x"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("quantize type must be one of"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'q3_x'"), std::string::npos) << r.err;
}

// Converted once into a pre-packed file, the FP8 checkpoint generates the
// directory's greedy text, and loading the file converts nothing.
TEST(QuantCheckpointCli, ConvertedPackedFileGeneratesTheDirectorysText) {
  const std::string out = make_temp_dir("quant_cli_convert") + "/v3.gguf";
  const std::string dir = quant_cli_fixture("deepseek_v3_tiny_fp8");
  const CliResult c = run_deepbatch({"convert", dir, "-o", out, "--pack", "-t", "2"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("FP8 checkpoint: 72 matrices converted (3 to F16, 69 to Q8_0)"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("wrote " + out + ": "), std::string::npos) << c.out;
  EXPECT_NE(c.out.find(" pre-packed for "), std::string::npos) << c.out;
  auto generate = [](const std::string& model) {
    return run_deepbatch({"generate", "-m", model, "-p", "hello", "-n", "8", "-t", "2", "--kv-cache-memory", "16M"});
  };
  const CliResult a = generate(dir), b = generate(out);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(b.out, a.out);
  EXPECT_EQ(b.err.find("FP8 checkpoint"), std::string::npos) << b.err;
}

TEST(QuantCheckpointCli, ConvertRefusesBadInputNamingIt) {
  const std::string empty = make_temp_dir("quant_cli_no_config");
  const CliResult r = run_deepbatch({"convert", empty, "-o", empty + "/out.gguf"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find(empty + "/config.json: expected the model config"), std::string::npos) << r.err;
  const CliResult t = run_deepbatch(
      {"convert", quant_cli_fixture("qwen2_tiny_awq"), "-o", empty + "/out.gguf", "--type", "q8_0"});
  EXPECT_NE(t.exit_code, 0);
  EXPECT_NE(t.err.find("take --quantize TYPE"), std::string::npos) << t.err;
  const CliResult q = run_deepbatch({"convert", quant_cli_fixture("llama_tiny_gptq"), "-o", empty + "/out.gguf",
                                     "--quantize", "q3_x"});
  EXPECT_NE(q.exit_code, 0);
  EXPECT_NE(q.err.find("quantize type must be one of"), std::string::npos) << q.err;
  EXPECT_FALSE(std::ifstream(empty + "/out.gguf").good());
}

}  // namespace
}  // namespace db::test
