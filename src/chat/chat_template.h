// Chat-template rendering: a Jinja interpreter whose output is byte-identical
// to Python jinja2 as Hugging Face transformers renders chat templates
// (ImmutableSandboxedEnvironment with trim_blocks and lstrip_blocks, the
// loopcontrols extension, tojson with ensure_ascii=False, raise_exception,
// strftime_now, namespace and dict globals).
#pragma once
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "util/error.h"

namespace db::chat {

struct Node;

// Thrown by the template's own raise_exception(message); what() is the message.
class TemplateRaisedError : public Error {
 public:
  using Error::Error;
};

// A parsed template; immutable, cheap to copy, and render() may run
// concurrently from several threads.
class ChatTemplate {
 public:
  // Parses a template; throws db::Error "chat template syntax error at line
  // L, column C: ..." for invalid syntax, unknown filters/tests or
  // unsupported tags (extends, include, import, block).
  static ChatTemplate parse(const std::string& source);

  // Renders with the given variables (a JSON object). Object key order is
  // kept as given (it shows in `tojson` and dict iteration). Throws
  // TemplateRaisedError for raise_exception() and db::Error "chat template
  // error at line L: ..." for runtime errors (undefined attribute of an
  // undefined value, type errors, ...).
  std::string render(const nlohmann::ordered_json& context) const;
  // Same with a sorted-key JSON object (keys then iterate alphabetically).
  std::string render(const nlohmann::json& context) const;

  const std::string& source() const { return source_; }

 private:
  ChatTemplate() = default;
  std::string source_;
  std::shared_ptr<const std::vector<std::unique_ptr<Node>>> body_;
};

// Renders a conversation the way transformers' apply_chat_template does:
// variables messages, add_generation_prompt, bos_token, eos_token, plus
// tools and documents (None unless given in `extra`) and every key of
// `extra` (an object; its keys override the others). As transformers does,
// None-valued message keys are dropped, unless `keep_null_call_content`: then a
// null content beside tool_calls is kept, for templates that render calls only
// when the content `is none` (DeepSeek-V3's and R1's fail on the dropped key).
std::string apply_chat_template(const ChatTemplate& tmpl, const nlohmann::ordered_json& messages,
                                bool add_generation_prompt, const std::string& bos_token,
                                const std::string& eos_token,
                                const nlohmann::ordered_json& extra = nlohmann::ordered_json::object(),
                                bool keep_null_call_content = false);

}  // namespace db::chat
