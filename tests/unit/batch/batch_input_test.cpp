// Batch input lines: good lines become items; each kind of bad line becomes an
// error with its code, line number and custom_id (when it has one).
#include <gtest/gtest.h>

#include <sstream>
#include <variant>

#include "batch/batch_input.h"
#include "util/error.h"

namespace db::batch {
namespace {

BatchInput parse(const std::string& text) {
  std::istringstream in(text);
  return parse_batch_input(in);
}

const char* kGoodCompletion =
    R"({"custom_id": "a", "method": "POST", "url": "/v1/completions", "body": {"model": "m", "prompt": "hi"}})";
const char* kGoodChat =
    R"({"custom_id": "b", "method": "POST", "url": "/v1/chat/completions", "body": {"messages": [{"role": "user", "content": "hi"}]}})";

TEST(BatchInput, GoodLines) {
  const auto in = parse(std::string(kGoodCompletion) + "\n\n   \n" + kGoodChat + "\r\n");
  EXPECT_EQ(in.lines, 2u);
  EXPECT_TRUE(in.errors.empty());
  ASSERT_EQ(in.items.size(), 2u);
  EXPECT_EQ(in.items[0].custom_id, "a");
  EXPECT_EQ(in.items[0].line_no, 1u);
  EXPECT_EQ(in.items[0].endpoint, api::Endpoint::Completions);
  EXPECT_TRUE(std::holds_alternative<api::CompletionRequest>(in.items[0].request));
  EXPECT_EQ(in.items[1].custom_id, "b");
  EXPECT_EQ(in.items[1].line_no, 4u);
  EXPECT_TRUE(std::holds_alternative<api::ChatCompletionRequest>(in.items[1].request));
}

TEST(BatchInput, NoTrailingNewline) {
  const auto in = parse(kGoodCompletion);
  EXPECT_EQ(in.items.size(), 1u);
}

struct BadCase {
  std::string line;
  std::string code;
  std::optional<std::string> custom_id;
  std::string message_part;
};

TEST(BatchInput, BadLines) {
  const BadCase cases[] = {
      {R"({"custom_id": "x", "method": "POST", "url": "/v1/completions", "body": {"prompt": "hi"})", "invalid_json",
       std::nullopt, "not valid JSON"},
      {R"([1, 2, 3])", "invalid_json", std::nullopt, "JSON object"},
      {R"({"method": "POST", "url": "/v1/completions", "body": {"prompt": "hi"}})", "missing_custom_id", std::nullopt,
       "custom_id"},
      {R"({"custom_id": 7, "method": "POST", "url": "/v1/completions", "body": {"prompt": "hi"}})",
       "missing_custom_id", std::nullopt, "non-empty string"},
      {R"({"custom_id": "", "method": "POST", "url": "/v1/completions", "body": {"prompt": "hi"}})",
       "missing_custom_id", std::nullopt, "non-empty string"},
      {R"({"custom_id": "g", "method": "GET", "url": "/v1/completions", "body": {"prompt": "hi"}})", "invalid_method",
       "g", "POST"},
      {R"({"custom_id": "u", "method": "POST", "url": "/v1/embeddings", "body": {"input": "hi"}})", "invalid_url", "u",
       "/v1/embeddings"},
      {R"({"custom_id": "nb", "method": "POST", "url": "/v1/completions"})", "invalid_request", "nb", "body"},
      {R"({"custom_id": "t", "method": "POST", "url": "/v1/completions", "body": {"prompt": "hi", "temperature": "hot"}})",
       "invalid_type", "t", "temperature"},
      {R"({"custom_id": "s", "method": "POST", "url": "/v1/chat/completions", "body": {"messages": [{"role": "user", "content": "x"}], "stream": true}})",
       "invalid_value", "s", "stream"},
      {"{\"custom_id\": \"utf\", \"method\": \"POST\", \"url\": \"/v1/completions\", \"body\": {\"prompt\": \"\xff\xfe\"}}",
       "invalid_json", std::nullopt, "not valid JSON"},
  };
  for (const BadCase& c : cases) {
    const auto in = parse(std::string(kGoodCompletion) + "\n" + c.line + "\n");
    ASSERT_EQ(in.items.size(), 1u) << c.line;
    ASSERT_EQ(in.errors.size(), 1u) << c.line;
    const LineError& e = in.errors[0];
    EXPECT_EQ(e.code, c.code) << c.line;
    EXPECT_EQ(e.line_no, 2u);
    EXPECT_EQ(e.custom_id, c.custom_id) << c.line;
    EXPECT_EQ(e.message.rfind("line 2: ", 0), 0u) << e.message;
    EXPECT_NE(e.message.find(c.message_part), std::string::npos) << e.message;
  }
}

TEST(BatchInput, DuplicateCustomIds) {
  const std::string bad_a = R"({"custom_id": "a", "method": "PUT", "url": "/v1/completions", "body": {}})";
  const auto in = parse(std::string(kGoodCompletion) + "\n" + kGoodChat + "\n" + kGoodCompletion + "\n" + bad_a);
  ASSERT_EQ(in.items.size(), 2u);
  ASSERT_EQ(in.errors.size(), 2u);
  for (const LineError& e : in.errors) {
    EXPECT_EQ(e.code, kDuplicateCustomId);
    EXPECT_EQ(e.custom_id, "a");
  }
  EXPECT_EQ(in.errors[0].line_no, 3u);
  EXPECT_EQ(in.errors[1].line_no, 4u);
}

TEST(BatchInput, FirstOccurrenceDecidesEvenWhenBad) {
  const std::string bad_a = R"({"custom_id": "a", "method": "POST", "url": "/v1/nothing", "body": {}})";
  const auto in = parse(bad_a + "\n" + kGoodCompletion);
  EXPECT_TRUE(in.items.empty());
  ASSERT_EQ(in.errors.size(), 2u);
  EXPECT_EQ(in.errors[0].code, "invalid_url");
  EXPECT_EQ(in.errors[1].code, kDuplicateCustomId);
}

TEST(BatchInput, LineLevelCodes) {
  EXPECT_TRUE(is_line_level_code("invalid_json"));
  EXPECT_TRUE(is_line_level_code("missing_custom_id"));
  EXPECT_TRUE(is_line_level_code("duplicate_custom_id"));
  EXPECT_FALSE(is_line_level_code("invalid_url"));
  EXPECT_FALSE(is_line_level_code("invalid_type"));
}

TEST(BatchInput, MissingFileThrows) {
  EXPECT_THROW(read_batch_input(DB_TEST_DATA "/batch/does-not-exist.jsonl"), Error);
}

}  // namespace
}  // namespace db::batch
