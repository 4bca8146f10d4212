// The default model, opened once per test binary (fails with a clear message when missing).
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "bundle/model_bundle.h"
#include "default_model.h"

namespace db::server::testing {

inline ModelBundle& test_bundle() {
  static std::unique_ptr<ModelBundle> bundle = [] {
    const std::string path = test::kDefaultModelPath;
    if (!std::filesystem::exists(path))
      throw std::runtime_error(path + " is missing: run scripts/setup.sh to download the default model");
    return ModelBundle::open(path);
  }();
  return *bundle;
}

}  // namespace db::server::testing
