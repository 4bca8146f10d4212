// The pre-tokenizers behind the "tokenizer.ggml.pre" names of GGUF files. The
// patterns are those of the models' own tokenizer.json files.
#include <algorithm>

#include "tokenizer/pre_tokenizer.h"
#include "util/error.h"

namespace db {

namespace {

constexpr const char* kLlama3Pattern =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
constexpr const char* kQwen2Pattern =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
constexpr const char* kDeepSeekV3Patterns[] = {
    "\\p{N}{1,3}",
    "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+",
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+|"
    " ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};
// llama.cpp's fallback when a file names no pre-tokenizer.
constexpr const char* kDefaultPatterns[] = {
    "[\\p{P}\\$\\+<=>\\^~\\|]+",
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
    "\\p{N}+",
    "[0-9][0-9][0-9]",
};

enum class Family { Gpt2, DigitsGpt2, Llama3, Llama3KeepMerges, Qwen2, DeepSeekV3, Default };

struct Entry {
  const char* name;
  Family family;
};

constexpr Entry kEntries[] = {
    {"default", Family::Default},
    {"gpt-2", Family::Gpt2},          {"mpt", Family::Gpt2},
    {"olmo", Family::Gpt2},           {"jais", Family::Gpt2},
    {"smollm", Family::DigitsGpt2},   {"starcoder", Family::DigitsGpt2},
    {"refact", Family::DigitsGpt2},   {"command-r", Family::DigitsGpt2},
    {"codeshell", Family::DigitsGpt2}, {"exaone", Family::DigitsGpt2},
    {"llama-bpe", Family::Llama3},    {"llama3", Family::Llama3},
    {"llama-v3", Family::Llama3},     {"falcon3", Family::Llama3},
    {"dbrx", Family::Llama3KeepMerges}, {"smaug-bpe", Family::Llama3KeepMerges},
    {"qwen2", Family::Qwen2},         {"deepseek-r1-qwen", Family::Qwen2},
    {"stablelm2", Family::Qwen2},
    {"deepseek-v3", Family::DeepSeekV3},
};

const Entry* find_entry(const std::string& name) {
  for (const auto& e : kEntries)
    if (name == e.name) return &e;
  return nullptr;
}

}  // namespace

std::vector<std::string> PreTokenizer::gguf_names() {
  std::vector<std::string> names;
  for (const auto& e : kEntries) names.emplace_back(e.name);
  return names;
}

bool PreTokenizer::gguf_name_ignores_merges(const std::string& name) {
  const Entry* e = find_entry(name);
  return e != nullptr && e->family == Family::Llama3;
}

PreTokenizer PreTokenizer::from_gguf_name(const std::string& name) {
  const Entry* e = find_entry(name);
  if (e == nullptr) {
    std::string list;
    for (const auto& n : gguf_names()) list += (list.empty() ? "" : ", ") + n;
    throw Error("tokenizer.ggml.pre: unsupported pre-tokenizer \"" + name + "\" (supported: " + list + ")");
  }
  PreTokenizer p;
  switch (e->family) {
    case Family::Gpt2:
      p.add_byte_level(false, true);
      break;
    case Family::DigitsGpt2:
      p.add_digits(true);
      p.add_byte_level(false, true);
      break;
    case Family::Llama3:
    case Family::Llama3KeepMerges:
      p.add_split(kLlama3Pattern, false, SplitBehavior::Isolated, false);
      p.add_byte_level(false, false);
      break;
    case Family::Qwen2:
      p.add_split(kQwen2Pattern, false, SplitBehavior::Isolated, false);
      p.add_byte_level(false, false);
      break;
    case Family::DeepSeekV3:
      for (const char* pattern : kDeepSeekV3Patterns) p.add_split(pattern, false, SplitBehavior::Isolated, false);
      p.add_byte_level(false, false);
      break;
    case Family::Default:
      for (const char* pattern : kDefaultPatterns) p.add_split(pattern, false, SplitBehavior::Isolated, false);
      p.add_byte_level(false, false);
      break;
  }
  return p;
}

std::optional<std::string> PreTokenizer::gguf_name_for(const PreTokenizer& p, bool ignore_merges) {
  for (const auto& e : kEntries)
    if (gguf_name_ignores_merges(e.name) == ignore_merges && from_gguf_name(e.name).same_steps(p)) return e.name;
  return std::nullopt;
}

}  // namespace db
