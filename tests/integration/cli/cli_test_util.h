// Running the deepbatch binary from a test: arguments in, exit status, stdout and
// stderr out. DB_DEEPBATCH_BINARY is the built binary (set by the test's CMakeLists).
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "runner/model_bundle.h"

namespace db::test {

inline const char* kDefaultModelPath = DB_SOURCE_DIR "/models/SmolLM2-135M-Instruct.Q4_1.gguf";

// A test suite sharing one load of the default model; each test fails with a clear
// message when the model file is missing. Tests reach it through bundle_.
class DefaultModelSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (std::filesystem::exists(kDefaultModelPath)) bundle_ = ModelBundle::open(kDefaultModelPath).release();
  }
  static void TearDownTestSuite() {
    delete bundle_;
    bundle_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(bundle_, nullptr) << kDefaultModelPath << " is missing: run scripts/setup.sh (it downloads the default model)";
  }
  static inline ModelBundle* bundle_ = nullptr;
};

struct CliResult {
  int exit_code = -1;  // the process's exit status (-1: it did not exit normally)
  std::string out;     // its stdout
  std::string err;     // its stderr
};

// Runs `deepbatch args...` with `stdin_text` on its standard input.
CliResult run_deepbatch(const std::vector<std::string>& args, const std::string& stdin_text = "");

// A fresh, empty directory for one test's files.
std::string make_temp_dir(const std::string& name);

// Whole contents of a file ("" when it cannot be read).
std::string read_text_file(const std::string& path);

}  // namespace db::test
