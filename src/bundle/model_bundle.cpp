#include "bundle/model_bundle.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "chat/chat_template.h"
#include "chat/reasoning_split.h"
#include "grammar/constraint_compiler.h"
#include "io/gguf.h"
#include "io/hf_checkpoint.h"
#include "model/model_source.h"
#include "util/error.h"
#include "util/thread_pool.h"

namespace db {

namespace {

// A message as templates read it: OpenAI's shape, tool_calls and tool_call_id only when set.
nlohmann::ordered_json template_message(const ChatMessage& m, bool arguments_as_text) {
  using OJson = nlohmann::ordered_json;
  OJson msg = {{"role", m.role}, {"content", m.content ? OJson(*m.content) : OJson(nullptr)}};
  if (!m.tool_calls.empty()) {
    OJson calls = OJson::array();
    for (const ToolCall& c : m.tool_calls) {
      OJson args = arguments_as_text ? OJson(c.arguments) : OJson::parse(c.arguments, nullptr, false);
      if (args.is_discarded()) args = c.arguments;
      calls.push_back({{"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", args}}}});
    }
    msg["tool_calls"] = std::move(calls);
  }
  if (!m.tool_call_id.empty()) msg["tool_call_id"] = m.tool_call_id;
  return msg;
}

}  // namespace

ModelBundle::~ModelBundle() = default;

std::unique_ptr<ModelBundle> ModelBundle::open(const std::string& path, int load_threads, const LoadOptions& load) {
  std::unique_ptr<ModelBundle> b(new ModelBundle());
  {
    ThreadPool load_pool(load_threads != 0 ? load_threads : resolve_threads(0));  // throws db::Error when negative
    b->model_ = load_model(path, &load_pool, load);
  }
  b->weight_read_bytes_ = db::weight_read_bytes(*ModelSource::open(path), b->model_->config());
  std::optional<std::string> tmpl;
  if (std::filesystem::is_directory(path)) {
    b->tokenizer_ = Tokenizer::from_hf_dir(path);
    tmpl = hf_chat_template(path);
  } else {
    auto gguf = GGUFFile::open(path);
    b->tokenizer_ = Tokenizer::from_gguf(*gguf);
    tmpl = gguf->opt_string("tokenizer.chat_template");
  }
  if (tmpl) {
    try {
      b->chat_ = std::make_unique<chat::ChatTemplate>(chat::ChatTemplate::parse(*tmpl));
      b->split_reasoning_ = chat::template_thinks(*tmpl);
      b->tool_call_format_ = chat::tool_call_format_of_template(*tmpl);
    } catch (const Error& e) {
      throw Error(path + ": chat template: " + e.what());
    }
  }
  const Tokenizer& tok = *b->tokenizer_;
  b->fim_ = find_fim_tokens(tok);
  if (tok.bos_id() >= 0) b->bos_text_ = tok.token_text(tok.bos_id());
  if (tok.eos_id() >= 0) b->eos_text_ = tok.token_text(tok.eos_id());
  return b;
}

std::string ModelBundle::render_chat(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                                     const nlohmann::ordered_json& tools) const {
  if (!chat_) throw Error("the model has no chat template");
  nlohmann::ordered_json msgs = nlohmann::ordered_json::array();
  // DeepSeek's templates splice arguments in as text and test `content is none`.
  const bool deepseek = tool_call_format_ == chat::ToolCallFormat::DeepSeekV3;
  for (const ChatMessage& m : messages) msgs.push_back(template_message(m, /*arguments_as_text=*/deepseek));
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
  if (!tools.is_null()) extra["tools"] = tools;
  return chat::apply_chat_template(*chat_, msgs, add_generation_prompt, bos_text_, eos_text_, extra,
                                   /*keep_null_call_content=*/deepseek);
}

std::vector<int32_t> ModelBundle::encode_prompt(const std::string& text) const {
  return tokenizer_->encode(text, /*add_special=*/true, /*parse_special=*/true);
}

ConstraintCompiler& ModelBundle::constraint_compiler() const {
  std::call_once(constraints_once_, [&] {
    constraints_ = std::make_unique<ConstraintCompiler>(*tokenizer_, model_->config().vocab);
  });
  return *constraints_;
}

std::vector<int32_t> ModelBundle::encode_chat(const std::vector<ChatMessage>& messages) const {
  return tokenizer_->encode(render_chat(messages, /*add_generation_prompt=*/true), /*add_special=*/false,
                            /*parse_special=*/true);
}

}  // namespace db
