#include "chat/parser_impl.h"

namespace db::chat::detail {

ExprPtr Parser::parse_tuple(bool simplified, bool with_condexpr, const std::vector<std::string>& extra_end,
                             bool explicit_parentheses) {
  const SourcePos p = cur().pos;
  std::vector<ExprPtr> args;
  bool is_tuple = false;
  while (true) {
    if (!args.empty()) expect_op(",");
    if (is_tuple_end(extra_end)) break;
    args.push_back(simplified ? parse_primary() : parse_expression(with_condexpr));
    if (is_op(",")) {
      is_tuple = true;
    } else {
      break;
    }
  }
  if (!is_tuple) {
    if (!args.empty()) return std::move(args[0]);
    if (!explicit_parentheses) fail(cur().pos, "expected an expression, got " + describe(cur()));
  }
  auto e = make(ExprKind::Tuple, p);
  e->children = std::move(args);
  return e;
}

bool Parser::is_tuple_end(const std::vector<std::string>& extra_end) const {
  if (cur().type == TokenType::VariableEnd || cur().type == TokenType::BlockEnd || is_op(")")) return true;
  return is_any_name(extra_end);
}

ExprPtr Parser::parse_condexpr() {
  const SourcePos p = cur().pos;
  ExprPtr expr1 = parse_or();
  while (skip_name("if")) {
    ExprPtr expr2 = parse_or();
    ExprPtr expr3 = skip_name("else") ? parse_condexpr() : nullptr;
    auto e = make(ExprKind::CondExpr, p);
    e->children.push_back(std::move(expr2));
    e->children.push_back(std::move(expr1));
    e->children.push_back(std::move(expr3));
    expr1 = std::move(e);
  }
  return expr1;
}

ExprPtr Parser::binary(const char* op, ExprPtr left, ExprPtr right, SourcePos p) {
  auto e = make(ExprKind::Binary, p);
  e->name = op;
  e->children.push_back(std::move(left));
  e->children.push_back(std::move(right));
  return e;
}

ExprPtr Parser::parse_or() {
  const SourcePos p = cur().pos;
  ExprPtr left = parse_and();
  while (skip_name("or")) left = binary("or", std::move(left), parse_and(), p);
  return left;
}

ExprPtr Parser::parse_and() {
  const SourcePos p = cur().pos;
  ExprPtr left = parse_not();
  while (skip_name("and")) left = binary("and", std::move(left), parse_not(), p);
  return left;
}

ExprPtr Parser::parse_not() {
  if (is_name("not")) {
    auto e = make(ExprKind::Not, next().pos);
    e->children.push_back(parse_not());
    return e;
  }
  return parse_compare();
}

ExprPtr Parser::parse_compare() {
  const SourcePos p = cur().pos;
  ExprPtr expr = parse_math1();
  auto cmp = make(ExprKind::Compare, p);
  while (true) {
    if (cur().type == TokenType::Operator &&
        (is_op("==") || is_op("!=") || is_op("<") || is_op("<=") || is_op(">") || is_op(">="))) {
      cmp->ops.push_back(next().text);
    } else if (skip_name("in")) {
      cmp->ops.push_back("in");
    } else if (is_name("not") && look().type == TokenType::Name && look().text == "in") {
      next();
      next();
      cmp->ops.push_back("notin");
    } else {
      break;
    }
    cmp->children.push_back(parse_math1());
  }
  if (cmp->ops.empty()) return expr;
  cmp->children.insert(cmp->children.begin(), std::move(expr));
  return cmp;
}

ExprPtr Parser::parse_math1() {
  const SourcePos p = cur().pos;
  ExprPtr left = parse_concat();
  while (is_op("+") || is_op("-")) {
    const std::string op = next().text;
    left = binary(op.c_str(), std::move(left), parse_concat(), p);
  }
  return left;
}

ExprPtr Parser::parse_concat() {
  const SourcePos p = cur().pos;
  ExprPtr first = parse_math2();
  if (!is_op("~")) return first;
  auto e = make(ExprKind::Concat, p);
  e->children.push_back(std::move(first));
  while (skip_op("~")) e->children.push_back(parse_math2());
  return e;
}

ExprPtr Parser::parse_math2() {
  const SourcePos p = cur().pos;
  ExprPtr left = parse_pow();
  while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
    const std::string op = next().text;
    left = binary(op.c_str(), std::move(left), parse_pow(), p);
  }
  return left;
}

