#include "loadtest/prompt_files.h"

#include <fstream>

#include "loadtest/synthetic_text.h"
#include "util/error.h"

namespace db::loadtest {

namespace {

using nlohmann::json;

std::ifstream open_or_throw(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(sys_error(path, "cannot open"));
  return in;
}

// The estimated tokens of a chat list, checking its shape; throws a bare reason.
int32_t messages_tokens(const json& messages) {
  if (!messages.is_array() || messages.empty()) throw Error("\"messages\" must be a non-empty list");
  int32_t tokens = 0;
  for (size_t i = 0; i < messages.size(); ++i) {
    const json& m = messages[i];
    const std::string where = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) throw Error(where + " must be an object");
    if (!m.contains("role") || !m["role"].is_string()) throw Error(where + " needs a string \"role\"");
    if (!m.contains("content")) throw Error(where + " needs \"content\"");
    const json& content = m["content"];
    if (content.is_string()) {
      tokens += estimate_tokens(content.get<std::string>());
    } else if (content.is_array()) {
      for (const json& part : content)
        if (part.is_object() && part.contains("text") && part["text"].is_string())
          tokens += estimate_tokens(part["text"].get<std::string>());
    } else if (!content.is_null()) {
      throw Error(where + ".content must be a string or a list of parts");
    }
  }
  return tokens;
}

// The request of one parsed JSONL line; throws a bare reason.
RequestSpec request_from_line(const json& line, int32_t default_max_tokens) {
  if (!line.is_object()) throw Error("expected a JSON object");
  const bool has_prompt = line.contains("prompt"), has_messages = line.contains("messages");
  if (has_prompt == has_messages) throw Error("expected exactly one of \"prompt\" and \"messages\"");
  RequestSpec r;
  if (has_prompt) {
    if (!line["prompt"].is_string()) throw Error("\"prompt\" must be a string");
    r.prompt = line["prompt"].get<std::string>();
    r.prompt_tokens = estimate_tokens(r.prompt);
  } else {
    r.prompt_tokens = messages_tokens(line["messages"]);
    r.messages = line["messages"];
  }
  r.max_tokens = default_max_tokens;
  if (line.contains("max_tokens")) {
    const json& m = line["max_tokens"];
    if (!m.is_number_integer() || m.get<int64_t>() < 1 || m.get<int64_t>() > INT32_MAX)
      throw Error("\"max_tokens\" must be an integer >= 1");
    r.max_tokens = m.get<int32_t>();
  }
  return r;
}

bool blank(const std::string& s) { return s.find_first_not_of(" \t\r\n") == std::string::npos; }

}  // namespace

LoadedPrompts parse_prompt_jsonl(std::istream& in, const std::string& source, int32_t default_max_tokens) {
  if (default_max_tokens < 1) throw Error("default max_tokens must be >= 1");
  LoadedPrompts out;
  std::string text;
  for (int64_t line_no = 1; std::getline(in, text); ++line_no) {
    if (blank(text)) continue;
    const std::string where = source + ":" + std::to_string(line_no) + ": ";
    const json line = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (line.is_discarded()) throw Error(where + "not valid JSON");
    try {
      out.requests.push_back(request_from_line(line, default_max_tokens));
    } catch (const Error& e) {
      throw Error(where + e.what());
    }
  }
  if (out.requests.empty()) throw Error(source + ": no prompts");
  return out;
}

LoadedPrompts load_prompt_jsonl(const std::string& path, int32_t default_max_tokens) {
  std::ifstream in = open_or_throw(path);
  return parse_prompt_jsonl(in, path, default_max_tokens);
}

LoadedPrompts parse_sharegpt(std::istream& in, const std::string& source) {
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::parse_error& e) {
    throw Error(source + ": not valid JSON: " + e.what());
  }
  if (!doc.is_array()) throw Error(source + ": expected a JSON list of conversations");
  LoadedPrompts out;
  for (size_t i = 0; i < doc.size(); ++i) {
    const std::string where = source + ": entry " + std::to_string(i) + ": ";
    const json& entry = doc[i];
    if (!entry.is_object() || !entry.contains("conversations") || !entry["conversations"].is_array())
      throw Error(where + "expected an object with a \"conversations\" list");
    const json& turns = entry["conversations"];
    const std::string* prompt = nullptr;
    const std::string* answer = nullptr;
    for (size_t t = 0; t < turns.size() && answer == nullptr; ++t) {
      const json& turn = turns[t];
      if (!turn.is_object() || !turn.contains("from") || !turn["from"].is_string() || !turn.contains("value") ||
          !turn["value"].is_string())
        throw Error(where + "conversations[" + std::to_string(t) + "] needs string \"from\" and \"value\"");
      const std::string& from = turn["from"].get_ref<const std::string&>();
      const std::string& value = turn["value"].get_ref<const std::string&>();
      if (prompt == nullptr && from == "human") prompt = &value;
      else if (prompt != nullptr && from == "gpt") answer = &value;
    }
    if (answer == nullptr || estimate_tokens(*prompt) == 0) {
      ++out.skipped;
      continue;
    }
    RequestSpec r;
    r.prompt = *prompt;
    r.prompt_tokens = estimate_tokens(*prompt);
    r.max_tokens = std::max(1, estimate_tokens(*answer));
    out.requests.push_back(std::move(r));
  }
  if (out.requests.empty()) throw Error(source + ": no conversation has a human turn followed by a gpt turn");
  return out;
}

LoadedPrompts load_sharegpt(const std::string& path) {
  std::ifstream in = open_or_throw(path);
  return parse_sharegpt(in, path);
}

}  // namespace db::loadtest
