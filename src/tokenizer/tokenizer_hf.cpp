// Tokenizer::from_hf: Hugging Face tokenizer.json (+ tokenizer_config.json, and
// generation_config.json for from_hf_dir).
#include <cstdint>
#include <filesystem>
#include <tuple>

#include <nlohmann/json.hpp>

#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_json_file.h"
#include "util/error.h"

namespace db {

namespace {

using nlohmann::json;

// Normalizers that leave these models' text unchanged. NFC is accepted without being
// applied: text that is already NFC (nearly all text) encodes identically.
void check_normalizer(const json& j, const std::string& where) {
  if (j.is_null()) return;
  const std::string type = j.value("type", "");
  if (type == "Sequence") {
    for (const auto& n : j.at("normalizers")) check_normalizer(n, where);
  } else if (type != "NFC") {
    throw Error(where + ": normalizer \"" + type + "\" is not supported (supported: none, Sequence, NFC)");
  }
}

// A token named in a config: a string or an AddedToken object {"content": ...}.
std::optional<std::string> token_text(const json& config, const char* key) {
  const auto it = config.find(key);
  if (it == config.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object() && it->contains("content")) return it->at("content").get<std::string>();
  return std::nullopt;
}

// The special tokens a TemplateProcessing post-processor puts before / after a single sequence.
struct Template {
  std::optional<std::string> first, last;
};

void find_template(const json& j, Template& t) {
  if (!j.is_object()) return;
  const std::string type = j.value("type", "");
  if (type == "Sequence") {
    for (const auto& p : j.at("processors")) find_template(p, t);
  } else if (type == "TemplateProcessing") {
    const auto& single = j.at("single");
    if (single.empty()) return;
    if (single.front().contains("SpecialToken")) t.first = single.front().at("SpecialToken").at("id").get<std::string>();
    if (single.back().contains("SpecialToken")) t.last = single.back().at("SpecialToken").at("id").get<std::string>();
  }
}

struct Vocab {
  std::vector<std::string> tokens;
  std::vector<TokenKind> kinds;

