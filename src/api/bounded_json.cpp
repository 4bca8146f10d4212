#include "api/bounded_json.h"

#include <string>
#include <utility>
#include <vector>

#include "api/api_error.h"
#include "api/json_scan.h"
#include "api/request_fields.h"

namespace db::api {

namespace {

// Builds the DOM from nlohmann's SAX events (as nlohmann's own DOM parser does),
// counting values and applying the request rules; throws ApiError to stop the parse.
class BoundedDomBuilder {
 public:
  BoundedDomBuilder(Json& root, const BodyLimits& limits, std::optional<Endpoint> endpoint)
      : root_(root), limits_(limits), endpoint_(endpoint) {}

  bool null() { return add(nullptr); }
  bool boolean(bool v) { return add(v); }
  bool number_integer(Json::number_integer_t v) { return add_number(v); }
  bool number_unsigned(Json::number_unsigned_t v) { return add_number(v); }
  bool number_float(Json::number_float_t v, const std::string&) { return add_number(v); }
  bool string(std::string& v) {
    count_string_bytes(v.size());
    return add(std::move(v));
  }
  bool binary(Json::binary_t& v) { return add(std::move(v)); }

  bool start_object(size_t) { return open(Json::value_t::object); }
  bool start_array(size_t) { return open(Json::value_t::array); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(std::string& k) {
    count_string_bytes(k.size());
    if (stack_.size() == 1) {
      top_key_ = k;
      if (endpoint_) check_body_key(*endpoint_, k, nullptr);
    }
    slot_ = &(*stack_.back())[k];
    return true;
  }

  bool parse_error(size_t, const std::string&, const nlohmann::detail::exception& e) {
    throw ApiError(std::string(endpoint_ ? "the request body is not valid JSON: " : "not valid JSON: ") + e.what(), "",
                   "invalid_json");
  }

 private:
  template <typename V>
  bool add(V&& v) {
    place(std::forward<V>(v));
    return true;
  }

  template <typename V>
  bool add_number(V v) {
    place(v);
    if (endpoint_ && top_key_ == "prompt") check_prompt_length();
    return true;
  }

  bool open(Json::value_t t) {
    Json* node = place(t);
    stack_.push_back(node);
    if (stack_.size() > static_cast<size_t>(limits_.max_depth))
      throw ApiError("the request nests arrays and objects deeper than " + std::to_string(limits_.max_depth) +
                         " levels",
                     top_key_, "nesting_too_deep");
    return true;
  }

  bool close() {
    stack_.pop_back();
    return true;
  }

  void count_string_bytes(size_t n) {
    string_bytes_ += n;
    if (string_bytes_ > limits_.max_total_string_bytes)
      throw ApiError("the strings of the request add up to more than " +
                         std::to_string(limits_.max_total_string_bytes) + " bytes" + context_note(),
                     top_key_, limits_.context_tokens > 0 ? "context_length_exceeded" : "string_too_long");
  }

  std::string context_note() const {
    if (limits_.context_tokens <= 0) return "";
    return ", more text than a context of " + std::to_string(limits_.context_tokens) + " tokens can hold";
  }

  // Stores a new value where the parse stands; returns it.
  template <typename V>
  Json* place(V&& v) {
    if (++values_ > limits_.max_values)
      throw ApiError("the request holds more than " + std::to_string(limits_.max_values) +
                         " JSON values, more than any request this server can run",
                     top_key_, "too_many_values");
    if (stack_.empty()) {
      root_ = Json(std::forward<V>(v));
      return &root_;
    }
    Json& parent = *stack_.back();
    if (parent.is_array()) {
      auto& items = parent.get_ref<Json::array_t&>();
      items.emplace_back(std::forward<V>(v));
      return &items.back();
    }
    *slot_ = Json(std::forward<V>(v));
    return slot_;
  }

  // A number just joined an array under "prompt": a token-id prompt (depth 2:
  // "prompt": [ids], depth 3: "prompt": [[ids], ...]) may not outgrow the limit.
  void check_prompt_length() {
    if (stack_.size() != 2 && stack_.size() != 3) return;
    const Json& ids = *stack_.back();
    if (!ids.is_array() || ids.size() <= limits_.max_prompt_tokens) return;
    const std::string param =
        stack_.size() == 2 ? "prompt" : "prompt[" + std::to_string(stack_[1]->size() - 1) + "]";
    std::string context;
    if (limits_.context_tokens > 0)
      context = "This model's maximum context length is " + std::to_string(limits_.context_tokens) + " tokens, but ";
    throw ApiError(context + "'" + param + "' holds more than " + std::to_string(limits_.max_prompt_tokens) +
                       " token ids, the most a prompt may have. Shorten the prompt.",
                   param, "context_length_exceeded");
  }

  Json& root_;
  const BodyLimits& limits_;
  std::optional<Endpoint> endpoint_;  // set: apply the rules of a request body of this endpoint
  std::vector<Json*> stack_;          // open containers, outermost first
  Json* slot_ = nullptr;              // the object member the next value fills
  std::string top_key_;               // the top-level key the parse is inside ("" before the first)
  size_t values_ = 0;
  size_t string_bytes_ = 0;  // over all strings and keys so far
};

Json parse_bounded(std::string_view text, const BodyLimits& limits, std::optional<Endpoint> endpoint) {
  scan_json_bounds(text, limits);
  Json root;
  BoundedDomBuilder builder(root, limits, endpoint);
  Json::sax_parse(text.begin(), text.end(), &builder);
  return root;
}

}  // namespace

Json parse_json_bounded(std::string_view text, const BodyLimits& limits) {
  return parse_bounded(text, limits, std::nullopt);
}

Json parse_request_json(Endpoint endpoint, std::string_view text, const BodyLimits& limits) {
  return parse_bounded(text, limits, endpoint);
}

}  // namespace db::api
