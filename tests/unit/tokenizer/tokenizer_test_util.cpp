#include "tokenizer_test_util.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "default_model.h"
#include "io/gguf.h"
#include "io/gguf_writer.h"
#include "tokenizer/tokenizer_json_file.h"

namespace db::test {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json read_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  return json::parse(in);
}

}  // namespace

std::vector<std::string> load_corpus() {
  return read_json(DB_TEST_DATA "/tokenizer/corpus.json").get<std::vector<std::string>>();
}

std::vector<std::string> load_random_corpus() {
  return read_json(DB_TEST_DATA "/tokenizer/corpus_random.json").get<std::vector<std::string>>();
}

json load_fixture(const std::string& name) { return read_json(DB_TEST_DATA "/tokenizer/expected_" + name + ".json"); }

std::vector<std::vector<int32_t>> fixture_ids(const json& fixture, const char* key) {
  return fixture.at(key).get<std::vector<std::vector<int32_t>>>();
}

std::string smollm2_gguf_path() {
  const std::string path = kDefaultModelPath;
  if (!fs::exists(path)) {
    ADD_FAILURE() << "missing " << path << ": run scripts/fetch_default_model.sh";
    return "";
  }
  return path;
}

std::string deepseek_tokenizer_dir() {
  const char* env = std::getenv("DB_DEEPSEEK_TOKENIZER_DIR");
  const std::string dir = env != nullptr && *env != '\0' ? env : DB_TEST_DATA "/tokenizer/deepseek-v3";
  if (!fs::exists(dir + "/tokenizer.json")) {
    ADD_FAILURE() << "missing " << dir << "/tokenizer.json (DeepSeek-V3's tokenizer.json and tokenizer_config.json;"
                  << " set DB_DEEPSEEK_TOKENIZER_DIR or place them in tests/data/tokenizer/deepseek-v3)";
    return "";
  }
  return dir;
}

GGUFVocab vocab_from_tokenizer_json(const std::string& path) {
  const TokenizerJsonFile file = read_tokenizer_json(path);
  GGUFVocab v;
  const auto set = [&](int64_t id, const std::string& text, int32_t type) {
    if (static_cast<size_t>(id) >= v.tokens.size()) {
      v.tokens.resize(id + 1);
      v.types.resize(id + 1, 5);
    }
    v.tokens[id] = text;
    v.types[id] = type;
  };
  for (const auto& [text, id] : file.vocab) set(id, text, 1);
  for (const auto& a : file.rest.at("added_tokens")) set(a.at("id").get<int64_t>(), a.at("content"), a.at("special") ? 3 : 4);
  for (const auto& [left, right] : file.merges) v.merges.push_back(left + " " + right);
  return v;
}

GGUFVocab vocab_from_gguf(const std::string& path) {
  auto f = GGUFFile::open(path);
  GGUFVocab v;
  v.tokens = f->get_string_array("tokenizer.ggml.tokens");
  for (int64_t t : f->get_int_array("tokenizer.ggml.token_type")) v.types.push_back(static_cast<int32_t>(t));
  v.merges = f->get_string_array("tokenizer.ggml.merges");
  v.bos = static_cast<int32_t>(f->opt_int("tokenizer.ggml.bos_token_id").value_or(-1));
  v.eos = static_cast<int32_t>(f->opt_int("tokenizer.ggml.eos_token_id").value_or(-1));
  v.add_bos = f->opt_bool("tokenizer.ggml.add_bos_token").value_or(false);
  return v;
}

namespace {

// A directory removed with everything in it when the test program ends.
struct ScratchDir {
  fs::path path = fs::temp_directory_path() / ("db_tokenizer_test_" + std::to_string(::getpid()));
  ScratchDir() { fs::create_directories(path); }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

std::string scratch_dir() {
  static const ScratchDir dir;
  return dir.path.string();
}

std::string write_tokenizer_gguf(const GGUFVocab& v, const std::string& pre, const std::string& file_name) {
  GGUFWriter w;
  w.add_string("general.architecture", "llama");
  w.add_string("tokenizer.ggml.model", "gpt2");
  w.add_string("tokenizer.ggml.pre", pre);
  w.add_string_array("tokenizer.ggml.tokens", v.tokens);
  w.add_int_array("tokenizer.ggml.token_type", GGUFType::INT32, std::vector<int64_t>(v.types.begin(), v.types.end()));
  w.add_string_array("tokenizer.ggml.merges", v.merges);
  if (v.bos >= 0) w.add_uint32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(v.bos));
  if (v.eos >= 0) w.add_uint32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(v.eos));
  w.add_bool("tokenizer.ggml.add_bos_token", v.add_bos);
  const std::string path = scratch_dir() + "/" + file_name;
  w.write(path);
  return path;
}

std::string write_tokenizer_json(const GGUFVocab& v, const json& pre_tokenizer, bool ignore_merges,
                                 const std::string& file_name) {
  // Written piecewise: a 100k-entry vocabulary as a json object would dominate the test's run time.
  json added = json::array();
  for (size_t i = 0; i < v.tokens.size(); ++i)
    if (v.types[i] == 3 || v.types[i] == 4)
      added.push_back({{"id", i}, {"content", v.tokens[i]}, {"single_word", false}, {"lstrip", false},
                       {"rstrip", false}, {"normalized", v.types[i] == 4}, {"special", v.types[i] == 3}});
  const json byte_level = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true},
                           {"use_regex", true}};
  const std::string path = scratch_dir() + "/" + file_name;
  std::ofstream out(path);
  out << "{\"version\": \"1.0\", \"added_tokens\": " << added.dump() << ", \"normalizer\": null, \"pre_tokenizer\": "
      << pre_tokenizer.dump() << ", \"post_processor\": " << byte_level.dump() << ", \"decoder\": " << byte_level.dump()
      << ", \"model\": {\"type\": \"BPE\", \"unk_token\": null, \"ignore_merges\": " << (ignore_merges ? "true" : "false")
      << ", \"vocab\": {";
  bool first = true;
  for (size_t i = 0; i < v.tokens.size(); ++i) {
    if (v.types[i] == 5) continue;
    out << (first ? "" : ", ") << json(v.tokens[i]).dump() << ": " << i;
    first = false;
  }
  out << "}, \"merges\": [";
  for (size_t i = 0; i < v.merges.size(); ++i) out << (i ? ", " : "") << json(v.merges[i]).dump();
  out << "]}}";
  return path;
}

}  // namespace db::test
