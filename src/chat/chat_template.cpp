#include "chat/chat_template.h"

#include "chat/ast.h"
#include "chat/builtins.h"
#include "chat/interpreter.h"
#include "chat/parser.h"

namespace db::chat {

namespace {

[[noreturn]] void fail_at(SourcePos p, const std::string& msg) {
  throw Error("chat template syntax error at line " + std::to_string(p.line) + ", column " +
              std::to_string(p.column) + ": " + msg);
}

// jinja2 rejects unknown filters and tests when compiling, except inside
// `if` statements and inline if-expressions (its "soft" frames), where the
// error is deferred until the filter runs.
void check_names(const Expr* e, bool soft) {
  if (!e) return;
  soft = soft || e->kind == ExprKind::CondExpr;
  if (!soft && e->kind == ExprKind::Filter && !find_filter(e->name)) {
    fail_at(e->pos, "no filter named '" + e->name + "'");
  }
  if (!soft && e->kind == ExprKind::Test && !find_test(e->name)) fail_at(e->pos, "no test named '" + e->name + "'");
  for (const auto& c : e->children) check_names(c.get(), soft);
  for (const auto& kw : e->kwargs) check_names(kw.second.get(), soft);
  check_names(e->star_args.get(), soft);
  check_names(e->star_kwargs.get(), soft);
}

void check_names(const Body& body, bool soft) {
  for (const auto& n : body) {
    switch (n->kind) {
      case NodeKind::If:
        for (const auto& b : n->branches) {
          check_names(b.test.get(), true);
          check_names(b.body, true);
        }
        check_names(n->else_body, true);
        break;
      case NodeKind::For:
      case NodeKind::CallBlock:
        check_names(n->expr.get(), soft);
        check_names(n->filter.get(), false);
        check_names(n->body, false);
        check_names(n->else_body, false);
        break;
      case NodeKind::With:
        for (const auto& v : n->with_values) check_names(v.get(), soft);
        check_names(n->body, false);
        break;
      default:
        check_names(n->expr.get(), soft);
        check_names(n->filter.get(), n->kind == NodeKind::Set ? soft : false);
        for (const auto& d : n->defaults) check_names(d.get(), false);
        check_names(n->body, false);
    }
  }
}

DictData to_dict(const nlohmann::ordered_json& context) {
  if (!context.is_object()) throw Error("chat template context must be a JSON object, got " + std::string(context.type_name()));
  const Value v = from_json(context);
  return v.as_dict();
}

// transformers drops None-valued message keys and copies the reasoning under
// both `thinking` and `reasoning_content` before rendering; `keep_call_content`
// keeps a null content beside tool_calls.
nlohmann::ordered_json normalize_messages(const nlohmann::ordered_json& messages, bool keep_call_content) {
  if (!messages.is_array()) throw Error("chat messages must be a JSON array, got " + std::string(messages.type_name()));
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& message : messages) {
    if (!message.is_object()) throw Error("chat messages must be objects, got " + message.dump());
    nlohmann::ordered_json m = nlohmann::ordered_json::object();
    for (auto it = message.begin(); it != message.end(); ++it) {
      const bool call_content = keep_call_content && it.key() == "content" && message.contains("tool_calls");
      if (!it.value().is_null() || call_content) m[it.key()] = it.value();
    }
    const nlohmann::ordered_json* reasoning = nullptr;
    for (const char* key : {"reasoning_content", "thinking", "reasoning"}) {
      if (m.contains(key)) {
        reasoning = &m[key];
        break;
      }
    }
    if (reasoning) {
      nlohmann::ordered_json aliased = nlohmann::ordered_json::object();
      aliased["thinking"] = *reasoning;
      for (auto it = m.begin(); it != m.end(); ++it) aliased[it.key()] = it.value();
      aliased["reasoning_content"] = *reasoning;
      m = std::move(aliased);
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace

ChatTemplate ChatTemplate::parse(const std::string& source) {
  auto body = std::make_shared<Body>(parse_template(source));
  check_names(*body, false);
  ChatTemplate t;
  t.source_ = source;
  t.body_ = std::move(body);
  return t;
}

std::string ChatTemplate::render(const nlohmann::ordered_json& context) const {
  // Namespaces can reference themselves (`set ns.me = ns`); clearing them
  // after the render frees such cycles.
  std::vector<std::shared_ptr<ObjectData>> namespaces;
  struct ClearNamespaces {
    std::vector<std::shared_ptr<ObjectData>>& list;
    ~ClearNamespaces() {
      for (auto& ns : list) ns->attributes = DictData();
    }
  } clear{namespaces};
  DictData globals;
  add_globals(globals, namespaces);
  Interpreter interpreter;
  return interpreter.render(*body_, globals, to_dict(context));
}

std::string ChatTemplate::render(const nlohmann::json& context) const {
  nlohmann::ordered_json ordered;
  try {
    ordered = nlohmann::ordered_json::parse(context.dump());
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("chat template context is not valid JSON: ") + e.what());
  }
  return render(ordered);
}

std::string apply_chat_template(const ChatTemplate& tmpl, const nlohmann::ordered_json& messages,
                                bool add_generation_prompt, const std::string& bos_token,
                                const std::string& eos_token, const nlohmann::ordered_json& extra,
                                bool keep_null_call_content) {
  if (!extra.is_object()) throw Error("chat template extra variables must be a JSON object");
  nlohmann::ordered_json context = nlohmann::ordered_json::object();
  context["messages"] = normalize_messages(messages, keep_null_call_content);
  context["tools"] = nullptr;
  context["documents"] = nullptr;
  context["add_generation_prompt"] = add_generation_prompt;
  context["bos_token"] = bos_token;
  context["eos_token"] = eos_token;
  for (auto it = extra.begin(); it != extra.end(); ++it) context[it.key()] = it.value();
  return tmpl.render(context);
}

}  // namespace db::chat
