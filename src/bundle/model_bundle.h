// Everything needed to turn text into text with one model: the network, its
// tokenizer and its chat template, opened from one GGUF file or one Hugging
// Face checkpoint directory.
#pragma once
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chat/chat_message.h"
#include "chat/reasoning_split.h"
#include "chat/tool_call_format.h"
#include "model/model.h"
#include "model/weight_read_bytes.h"
#include "tokenizer/fim_tokens.h"
#include "tokenizer/tokenizer.h"

namespace db {

class ConstraintCompiler;

namespace chat {
class ChatTemplate;
}

class ModelBundle {
 public:
  // Throws db::Error naming the file when the model, tokenizer or template cannot be read.
  // The weights are prepared on a pool of `load_threads` threads (0 = one per
  // online core) that lives only while the model loads; `load` as load_model takes it.
  static std::unique_ptr<ModelBundle> open(const std::string& path, int load_threads = 0,
                                           const LoadOptions& load = {});
  ~ModelBundle();

  Model& model() { return *model_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  // The weight bytes a step reads (for the roofline gauge).
  const WeightReadBytes& weight_read_bytes() const { return weight_read_bytes_; }
  bool has_chat_template() const { return chat_ != nullptr; }
  // The model's fill-in-the-middle tokens, when its vocabulary has them.
  const std::optional<FimTokens>& fim_tokens() const { return fim_; }
  // The conversation rendered by the model's chat template (throws db::Error when
  // the model has none or the template raises). `tools` (OpenAI's list of
  // {"type": "function", "function": {...}}) becomes the template's `tools`
  // variable when not null. Tool-call arguments reach the template as JSON
  // objects, as Hugging Face templates expect, except in the deepseek_v3 format,
  // whose templates splice them in as text.
  std::string render_chat(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                          const nlohmann::ordered_json& tools = nullptr) const;
  // Prompt ids for raw text: BOS/EOS added as the model asks, special tokens parsed.
  std::vector<int32_t> encode_prompt(const std::string& text) const;
  // Whether chat answers split "<think>" reasoning into reasoning_content
  // (chat/reasoning_split.h): by default when the chat template shows the model
  // thinks; set_reasoning_split overrides it (call before serving).
  bool splits_reasoning() const { return split_reasoning_; }
  void set_reasoning_split(bool on) { split_reasoning_ = on; }
  // The token that ends a reasoning model's thinking ("</think>" as one token), or -1.
  // A chat answer's constraint applies after it when the answers are split.
  int32_t reasoning_end_token() const { return tokenizer_->token_id(chat::kThinkClose); }
  // How the model writes tool calls (chat/tool_call_format.h): by default the format
  // whose markers the chat template renders; set_tool_call_format overrides it
  // (call before serving).
  chat::ToolCallFormat tool_call_format() const { return tool_call_format_; }
  void set_tool_call_format(chat::ToolCallFormat f) { tool_call_format_ = f; }
  // Compiles output constraints (JSON schemas, grammars) for this model's vocabulary;
  // made on first use (it reads the whole vocabulary), then shared. Thread-safe.
  ConstraintCompiler& constraint_compiler() const;
  // Prompt ids for a conversation: the rendered template already holds any BOS.
  std::vector<int32_t> encode_chat(const std::vector<ChatMessage>& messages) const;

 private:
  ModelBundle() = default;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Tokenizer> tokenizer_;
  WeightReadBytes weight_read_bytes_;
  std::unique_ptr<chat::ChatTemplate> chat_;
  std::string bos_text_, eos_text_;  // values of bos_token / eos_token in the template
  std::optional<FimTokens> fim_;
  bool split_reasoning_ = false;
  chat::ToolCallFormat tool_call_format_ = chat::ToolCallFormat::None;
  mutable std::once_flag constraints_once_;
  mutable std::unique_ptr<ConstraintCompiler> constraints_;
};

}  // namespace db