ExprPtr Parser::parse_pow() {
  const SourcePos p = cur().pos;
  ExprPtr left = parse_unary(true);
  while (skip_op("**")) left = binary("**", std::move(left), parse_unary(true), p);
  return left;
}

ExprPtr Parser::parse_unary(bool with_filter) {
  const SourcePos p = cur().pos;
  const DepthGuard guard(*this, p);
  ExprPtr node;
  if (is_op("-") || is_op("+")) {
    const bool neg = next().text == "-";
    node = make(neg ? ExprKind::Neg : ExprKind::Pos, p);
    node->children.push_back(parse_unary(false));
  } else {
    node = parse_primary();
  }
  node = parse_postfix(std::move(node));
  if (with_filter) node = parse_filter_expr(std::move(node));
  return node;
}

ExprPtr Parser::parse_primary() {
  const Token& t = cur();
  const SourcePos p = t.pos;
  if (t.type == TokenType::Name) {
    next();
    auto e = make(ExprKind::Literal, p);
    if (t.text == "true" || t.text == "True") {
      e->literal = Value::boolean(true);
    } else if (t.text == "false" || t.text == "False") {
      e->literal = Value::boolean(false);
    } else if (t.text == "none" || t.text == "None") {
      e->literal = Value::none();
    } else {
      e->kind = ExprKind::Name;
      e->name = t.text;
    }
    return e;
  }
  if (t.type == TokenType::String) {
    std::string s;
    while (cur().type == TokenType::String) s += next().text;
    auto e = make(ExprKind::Literal, p);
    e->literal = Value::string(std::move(s));
    return e;
  }
  if (t.type == TokenType::Integer || t.type == TokenType::Float) {
    next();
    auto e = make(ExprKind::Literal, p);
    e->literal = t.type == TokenType::Integer ? Value::integer(t.int_value) : Value::number(t.float_value);
    return e;
  }
  if (is_op("(")) {
    next();
    ExprPtr e = parse_tuple(false, true, {}, true);
    expect_op(")");
    return e;
  }
  if (is_op("[")) {
    next();
    auto e = make(ExprKind::List, p);
    while (!is_op("]")) {
      if (!e->children.empty()) expect_op(",");
      if (is_op("]")) break;
      e->children.push_back(parse_expression(true));
    }
    expect_op("]");
    return e;
  }
  if (is_op("{")) {
    next();
    auto e = make(ExprKind::Dict, p);
    while (!is_op("}")) {
      if (!e->children.empty()) expect_op(",");
      if (is_op("}")) break;
      e->children.push_back(parse_expression(true));
      expect_op(":");
      e->children.push_back(parse_expression(true));
    }
    expect_op("}");
    return e;
  }
  fail(p, "unexpected " + describe(t));
}

ExprPtr Parser::parse_postfix(ExprPtr node) {
  while (true) {
    if (is_op(".") || is_op("[")) {
      node = parse_subscript(std::move(node));
    } else if (is_op("(")) {
      node = parse_call(std::move(node));
    } else {
      return node;
    }
  }
}

ExprPtr Parser::parse_filter_expr(ExprPtr node) {
  while (true) {
    if (is_op("|")) {
      node = parse_filter(std::move(node), false);
    } else if (is_name("is")) {
      node = parse_test(std::move(node));
    } else if (is_op("(")) {
      node = parse_call(std::move(node));
    } else {
      return node;
    }
  }
}

