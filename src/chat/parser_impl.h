// Recursive-descent parser of template tokens (internal to the chat
// component): statements in parser.cpp, expressions in parser_expressions.cpp.
#pragma once
#include <string>
#include <vector>

#include "chat/ast.h"
#include "util/error.h"

namespace db::chat::detail {

class Parser {
 public:
  // Parses a whole token stream (ending with TokenType::End).
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  Body parse_all() {
    Body body = subparse({});
    if (cur().type != TokenType::End) fail(cur().pos, "unexpected " + describe(cur()));
    return body;
  }

 private:
  // ---- token stream -------------------------------------------------------
  const Token& cur() const { return tokens_[pos_]; }
  const Token& look() const { return tokens_[pos_ + 1 < tokens_.size() ? pos_ + 1 : pos_]; }
  const Token& next() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  bool is_name(const char* value) const { return cur().type == TokenType::Name && cur().text == value; }
  bool is_op(const char* op) const { return cur().type == TokenType::Operator && cur().text == op; }
  bool is_any_name(const std::vector<std::string>& values) const {
    if (cur().type != TokenType::Name) return false;
    for (const auto& v : values) {
      if (cur().text == v) return true;
    }
    return false;
  }
  bool skip_name(const char* value) {
    if (!is_name(value)) return false;
    next();
    return true;
  }
  bool skip_op(const char* op) {
    if (!is_op(op)) return false;
    next();
    return true;
  }

  [[noreturn]] static void fail(SourcePos p, const std::string& msg) {
    throw Error("chat template syntax error at line " + std::to_string(p.line) + ", column " +
                std::to_string(p.column) + ": " + msg);
  }

  const Token& expect_op(const char* op) {
    if (!is_op(op)) fail(cur().pos, std::string("expected '") + op + "', got " + describe(cur()));
    return next();
  }
  const Token& expect_name() {
    if (cur().type != TokenType::Name) fail(cur().pos, "expected a name, got " + describe(cur()));
    return next();
  }
  void expect_name(const char* value) {
    if (!is_name(value)) fail(cur().pos, std::string("expected '") + value + "', got " + describe(cur()));
    next();
  }
  void expect(TokenType type) {
    if (cur().type != type) {
      Token want;
      want.type = type;
      fail(cur().pos, "expected " + describe(want) + ", got " + describe(cur()));
    }
    next();
  }

  static ExprPtr make(ExprKind kind, SourcePos pos) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->pos = pos;
    return e;
  }
  static NodePtr make_node(NodeKind kind, SourcePos pos) {
    auto n = std::make_unique<Node>();
    n->kind = kind;
    n->pos = pos;
    return n;
  }

  // ---- statements -----------------------------------------------------------
  Body subparse(const std::vector<std::string>& end_tokens);
  // Body after the current tag, up to one of `end_tokens` (left current
  // unless drop_needle).
  Body parse_statements(const std::vector<std::string>& end_tokens, bool drop_needle, SourcePos opened);
  NodePtr parse_statement(const std::vector<std::string>& outer_end);
  NodePtr parse_if();
  Target parse_target(bool with_namespace, const std::vector<std::string>& extra_end);
  NodePtr parse_for();
  NodePtr parse_set();
  void parse_signature(Node& n);
  NodePtr parse_macro();
  NodePtr parse_call_block();
  NodePtr parse_filter_block();
  NodePtr parse_with();

  // ---- expressions ----------------------------------------------------------
  ExprPtr parse_expression(bool with_condexpr) { return with_condexpr ? parse_condexpr() : parse_or(); }
  bool is_tuple_end(const std::vector<std::string>& extra_end) const;
  ExprPtr parse_tuple(bool simplified, bool with_condexpr, const std::vector<std::string>& extra_end,
                      bool explicit_parentheses);
  ExprPtr parse_condexpr();
  ExprPtr binary(const char* op, ExprPtr left, ExprPtr right, SourcePos p);
  ExprPtr parse_or();
  ExprPtr parse_and();
  ExprPtr parse_not();
  ExprPtr parse_compare();
  ExprPtr parse_math1();
  ExprPtr parse_concat();
  ExprPtr parse_math2();
  ExprPtr parse_pow();
  ExprPtr parse_unary(bool with_filter);
  ExprPtr parse_primary();
  ExprPtr parse_postfix(ExprPtr node);
  ExprPtr parse_filter_expr(ExprPtr node);
  ExprPtr parse_subscript(ExprPtr node);
  ExprPtr parse_subscribed();
  // Arguments "(a, b, k=v, *args, **kwargs)" appended to e.
  void parse_call_args(Expr& e);
  ExprPtr parse_call(ExprPtr node);
  ExprPtr parse_filter(ExprPtr node, bool start_inline);
  ExprPtr parse_test(ExprPtr node);

  // Bounds recursion so that absurdly nested input fails cleanly instead of
  // exhausting the stack.
  struct DepthGuard {
    DepthGuard(Parser& parser, SourcePos p) : parser_(parser) {
      if (++parser_.depth_ > kMaxDepth) fail(p, "template nesting too deep");
    }
    ~DepthGuard() { --parser_.depth_; }
    Parser& parser_;
  };
  static constexpr int kMaxDepth = 256;

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;  // current recursion depth of statements and expressions
};

}  // namespace db::chat::detail
