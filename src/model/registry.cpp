#include "model/registry.h"

#include <algorithm>

#include "model/deepseek_arch.h"
#include "model/llama_arch.h"

namespace db {

const std::vector<Architecture>& architectures() {
  static const std::vector<Architecture> all = [] {
    std::vector<Architecture> v = {
        deepseek2_architecture(),
        llama_architecture(),
        qwen2_architecture(),
    };
    auto by_name = [](const Architecture& a, const Architecture& b) { return a.gguf_name < b.gguf_name; };
    std::sort(v.begin(), v.end(), by_name);
    return v;
  }();
  return all;
}

const Architecture* find_architecture(const std::string& gguf_name) {
  for (const Architecture& a : architectures())
    if (a.gguf_name == gguf_name) return &a;
  return nullptr;
}

const Architecture* find_hf_architecture(const std::string& model_type) {
  for (const Architecture& a : architectures())
    if (std::find(a.hf_model_types.begin(), a.hf_model_types.end(), model_type) != a.hf_model_types.end()) return &a;
  return nullptr;
}

std::vector<std::string> supported_architectures() {
  std::vector<std::string> names;
  for (const Architecture& a : architectures()) names.push_back(a.gguf_name);
  return names;
}

std::vector<std::string> supported_hf_model_types() {
  std::vector<std::string> types;
  for (const Architecture& a : architectures())
    types.insert(types.end(), a.hf_model_types.begin(), a.hf_model_types.end());
  std::sort(types.begin(), types.end());
  return types;
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace db
