// The generation handler against the real engine and the default model, answered
// through the in-memory responder (no sockets).
#include "server/generation_call.h"

#include <gtest/gtest.h>

#include "recording_responder.h"
#include "sse_parse.h"
#include "test_model.h"

namespace db::server {
namespace {

using testing::parse_sse;
using testing::RecordingResponder;
using testing::test_bundle;

class GenerationCallTest : public ::testing::Test {
 protected:
  static EngineConfig engine_config() {
    EngineConfig c;
    c.threads = 2;
    c.max_num_seqs = 8;
    c.kv_cache_memory = 16 << 20;
    return c;
  }

  GenerationCallTest()
      : engine_(test_bundle(), engine_config()),
        config_(make_config()),
        metrics_("tiny"),
        tracker_(engine_),
        queue_(2),
        quotas_(tenants_),
        ctx_{engine_, test_bundle(), config_, metrics_, tracker_, queue_, tenants_, quotas_} {}

  static ServeConfig make_config() {
    ServeConfig c;
    c.model_name = "tiny";
    c.max_context = 2048;
    return c;
  }

  // Posts `body` to `ep` and waits for the whole answer.
  std::shared_ptr<RecordingResponder> call(api::Endpoint ep, const std::string& body) {
    auto res = std::make_shared<RecordingResponder>();
    http::Request req;
    req.method = "POST";
    req.path = api::endpoint_url(ep);
    req.body = body;
    handle_generation(ctx_, ep, std::move(req), res);
    EXPECT_TRUE(res->wait_done()) << body;
    return res;
  }

  nlohmann::json error_of(const RecordingResponder& res) {
    auto j = nlohmann::json::parse(res.body());
    EXPECT_TRUE(j.contains("error")) << res.body();
    for (const char* k : {"message", "type", "param", "code"}) EXPECT_TRUE(j["error"].contains(k)) << k;
    return j["error"];
  }

  void expect_pool_free() {
    engine_.wait_idle();
    const EngineStats s = engine_.stats();
    EXPECT_EQ(s.running, 0);
    EXPECT_EQ(s.waiting, 0);
    EXPECT_EQ(s.free_blocks, s.num_blocks - 1);  // all but the null block
    EXPECT_TRUE(tracker_.wait_all_closed(10));
  }

  Engine engine_;
  ServeConfig config_;
  ServerMetrics metrics_;
  RequestTracker tracker_;
  WorkQueue queue_;
  TenantRegistry tenants_;
  TenantQuotas quotas_;
  ServerContext ctx_;
};

TEST_F(GenerationCallTest, CompletionNonStreamingAnswersOpenAIShape) {
  auto res = call(api::Endpoint::Completions, R"({"model": "tiny", "prompt": "The capital of France is",
                                                  "max_tokens": 5, "n": 2, "temperature": 0})");
  ASSERT_EQ(res->status(), 200) << res->body();
  const auto j = nlohmann::json::parse(res->body());
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["model"], "tiny");
  ASSERT_EQ(j["choices"].size(), 2u);
  EXPECT_EQ(j["choices"][0]["text"], j["choices"][1]["text"]);  // greedy: both samples agree
  EXPECT_EQ(j["choices"][1]["index"], 1);
  EXPECT_EQ(j["usage"]["completion_tokens"], 10);
  expect_pool_free();
}

TEST_F(GenerationCallTest, StreamedChatDeltasEqualTheNonStreamedMessage) {
  const std::string body = R"({"messages": [{"role": "user", "content": "Name a color."}], "max_tokens": 12,
                               "temperature": 0)";
  auto plain = call(api::Endpoint::ChatCompletions, body + "}");
  ASSERT_EQ(plain->status(), 200) << plain->body();
  const std::string expected = nlohmann::json::parse(plain->body())["choices"][0]["message"]["content"];
  auto streamed = call(api::Endpoint::ChatCompletions, body + R"(, "stream": true})");
  ASSERT_TRUE(streamed->streamed());
  const auto s = parse_sse(streamed->body());
  EXPECT_TRUE(s.done);
  std::string text;
  for (const auto& c : s.chunks)
    if (c["choices"][0]["delta"].contains("content")) text += c["choices"][0]["delta"]["content"].get<std::string>();
  EXPECT_EQ(text, expected);
  EXPECT_FALSE(expected.empty());
}

