#include "model/registry.h"

#include <map>

#include "model/llama_decoder.h"

namespace db {

namespace {
const std::map<std::string, ModelFactory>& factories() {
  static const std::map<std::string, ModelFactory> m = {
      {"llama", &make_llama_decoder},
      {"qwen2", &make_llama_decoder},
  };
  return m;
}
}  // namespace

ModelFactory find_model_factory(const std::string& arch) {
  auto it = factories().find(arch);
  return it == factories().end() ? nullptr : it->second;
}

std::vector<std::string> supported_architectures() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : factories()) names.push_back(name);
  return names;
}

}  // namespace db
