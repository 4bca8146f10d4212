// Turns the engine outputs of one streamed API request into server-sent events
// on its Responder: chat streams start every choice with a role chunk, then send
// content deltas and a finish chunk; completions streams send text chunks (the echo
// first; with logprobs, the echo goes out with the prompt's logprobs once they come). After the last output: the usage chunk (stream_options.include_usage), an
// error event {"error": {...}} when the engine ended the request for time (its
// deadline, or the queue's limit: see api/timeout_error.h), and "data: [DONE]".
// Thread-safe.
#pragma once
#include <memory>
#include <mutex>
#include <vector>

#include "api/openai_request.h"
#include "api/tool_call_output.h"
#include "chat/reasoning_split.h"
#include "http/responder.h"

namespace db {
class Tokenizer;
}

namespace db::server {

class StreamWriter {
 public:
  // `tok` must outlive the writer.
  StreamWriter(const api::ApiRequest& req, const api::PreparedRequest& prepared, const Tokenizer& tok,
               api::ResponseMeta meta, std::shared_ptr<http::Responder> res);

  // Starts the 200 event stream and writes the opening chunks.
  void begin();
  // Writes the chunks of one engine output of part `part`. Returns true once every
  // part had its final output (the stream has then been ended).
  bool add(size_t part, const SampleOutput& out, const RequestStats& stats, bool final);

 private:
  nlohmann::ordered_json logprobs_delta(size_t choice, const SampleOutput& out);
  void write_choice_chunk(size_t choice, const SampleOutput& out);
  // The scored prompt of part `part`, to each of its choices (the echo text with the first piece).
  void write_prompt_chunks(size_t part, const SampleOutput& out);
  // A chat delta for new text: split into reasoning_content, content and tool_calls.
  nlohmann::ordered_json chat_delta(size_t choice, const SampleOutput& out);
  void finish_stream();

  std::mutex mu_;
  bool chat_;
  bool want_logprobs_;
  bool include_usage_;
  double timeout_;                    // the request's "timeout" (0: none), named in a timeout's error event
  const Tokenizer& tok_;
  api::ResponseMeta meta_;
  std::shared_ptr<http::Responder> res_;
  api::GenerationResult result_;      // everything so far (usage)
  std::vector<size_t> first_choice_;  // per part: index of its first choice
  std::vector<std::string> echo_;     // per choice: echo text sent in the opening chunk
  std::vector<size_t> text_offset_;   // per choice: completions logprobs text_offset of the next token
  bool echo_scored_ = false;          // completions with echo and logprobs: the echo waits for its logprobs
  std::vector<size_t> prompt_offset_; // per choice: text_offset of the next scored prompt token
  std::vector<int32_t> part_n_;       // per part: choices
  std::vector<chat::ReasoningStreamSplitter> reasoning_;  // per choice, when meta_.split_reasoning
  std::vector<api::ToolCallExtractor> tools_;              // per choice, when the request's tools are active
  bool ended_ = false;
};

}  // namespace db::server
