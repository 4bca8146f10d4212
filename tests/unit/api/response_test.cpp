// Response bodies: the completion and chat.completion shapes, usage, logprobs,
// choices of several prompts merged in order, streamed pieces concatenated.
#include <gtest/gtest.h>

#include "api/generation_result.h"
#include "api/openai_request.h"
#include "api/response.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/tokenizer.h"

namespace db::api {
namespace {

// A byte-level tokenizer whose id i is the byte i.
std::unique_ptr<Tokenizer> byte_tokenizer() {
  TokenizerParts parts;
  for (int b = 0; b < 256; ++b) parts.tokens.push_back(byte_level::char_of_byte(static_cast<uint8_t>(b)));
  parts.pre_tokenizer.add_byte_level(false, true);
  return Tokenizer::from_parts(parts);
}

PreparedRequest prepared(std::vector<std::pair<size_t, int32_t>> prompt_len_and_n, std::vector<std::string> echo = {}) {
  PreparedRequest p;
  for (auto [len, n] : prompt_len_and_n) {
    EngineRequest e;
    e.prompt.assign(len, 65);
    e.n = n;
    p.parts.push_back(e);
    p.echo_texts.push_back(echo.empty() ? "" : echo[p.parts.size() - 1]);
  }
  return p;
}

SampleOutput piece(int32_t index, const std::string& text, FinishReason finish = FinishReason::None) {
  SampleOutput o;
  o.index = index;
  for (unsigned char c : text) o.new_token_ids.push_back(c);
  o.new_text = text;
  o.finish = finish;
  return o;
}

TEST(GenerationResult, CollectsPiecesAndPartsInOrder) {
  GenerationResult r(prepared({{5, 2}, {3, 1}}));
  RequestStats st;
  EXPECT_FALSE(r.add(1, piece(0, "xy", FinishReason::Length), st, true));
  EXPECT_FALSE(r.add(0, piece(1, "ab"), st, false));
  EXPECT_FALSE(r.add(0, piece(0, "he"), st, false));
  EXPECT_FALSE(r.add(0, piece(1, "c", FinishReason::Stop), st, false));
  EXPECT_TRUE(r.add(0, piece(0, "llo", FinishReason::Length), st, true));
  ASSERT_EQ(r.choices().size(), 3u);
  EXPECT_EQ(r.choices()[0].text, "hello");
  EXPECT_EQ(r.choices()[1].text, "abc");
  EXPECT_EQ(r.choices()[2].text, "xy");
  EXPECT_EQ(r.choices()[1].finish, FinishReason::Stop);
  EXPECT_EQ(r.prompt_tokens(), 8);
  EXPECT_EQ(r.completion_tokens(), 10);
  EXPECT_FALSE(r.failed());
}

TEST(GenerationResult, ErrorOrUnfinishedIsFailed) {
  GenerationResult r(prepared({{2, 1}}));
  EXPECT_TRUE(r.add(0, piece(0, "a", FinishReason::Error), RequestStats{}, true));
  EXPECT_TRUE(r.failed());
  EXPECT_EQ(r.failure_message(), "choice 0: the engine reported an error");
  GenerationResult closed(prepared({{2, 1}}));
  closed.close_part(0);
  EXPECT_TRUE(closed.done());
  EXPECT_TRUE(closed.failed());
  EXPECT_EQ(closed.failure_message(), "choice 0: never finished");
}

TEST(Response, CompletionShape) {
  const auto tok = byte_tokenizer();
  CompletionRequest req = parse_completion_request(Json::parse(R"({"prompt": ["p1", "p2"]})"));
  GenerationResult r(prepared({{2, 1}, {2, 1}}));
  r.add(0, piece(0, "one", FinishReason::Length), RequestStats{}, true);
  r.add(1, piece(0, "two", FinishReason::Stop), RequestStats{}, true);
  const auto j = completion_response(req, r, *tok, {"cmpl-1", 1700000000, "tiny"});
  EXPECT_EQ(j["id"], "cmpl-1");
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["created"], 1700000000);
  EXPECT_EQ(j["model"], "tiny");
  ASSERT_EQ(j["choices"].size(), 2u);
  EXPECT_EQ(j["choices"][0]["index"], 0);
  EXPECT_EQ(j["choices"][0]["text"], "one");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_TRUE(j["choices"][0]["logprobs"].is_null());
  EXPECT_EQ(j["choices"][1]["index"], 1);
  EXPECT_EQ(j["choices"][1]["text"], "two");
  EXPECT_EQ(j["choices"][1]["finish_reason"], "stop");
  EXPECT_EQ(j["usage"]["prompt_tokens"], 4);
  EXPECT_EQ(j["usage"]["completion_tokens"], 6);
  EXPECT_EQ(j["usage"]["total_tokens"], 10);
}

TEST(Response, CompletionEchoAndLogprobs) {
  const auto tok = byte_tokenizer();
  CompletionRequest echo_req = parse_completion_request(Json::parse(R"({"prompt": "Say", "echo": true})"));
  GenerationResult echoed(prepared({{3, 1}}, {"Say"}));
  echoed.add(0, piece(0, " hi", FinishReason::Length), RequestStats{}, true);
  EXPECT_EQ(completion_response(echo_req, echoed, *tok, {"c", 0, "m"})["choices"][0]["text"], "Say hi");

  CompletionRequest req = parse_completion_request(Json::parse(R"({"prompt": "x", "logprobs": 2})"));
  GenerationResult r(prepared({{1, 1}}));
  SampleOutput o = piece(0, "ab", FinishReason::Length);
  o.new_logprobs = {-0.5f, -1.0f};
  o.new_top_logprobs = {{{'a', -0.5f}, {'c', -2.0f}}, {{'b', -1.0f}, {'d', -1.5f}}};
  r.add(0, o, RequestStats{}, true);
  const auto lp = completion_response(req, r, *tok, {"c", 0, "m"})["choices"][0]["logprobs"];
  EXPECT_EQ(lp["tokens"], (nlohmann::ordered_json{"a", "b"}));
  EXPECT_FLOAT_EQ(lp["token_logprobs"][1].get<float>(), -1.0f);
  EXPECT_FLOAT_EQ(lp["top_logprobs"][0]["c"].get<float>(), -2.0f);
  EXPECT_EQ(lp["text_offset"], (nlohmann::ordered_json{0, 1}));
}

TEST(Response, ChatShape) {
  const auto tok = byte_tokenizer();
  ChatCompletionRequest req = parse_chat_request(
      Json::parse(R"({"messages": [{"role": "user", "content": "hi"}], "n": 2, "logprobs": true, "top_logprobs": 1})"));
  GenerationResult r(prepared({{7, 2}}));
  SampleOutput a = piece(0, "Hey", FinishReason::Stop);
  a.new_logprobs = {-0.1f, -0.2f, -0.3f};
  a.new_top_logprobs = {{{'H', -0.1f}}, {{'e', -0.2f}}, {{'y', -0.3f}}};
  SampleOutput b = piece(1, "Yo", FinishReason::Length);
  b.new_logprobs = {-1.0f, -2.0f};
  b.new_top_logprobs = {{{'Y', -1.0f}}, {{'o', -2.0f}}};
  r.add(0, a, RequestStats{}, false);
  r.add(0, b, RequestStats{}, true);
  const auto j = chat_completion_response(req, r, *tok, {"chatcmpl-1", 5, "tiny"});
  EXPECT_EQ(j["object"], "chat.completion");
  ASSERT_EQ(j["choices"].size(), 2u);
  const auto& c0 = j["choices"][0];
  EXPECT_EQ(c0["index"], 0);
  EXPECT_EQ(c0["message"]["role"], "assistant");
  EXPECT_EQ(c0["message"]["content"], "Hey");
  EXPECT_EQ(c0["finish_reason"], "stop");
  ASSERT_EQ(c0["logprobs"]["content"].size(), 3u);
  EXPECT_EQ(c0["logprobs"]["content"][0]["token"], "H");
  EXPECT_EQ(c0["logprobs"]["content"][0]["bytes"], (nlohmann::ordered_json{72}));
  EXPECT_FLOAT_EQ(c0["logprobs"]["content"][2]["logprob"].get<float>(), -0.3f);
  EXPECT_EQ(c0["logprobs"]["content"][1]["top_logprobs"][0]["token"], "e");
  EXPECT_EQ(j["choices"][1]["message"]["content"], "Yo");
  EXPECT_EQ(j["choices"][1]["finish_reason"], "length");
  EXPECT_EQ(j["usage"]["prompt_tokens"], 7);
  EXPECT_EQ(j["usage"]["completion_tokens"], 5);
  EXPECT_EQ(j["usage"]["total_tokens"], 12);
}

TEST(Response, BuildResponseMakesIds) {
  const auto tok = byte_tokenizer();
  const ApiRequest chat = parse_request(Endpoint::ChatCompletions,
                                        Json::parse(R"({"messages": [{"role": "user", "content": "x"}]})"));
  GenerationResult r(prepared({{1, 1}}));
  r.add(0, piece(0, "y", FinishReason::Stop), RequestStats{}, true);
  const auto j = build_response(chat, r, *tok, {"", 1, "m"});
  const std::string id = j["id"];
  EXPECT_EQ(id.rfind("chatcmpl-", 0), 0u);
  EXPECT_EQ(id.size(), std::string("chatcmpl-").size() + 24);
  EXPECT_NE(build_response(chat, r, *tok, {"", 1, "m"})["id"], j["id"]);
}

TEST(Response, FinishReasons) {
  EXPECT_EQ(finish_reason_json(FinishReason::Stop), "stop");
  EXPECT_EQ(finish_reason_json(FinishReason::Length), "length");
  EXPECT_TRUE(finish_reason_json(FinishReason::None).is_null());
}

}  // namespace
}  // namespace db::api
