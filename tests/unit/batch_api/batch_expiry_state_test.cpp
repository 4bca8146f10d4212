// What a batch's expiry rests on, without an engine: the completion_window forms this
// server accepts, the expired status and its stamp, expires_at, and the usage and
// expired counts finalizing reads from a journal.
#include <gtest/gtest.h>

#include <fstream>

#include "batch/batch_record.h"
#include "batch_api_test_util.h"
#include "server/batch_api/batch_state.h"
#include "server/batch_api/completion_window.h"
#include "server/batch_api/journal_split.h"
#include "util/error.h"

namespace db::server {
namespace {

TEST(CompletionWindow, SecondsMinutesHours) {
  EXPECT_EQ(completion_window_seconds("24h"), 86400);
  EXPECT_EQ(completion_window_seconds("5s"), 5);
  EXPECT_EQ(completion_window_seconds("10m"), 600);
  EXPECT_EQ(completion_window_seconds("1s"), 1);
  EXPECT_EQ(completion_window_seconds("168h"), 7 * 86400);
  EXPECT_EQ(completion_window_seconds("604800s"), 7 * 86400);
  EXPECT_EQ(completion_window_seconds("0090m"), 5400);
}

TEST(CompletionWindow, RejectsOtherForms) {
  for (const char* bad : {"", "h", "24", "0s", "0h", "169h", "604801s", "1d", "24H", "1.5h", "-5s", " 5s", "5s ",
                          "+5s", "5 s", "99999999999999h", "1h30m"})
    EXPECT_FALSE(completion_window_seconds(bad).has_value()) << "'" << bad << "'";
}

TEST(BatchExpiry, ExpiredStatusAndTimes) {
  BatchRecord b;
  b.id = "batch_x";
  b.created_at = 1000;
  b.completion_window = "30s";
  EXPECT_EQ(expires_at(b), 1030);
  transition(b, BatchStatus::InProgress, 1001);
  EXPECT_THROW(transition(b, BatchStatus::Expired, 1030), Error);  // only once the journal was split
  transition(b, BatchStatus::Finalizing, 1030);
  transition(b, BatchStatus::Expired, 1031);
  EXPECT_TRUE(is_terminal(b.status));
  EXPECT_EQ(b.expired_at, 1031);
  EXPECT_EQ(batch_status_from_name("expired"), BatchStatus::Expired);
  b.usage = BatchUsage{12, 34};
  const auto j = batch_json(b);
  EXPECT_EQ(j["status"], "expired");
  EXPECT_EQ(j["expires_at"], 1030);
  EXPECT_EQ(j["expired_at"], 1031);
  EXPECT_EQ(j["usage"]["input_tokens"], 12);
  EXPECT_EQ(j["usage"]["output_tokens"], 34);
  EXPECT_EQ(j["usage"]["total_tokens"], 46);
  EXPECT_EQ(j["usage"]["input_tokens_details"]["cached_tokens"], 0);
  const BatchRecord back = batch_from_stored(batch_to_stored(b));
  EXPECT_EQ(back.status, BatchStatus::Expired);
  EXPECT_EQ(back.expired_at, 1031);
  ASSERT_TRUE(back.usage.has_value());
  EXPECT_EQ(back.usage->output_tokens, 34);
  EXPECT_EQ(batch_to_stored(back), batch_to_stored(b));
}

TEST(BatchExpiry, UsageIsNullUntilFinalizedAndOldRecordsRead) {
  BatchRecord b;
  b.id = "batch_y";
  b.created_at = 5;
  const auto j = batch_json(b);
  EXPECT_TRUE(j["usage"].is_null());
  EXPECT_TRUE(j["expired_at"].is_null());
  EXPECT_EQ(j["expires_at"], 5 + 86400);
  // A record stored before usage and expired_at existed.
  nlohmann::json stored = nlohmann::json::parse(batch_to_stored(b));
  stored.erase("usage");
  stored.erase("expired_at");
  const BatchRecord back = batch_from_stored(stored.dump());
  EXPECT_FALSE(back.usage.has_value());
  EXPECT_EQ(back.expired_at, 0);
}

TEST(BatchExpiry, SplitCountsExpiredRecordsAndUsage) {
  test::ScratchDir dir("journal_split_expiry");
  const std::string path = dir.file("journal.jsonl");
  {
    std::ofstream out(path);
    const nlohmann::ordered_json body = {{"usage", {{"prompt_tokens", 7}, {"completion_tokens", 3}}}};
    out << batch::success_record("a", body) << "\n";
    out << batch::success_record("b", body) << "\n";
    out << batch::error_record(std::string("c"), batch::kBatchExpiredCode, "window ended") << "\n";
    out << batch::error_record(std::string("d"), "invalid_request", "bad") << "\n";
    out << batch::error_record(std::string("e"), batch::kBatchExpiredCode, "window ended") << "\n";
  }
  const SplitJournal s = split_journal(path);
  EXPECT_EQ(s.completed, 2);
  EXPECT_EQ(s.failed, 3);
  EXPECT_EQ(s.expired, 2);
  EXPECT_EQ(s.input_tokens, 14);
  EXPECT_EQ(s.output_tokens, 6);
}

}  // namespace
}  // namespace db::server
