#include "chat/parser.h"

#include "chat/parser_impl.h"

namespace db::chat {
namespace detail {

Body Parser::subparse(const std::vector<std::string>& end_tokens) {
  Body body;
  while (cur().type != TokenType::End) {
    const Token& t = cur();
    if (t.type == TokenType::Data) {
      auto n = make_node(NodeKind::Text, t.pos);
      n->text = t.text;
      body.push_back(std::move(n));
      next();
    } else if (t.type == TokenType::VariableBegin) {
      next();
      auto n = make_node(NodeKind::Print, t.pos);
      n->expr = parse_tuple(false, true, {}, false);
      expect(TokenType::VariableEnd);
      body.push_back(std::move(n));
    } else if (t.type == TokenType::BlockBegin) {
      next();
      if (!end_tokens.empty() && is_any_name(end_tokens)) return body;
      body.push_back(parse_statement(end_tokens));
      expect(TokenType::BlockEnd);
    } else {
      fail(t.pos, "unexpected " + describe(t));
    }
  }
  return body;
}

// Body after the current tag, up to one of `end_tokens` (left current
// unless drop_needle).
Body Parser::parse_statements(const std::vector<std::string>& end_tokens, bool drop_needle, SourcePos opened) {
  skip_op(":");
  expect(TokenType::BlockEnd);
  Body body = subparse(end_tokens);
  if (cur().type == TokenType::End) {
    std::string wanted;
    for (const auto& e : end_tokens) wanted += (wanted.empty() ? "'" : " or '") + e + "'";
    fail(opened, "unexpected end of template; looking for " + wanted + " to close the tag opened here");
  }
  if (drop_needle) next();
  return body;
}

NodePtr Parser::parse_statement(const std::vector<std::string>& outer_end) {
  const Token& t = cur();
  const DepthGuard guard(*this, t.pos);
  if (t.type != TokenType::Name) fail(t.pos, "tag name expected");
  const std::string& w = t.text;
  if (w == "if") return parse_if();
  if (w == "for") return parse_for();
  if (w == "set") return parse_set();
  if (w == "macro") return parse_macro();
  if (w == "call") return parse_call_block();
  if (w == "filter") return parse_filter_block();
  if (w == "with") return parse_with();
  if (w == "print") {
    auto n = make_node(NodeKind::Print, next().pos);
    n->expr = parse_tuple(false, true, {}, false);
    return n;
  }
  if (w == "break" || w == "continue") {
    auto n = make_node(w == "break" ? NodeKind::Break : NodeKind::Continue, next().pos);
    return n;
  }
  if (w == "generation" || w == "autoescape") {
    const SourcePos p = next().pos;
    auto n = make_node(NodeKind::Scope, p);
    if (w == "autoescape") parse_expression(true);
    n->body = parse_statements({"end" + w}, true, p);
    return n;
  }
  if (w == "block" || w == "extends" || w == "include" || w == "import" || w == "from" || w == "do") {
    fail(t.pos, "the '" + w + "' tag is not supported in chat templates");
  }
  std::string msg = "encountered unknown tag '" + w + "'";
  if (!outer_end.empty()) msg += "; expected '" + outer_end.front() + "'";
  fail(t.pos, msg);
}

NodePtr Parser::parse_if() {
  const SourcePos p = next().pos;
  auto n = make_node(NodeKind::If, p);
  while (true) {
    Branch b;
    b.test = parse_tuple(false, false, {}, false);
    b.body = parse_statements({"elif", "else", "endif"}, false, p);
    n->branches.push_back(std::move(b));
    const std::string word = next().text;
    if (word == "elif") continue;
    if (word == "else") n->else_body = parse_statements({"endif"}, true, p);
    break;
  }
  return n;
}

Target Parser::parse_target(bool with_namespace, const std::vector<std::string>& extra_end) {
  Target target;
  const bool parenthesized = skip_op("(");
  while (true) {
    if (!target.names.empty()) {
      if (!skip_op(",")) break;
      target.is_tuple = true;
      if (is_op(")") || is_any_name(extra_end) || cur().type == TokenType::BlockEnd || is_op("=")) break;
    }
    const Token& name = expect_name();
    if (name.text == "true" || name.text == "false" || name.text == "none" || name.text == "True" ||
        name.text == "False" || name.text == "None") {
      fail(name.pos, "can't assign to const");
    }
    target.names.push_back(name.text);
    if (with_namespace && is_op(".")) {
      next();
      target.attribute = expect_name().text;
      if (is_op(",")) fail(cur().pos, "can't assign to a namespace attribute in a tuple");
      break;
    }
  }
  if (parenthesized) {
    expect_op(")");
    target.is_tuple = true;
  }
  return target;
}

NodePtr Parser::parse_for() {
  const SourcePos p = next().pos;
  auto n = make_node(NodeKind::For, p);
  n->target = parse_target(false, {"in"});
  expect_name("in");
  n->expr = parse_tuple(false, false, {"recursive"}, false);
  if (skip_name("if")) n->filter = parse_expression(true);
  if (is_name("recursive")) fail(cur().pos, "recursive for loops are not supported");
  n->body = parse_statements({"endfor", "else"}, false, p);
  if (next().text == "else") n->else_body = parse_statements({"endfor"}, true, p);
  return n;
}

NodePtr Parser::parse_set() {
  const SourcePos p = next().pos;
  Target target = parse_target(true, {});
  if (skip_op("=")) {
    auto n = make_node(NodeKind::Set, p);
    n->target = std::move(target);
    n->expr = parse_tuple(false, true, {}, false);
    return n;
  }
  auto n = make_node(NodeKind::SetBlock, p);
  n->target = std::move(target);
  if (is_op("|")) n->filter = parse_filter(nullptr, false);
  n->body = parse_statements({"endset"}, true, p);
  return n;
}

void Parser::parse_signature(Node& n) {
  expect_op("(");
  while (!is_op(")")) {
    if (!n.params.empty()) expect_op(",");
    const Token& name = expect_name();
    n.params.push_back(name.text);
    if (skip_op("=")) {
      n.defaults.push_back(parse_expression(true));
    } else if (!n.defaults.empty()) {
      fail(name.pos, "non-default argument follows default argument");
    }
  }
  expect_op(")");
}

NodePtr Parser::parse_macro() {
  const SourcePos p = next().pos;
  auto n = make_node(NodeKind::Macro, p);
  n->name = expect_name().text;
  parse_signature(*n);
  n->body = parse_statements({"endmacro"}, true, p);
  return n;
}

NodePtr Parser::parse_call_block() {
  const SourcePos p = next().pos;
  auto n = make_node(NodeKind::CallBlock, p);
  if (is_op("(")) parse_signature(*n);
  n->expr = parse_expression(true);
  if (n->expr->kind != ExprKind::Call) fail(p, "expected call");
  n->body = parse_statements({"endcall"}, true, p);
  return n;
}

NodePtr Parser::parse_filter_block() {
  const SourcePos p = next().pos;
  auto n = make_node(NodeKind::FilterBlock, p);
  n->filter = parse_filter(nullptr, true);
  n->body = parse_statements({"endfilter"}, true, p);
  return n;
}

NodePtr Parser::parse_with() {
  const SourcePos p = next().pos;
  auto n = make_node(NodeKind::With, p);
  while (cur().type != TokenType::BlockEnd) {
    if (!n->with_targets.empty()) expect_op(",");
    n->with_targets.push_back(parse_target(false, {}));
    expect_op("=");
    n->with_values.push_back(parse_expression(true));
  }
  n->body = parse_statements({"endwith"}, true, p);
  return n;
}
}  // namespace detail

Body parse_template(const std::string& source) { return detail::Parser(tokenize(source)).parse_all(); }

}  // namespace db::chat
