#include "tokenizer/tokenizer_json_file.h"

#include <cstdint>
#include <fstream>
#include <sstream>

#include "util/error.h"

namespace db {

namespace {

using nlohmann::json;

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open file");
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

// Builds the JSON tree of everything but model.vocab and model.merges, whose
// entries go straight into the output vectors.
class Reader : public nlohmann::json_sax<json> {
 public:
  Reader(TokenizerJsonFile& out, const std::string& path) : out_(out), path_(path) {}

  bool null() override { return add(json(nullptr)); }
  bool boolean(bool v) override { return add(json(v)); }
  bool number_integer(number_integer_t v) override { return number(v); }
  bool number_unsigned(number_unsigned_t v) override {
    return number(v > static_cast<uint64_t>(INT64_MAX) ? -1 : static_cast<int64_t>(v));
  }
  bool number_float(number_float_t v, const string_t&) override { return add(json(v)); }
  bool binary(binary_t&) override { return add(json()); }
  bool string(string_t& v) override {
    if (mode_ == Mode::Merges) return add_merge_string(v);
    if (mode_ == Mode::MergePair) {
      pair_.push_back(std::move(v));
      return true;
    }
    if (mode_ == Mode::Vocab) fail("model.vocab[\"" + key_ + "\"] is not an integer id");
    return add(json(std::move(v)));
  }
  bool key(string_t& k) override {
    key_ = std::move(k);
    return true;
  }
  bool start_object(std::size_t) override {
    if (mode_ != Mode::Tree) fail("unexpected object inside model.vocab or model.merges");
    if (is_model_member("vocab")) {
      mode_ = Mode::Vocab;
      return true;
    }
    return open(json::object());
  }
  bool end_object() override {
    if (mode_ == Mode::Vocab) {
      mode_ = Mode::Tree;
      return true;
    }
    return close();
  }
  bool start_array(std::size_t) override {
    if (mode_ == Mode::Merges) {
      mode_ = Mode::MergePair;
      pair_.clear();
      return true;
    }
    if (mode_ != Mode::Tree) fail("unexpected array inside model.vocab or model.merges");
    if (is_model_member("merges")) {
      mode_ = Mode::Merges;
      return true;
    }
    return open(json::array());
  }
  bool end_array() override {
    if (mode_ == Mode::MergePair) {
      if (pair_.size() != 2)
        fail("model.merges[" + std::to_string(out_.merges.size()) + "] is not a pair of tokens");
      out_.merges.emplace_back(std::move(pair_[0]), std::move(pair_[1]));
      mode_ = Mode::Merges;
      return true;
    }
    if (mode_ == Mode::Merges) {
      mode_ = Mode::Tree;
      return true;
    }
    return close();
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    throw Error(path_ + ": not valid JSON at byte " + std::to_string(position) + ": " + e.what());
  }

 private:
  enum class Mode { Tree, Vocab, Merges, MergePair };

  bool number(int64_t v) {
    if (mode_ == Mode::Vocab) {
      out_.vocab.emplace_back(key_, v);
      return true;
    }
    if (mode_ != Mode::Tree) fail("model.merges holds a number");
    return add(json(v));
  }
  bool add_merge_string(const std::string& s) {
    const size_t space = s.size() > 1 ? s.find(' ', 1) : std::string::npos;
    if (space == std::string::npos)
      fail("model.merges[" + std::to_string(out_.merges.size()) + "] = \"" + s + "\" is not two tokens");
    out_.merges.emplace_back(s.substr(0, space), s.substr(space + 1));
    return true;
  }
  // Whether a container opening now is the member `name` of the top-level "model" object.
  bool is_model_member(const char* name) const {
    return stack_.size() == 2 && stack_[0]->is_object() && key_ == name && model_open_;
  }
  json* place(json v) {
    if (stack_.empty()) {
      out_.rest = std::move(v);
      return &out_.rest;
    }
    json& top = *stack_.back();
    if (top.is_object()) {
      json& slot = top[key_];
      slot = std::move(v);
      return &slot;
    }
    top.push_back(std::move(v));
    return &top.back();
  }
  bool add(json v) {
    place(std::move(v));
    return true;
  }
  bool open(json container) {
    const bool is_model = stack_.size() == 1 && stack_[0]->is_object() && key_ == "model";
    stack_.push_back(place(std::move(container)));
    if (is_model) model_open_ = true;
    return true;
  }
  bool close() {
    if (stack_.size() == 2) model_open_ = false;
    stack_.pop_back();
    return true;
  }
  [[noreturn]] void fail(const std::string& what) const { throw Error(path_ + ": " + what); }

  TokenizerJsonFile& out_;
  const std::string& path_;
  std::vector<json*> stack_;  // open containers of the tree, outermost first
  std::string key_;           // the latest object key
  Mode mode_ = Mode::Tree;
  bool model_open_ = false;   // the innermost open container is, or is inside, the "model" object
  std::vector<std::string> pair_;
};

}  // namespace

TokenizerJsonFile read_tokenizer_json(const std::string& path) {
  const std::string text = read_text(path);
  TokenizerJsonFile out;
  Reader reader(out, path);
  try {
    json::sax_parse(text, &reader);
  } catch (const json::exception& e) {
    throw Error(path + ": not valid JSON: " + e.what());
  }
  return out;
}

json read_json_file(const std::string& path) {
  const std::string text = read_text(path);
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw Error(path + ": not valid JSON: " + e.what());
  }
}

}  // namespace db
