#include "api/tool_call_output.h"

#include "api/response.h"

namespace db::api {

using OJson = nlohmann::ordered_json;

namespace {

chat::ToolCallFormat parser_format(const ToolRequest& req, chat::ToolCallFormat format) {
  return req.choice == ToolRequest::Choice::Auto ? format : chat::ToolCallFormat::None;
}

std::string compact(const OJson& v) { return v.dump(-1, ' ', false, OJson::error_handler_t::replace); }

}  // namespace

ToolCallExtractor::ToolCallExtractor(const ToolRequest& req, chat::ToolCallFormat format)
    : choice_(req.choice), named_(req.named), parallel_(req.parallel), parser_(parser_format(req, format)) {}

void ToolCallExtractor::add_call(ToolCallOutput& out, std::string name, std::string arguments) {
  if (!parallel_ && next_index_ > 0) return;  // parallel_tool_calls false: the first call only
  ToolCallDelta d;
  d.index = next_index_++;
  d.first = true;
  d.id = new_response_id("call_");
  d.name = std::move(name);
  d.arguments = std::move(arguments);
  out.calls.push_back(std::move(d));
}

ToolCallOutput ToolCallExtractor::push(std::string_view text) {
  ToolCallOutput out;
  switch (choice_) {
    case ToolRequest::Choice::None:
      out.content = std::string(text);
      break;
    case ToolRequest::Choice::Named:
      if (next_index_ == 0) {
        add_call(out, named_, std::string(text));
      } else if (!text.empty()) {
        ToolCallDelta d;
        d.arguments = std::string(text);
        out.calls.push_back(std::move(d));
      }
      break;
    case ToolRequest::Choice::Required:
      required_text_ += text;
      break;
    case ToolRequest::Choice::Auto: {
      chat::ToolCallText t = parser_.push(text);
      out.content = std::move(t.content);
      for (chat::ParsedToolCall& c : t.calls) add_call(out, std::move(c.name), std::move(c.arguments));
      break;
    }
  }
  return out;
}

ToolCallOutput ToolCallExtractor::flush() {
  ToolCallOutput out;
  if (choice_ == ToolRequest::Choice::Named && next_index_ == 0) add_call(out, named_, "");
  if (choice_ == ToolRequest::Choice::Auto) {
    chat::ToolCallText t = parser_.flush();
    out.content = std::move(t.content);
    for (chat::ParsedToolCall& c : t.calls) add_call(out, std::move(c.name), std::move(c.arguments));
  }
  if (choice_ == ToolRequest::Choice::Required) {
    // The grammar makes a finished answer a list of {"name", "parameters"}; one cut
    // short (max_tokens) does not parse and is returned as content.
    const OJson list = OJson::parse(required_text_, nullptr, /*allow_exceptions=*/false);
    bool valid = list.is_array() && !list.empty();
    if (valid)
      for (const OJson& c : list)
        valid = valid && c.is_object() && c.contains("name") && c["name"].is_string() && c.contains("parameters");
    if (valid) {
      for (const OJson& c : list) add_call(out, c["name"].get<std::string>(), compact(c["parameters"]));
    } else {
      out.content = std::move(required_text_);
    }
    required_text_.clear();
  }
  return out;
}

ToolCallAnswer extract_tool_calls(const ToolRequest& req, chat::ToolCallFormat format, std::string_view text) {
  ToolCallExtractor ex(req, format);
  ToolCallAnswer answer;
  for (ToolCallOutput out : {ex.push(text), ex.flush()}) {
    answer.content += out.content;
    for (ToolCallDelta& d : out.calls) {
      if (d.first)
        answer.calls.push_back(ToolCall{std::move(d.id), std::move(d.name), std::move(d.arguments)});
      else
        answer.calls[d.index].arguments += d.arguments;
    }
  }
  return answer;
}

OJson tool_calls_json(const std::vector<ToolCall>& calls) {
  OJson list = OJson::array();
  for (const ToolCall& c : calls)
    list.push_back({{"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
  return list;
}

OJson tool_call_deltas_json(const std::vector<ToolCallDelta>& deltas) {
  OJson list = OJson::array();
  for (const ToolCallDelta& d : deltas) {
    OJson e = {{"index", d.index}};
    if (d.first) {
      e["id"] = d.id;
      e["type"] = "function";
      e["function"] = {{"name", d.name}, {"arguments", d.arguments}};
    } else {
      e["function"] = {{"arguments", d.arguments}};
    }
    list.push_back(std::move(e));
  }
  return list;
}

}  // namespace db::api
