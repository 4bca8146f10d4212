#include "api/request_common.h"

#include <algorithm>
#include <cmath>

#include "api/api_error.h"
#include "api/guided_fields.h"

namespace db::api {

namespace {

std::vector<std::string> parse_stop(const Json& body) {
  const Json* v = find_field(body, "stop");
  if (!v) return {};
  std::vector<std::string> out;
  if (v->is_string()) {
    out.push_back(v->get<std::string>());
  } else if (v->is_array()) {
    for (size_t i = 0; i < v->size(); ++i) {
      const Json& s = (*v)[i];
      const std::string param = "stop[" + std::to_string(i) + "]";
      if (!s.is_string())
        throw ApiError("'" + param + "' must be a string, got " + json_type_name(s), param, "invalid_type");
      out.push_back(s.get<std::string>());
    }
  } else {
    throw ApiError("'stop' must be a string or a list of strings, got " + json_type_name(*v), "stop", "invalid_type");
  }
  for (const std::string& s : out)
    if (s.empty()) throw ApiError("'stop' must not contain empty strings", "stop", "invalid_value");
  return out;
}

std::vector<int32_t> parse_stop_token_ids(const Json& body) {
  const Json* v = find_field(body, "stop_token_ids");
  if (!v) return {};
  if (!v->is_array())
    throw ApiError("'stop_token_ids' must be a list of integers, got " + json_type_name(*v), "stop_token_ids",
                   "invalid_type");
  std::vector<int32_t> out;
  for (size_t i = 0; i < v->size(); ++i) {
    const std::string param = "stop_token_ids[" + std::to_string(i) + "]";
    const Json wrapper = {{"id", (*v)[i]}};
    const std::optional<int64_t> id = opt_integer(wrapper, "id", 0, INT32_MAX, param);
    if (!id) throw ApiError("'" + param + "' must be an integer, got null", param, "invalid_type");
    out.push_back(static_cast<int32_t>(*id));
  }
  return out;
}

std::optional<uint64_t> parse_seed(const Json& body) {
  const Json* v = find_field(body, "seed");
  if (!v) return std::nullopt;
  if (v->is_number_unsigned()) return v->get<uint64_t>();
  if (v->is_number_integer()) return static_cast<uint64_t>(v->get<int64_t>());
  if (v->is_number_float()) {
    const double d = v->get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e18)
      return static_cast<uint64_t>(static_cast<int64_t>(d));
  }
  throw ApiError("'seed' must be an integer, got " + json_type_name(*v), "seed", "invalid_type");
}

// "logit_bias": {"<token id>": bias, ...}, ids as decimal strings, biases in [-100, 100].
std::vector<std::pair<int32_t, float>> parse_logit_bias(const Json& v) {
  if (!v.is_object())
    throw ApiError("'logit_bias' must be an object mapping token ids to biases, got " + json_type_name(v),
                   "logit_bias", "invalid_type");
  if (v.size() > kMaxLogitBiasTokens)
    throw ApiError("'logit_bias' may name at most " + std::to_string(kMaxLogitBiasTokens) + " tokens, got " +
                       std::to_string(v.size()),
                   "logit_bias", "invalid_value");
  std::vector<std::pair<int32_t, float>> out;
  for (auto it = v.begin(); it != v.end(); ++it) {
    const std::string& key = it.key();
    const bool digits = !key.empty() && key.size() <= 10 &&
                        std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; });
    const long long id = digits ? std::stoll(key) : -1;
    if (id < 0 || id > INT32_MAX)
      throw ApiError("'logit_bias' keys must be token ids (decimal integers), got '" + key.substr(0, 32) + "'",
                     "logit_bias", "invalid_value");
    const std::string param = "logit_bias." + key;
    if (!it.value().is_number())
      throw ApiError("'" + param + "' must be a number, got " + json_type_name(it.value()), param, "invalid_type");
    const double bias = it.value().get<double>();
    check_number_range(bias, -kMaxLogitBias, kMaxLogitBias, param, "in [-100, 100]");
    out.emplace_back(static_cast<int32_t>(id), static_cast<float>(bias));
  }
  return out;
}