ExprPtr Parser::parse_subscript(ExprPtr node) {
  const Token& t = next();
  if (t.text == ".") {
    const Token& attr = next();
    if (attr.type == TokenType::Name) {
      auto e = make(ExprKind::GetAttr, t.pos);
      e->name = attr.text;
      e->children.push_back(std::move(node));
      return e;
    }
    if (attr.type != TokenType::Integer) fail(attr.pos, "expected name or number");
    auto e = make(ExprKind::GetItem, t.pos);
    auto index = make(ExprKind::Literal, attr.pos);
    index->literal = Value::integer(attr.int_value);
    e->children.push_back(std::move(node));
    e->children.push_back(std::move(index));
    return e;
  }
  std::vector<ExprPtr> args;
  while (!is_op("]")) {
    if (!args.empty()) expect_op(",");
    args.push_back(parse_subscribed());
  }
  expect_op("]");
  auto e = make(ExprKind::GetItem, t.pos);
  e->children.push_back(std::move(node));
  if (args.size() == 1) {
    e->children.push_back(std::move(args[0]));
  } else {
    auto tuple = make(ExprKind::Tuple, t.pos);
    tuple->children = std::move(args);
    e->children.push_back(std::move(tuple));
  }
  return e;
}

ExprPtr Parser::parse_subscribed() {
  const SourcePos p = cur().pos;
  ExprPtr start;
  if (!skip_op(":")) {
    start = parse_expression(true);
    if (!skip_op(":")) return start;
  }
  auto slice = make(ExprKind::Slice, p);
  slice->children.push_back(std::move(start));
  if (!is_op(":") && !is_op("]") && !is_op(",")) {
    slice->children.push_back(parse_expression(true));
  } else {
    slice->children.push_back(nullptr);
  }
  if (skip_op(":") && !is_op("]") && !is_op(",")) {
    slice->children.push_back(parse_expression(true));
  } else {
    slice->children.push_back(nullptr);
  }
  return slice;
}

// Arguments "(a, b, k=v, *args, **kwargs)" appended to e.
void Parser::parse_call_args(Expr& e) {
  const SourcePos p = expect_op("(").pos;
  bool require_comma = false;
  while (!is_op(")")) {
    if (require_comma) {
      expect_op(",");
      if (is_op(")")) break;
    }
    if (skip_op("*")) {
      if (e.star_args || e.star_kwargs) fail(p, "invalid syntax for function call expression");
      e.star_args = parse_expression(true);
    } else if (skip_op("**")) {
      if (e.star_kwargs) fail(p, "invalid syntax for function call expression");
      e.star_kwargs = parse_expression(true);
    } else if (cur().type == TokenType::Name && look().type == TokenType::Operator && look().text == "=") {
      if (e.star_kwargs) fail(p, "invalid syntax for function call expression");
      const std::string key = next().text;
      next();
      e.kwargs.emplace_back(key, parse_expression(true));
    } else {
      if (e.star_args || e.star_kwargs || !e.kwargs.empty()) fail(p, "invalid syntax for function call expression");
      e.children.push_back(parse_expression(true));
    }
    require_comma = true;
  }
  expect_op(")");
}

ExprPtr Parser::parse_call(ExprPtr node) {
  auto e = make(ExprKind::Call, cur().pos);
  e->children.push_back(std::move(node));
  parse_call_args(*e);
  return e;
}

ExprPtr Parser::parse_filter(ExprPtr node, bool start_inline) {
  while (is_op("|") || start_inline) {
    if (!start_inline) next();
    const Token& name = expect_name();
    auto e = make(ExprKind::Filter, name.pos);
    e->name = name.text;
    while (skip_op(".")) e->name += "." + expect_name().text;
    e->children.push_back(std::move(node));
    if (is_op("(")) parse_call_args(*e);
    node = std::move(e);
    start_inline = false;
  }
  return node;
}

ExprPtr Parser::parse_test(ExprPtr node) {
  const SourcePos p = next().pos;
  const bool negated = skip_name("not");
  auto e = make(ExprKind::Test, p);
  e->name = expect_name().text;
  while (skip_op(".")) e->name += "." + expect_name().text;
  e->children.push_back(std::move(node));
  const Token& t = cur();
  if (is_op("(")) {
    parse_call_args(*e);
  } else if ((t.type == TokenType::Name || t.type == TokenType::String || t.type == TokenType::Integer ||
              t.type == TokenType::Float || is_op("[") || is_op("{")) &&
             !is_name("else") && !is_name("or") && !is_name("and")) {
    if (is_name("is")) fail(t.pos, "you cannot chain multiple tests with is");
    e->children.push_back(parse_postfix(parse_primary()));
  }
  if (!negated) return e;
  auto n = make(ExprKind::Not, p);
  n->children.push_back(std::move(e));
  return n;
}
}  // namespace db::chat::detail
