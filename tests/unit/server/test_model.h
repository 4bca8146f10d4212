// The default model, opened once per test binary (fails with a clear message when missing).
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "runner/model_bundle.h"

namespace db::server::testing {

inline const std::string kModelPath = DB_SOURCE_DIR "/models/SmolLM2-135M-Instruct.Q4_1.gguf";

inline ModelBundle& test_bundle() {
  static std::unique_ptr<ModelBundle> bundle = [] {
    if (!std::filesystem::exists(kModelPath))
      throw std::runtime_error(kModelPath + " is missing: run scripts/setup.sh to download the default model");
    return ModelBundle::open(kModelPath);
  }();
  return *bundle;
}

}  // namespace db::server::testing
