// The quantized checkpoint fixtures (tests/data/model/*_fp8, *_awq, *_gptq*;
// scripts/gen_quant_checkpoint_fixtures.py) and broken or re-sharded copies of
// them, shared by the tests that load and convert them.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace db::test {

// tests/data/model/<name>.
std::string quant_fixture_dir(const std::string& name);

// A copy of fixture `name` (config.json, model.safetensors) in `dir` with
// tensor `drop` left out of the header (its bytes stay, unreferenced), the
// file cut to `keep_bytes` when non-zero, and config.json's
// quantization_config updated by `qc`. Fails the test when `drop` is absent.
void copy_broken(const std::string& name, const std::filesystem::path& dir, const std::string& drop,
                 size_t keep_bytes, const nlohmann::json& qc = nlohmann::json::object());

// A copy of fixture `name` in `dir` (config.json, tokenizer.json) with its
// tensors split over `shards` safetensors files (the tensors in sorted order,
// cut into runs of about equal bytes) and a model.safetensors.index.json.
void copy_sharded(const std::string& name, const std::filesystem::path& dir, int shards);

}  // namespace db::test
