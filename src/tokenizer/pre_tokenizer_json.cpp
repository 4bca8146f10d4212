// tokenizer.json "pre_tokenizer" objects -> PreTokenizer.
#include <nlohmann/json.hpp>

#include "tokenizer/pre_tokenizer.h"
#include "util/error.h"

namespace db {

namespace {

SplitBehavior parse_behavior(const std::string& s, const std::string& where) {
  if (s == "Removed") return SplitBehavior::Removed;
  if (s == "Isolated") return SplitBehavior::Isolated;
  if (s == "MergedWithPrevious") return SplitBehavior::MergedWithPrevious;
  if (s == "MergedWithNext") return SplitBehavior::MergedWithNext;
  if (s == "Contiguous") return SplitBehavior::Contiguous;
  throw Error(where + ": Split behavior \"" + s +
              "\" is not one of Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous");
}

bool flag(const nlohmann::json& j, const char* key, bool fallback) {
  const auto it = j.find(key);
  return (it == j.end() || it->is_null()) ? fallback : it->get<bool>();
}

void add_steps(PreTokenizer& p, const nlohmann::json& j, const std::string& where) {
  if (j.is_null()) return;
  if (!j.is_object() || !j.contains("type"))
    throw Error(where + ": expected an object with a \"type\", got " + j.dump().substr(0, 200));
  const std::string type = j.at("type").get<std::string>();
  if (type == "Sequence") {
    const auto& list = j.at("pretokenizers");
    for (size_t i = 0; i < list.size(); ++i) add_steps(p, list[i], where + ".pretokenizers[" + std::to_string(i) + "]");
  } else if (type == "Split") {
    const auto& pattern = j.at("pattern");
    const bool literal = pattern.contains("String");
    if (!literal && !pattern.contains("Regex"))
      throw Error(where + ": Split pattern must hold \"Regex\" or \"String\", got " + pattern.dump());
    const std::string text = pattern.at(literal ? "String" : "Regex").get<std::string>();
    p.add_split(text, literal, parse_behavior(j.at("behavior").get<std::string>(), where), flag(j, "invert", false));
  } else if (type == "Digits") {
    p.add_digits(flag(j, "individual_digits", false));
  } else if (type == "ByteLevel") {
    p.add_byte_level(flag(j, "add_prefix_space", true), flag(j, "use_regex", true));
  } else {
    throw Error(where + ": pre-tokenizer type \"" + type +
                "\" is not supported (supported: Sequence, Split, Digits, ByteLevel)");
  }
}

}  // namespace

PreTokenizer PreTokenizer::from_json(const nlohmann::json& j, const std::string& where) {
  PreTokenizer p;
  try {
    add_steps(p, j, where);
  } catch (const nlohmann::json::exception& e) {
    throw Error(where + ": malformed pre_tokenizer: " + e.what());
  }
  return p;
}

}  // namespace db
