#include "chat/interpreter.h"

#include "chat/builtins.h"
#include "chat/chat_template.h"
#include "chat/operators.h"
#include "chat/value_format.h"
#include "util/error.h"

namespace db::chat {

namespace {

constexpr int kMaxCallDepth = 200;

// A runtime error that already carries its template position.
class PositionedError : public Error {
 public:
  using Error::Error;
};

std::string at(SourcePos p) {
  return "line " + std::to_string(p.line) + ", column " + std::to_string(p.column);
}

bool compare(const std::string& op, const Value& a, const Value& b) {
  if (op == "==") return equals(a, b);
  if (op == "!=") return !equals(a, b);
  if (op == "in") return ops::contains(b, a);
  if (op == "notin") return !ops::contains(b, a);
  if (a.is_undefined()) ops::fail_undefined(a);
  if (b.is_undefined()) ops::fail_undefined(b);
  if (op == "<") return less_than(a, b);
  if (op == ">") return less_than(b, a);
  if (op == "<=") return !less_than(b, a);
  return !less_than(a, b);  // >=
}

std::vector<Value> unpack(const Value& value, size_t n) {
  std::vector<Value> items = iterate(value);
  if (items.size() > n) throw Error("too many values to unpack (expected " + std::to_string(n) + ")");
  if (items.size() < n) {
    throw Error("not enough values to unpack (expected " + std::to_string(n) + ", got " +
                std::to_string(items.size()) + ")");
  }
  return items;
}

Value loop_object(const std::vector<Value>& items, size_t i) {
  auto obj = std::make_shared<ObjectData>();
  obj->type_name = "LoopContext";
  const auto n = static_cast<int64_t>(items.size());
  const auto idx = static_cast<int64_t>(i);
  DictData& a = obj->attributes;
  a.set(Value::string("index"), Value::integer(idx + 1));
  a.set(Value::string("index0"), Value::integer(idx));
  a.set(Value::string("revindex"), Value::integer(n - idx));
  a.set(Value::string("revindex0"), Value::integer(n - idx - 1));
  a.set(Value::string("first"), Value::boolean(i == 0));
  a.set(Value::string("last"), Value::boolean(idx == n - 1));
  a.set(Value::string("length"), Value::integer(n));
  a.set(Value::string("depth"), Value::integer(1));
  a.set(Value::string("depth0"), Value::integer(0));
  a.set(Value::string("previtem"), i > 0 ? items[i - 1] : Value::undefined("there is no previous item"));
  a.set(Value::string("nextitem"), idx + 1 < n ? items[i + 1] : Value::undefined("there is no next item"));
  a.set(Value::string("cycle"), Value::callable("loop.cycle", [idx](CallArgs& args) {
          if (args.positional.empty()) throw Error("no items for cycling given");
          return args.positional[static_cast<size_t>(idx) % args.positional.size()];
        }));
  return Value::object(std::move(obj));
}

}  // namespace

const Value* Frame::lookup(const std::string& name) const {
  for (const Frame* f = this; f; f = f->parent_.get()) {
    const auto it = f->vars_.find(name);
    if (it != f->vars_.end()) return &it->second;
  }
  return nullptr;
}

std::string Interpreter::render(const Body& body, const DictData& globals, const DictData& context) {
  auto global_frame = std::make_shared<Frame>(nullptr);
  for (const auto& kv : globals.items()) global_frame->set(kv.first.as_string(), kv.second);
  auto frame = std::make_shared<Frame>(global_frame);
  for (const auto& kv : context.items()) {
    if (!kv.first.is_string()) throw Error("chat template context keys must be strings");
    frame->set(kv.first.as_string(), kv.second);
  }
  std::string out;
  exec_body(body, frame, out);
  return out;
}

Interpreter::Flow Interpreter::exec_body(const Body& body, const FramePtr& frame, std::string& out) {
  for (const auto& node : body) {
    const Flow f = exec(*node, frame, out);
    if (f != Flow::Normal) return f;
  }
  return Flow::Normal;
}

Interpreter::Flow Interpreter::exec(const Node& node, const FramePtr& frame, std::string& out) {
  try {
    return exec_unwrapped(node, frame, out);
  } catch (const TemplateRaisedError&) {
    throw;
  } catch (const PositionedError&) {
    throw;
  } catch (const std::exception& e) {
    throw PositionedError("chat template error at " + at(node.pos) + ": " + e.what());
  }
}

Interpreter::Flow Interpreter::exec_unwrapped(const Node& node, const FramePtr& frame, std::string& out) {
  switch (node.kind) {
    case NodeKind::Text: out += node.text; return Flow::Normal;
    case NodeKind::Print: out += to_str(eval(*node.expr, frame)); return Flow::Normal;
    case NodeKind::If: return exec_if(node, frame, out);
    case NodeKind::For: exec_for(node, frame, out); return Flow::Normal;
    case NodeKind::Set: assign(node.target, eval(*node.expr, frame), *frame, frame); return Flow::Normal;
    case NodeKind::SetBlock: {
      std::string captured;
      exec_body(node.body, std::make_shared<Frame>(frame), captured);
      Value v = Value::string(std::move(captured));
      if (node.filter) v = apply_filter_chain(*node.filter, v, frame);
      assign(node.target, v, *frame, frame);
      return Flow::Normal;
    }
    case NodeKind::Macro: frame->set(node.name, make_macro(node, frame)); return Flow::Normal;
    case NodeKind::CallBlock: exec_call_block(node, frame, out); return Flow::Normal;
    case NodeKind::FilterBlock: {
      std::string captured;
      exec_body(node.body, std::make_shared<Frame>(frame), captured);
      out += to_str(apply_filter_chain(*node.filter, Value::string(std::move(captured)), frame));
      return Flow::Normal;
    }
    case NodeKind::With: {
      auto scope = std::make_shared<Frame>(frame);
      for (size_t i = 0; i < node.with_targets.size(); ++i) {
        assign(node.with_targets[i], eval(*node.with_values[i], frame), *scope, scope);
      }
      return exec_body(node.body, scope, out);
    }
    case NodeKind::Scope: return exec_body(node.body, std::make_shared<Frame>(frame), out);
    case NodeKind::Break: return Flow::Break;
    case NodeKind::Continue: return Flow::Continue;
  }
  return Flow::Normal;
}

Interpreter::Flow Interpreter::exec_if(const Node& node, const FramePtr& frame, std::string& out) {
  for (const auto& branch : node.branches) {
    if (truthy(eval(*branch.test, frame))) return exec_body(branch.body, frame, out);
  }
  return exec_body(node.else_body, frame, out);
}

void Interpreter::exec_for(const Node& node, const FramePtr& frame, std::string& out) {
  const Value iterable = eval(*node.expr, frame);
  std::vector<Value> items = iterate(iterable);
  if (node.filter) {
    std::vector<Value> kept;
    for (const Value& item : items) {
      auto scope = std::make_shared<Frame>(frame);
      assign(node.target, item, *scope, scope);
      if (truthy(eval(*node.filter, scope))) kept.push_back(item);
    }
    items = std::move(kept);
  }
  for (size_t i = 0; i < items.size(); ++i) {
    auto scope = std::make_shared<Frame>(frame);
    assign(node.target, items[i], *scope, scope);
    scope->set("loop", loop_object(items, i));
    if (exec_body(node.body, scope, out) == Flow::Break) break;
  }
  if (items.empty()) exec_body(node.else_body, std::make_shared<Frame>(frame), out);
}

void Interpreter::assign(const Target& target, const Value& value, Frame& frame, const FramePtr& lookup_frame) {
  if (!target.attribute.empty()) {
    const Value* ns = lookup_frame->lookup(target.names[0]);
    if (!ns || ns->is_undefined()) throw Error("'" + target.names[0] + "' is undefined");
    if (!ns->is_object() || !ns->as_object().is_namespace) {
      throw Error("cannot assign attribute on non-namespace object");
    }
    const Value key = Value::string(target.attribute);
    check_namespace_attribute(key);
    ns->as_object().attributes.set(key, value);
    return;
  }
  if (!target.is_tuple) {
    frame.set(target.names[0], value);
    return;
  }
  const std::vector<Value> parts = unpack(value, target.names.size());
  for (size_t i = 0; i < parts.size(); ++i) frame.set(target.names[i], parts[i]);
}

Value Interpreter::make_macro(const Node& node, const FramePtr& frame) {
  const Node* macro = &node;
  // The macro usually lives in `frame`: the closure holds it weakly (no
  // frame <-> macro cycle) and the interpreter keeps it alive until the end
  // of the render, in case the macro escapes its scope through a namespace.
  pinned_frames_.push_back(frame);
  std::weak_ptr<Frame> weak_frame = frame;
  return Value::callable(node.name, [this, macro, weak_frame](CallArgs& args) {
    const FramePtr defining = weak_frame.lock();
    if (!defining) throw Error("macro '" + macro->name + "' called outside the scope that defined it");
    return call_macro(*macro, defining, args);
  });
}

Value Interpreter::call_macro(const Node& node, const FramePtr& defining, CallArgs& args) {
  if (call_depth_ >= kMaxCallDepth) throw Error("maximum macro recursion depth exceeded");
  auto scope = std::make_shared<Frame>(defining);
  const size_t n_params = node.params.size();
  std::vector<bool> bound(n_params, false);
  std::vector<Value> varargs;
  for (size_t i = 0; i < args.positional.size(); ++i) {
    if (i < n_params) {
      scope->set(node.params[i], args.positional[i]);
      bound[i] = true;
    } else {
      varargs.push_back(args.positional[i]);
    }
  }
  DictData kwargs;
  for (const auto& kw : args.keywords) {
    bool matched = false;
    for (size_t i = 0; i < n_params; ++i) {
      if (node.params[i] == kw.first) {
        if (bound[i]) throw Error("macro '" + node.name + "' got multiple values for argument '" + kw.first + "'");
        scope->set(kw.first, kw.second);
        bound[i] = matched = true;
      }
    }
    if (matched) continue;
    if (kw.first == "caller") {
      scope->set("caller", kw.second);
    } else {
      kwargs.set(Value::string(kw.first), kw.second);
    }
  }
  const size_t first_default = n_params - node.defaults.size();
  for (size_t i = 0; i < n_params; ++i) {
    if (bound[i]) continue;
    scope->set(node.params[i], i >= first_default ? eval(*node.defaults[i - first_default], scope)
                                                   : Value::undefined("parameter '" + node.params[i] +
                                                                      "' was not provided"));
  }
  scope->set("varargs", Value::list(std::move(varargs), true));
  scope->set("kwargs", Value::dict(std::move(kwargs)));
  std::string out;
  ++call_depth_;
  try {
    exec_body(node.body, scope, out);
  } catch (...) {
    --call_depth_;
    throw;
  }
  --call_depth_;
  return Value::string(std::move(out));
}

void Interpreter::exec_call_block(const Node& node, const FramePtr& frame, std::string& out) {
  const Node* block = &node;
  pinned_frames_.push_back(frame);
  std::weak_ptr<Frame> weak_outer = frame;
  Value caller = Value::callable("caller", [this, block, weak_outer](CallArgs& args) {
    const FramePtr outer = weak_outer.lock();
    if (!outer) throw Error("caller() called outside its call block");
    auto scope = std::make_shared<Frame>(outer);
    for (size_t i = 0; i < block->params.size(); ++i) {
      const size_t first_default = block->params.size() - block->defaults.size();
      Value v = i < args.positional.size() ? args.positional[i]
                : i >= first_default     ? eval(*block->defaults[i - first_default], scope)
                                         : Value::undefined("parameter '" + block->params[i] + "' was not provided");
      for (const auto& kw : args.keywords) {
        if (kw.first == block->params[i]) v = kw.second;
      }
      scope->set(block->params[i], v);
    }
    std::string captured;
    exec_body(block->body, scope, captured);
    return Value::string(std::move(captured));
  });
  const Expr& call = *node.expr;
  const Value callee = eval(*call.children[0], frame);
  CallArgs args = eval_args(call, 1, frame);
  args.keywords.emplace_back("caller", caller);
  if (!callee.is_callable()) {
    if (callee.is_undefined()) ops::fail_undefined(callee);
    throw Error("'" + type_name(callee) + "' object is not callable");
  }
  out += to_str(callee.as_callable().call(args));
}

CallArgs Interpreter::eval_args(const Expr& e, size_t first, const FramePtr& frame) {
  CallArgs args;
  for (size_t i = first; i < e.children.size(); ++i) args.positional.push_back(eval(*e.children[i], frame));
  if (e.star_args) {
    for (Value& v : iterate(eval(*e.star_args, frame))) args.positional.push_back(std::move(v));
  }
  for (const auto& kw : e.kwargs) args.keywords.emplace_back(kw.first, eval(*kw.second, frame));
  if (e.star_kwargs) {
    const Value d = eval(*e.star_kwargs, frame);
    if (!d.is_dict()) throw Error("argument after ** must be a mapping, not " + type_name(d));
    for (const auto& kv : d.as_dict().items()) {
      if (!kv.first.is_string()) throw Error("keywords must be strings");
      args.keywords.emplace_back(kv.first.as_string(), kv.second);
    }
  }
  return args;
}

Value Interpreter::eval_call(const Expr& e, const FramePtr& frame) {
  const Value callee = eval(*e.children[0], frame);
  CallArgs args = eval_args(e, 1, frame);
  if (callee.is_callable()) return callee.as_callable().call(args);
  if (callee.is_undefined()) ops::fail_undefined(callee);
  throw Error("'" + type_name(callee) + "' object is not callable");
}

Value Interpreter::eval_compare(const Expr& e, const FramePtr& frame) {
  Value left = eval(*e.children[0], frame);
  for (size_t i = 0; i < e.ops.size(); ++i) {
    Value right = eval(*e.children[i + 1], frame);
    if (!compare(e.ops[i], left, right)) return Value::boolean(false);
    left = std::move(right);
  }
  return Value::boolean(true);
}

Value Interpreter::apply_filter_chain(const Expr& chain, const Value& input, const FramePtr& frame) {
  const Value operand = chain.children[0] ? apply_filter_chain(*chain.children[0], input, frame) : input;
  CallArgs args = eval_args(chain, 1, frame);
  return call_filter(chain.name, operand, args);
}

Value Interpreter::eval(const Expr& e, const FramePtr& frame) {
  switch (e.kind) {
    case ExprKind::Literal: return e.literal;
    case ExprKind::Name: {
      const Value* v = frame->lookup(e.name);
      return v ? *v : Value::undefined("'" + e.name + "' is undefined");
    }
    case ExprKind::List:
    case ExprKind::Tuple: {
      std::vector<Value> items;
      items.reserve(e.children.size());
      for (const auto& c : e.children) items.push_back(eval(*c, frame));
      return Value::list(std::move(items), e.kind == ExprKind::Tuple);
    }
    case ExprKind::Dict: {
      DictData d;
      for (size_t i = 0; i + 1 < e.children.size(); i += 2) {
        d.set(eval(*e.children[i], frame), eval(*e.children[i + 1], frame));
      }
      return Value::dict(std::move(d));
    }
    case ExprKind::GetAttr: return ops::getattr(eval(*e.children[0], frame), e.name);
    case ExprKind::GetItem: {
      const Value obj = eval(*e.children[0], frame);
      const Expr& key = *e.children[1];
      if (key.kind != ExprKind::Slice) return ops::getitem(obj, eval(key, frame));
      auto part = [&](size_t i) { return key.children[i] ? eval(*key.children[i], frame) : Value(); };
      return ops::slice(obj, part(0), part(1), part(2));
    }
    case ExprKind::Slice: throw Error("slice outside a subscript");
    case ExprKind::Call: return eval_call(e, frame);
    case ExprKind::Filter: {
      const Value operand = eval(*e.children[0], frame);
      CallArgs args = eval_args(e, 1, frame);
      return call_filter(e.name, operand, args);
    }
    case ExprKind::Test: {
      const Value operand = eval(*e.children[0], frame);
      CallArgs args = eval_args(e, 1, frame);
      return Value::boolean(call_test(e.name, operand, args));
    }
    case ExprKind::Not: return Value::boolean(!truthy(eval(*e.children[0], frame)));
    case ExprKind::Neg: return ops::neg(eval(*e.children[0], frame));
    case ExprKind::Pos: return ops::pos(eval(*e.children[0], frame));
    case ExprKind::Binary: {
      const std::string& op = e.name;
      Value left = eval(*e.children[0], frame);
      if (op == "and") return truthy(left) ? eval(*e.children[1], frame) : left;
      if (op == "or") return truthy(left) ? left : eval(*e.children[1], frame);
      const Value right = eval(*e.children[1], frame);
      if (op == "+") return ops::add(left, right);
      if (op == "-") return ops::sub(left, right);
      if (op == "*") return ops::mul(left, right);
      if (op == "/") return ops::truediv(left, right);
      if (op == "//") return ops::floordiv(left, right);
      if (op == "%") return ops::mod(left, right);
      return ops::pow(left, right);
    }
    case ExprKind::Concat: {
      std::string s;
      for (const auto& c : e.children) s += to_str(eval(*c, frame));
      return Value::string(std::move(s));
    }
    case ExprKind::Compare: return eval_compare(e, frame);
    case ExprKind::CondExpr: {
      if (truthy(eval(*e.children[0], frame))) return eval(*e.children[1], frame);
      if (e.children[2]) return eval(*e.children[2], frame);
      return Value::undefined("the inline if-expression on line " + std::to_string(e.pos.line) +
                              " evaluated to false and no else section was defined.");
    }
  }
  return Value();
}

}  // namespace db::chat
