#include "chat/tool_call_format.h"

#include <algorithm>
#include <array>

#include <nlohmann/json.hpp>

#include "chat/partial_tag.h"

namespace db::chat {

namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kHermesOpen = "<tool_call>";
constexpr std::string_view kHermesClose = "</tool_call>";
constexpr std::string_view kDeepSeekCallsOpen = "<｜tool▁calls▁begin｜>";
constexpr std::string_view kDeepSeekCallsClose = "<｜tool▁calls▁end｜>";
constexpr std::string_view kDeepSeekOpen = "<｜tool▁call▁begin｜>";
constexpr std::string_view kDeepSeekClose = "<｜tool▁call▁end｜>";
constexpr std::string_view kDeepSeekSep = "<｜tool▁sep｜>";

struct Markers {
  std::string_view open, close;
  std::array<std::string_view, 2> dropped;  // wrappers around the calls, not part of the content ("" unused)
};

Markers markers_of(ToolCallFormat f) {
  if (f == ToolCallFormat::DeepSeekV3) return {kDeepSeekOpen, kDeepSeekClose, {kDeepSeekCallsOpen, kDeepSeekCallsClose}};
  return {kHermesOpen, kHermesClose, {"", ""}};
}

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// Arguments as compact JSON text: an object, or a string holding one.
std::optional<std::string> object_text(const Json& v) {
  if (v.is_object()) return v.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (!v.is_string()) return std::nullopt;
  Json inner = Json::parse(v.get_ref<const std::string&>(), nullptr, /*allow_exceptions=*/false);
  if (!inner.is_object()) return std::nullopt;
  return inner.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::optional<std::string> object_text(std::string_view text) {
  Json v = Json::parse(trim(text), nullptr, /*allow_exceptions=*/false);
  if (!v.is_object()) return std::nullopt;
  return object_text(v);
}

bool valid_name(std::string_view name) { return !name.empty() && name.find_first_of(" \n\t\r{}\"") == std::string_view::npos; }

// {"name": "f", "arguments": {...}} ("parameters" is accepted for "arguments").
std::optional<ParsedToolCall> parse_hermes(std::string_view body) {
  Json v = Json::parse(trim(body), nullptr, /*allow_exceptions=*/false);
  if (!v.is_object() || !v.contains("name") || !v["name"].is_string()) return std::nullopt;
  ParsedToolCall call{v["name"].get<std::string>(), "{}"};
  if (!valid_name(call.name)) return std::nullopt;
  const char* key = v.contains("arguments") ? "arguments" : v.contains("parameters") ? "parameters" : nullptr;
  if (key) {
    auto args = object_text(v[key]);
    if (!args) return std::nullopt;
    call.arguments = std::move(*args);
  }
  return call;
}

// "function<｜tool▁sep｜>f\n```json\n{...}\n```" or "f<｜tool▁sep｜>{...}".
std::optional<ParsedToolCall> parse_deepseek(std::string_view body) {
  const size_t sep = body.find(kDeepSeekSep);
  if (sep == std::string_view::npos) return std::nullopt;
  std::string_view before = trim(body.substr(0, sep));
  std::string_view after = body.substr(sep + kDeepSeekSep.size());
  std::string_view name, args;
  const size_t nl = after.find('\n');
  if (before == "function" && nl != std::string_view::npos) {
    name = trim(after.substr(0, nl));
    args = trim(after.substr(nl + 1));
    if (args.substr(0, 3) == "```") {  // ```json ... ```
      const size_t first_nl = args.find('\n');
      if (first_nl == std::string_view::npos) return std::nullopt;
      args = args.substr(first_nl + 1);
      const size_t fence = args.rfind("```");
      if (fence == std::string_view::npos) return std::nullopt;
      args = args.substr(0, fence);
    }
  } else {
    name = before;
    args = after;
  }
  if (!valid_name(name)) return std::nullopt;
  auto text = object_text(args);
  if (!text) return std::nullopt;
  return ParsedToolCall{std::string(name), std::move(*text)};
}

}  // namespace

const char* tool_call_format_name(ToolCallFormat f) {
  switch (f) {
    case ToolCallFormat::Hermes: return "hermes";
    case ToolCallFormat::DeepSeekV3: return "deepseek_v3";
    case ToolCallFormat::None: break;
  }
  return "none";
}

std::optional<ToolCallFormat> tool_call_format_named(std::string_view name) {
  for (ToolCallFormat f : {ToolCallFormat::None, ToolCallFormat::Hermes, ToolCallFormat::DeepSeekV3})
    if (name == tool_call_format_name(f)) return f;
  return std::nullopt;
}

ToolCallFormat tool_call_format_of_template(std::string_view src) {
  if (src.find(kDeepSeekOpen) != std::string_view::npos) return ToolCallFormat::DeepSeekV3;
  if (src.find(kHermesOpen) != std::string_view::npos) return ToolCallFormat::Hermes;
  return ToolCallFormat::None;
}

void ToolCallStreamParser::add_content(ToolCallText& out, std::string_view s) {
  held_space_ += s;
  if (std::all_of(held_space_.begin(), held_space_.end(), is_space)) return;
  const size_t keep = held_space_.find_last_not_of(" \n\r\t") + 1;  // trailing whitespace stays held
  out.content += held_space_.substr(0, keep);
  held_space_.erase(0, keep);
}

void ToolCallStreamParser::end_call(ToolCallText& out, bool terminated) {
  const Markers m = markers_of(format_);
  std::optional<ParsedToolCall> call =
      format_ == ToolCallFormat::DeepSeekV3 ? parse_deepseek(call_) : parse_hermes(call_);
  in_call_ = false;
  if (call) {
    held_space_.clear();  // whitespace before a call is layout, not content
    saw_call_ = true;
    out.calls.push_back(std::move(*call));
  } else {
    add_content(out, std::string(m.open) + call_ + (terminated ? std::string(m.close) : std::string()));
  }
  call_.clear();
}

void ToolCallStreamParser::scan(ToolCallText& out) {
  const Markers m = markers_of(format_);
  while (true) {
    if (in_call_) {
      const size_t close = pending_.find(m.close);
      if (close == std::string::npos) {
        const size_t held = partial_tag_suffix(pending_, m.close);
        call_ += pending_.substr(0, pending_.size() - held);
        pending_.erase(0, pending_.size() - held);
        return;
      }
      call_ += pending_.substr(0, close);
      pending_.erase(0, close + m.close.size());
      end_call(out, /*terminated=*/true);
      continue;
    }
    size_t at = std::string::npos;
    std::string_view found;
    for (std::string_view marker : {m.open, m.dropped[0], m.dropped[1]}) {
      if (marker.empty()) continue;
      const size_t p = pending_.find(marker);
      if (p < at) at = p, found = marker;
    }
    if (at == std::string::npos) {
      size_t held = 0;
      for (std::string_view marker : {m.open, m.dropped[0], m.dropped[1]})
        if (!marker.empty()) held = std::max(held, partial_tag_suffix(pending_, marker));
      add_content(out, std::string_view(pending_).substr(0, pending_.size() - held));
      pending_.erase(0, pending_.size() - held);
      return;
    }
    add_content(out, std::string_view(pending_).substr(0, at));
    pending_.erase(0, at + found.size());
    if (found == m.open) in_call_ = true;
  }
}

ToolCallText ToolCallStreamParser::push(std::string_view text) {
  ToolCallText out;
  if (format_ == ToolCallFormat::None) {
    out.content = std::string(text);
    return out;
  }
  pending_ += text;
  scan(out);
  return out;
}

ToolCallText ToolCallStreamParser::flush() {
  ToolCallText out;
  if (in_call_) {
    call_ += pending_;
    pending_.clear();
    end_call(out, /*terminated=*/false);
  }
  add_content(out, pending_);
  pending_.clear();
  if (!saw_call_) out.content += held_space_;
  held_space_.clear();
  return out;
}

ToolCallText parse_tool_calls(ToolCallFormat format, std::string_view text) {
  ToolCallStreamParser parser(format);
  ToolCallText all = parser.push(text);
  ToolCallText rest = parser.flush();
  all.content += rest.content;
  for (ParsedToolCall& c : rest.calls) all.calls.push_back(std::move(c));
  return all;
}

}  // namespace db::chat
