#include "sample/sampling_params.h"

#include <cmath>
#include <sstream>
#include <string>

#include "util/error.h"

namespace db {
namespace {

template <typename T>
[[noreturn]] void reject(const char* name, const char* range, T value) {
  std::ostringstream os;
  os << "sampling parameter '" << name << "' must be " << range << ", got " << value;
  throw Error(os.str());
}

void check_range(const char* name, float value, float lo, float hi, const char* range) {
  if (!std::isfinite(value) || value < lo || value > hi) reject(name, range, value);
}

}  // namespace

void SamplingParams::validate() const {
  if (!std::isfinite(temperature) || temperature < 0.0f) reject("temperature", "a finite number >= 0", temperature);
  if (top_k < -1) reject("top_k", "-1 or 0 (off) or a positive count", top_k);
  if (!std::isfinite(top_p) || top_p <= 0.0f || top_p > 1.0f) reject("top_p", "in (0, 1]", top_p);
  check_range("min_p", min_p, 0.0f, 1.0f, "in [0, 1]");
  if (!std::isfinite(repetition_penalty) || repetition_penalty <= 0.0f)
    reject("repetition_penalty", "a finite number > 0", repetition_penalty);
  check_range("presence_penalty", presence_penalty, -2.0f, 2.0f, "in [-2, 2]");
  check_range("frequency_penalty", frequency_penalty, -2.0f, 2.0f, "in [-2, 2]");
  if (logit_bias.size() > kMaxLogitBiasTokens)
    reject("logit_bias", ("at most " + std::to_string(kMaxLogitBiasTokens) + " tokens").c_str(),
           static_cast<double>(logit_bias.size()));
  for (const auto& [id, bias] : logit_bias) {
    if (id < 0) reject("logit_bias", "token ids >= 0", id);
    check_range("logit_bias", bias, -kMaxLogitBias, kMaxLogitBias, "biases in [-100, 100]");
  }
  if (logprobs && (*logprobs < 0 || *logprobs > kMaxLogprobs))
    reject("logprobs", ("in [0, " + std::to_string(kMaxLogprobs) + "]").c_str(), *logprobs);
  if (prompt_logprobs && (*prompt_logprobs < 0 || *prompt_logprobs > kMaxLogprobs))
    reject("prompt_logprobs", ("in [0, " + std::to_string(kMaxLogprobs) + "]").c_str(), *prompt_logprobs);
}

}  // namespace db
