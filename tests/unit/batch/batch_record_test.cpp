// Output records: the OpenAI batch output shape, one line, valid UTF-8.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "batch/batch_record.h"

namespace db::batch {
namespace {

TEST(BatchRecord, Success) {
  nlohmann::ordered_json body = {{"object", "chat.completion"}, {"choices", nlohmann::ordered_json::array()}};
  const std::string line = success_record("req-1", body);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  const auto r = nlohmann::json::parse(line);
  EXPECT_EQ(r["id"].get<std::string>().rfind("batch_req_", 0), 0u);
  EXPECT_EQ(r["custom_id"], "req-1");
  EXPECT_EQ(r["response"]["status_code"], 200);
  EXPECT_TRUE(r["response"]["request_id"].is_string());
  EXPECT_EQ(r["response"]["body"]["object"], "chat.completion");
  EXPECT_TRUE(r["error"].is_null());
  // Keys in the documented order.
  EXPECT_EQ(line.find("\"id\""), 1u);
  EXPECT_LT(line.find("\"custom_id\""), line.find("\"response\""));
  EXPECT_LT(line.find("\"response\""), line.find("\"error\""));
}

TEST(BatchRecord, Error) {
  const auto r = nlohmann::json::parse(error_record(std::string("x"), "invalid_url", "line 3: bad url"));
  EXPECT_EQ(r["custom_id"], "x");
  EXPECT_TRUE(r["response"].is_null());
  EXPECT_EQ(r["error"]["code"], "invalid_url");
  EXPECT_EQ(r["error"]["message"], "line 3: bad url");
  const auto anon = nlohmann::json::parse(error_record(std::nullopt, "invalid_json", "m"));
  EXPECT_TRUE(anon["custom_id"].is_null());
}

TEST(BatchRecord, InvalidUtf8IsReplacedAndNewlinesEscaped) {
  const std::string line = success_record("id", {{"text", std::string("a\xff" "b\nc")}});
  EXPECT_EQ(line.find('\n'), std::string::npos);
  const auto r = nlohmann::json::parse(line);
  EXPECT_EQ(r["response"]["body"]["text"], "a\xef\xbf\xbd" "b\nc");
}

TEST(BatchRecord, IdsAreUnique) {
  const auto a = nlohmann::json::parse(success_record("x", {}));
  const auto b = nlohmann::json::parse(success_record("x", {}));
  EXPECT_NE(a["id"], b["id"]);
  EXPECT_NE(a["response"]["request_id"], b["response"]["request_id"]);
}

}  // namespace
}  // namespace db::batch
