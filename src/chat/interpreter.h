// Tree-walking evaluator of parsed templates with jinja2's scoping: `for`
// bodies, macros and `with` blocks get their own scope per iteration/call;
// `if` does not. Namespaces are shared by reference.
#pragma once
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "chat/ast.h"
#include "chat/value.h"

namespace db::chat {

class Frame {
 public:
  explicit Frame(std::shared_ptr<Frame> parent) : parent_(std::move(parent)) {}
  // The innermost binding of `name`, or nullptr.
  const Value* lookup(const std::string& name) const;
  void set(const std::string& name, Value value) { vars_[name] = std::move(value); }

 private:
  std::shared_ptr<Frame> parent_;                // enclosing scope (nullptr for globals)
  std::unordered_map<std::string, Value> vars_;  // bindings of this scope
};

using FramePtr = std::shared_ptr<Frame>;

class Interpreter {
 public:
  // Renders `body` with `globals` (lowest precedence) and `context` variables.
  std::string render(const Body& body, const DictData& globals, const DictData& context);

 private:
  enum class Flow { Normal, Break, Continue };

  Flow exec_body(const Body& body, const FramePtr& frame, std::string& out);
  Flow exec(const Node& node, const FramePtr& frame, std::string& out);
  Flow exec_unwrapped(const Node& node, const FramePtr& frame, std::string& out);
  Flow exec_if(const Node& node, const FramePtr& frame, std::string& out);
  void exec_for(const Node& node, const FramePtr& frame, std::string& out);
  void exec_call_block(const Node& node, const FramePtr& frame, std::string& out);
  void assign(const Target& target, const Value& value, Frame& frame, const FramePtr& lookup_frame);
  Value make_macro(const Node& node, const FramePtr& frame);
  Value call_macro(const Node& node, const FramePtr& defining, CallArgs& args);

  Value eval(const Expr& e, const FramePtr& frame);
  Value eval_call(const Expr& e, const FramePtr& frame);
  Value eval_compare(const Expr& e, const FramePtr& frame);
  Value apply_filter_chain(const Expr& chain, const Value& input, const FramePtr& frame);
  CallArgs eval_args(const Expr& e, size_t first, const FramePtr& frame);

  int call_depth_ = 0;                   // nested macro calls, bounded to avoid stack exhaustion
  std::vector<FramePtr> pinned_frames_;  // scopes that macros and callers close over
};

}  // namespace db::chat
