// Syntax tree of a parsed template: expressions and statements.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chat/lexer.h"
#include "chat/value.h"

namespace db::chat {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

enum class ExprKind {
  Literal,   // literal: a constant
  Name,      // name: a variable
  List,      // children: items
  Tuple,     // children: items
  Dict,      // children: key0, value0, key1, value1, ...
  GetAttr,   // children[0].name
  GetItem,   // children[0][children[1]]
  Slice,     // children[0..2]: start, stop, step (each may be null)
  Call,      // children[0](children[1..], kwargs)
  Filter,    // children[0] | name(children[1..], kwargs); children[0] null in filter blocks
  Test,      // children[0] is name(children[1..], kwargs)
  Not,       // not children[0]
  Neg,       // -children[0]
  Pos,       // +children[0]
  Binary,    // children[0] op children[1]; op in + - * / // % ** and or
  Concat,    // children joined with ~
  Compare,   // children[0] ops[0] children[1] ops[1] children[2] ...
  CondExpr,  // children[1] if children[0] else children[2] (children[2] may be null)
};

struct Expr {
  ExprKind kind = ExprKind::Literal;
  SourcePos pos;                                         // where the expression starts
  Value literal;                                         // Literal
  std::string name;                                      // Name, GetAttr, Filter, Test, Binary operator
  std::vector<ExprPtr> children;                         // operands, see ExprKind
  std::vector<std::string> ops;                          // Compare operators: == != < <= > >= in notin
  std::vector<std::pair<std::string, ExprPtr>> kwargs;   // Call/Filter/Test keyword arguments
  ExprPtr star_args;                                     // f(*args)
  ExprPtr star_kwargs;                                   // f(**kwargs)
};

struct Node;
using NodePtr = std::unique_ptr<Node>;
using Body = std::vector<NodePtr>;

enum class NodeKind {
  Text,       // text: literal output
  Print,      // {{ expr }}
  If,         // branches (test, body) then else_body
  For,        // for target in expr [if filter] body [else else_body]
  Set,        // set target = expr
  SetBlock,   // set target [| filter] body endset
  Macro,      // macro name(params=defaults) body
  CallBlock,  // call[(params)] expr body endcall
  FilterBlock,// filter chain body endfilter
  With,       // with targets = values body
  Break,      // loop control
  Continue,   // loop control
  Scope,      // a body rendered in place (e.g. the `generation` tag)
};

// Assignment target: a name, `ns.attr`, or a tuple of names.
struct Target {
  std::vector<std::string> names;  // one name, or several for tuple unpacking
  std::string attribute;           // set for `ns.attr` targets (names has one entry)
  bool is_tuple = false;           // `a, b` form: unpack even a single name
};

struct Branch {
  ExprPtr test;  // condition
  Body body;     // rendered when the condition holds
};

struct Node {
  NodeKind kind = NodeKind::Text;
  SourcePos pos;                   // where the statement starts
  std::string text;                // Text
  ExprPtr expr;                    // Print / For iterable / Set value / CallBlock call
  ExprPtr filter;                  // For inline condition; SetBlock/FilterBlock filter chain
  Target target;                   // For / Set / SetBlock
  std::vector<Branch> branches;    // If: if and elif branches
  Body body;                       // main body
  Body else_body;                  // If / For else
  std::string name;                // Macro name
  std::vector<std::string> params; // Macro / CallBlock parameter names
  std::vector<ExprPtr> defaults;   // defaults of the trailing params
  std::vector<Target> with_targets;// With targets
  std::vector<ExprPtr> with_values;// With values
};

}  // namespace db::chat
