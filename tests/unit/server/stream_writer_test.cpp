#include "server/stream_writer.h"

#include <gtest/gtest.h>

#include "recording_responder.h"
#include "sse_parse.h"
#include "test_model.h"

namespace db::server {
namespace {

using testing::parse_sse;
using testing::RecordingResponder;
using testing::test_bundle;

struct Fixture {
  api::ApiRequest req;
  api::PreparedRequest prepared;
  std::shared_ptr<RecordingResponder> res = std::make_shared<RecordingResponder>();
  std::unique_ptr<StreamWriter> writer;

  Fixture(api::Endpoint ep, const char* body) {
    req = api::parse_request(ep, api::Json::parse(body));
    prepared = api::prepare_request(req, test_bundle(), 2048);
    api::ResponseMeta meta{"id-1", 123, "tiny"};
    writer = std::make_unique<StreamWriter>(req, prepared, test_bundle().tokenizer(), meta, res);
  }
};

SampleOutput output(int index, std::vector<int32_t> ids, std::string text, FinishReason finish = FinishReason::None) {
  SampleOutput o;
  o.index = index;
  o.new_token_ids = std::move(ids);
  o.new_text = std::move(text);
  o.finish = finish;
  return o;
}

TEST(StreamWriter, ChatStreamsRoleThenDeltasThenFinishAndUsage) {
  Fixture f(api::Endpoint::ChatCompletions,
            R"({"messages": [{"role": "user", "content": "hi"}], "n": 2, "stream": true,
                "stream_options": {"include_usage": true}})");
  f.writer->begin();
  RequestStats st;
  EXPECT_FALSE(f.writer->add(0, output(0, {10, 11}, "Hel"), st, false));
  EXPECT_FALSE(f.writer->add(0, output(1, {12}, "Yo", FinishReason::Length), st, false));
  EXPECT_TRUE(f.writer->add(0, output(0, {13}, "lo", FinishReason::Stop), st, true));
  EXPECT_EQ(f.res->status(), 200);
  EXPECT_EQ(f.res->header("Content-Type"), "text/event-stream");
  EXPECT_TRUE(f.res->ended());

  const auto s = parse_sse(f.res->body());
  ASSERT_TRUE(s.done);
  ASSERT_EQ(s.chunks.size(), 6u);  // 2 role chunks, 3 deltas, usage
  std::string text[2];
  std::string finish[2];
  for (size_t i = 0; i + 1 < s.chunks.size(); ++i) {
    const auto& c = s.chunks[i];
    EXPECT_EQ(c["object"], "chat.completion.chunk");
    EXPECT_EQ(c["id"], "id-1");
    EXPECT_TRUE(c.contains("usage") && c["usage"].is_null());
    const auto& choice = c["choices"][0];
    const int idx = choice["index"];
    if (i < 2) {
      EXPECT_EQ(choice["delta"]["role"], "assistant");
    }
    if (choice["delta"].contains("content")) text[idx] += choice["delta"]["content"].get<std::string>();
    if (!choice["finish_reason"].is_null()) finish[idx] = choice["finish_reason"];
  }
  EXPECT_EQ(text[0], "Hello");
  EXPECT_EQ(text[1], "Yo");
  EXPECT_EQ(finish[0], "stop");
  EXPECT_EQ(finish[1], "length");
  const auto& usage = s.chunks.back();
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["completion_tokens"], 4);
  EXPECT_EQ(usage["usage"]["total_tokens"], usage["usage"]["prompt_tokens"].get<int>() + 4);
}

TEST(StreamWriter, CompletionsStreamSendsTheEchoFirst) {
  Fixture f(api::Endpoint::Completions, R"({"prompt": "Hello", "echo": true, "n": 2, "stream": true})");
  f.writer->begin();
  RequestStats st;
  f.writer->add(0, output(1, {7}, " x", FinishReason::Length), st, false);
  EXPECT_TRUE(f.writer->add(0, output(0, {7}, " y", FinishReason::Length), st, true));
  const auto s = parse_sse(f.res->body());
  ASSERT_EQ(s.chunks.size(), 4u);
  EXPECT_EQ(s.chunks[0]["choices"][0]["text"], "Hello");
  EXPECT_EQ(s.chunks[1]["choices"][0]["text"], "Hello");
  EXPECT_EQ(s.chunks[1]["choices"][0]["index"], 1);
  EXPECT_EQ(s.chunks[2]["choices"][0]["text"], " x");
  EXPECT_EQ(s.chunks[2]["choices"][0]["index"], 1);
}