TEST_F(GenerationCallTest, BadRequestsGetOpenAIErrors) {
  auto broken = call(api::Endpoint::Completions, R"({"prompt": "x", )");
  EXPECT_EQ(broken->status(), 400);
  EXPECT_EQ(error_of(*broken)["code"], "invalid_json");

  auto wrong_type = call(api::Endpoint::Completions, R"({"prompt": "x", "max_tokens": "many"})");
  EXPECT_EQ(wrong_type->status(), 400);
  EXPECT_EQ(error_of(*wrong_type)["param"], "max_tokens");

  auto not_object = call(api::Endpoint::ChatCompletions, "[1, 2]");
  EXPECT_EQ(not_object->status(), 400);

  auto model = call(api::Endpoint::Completions, R"({"model": "other", "prompt": "x"})");
  EXPECT_EQ(model->status(), 404);
  EXPECT_EQ(error_of(*model)["code"], "model_not_found");

  std::string long_prompt;
  for (int i = 0; i < 3000; ++i) long_prompt += " word";
  auto too_long = call(api::Endpoint::Completions, R"({"prompt": ")" + long_prompt + R"(", "max_tokens": 4})");
  EXPECT_EQ(too_long->status(), 400);
  EXPECT_EQ(error_of(*too_long)["code"], "context_length_exceeded");

  auto bad_utf8 = call(api::Endpoint::Completions, "{\"prompt\": \"\xff\xfe\"}");
  EXPECT_EQ(bad_utf8->status(), 400);
  expect_pool_free();
}

TEST_F(GenerationCallTest, ClientGoneMidStreamAbortsAndFreesTheCache) {
  auto res = std::make_shared<RecordingResponder>();
  http::Request req;
  req.body = R"({"prompt": "Once upon a time", "max_tokens": 400, "ignore_eos": true, "stream": true, "n": 3})";
  handle_generation(ctx_, api::Endpoint::Completions, std::move(req), res);
  ASSERT_TRUE(res->wait_chunks(4));
  res->disconnect();
  expect_pool_free();
  EXPECT_EQ(tracker_.open_count(), 0u);
  EXPECT_EQ(tracker_.client_disconnects(), 1);
  EXPECT_LT(engine_.stats().generated_tokens, 3 * 400);
}

TEST_F(GenerationCallTest, ClientGoneBeforeTheAnswerAbortsToo) {
  auto res = std::make_shared<RecordingResponder>();
  http::Request req;
  req.body = R"({"prompt": "Once upon a time", "max_tokens": 400, "ignore_eos": true})";
  handle_generation(ctx_, api::Endpoint::Completions, std::move(req), res);
  res->disconnect();  // possibly before the worker even parsed it
  expect_pool_free();
  EXPECT_EQ(tracker_.open_count(), 0u);
  EXPECT_EQ(res->status(), 0);
}

TEST_F(GenerationCallTest, ATimeoutThatPassesIs408) {
  auto res = call(api::Endpoint::Completions,
                  R"({"prompt": "Once upon a time", "max_tokens": 600, "ignore_eos": true, "timeout": 0.001})");
  ASSERT_EQ(res->status(), 408) << res->body();
  const auto err = error_of(*res);
  EXPECT_EQ(err["code"], "request_timeout");
  EXPECT_EQ(err["type"], "timeout_error");
  EXPECT_EQ(err["param"], "timeout");
  expect_pool_free();
}

}  // namespace
}  // namespace db::server
