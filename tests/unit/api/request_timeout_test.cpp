// "timeout" in a generation request body, and the error a request the engine ended
// for time gets (api/timeout_error.h).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "api/api_error.h"
#include "api/openai_request.h"
#include "api/timeout_error.h"

namespace db::api {
namespace {

Json chat_with(const std::string& timeout) {
  return Json::parse(R"({"messages": [{"role": "user", "content": "Hi"}], "timeout": )" + timeout + "}");
}

// The error a body with this "timeout" gets on both endpoints (the same for both), or "" when it parses.
std::string rejection(const std::string& timeout) {
  std::string seen[2];
  for (int i = 0; i < 2; ++i) {
    Json body = chat_with(timeout);
    if (i == 1) {
      body.erase("messages");
      body["prompt"] = "Hi";
    }
    try {
      parse_request(i == 0 ? Endpoint::ChatCompletions : Endpoint::Completions, body);
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status(), 400);
      seen[i] = e.param() + ": " + e.what();
    }
  }
  EXPECT_EQ(seen[0], seen[1]) << timeout;
  return seen[0];
}

TEST(RequestTimeout, ParsedOnBothEndpoints) {
  EXPECT_DOUBLE_EQ(common_fields(parse_request(Endpoint::ChatCompletions, chat_with("0.05"))).timeout, 0.05);
  EXPECT_DOUBLE_EQ(common_fields(parse_request(Endpoint::ChatCompletions, chat_with("30"))).timeout, 30.0);
  EXPECT_DOUBLE_EQ(common_fields(parse_request(Endpoint::ChatCompletions, chat_with("1e6"))).timeout, 1e6);
  EXPECT_DOUBLE_EQ(common_fields(parse_request(Endpoint::ChatCompletions, chat_with("null"))).timeout, 0.0);
  const Json completion = Json::parse(R"({"prompt": "Hi", "timeout": 2.5})");
  EXPECT_DOUBLE_EQ(common_fields(parse_request(Endpoint::Completions, completion)).timeout, 2.5);
  const Json without = Json::parse(R"({"prompt": "Hi"})");
  EXPECT_DOUBLE_EQ(common_fields(parse_request(Endpoint::Completions, without)).timeout, 0.0);
}

TEST(RequestTimeout, BadValuesNameTheField) {
  for (const char* bad : {"0", "-1", "-0.5", "1000001", "1e300", "\"5\"", "true", "[1]", "{}"}) {
    const std::string error = rejection(bad);
    EXPECT_EQ(error.rfind("timeout: ", 0), 0u) << bad << " -> " << error;
  }
  // JSON text cannot spell NaN or infinity, but a body built in code can hold them.
  for (double bad : {std::nan(""), HUGE_VAL, -HUGE_VAL}) {
    Json body = chat_with("1");
    body["timeout"] = bad;
    try {
      parse_request(Endpoint::ChatCompletions, body);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const ApiError& e) {
      EXPECT_EQ(e.param(), "timeout");
    }
  }
  EXPECT_EQ(rejection("0.001"), "");
}

GenerationResult result_with(FinishReason first, FinishReason second, const std::string& stop_reason = "") {
  PreparedRequest prepared;
  EngineRequest part;
  part.n = 2;
  prepared.parts.push_back(part);
  GenerationResult r(prepared);
  SampleOutput out;
  out.index = 0;
  out.finish = first;
  out.stop_reason = stop_reason;
  r.add(0, out, {}, false);
  out.index = 1;
  out.finish = second;
  r.add(0, out, {}, true);
  return r;
}

TEST(TimeoutError, DeadlineIs408NamingTheSeconds) {
  const GenerationResult r = result_with(FinishReason::Length, FinishReason::Timeout, "deadline passed");
  EXPECT_TRUE(r.failed());
  const std::optional<ApiError> e = timeout_error(r, 0.05);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->status(), 408);
  EXPECT_EQ(e->code(), "request_timeout");
  EXPECT_EQ(e->type(), "timeout_error");
  EXPECT_NE(std::string(e->what()).find("0.05 s"), std::string::npos) << e->what();
  const auto body = error_body(*e);
  EXPECT_EQ(body["error"]["code"], "request_timeout");
  EXPECT_EQ(body["error"]["param"], "timeout");
}

TEST(TimeoutError, QueueTimeoutIs503) {
  const GenerationResult r = result_with(FinishReason::QueueTimeout, FinishReason::QueueTimeout, "waited 5 s");
  const std::optional<ApiError> e = timeout_error(r, 0);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->status(), 503);
  EXPECT_EQ(e->code(), "queue_timeout");
  EXPECT_NE(std::string(e->what()).find("waited 5 s"), std::string::npos) << e->what();
  EXPECT_NE(r.failure_message().find("waited 5 s"), std::string::npos);
}

TEST(TimeoutError, NoneForOtherEnds) {
  EXPECT_FALSE(timeout_error(result_with(FinishReason::Stop, FinishReason::Length), 1).has_value());
  EXPECT_FALSE(timeout_error(result_with(FinishReason::Error, FinishReason::Abort), 1).has_value());
  EXPECT_FALSE(result_with(FinishReason::Stop, FinishReason::Length).failed());
}

TEST(TimeoutError, FormatSeconds) {
  EXPECT_EQ(format_seconds(0.05), "0.05");
  EXPECT_EQ(format_seconds(30), "30");
  EXPECT_EQ(format_seconds(1.5), "1.5");
}

}  // namespace
}  // namespace db::api