TEST(StreamWriter, CompletionsStreamLogprobOffsetsContinue) {
  Fixture f(api::Endpoint::Completions, R"({"prompt": "Hello", "logprobs": 1, "stream": true})");
  f.writer->begin();
  const Tokenizer& tok = test_bundle().tokenizer();
  const std::vector<int32_t> ids = tok.encode(" world again", false);
  ASSERT_GE(ids.size(), 2u);
  RequestStats st;
  SampleOutput a = output(0, {ids[0]}, tok.decode({ids[0]}, false));
  a.new_logprobs = {-0.5f};
  a.new_top_logprobs = {{{ids[0], -0.5f}}};
  SampleOutput b = output(0, {ids[1]}, tok.decode({ids[1]}, false), FinishReason::Length);
  b.new_logprobs = {-1.5f};
  b.new_top_logprobs = {{{ids[1], -1.5f}}};
  f.writer->add(0, a, st, false);
  EXPECT_TRUE(f.writer->add(0, b, st, true));

  const auto s = parse_sse(f.res->body());
  ASSERT_TRUE(s.done);
  ASSERT_EQ(s.chunks.size(), 2u);
  const auto& lp1 = s.chunks[0]["choices"][0]["logprobs"];
  const auto& lp2 = s.chunks[1]["choices"][0]["logprobs"];
  EXPECT_EQ(lp1["text_offset"][0], 0);
  EXPECT_EQ(lp2["text_offset"][0], lp1["tokens"][0].get<std::string>().size());
  EXPECT_FLOAT_EQ(lp2["token_logprobs"][0].get<float>(), -1.5f);
  EXPECT_EQ(lp2["top_logprobs"][0].size(), 1u);
  EXPECT_EQ(s.chunks[1]["choices"][0]["finish_reason"], "length");
  EXPECT_FALSE(s.chunks[1].contains("usage"));  // not asked for
}

TEST(StreamWriter, OutputsWithoutTextOrFinishSendNothing) {
  Fixture f(api::Endpoint::Completions, R"({"prompt": "Hello", "stream": true})");
  f.writer->begin();
  RequestStats st;
  f.writer->add(0, output(0, {5}, ""), st, false);  // half a UTF-8 character: no text yet
  f.writer->add(0, output(0, {6}, "é", FinishReason::Stop), st, true);
  const auto s = parse_sse(f.res->body());
  ASSERT_EQ(s.chunks.size(), 1u);
  EXPECT_EQ(s.chunks[0]["choices"][0]["text"], "é");
  EXPECT_TRUE(s.done);
}

TEST(StreamWriter, ATimedOutRequestEndsWithAnErrorEventThenDone) {
  Fixture f(api::Endpoint::ChatCompletions,
            R"({"messages": [{"role": "user", "content": "hi"}], "stream": true, "timeout": 0.5,
                "stream_options": {"include_usage": true}})");
  f.writer->begin();
  RequestStats st;
  f.writer->add(0, output(0, {10}, "Hel"), st, false);
  EXPECT_TRUE(f.writer->add(0, output(0, {}, "", FinishReason::Timeout), st, true));
  EXPECT_EQ(f.res->status(), 200);  // the headers went out before the deadline passed
  const auto s = parse_sse(f.res->body());
  ASSERT_TRUE(s.done);
  ASSERT_GE(s.chunks.size(), 2u);
  const auto& err = s.chunks.back()["error"];
  EXPECT_EQ(err["code"], "request_timeout");
  EXPECT_EQ(err["type"], "timeout_error");
  EXPECT_NE(err["message"].get<std::string>().find("0.5 s"), std::string::npos) << err;
  EXPECT_TRUE(s.chunks[s.chunks.size() - 2].contains("usage"));  // usage still comes before the error
}

TEST(StreamWriter, AQueueTimeoutEndsWithAnErrorEvent) {
  Fixture f(api::Endpoint::Completions, R"({"prompt": "Hello", "stream": true})");
  f.writer->begin();
  SampleOutput out = output(0, {}, "", FinishReason::QueueTimeout);
  out.stop_reason = "waited too long";
  EXPECT_TRUE(f.writer->add(0, out, RequestStats{}, true));
  const auto s = parse_sse(f.res->body());
  ASSERT_TRUE(s.done);
  EXPECT_EQ(s.chunks.back()["error"]["code"], "queue_timeout");
}

}  // namespace
}  // namespace db::server