  void set(int64_t id, std::string text, TokenKind kind, const std::string& where) {
    if (id < 0 || id > INT32_MAX) throw Error(where + ": token \"" + text + "\" has invalid id " + std::to_string(id));
    if (static_cast<size_t>(id) >= tokens.size()) {
      tokens.resize(id + 1);
      kinds.resize(id + 1, TokenKind::Unused);
    }
    tokens[id] = std::move(text);
    kinds[id] = kind;
  }
  // Id of a token text, preferring added tokens (a few lookups per file: a scan is fine).
  int32_t id_of(const std::optional<std::string>& text) const {
    if (!text) return -1;
    int32_t found = -1;
    for (size_t i = 0; i < tokens.size(); ++i)
      if (tokens[i] == *text && (found < 0 || kinds[i] != TokenKind::Normal)) found = static_cast<int32_t>(i);
    return found;
  }
};

void read_model(const TokenizerJsonFile& file, const std::string& where, Vocab& v, TokenizerParts& p) {
  const json& model = file.rest.at("model");
  if (model.value("type", "BPE") != "BPE")
    throw Error(where + ".model: type \"" + model.value("type", "") + "\" is not supported (only BPE)");
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (model.contains(key) && model.at(key).is_string() && !model.at(key).get<std::string>().empty())
      throw Error(where + ".model: \"" + key + "\" is not supported");
  // Diverted members never reach the tree: one still there has the wrong JSON type.
  if (model.contains("vocab")) throw Error(where + ": model.vocab must be an object of token -> id");
  if (model.contains("merges")) throw Error(where + ": model.merges must be an array");
  if (file.vocab.empty()) throw Error(where + ": model.vocab is missing or empty");
  for (const auto& [text, id] : file.vocab) v.set(id, text, TokenKind::Normal, where);
  p.merges = file.merges;
  p.ignore_merges = model.contains("ignore_merges") && model.at("ignore_merges").is_boolean() &&
                    model.at("ignore_merges").get<bool>();
}

void read_added(const json& list, const std::string& where, Vocab& v, TokenizerParts& p) {
  for (const auto& t : list) {
    AddedToken a;
    a.id = static_cast<int32_t>(t.at("id").get<int64_t>());
    a.content = t.at("content").get<std::string>();
    a.special = t.value("special", false);
    a.lstrip = t.value("lstrip", false);
    a.rstrip = t.value("rstrip", false);
    a.single_word = t.value("single_word", false);
    a.normalized = t.value("normalized", !a.special);
    v.set(t.at("id").get<int64_t>(), a.content, a.special ? TokenKind::Special : TokenKind::Added, where);
    p.added.push_back(std::move(a));
  }
}

TokenizerParts load_parts(const std::string& tokenizer_json, const std::optional<std::string>& tokenizer_config) {
  const TokenizerJsonFile file = read_tokenizer_json(tokenizer_json);
  const json& j = file.rest;
  const json config = tokenizer_config ? read_json_file(*tokenizer_config) : json::object();
  TokenizerParts p;
  p.source = tokenizer_json;
  Vocab v;
  try {
    read_model(file, tokenizer_json, v, p);
    if (j.contains("added_tokens")) read_added(j.at("added_tokens"), tokenizer_json, v, p);
    check_normalizer(j.value("normalizer", json()), tokenizer_json);
    p.pre_tokenizer = PreTokenizer::from_json(j.value("pre_tokenizer", json()), tokenizer_json + ": pre_tokenizer");
    Template t;
    find_template(j.value("post_processor", json()), t);
    const auto bos = token_text(config, "bos_token");
    const auto eos = token_text(config, "eos_token");
    p.bos_id = v.id_of(bos ? bos : t.first);
    p.eos_id = v.id_of(eos ? eos : t.last);
    for (const auto& [name, text, id] : {std::tuple{"bos_token", bos, p.bos_id}, std::tuple{"eos_token", eos, p.eos_id}})
      if (text && id < 0)
        throw Error(*tokenizer_config + ": " + name + " \"" + *text + "\" is not a token of " + tokenizer_json);
    p.pad_id = v.id_of(token_text(config, "pad_token"));
    p.unk_id = v.id_of(token_text(config, "unk_token"));
    const json& model = j.at("model");
    if (model.contains("unk_token") && model.at("unk_token").is_string())
      p.bpe_unk_id = v.id_of(model.at("unk_token").get<std::string>());
    if (p.unk_id < 0) p.unk_id = p.bpe_unk_id;
    const auto flag = [&](const char* key, bool fallback) {
      return config.contains(key) && config.at(key).is_boolean() ? config.at(key).get<bool>() : fallback;
    };
    p.add_bos = flag("add_bos_token", t.first.has_value()) && p.bos_id >= 0;
    p.add_eos = flag("add_eos_token", t.last.has_value()) && p.eos_id >= 0;
  } catch (const json::exception& e) {
    throw Error(tokenizer_json + ": unexpected tokenizer.json structure: " + e.what());
  }
  p.tokens = std::move(v.tokens);
  p.kinds = std::move(v.kinds);
  return p;
}

// generation_config.json may name more end-of-generation ids (e.g. Llama-3's eot/eom).
void read_generation_config(const std::string& path, TokenizerParts& p) {
  const json g = read_json_file(path);
  const auto it = g.find("eos_token_id");
  if (it == g.end()) return;
  std::vector<json> ids = it->is_array() ? it->get<std::vector<json>>() : std::vector<json>{*it};
  for (const auto& x : ids) {
    if (!x.is_number_integer()) continue;
    const auto id = x.get<int64_t>();
    if (id >= 0 && static_cast<size_t>(id) < p.tokens.size()) p.end_of_generation.push_back(static_cast<int32_t>(id));
  }
}

}  // namespace

std::unique_ptr<Tokenizer> Tokenizer::from_hf(const std::string& tokenizer_json,
                                              const std::optional<std::string>& tokenizer_config) {
  return from_parts(load_parts(tokenizer_json, tokenizer_config));
}

TokenizerParts Tokenizer::hf_dir_parts(const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path base(dir);
  if (!fs::exists(base / "tokenizer.json")) throw Error(dir + ": no tokenizer.json in this directory");
  std::optional<std::string> config;
  if (fs::exists(base / "tokenizer_config.json")) config = (base / "tokenizer_config.json").string();
  TokenizerParts p = load_parts((base / "tokenizer.json").string(), config);
  if (fs::exists(base / "generation_config.json")) read_generation_config((base / "generation_config.json").string(), p);
  return p;
}

std::unique_ptr<Tokenizer> Tokenizer::from_hf_dir(const std::string& dir) { return from_parts(hf_dir_parts(dir)); }

}  // namespace db
