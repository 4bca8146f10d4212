// The default model (SmolLM2-135M-Instruct, Q4_1; scripts/setup.sh downloads it) for
// tests that need a real one.
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace db::test {

inline const char* kDefaultModelPath = DB_SOURCE_DIR "/models/SmolLM2-135M-Instruct.Q4_1.gguf";

// Success when the default model file exists, else a failure that says how to get it:
// ASSERT_TRUE(default_model_present()).
inline ::testing::AssertionResult default_model_present() {
  if (std::filesystem::exists(kDefaultModelPath)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << kDefaultModelPath
                                       << " is missing: run scripts/setup.sh (it downloads the default model)";
}

// A test suite sharing one T opened from the default model by all its tests:
// Opener::open(path) returns a std::unique_ptr<T> (ModelBundle::open, GGUFFile::open, ...).
// Each test fails (default_model_present) when the file is missing. Tests reach it through model_.
template <class T, class Opener = T>
class DefaultModelSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (std::filesystem::exists(kDefaultModelPath)) model_ = Opener::open(kDefaultModelPath).release();
  }
  static void TearDownTestSuite() {
    delete model_;
    model_ = nullptr;
  }
  void SetUp() override {
    ASSERT_TRUE(default_model_present());
    ASSERT_NE(model_, nullptr);
  }
  static inline T* model_ = nullptr;
};

}  // namespace db::test
