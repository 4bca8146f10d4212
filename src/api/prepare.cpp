#include "api/prepare.h"

#include <algorithm>

#include "api/api_error.h"
#include "bundle/model_bundle.h"
#include "grammar/constraint_compiler.h"
#include "tokenizer/tokenizer.h"

namespace db::api {

namespace {

// The request's output constraint compiled for the model (cached by spec), or none.
std::shared_ptr<const TokenConstraint> compile_constraint(const CommonFields& c, const ModelBundle& bundle) {
  if (!c.guided) return nullptr;
  try {
    return bundle.constraint_compiler().compile(c.guided->spec);
  } catch (const Error& e) {
    throw ApiError(std::string("'") + c.guided->field + "' cannot be followed: " + e.what(), c.guided->field,
                   "invalid_value");
  }
}

EngineRequest engine_request_from(const CommonFields& c, const ModelBundle& bundle) {
  EngineRequest e;
  e.sampling = c.sampling;
  e.sampling.constraint = compile_constraint(c, bundle);
  e.n = c.n;
  e.stop = c.stop;
  e.stop_token_ids = c.stop_token_ids;
  e.ignore_eos = c.ignore_eos;
  e.skip_special_tokens = c.skip_special_tokens;
  e.priority = c.priority;
  e.timeout_seconds = c.timeout;
  return e;
}

void check_logit_bias(const SamplingParams& s, size_t vocab) {
  for (const auto& [id, bias] : s.logit_bias)
    if (static_cast<size_t>(id) >= vocab)
      throw ApiError("'logit_bias' names token id " + std::to_string(id) + ", outside the vocabulary of " +
                         std::to_string(vocab) + " tokens",
                     "logit_bias", "invalid_value");
}

void check_token_ids(const std::vector<int32_t>& ids, size_t vocab, const std::string& param) {
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] < 0 || static_cast<size_t>(ids[i]) >= vocab)
      throw ApiError("'" + param + "' holds token id " + std::to_string(ids[i]) + " at position " + std::to_string(i) +
                         ", outside the vocabulary of " + std::to_string(vocab) + " tokens",
                     param, "invalid_value");
}

// The ids of a prompt text, refused (context_length_exceeded, naming `param`) as soon as
// they leave no room in the context to generate, before the rest of the text is encoded.
std::vector<int32_t> encode_within_context(const Tokenizer& tok, std::string_view text, bool add_special,
                                           int64_t max_context, const std::string& param) {
  const int64_t limit = std::max<int64_t>(max_context - 1, 0);
  auto ids = tok.encode_bounded(text, static_cast<size_t>(limit), add_special, /*parse_special=*/true);
  if (!ids)
    throw ApiError("This model's maximum context length is " + std::to_string(max_context) +
                       " tokens, but the prompt has more than " + std::to_string(limit) +
                       " tokens, leaving no room to generate. Shorten the prompt.",
                   param, "context_length_exceeded");
  return std::move(*ids);
}

}  // namespace

int32_t resolve_max_tokens(int64_t prompt_len, std::optional<int32_t> requested, int64_t default_tokens,
                           int64_t max_context, const std::string& prompt_param) {
  const std::string limit = "This model's maximum context length is " + std::to_string(max_context) + " tokens";
  if (prompt_len >= max_context)
    throw ApiError(limit + ", but the prompt has " + std::to_string(prompt_len) +
                       " tokens, leaving no room to generate. Shorten the prompt.",
                   prompt_param, "context_length_exceeded");
  if (requested) {
    if (prompt_len + *requested > max_context)
      throw ApiError(limit + ". However, you requested " + std::to_string(prompt_len + *requested) + " tokens (" +
                         std::to_string(prompt_len) + " in the prompt, " + std::to_string(*requested) +
                         " for the completion). Reduce the prompt or max_tokens.",
                     "max_tokens", "context_length_exceeded");
    return *requested;
  }
  return static_cast<int32_t>(std::min(default_tokens, max_context - prompt_len));
}

