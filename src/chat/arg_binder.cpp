#include "chat/builtins.h"
#include "chat/operators.h"
#include "util/error.h"

namespace db::chat {

ArgBinder::ArgBinder(const char* function, const CallArgs& args, std::initializer_list<const char*> params)
    : args_(args), params_(params) {
  if (args.positional.size() > params_.size()) {
    throw Error(std::string(function) + "() takes at most " + std::to_string(params_.size()) + " argument(s) (" +
                std::to_string(args.positional.size()) + " given)");
  }
  for (const auto& kw : args.keywords) {
    bool known = false;
    for (size_t i = 0; i < params_.size(); ++i) {
      if (kw.first == params_[i]) {
        if (i < args.positional.size()) {
          throw Error(std::string(function) + "() got multiple values for argument '" + kw.first + "'");
        }
        known = true;
      }
    }
    if (!known) throw Error(std::string(function) + "() got an unexpected keyword argument '" + kw.first + "'");
  }
}

const Value* ArgBinder::find(size_t i) const {
  if (i < args_.positional.size() && i < params_.size()) return &args_.positional[i];
  if (i >= params_.size()) return nullptr;
  for (const auto& kw : args_.keywords) {
    if (kw.first == params_[i]) return &kw.second;
  }
  return nullptr;
}

Value ArgBinder::get_or(size_t i, Value fallback) const {
  const Value* v = find(i);
  return v ? *v : std::move(fallback);
}

Value get_attribute_path(const Value& item, const Value& attribute) {
  if (attribute.is_none() || attribute.is_undefined()) return item;
  if (!attribute.is_string()) return ops::getitem(item, attribute);
  Value current = item;
  const std::string& path = attribute.as_string();
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    bool all_digits = !part.empty() && part.size() < 18;
    for (char c : part) all_digits = all_digits && c >= '0' && c <= '9';
    current = all_digits ? ops::getitem(current, Value::integer(std::stoll(part))) : ops::getitem(current, Value::string(part));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return current;
}

}  // namespace db::chat