void parse_sampling(const Json& body, SamplingParams& p) {
  if (const Json* lb = find_field(body, "logit_bias")) p.logit_bias = parse_logit_bias(*lb);
  if (auto v = opt_number(body, "temperature")) {
    check_number_range(*v, 0.0, 2.0, "temperature", "in [0, 2]");
    p.temperature = static_cast<float>(*v);
  }
  if (auto v = opt_number(body, "top_p")) {
    // Checked as the float the sampler gets: a tiny positive double rounds to 0.
    const float top_p = static_cast<float>(*v);
    if (!(top_p > 0.0f && top_p <= 1.0f)) reject_value("top_p", "in (0, 1]", *v);
    p.top_p = top_p;
  }
  if (auto v = opt_integer(body, "top_k", -1, INT32_MAX)) p.top_k = static_cast<int32_t>(*v);
  if (auto v = opt_number(body, "min_p")) {
    check_number_range(*v, 0.0, 1.0, "min_p", "in [0, 1]");
    p.min_p = static_cast<float>(*v);
  }
  if (auto v = opt_number(body, "presence_penalty")) {
    check_number_range(*v, -2.0, 2.0, "presence_penalty", "in [-2, 2]");
    p.presence_penalty = static_cast<float>(*v);
  }
  if (auto v = opt_number(body, "frequency_penalty")) {
    check_number_range(*v, -2.0, 2.0, "frequency_penalty", "in [-2, 2]");
    p.frequency_penalty = static_cast<float>(*v);
  }
  if (auto v = opt_number(body, "repetition_penalty")) {
    // Bounded so that the value stays a finite, non-zero float (SamplingParams::validate).
    check_number_range(*v, 1e-6, 100.0, "repetition_penalty", "in [1e-6, 100]");
    p.repetition_penalty = static_cast<float>(*v);
  }
  p.seed = parse_seed(body);
}

// "timeout": a finite number of seconds in (0, kMaxRequestTimeoutSeconds] (an extension:
// OpenAI's API has no per-request deadline in the body).
double parse_timeout(const Json& body) {
  const std::optional<double> v = opt_number(body, "timeout");
  if (!v) return 0;
  if (!(*v > 0 && *v <= kMaxRequestTimeoutSeconds)) reject_value("timeout", "a number of seconds in (0, 1e6]", *v);
  return *v;
}

}  // namespace

void require_object(const Json& body) {
  if (!body.is_object())
    throw ApiError("the request body must be a JSON object, got " + json_type_name(body), "", "invalid_type");
}

CommonFields parse_common_fields(const Json& body) {
  require_object(body);
  CommonFields c;
  c.model = opt_string(body, "model").value_or("");
  parse_sampling(body, c.sampling);
  c.n = static_cast<int32_t>(opt_integer(body, "n", 1, kMaxSamplesPerPrompt).value_or(1));
  c.stop = parse_stop(body);
  c.stop_token_ids = parse_stop_token_ids(body);
  c.ignore_eos = opt_bool(body, "ignore_eos").value_or(false);
  c.skip_special_tokens = opt_bool(body, "skip_special_tokens").value_or(true);
  const std::optional<int64_t> priority = opt_integer(body, "priority", 0, 2);
  c.priority = static_cast<int>(priority.value_or(1));
  c.priority_given = priority.has_value();
  c.stream = opt_bool(body, "stream").value_or(false);
  if (const Json* so = find_field(body, "stream_options")) {
    if (!so->is_object())
      throw ApiError("'stream_options' must be an object, got " + json_type_name(*so), "stream_options",
                     "invalid_type");
    c.stream_include_usage = opt_bool(*so, "include_usage", "stream_options.include_usage").value_or(false);
    if (!c.stream)
      throw ApiError("'stream_options' is only allowed when 'stream' is true", "stream_options", "invalid_value");
  }
  c.user = opt_string(body, "user").value_or("");
  c.timeout = parse_timeout(body);
  c.guided = parse_guided_fields(body);
  if (c.guided && c.ignore_eos)
    throw ApiError("'ignore_eos' cannot be combined with a constrained output: the constraint ends the output "
                   "with an end-of-generation token",
                   "ignore_eos", "invalid_value");
  return c;
}

std::optional<int32_t> parse_max_tokens(const Json& body, const char* key) {
  auto v = opt_integer(body, key, 1, INT32_MAX);
  if (!v) return std::nullopt;
  return static_cast<int32_t>(*v);
}

}  // namespace db::api