PreparedRequest prepare_completion(const CompletionRequest& req, const ModelBundle& bundle, int64_t max_context) {
  const Tokenizer& tok = bundle.tokenizer();
  check_token_ids(req.common.stop_token_ids, tok.vocab_size(), "stop_token_ids");
  check_logit_bias(req.common.sampling, tok.vocab_size());
  PreparedRequest out;
  for (size_t i = 0; i < req.prompts.size(); ++i) {
    const PromptInput& p = req.prompts[i];
    const std::string param = req.prompts.size() == 1 ? "prompt" : "prompt[" + std::to_string(i) + "]";
    EngineRequest e = engine_request_from(req.common, bundle);
    if (req.best_of > 0) {  // every candidate's logprobs rank them (completion_response)
      e.n = req.best_of;
      if (!e.sampling.logprobs) e.sampling.logprobs = 0;
    }
    if (req.suffix && !bundle.fim_tokens())
      throw ApiError("'suffix' needs a model with fill-in-the-middle tokens, and this one has none", "suffix",
                     "invalid_value");
    if (req.suffix && p.is_tokens)
      throw ApiError("'suffix' needs a text prompt: the prompt and suffix are joined by the model's fill-in-the-middle "
                     "tokens",
                     "suffix", "invalid_value");
    if (p.is_tokens) {
      check_token_ids(p.tokens, tok.vocab_size(), param);
      e.prompt = p.tokens;
    } else {
      const std::string text = req.suffix ? bundle.fim_tokens()->prompt(p.text, *req.suffix) : p.text;
      e.prompt = encode_within_context(tok, text, /*add_special=*/true, max_context, param);
    }
    if (e.prompt.empty()) throw ApiError("'" + param + "' is empty", param, "invalid_value");
    e.max_tokens = resolve_max_tokens(static_cast<int64_t>(e.prompt.size()), req.max_tokens,
                                      kDefaultCompletionMaxTokens, max_context, param);
    std::string echo;
    if (req.echo) echo = p.is_tokens ? tok.decode(p.tokens, req.common.skip_special_tokens) : p.text;
    out.parts.push_back(std::move(e));
    out.echo_texts.push_back(std::move(echo));
  }
  return out;
}

PreparedRequest prepare_chat(const ChatCompletionRequest& req, const ModelBundle& bundle, int64_t max_context) {
  check_token_ids(req.common.stop_token_ids, bundle.tokenizer().vocab_size(), "stop_token_ids");
  check_logit_bias(req.common.sampling, bundle.tokenizer().vocab_size());
  if (!bundle.has_chat_template())
    throw ApiError("the model has no chat template; use /v1/completions with a plain prompt", "messages",
                   "chat_template_missing");
  if (req.tools.choice == ToolRequest::Choice::Auto && bundle.tool_call_format() == chat::ToolCallFormat::None)
    throw ApiError(
        "tool_choice \"auto\" needs a tool-call format, and this model's chat template shows none; pass "
        "tool_choice \"required\" or a named function (the output is then constrained to a valid call), or start "
        "the server with --tool-call-parser",
        "tool_choice", "invalid_value");
  EngineRequest e = engine_request_from(req.common, bundle);
  std::string text;
  try {
    text = bundle.render_chat(req.messages, /*add_generation_prompt=*/true,
                              req.tools.active() ? req.tools.tools : Json(nullptr));
  } catch (const ApiError&) {
    throw;
  } catch (const Error& err) {
    throw ApiError(std::string("the chat template could not render these messages: ") + err.what(), "messages",
                   "invalid_value");
  }
  // A reasoning model thinks freely first; its answer after "</think>" follows the constraint.
  if (e.sampling.constraint && bundle.splits_reasoning())
    e.sampling.constraint_after_token = bundle.reasoning_end_token();
  e.prompt = encode_within_context(bundle.tokenizer(), text, /*add_special=*/false, max_context, "messages");
  if (e.prompt.empty()) throw ApiError("'messages' render to an empty prompt", "messages", "invalid_value");
  e.max_tokens = resolve_max_tokens(static_cast<int64_t>(e.prompt.size()), req.max_tokens, max_context, max_context,
                                    "messages");
  PreparedRequest out;
  out.parts.push_back(std::move(e));
  out.echo_texts.emplace_back();
  return out;
}

}  // namespace db::api
