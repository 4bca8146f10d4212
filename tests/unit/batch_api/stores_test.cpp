// Durable state of the batch API: atomic writes, the file store, the batch store
// (persistence and reload), the batch lifecycle, the input check and the journal split.
#include <gtest/gtest.h>

#include <filesystem>

#include "api/api_error.h"
#include "batch_api_test_util.h"
#include "server/batch_api/atomic_file.h"
#include "server/batch_api/batch_handlers.h"
#include "server/batch_api/batch_state.h"
#include "server/batch_api/batch_store.h"
#include "server/batch_api/file_store.h"
#include "server/batch_api/input_check.h"
#include "server/batch_api/journal_split.h"
#include "util/error.h"

namespace db::server {
namespace {

namespace fs = std::filesystem;
using test::ScratchDir;

std::string request_line(const std::string& id, const std::string& url = "/v1/completions") {
  return nlohmann::json{{"custom_id", id}, {"method", "POST"}, {"url", url},
                        {"body", {{"prompt", "hi"}, {"max_tokens", 2}}}}
      .dump();
}

TEST(AtomicFile, ReplacesContentAndLeavesNoTemporary) {
  ScratchDir dir("atomic");
  const std::string path = dir.file("state.json");
  write_file_atomic(path, "first");
  write_file_atomic(path, "second, longer");
  EXPECT_EQ(read_whole_file(path), "second, longer");
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  EXPECT_THROW(write_file_atomic(dir.file("missing_dir/x"), "x"), Error);
  EXPECT_THROW(read_whole_file(dir.file("nope")), Error);
}

TEST(FileStore, CreateGetListRemoveAndReload) {
  ScratchDir dir("file_store");
  std::string first_id, second_id;
  {
    FileStore store(dir.file("files"));
    const FileObject a = store.create("a.jsonl", "batch", "AAA");
    const FileObject b = store.create("b.jsonl", "batch", std::string("B\0B", 3));
    first_id = a.id;
    second_id = b.id;
    EXPECT_EQ(a.id.rfind("file-", 0), 0u);
    EXPECT_NE(a.id, b.id);
    EXPECT_EQ(b.bytes, 3);
    ASSERT_EQ(store.list().size(), 2u);
    EXPECT_EQ(store.list()[0].id, b.id);  // newest first
    EXPECT_EQ(read_whole_file(store.content_path(b.id)), std::string("B\0B", 3));
    EXPECT_FALSE(store.get("file-unknown").has_value());
  }
  // An upload torn before its metadata was written.
  test::write_text(dir.file("files/file-torn.data"), "half");
  {
    FileStore store(dir.file("files"));
    ASSERT_EQ(store.list().size(), 2u);
    EXPECT_EQ(store.get(first_id)->filename, "a.jsonl");
    EXPECT_EQ(store.get(second_id)->bytes, 3);
    EXPECT_FALSE(fs::exists(dir.file("files/file-torn.data")));
    EXPECT_TRUE(store.remove(first_id));
    EXPECT_FALSE(store.remove(first_id));
    EXPECT_FALSE(fs::exists(store.content_path(first_id)));
    const FileObject c = store.create("c.jsonl", "batch", "C");
    EXPECT_EQ(store.list()[0].id, c.id);  // creation order continues after a reload
  }
  FileStore store(dir.file("files"));
  EXPECT_FALSE(store.get(first_id).has_value());
  EXPECT_EQ(store.list().size(), 2u);
}

TEST(FileStore, CreateWithAGivenIdReplacesIt) {
  ScratchDir dir("file_store_id");
  FileStore store(dir.file("files"));
  store.create("out.jsonl", "batch_output", "one", "file-fixed0001");
  store.create("out.jsonl", "batch_output", "two!", "file-fixed0001");
  EXPECT_EQ(store.list().size(), 1u);
  EXPECT_EQ(store.get("file-fixed0001")->bytes, 4);
  EXPECT_EQ(read_whole_file(store.content_path("file-fixed0001")), "two!");
}

TEST(FileStore, JsonHasTheOpenAiFields) {
  FileObject f{"file-1", 5, 1700000000, "x.jsonl", "batch", 1, ""};
  const auto j = file_json(f);
  EXPECT_EQ(j["object"], "file");
  EXPECT_EQ(j["status"], "processed");
  EXPECT_EQ(j["bytes"], 5);
  EXPECT_FALSE(j.contains("seq"));
}

TEST(SafeId, RefusesPathCharacters) {
  EXPECT_TRUE(is_safe_id("file-abc_123"));
  EXPECT_FALSE(is_safe_id(""));
  EXPECT_FALSE(is_safe_id("../etc"));
  EXPECT_FALSE(is_safe_id("a/b"));
}

TEST(BatchLifecycle, AllowedTransitionsStampTimes) {
  BatchRecord b;
  b.id = "batch_x";
  transition(b, BatchStatus::InProgress, 10);
  EXPECT_EQ(b.in_progress_at, 10);
  transition(b, BatchStatus::Cancelling, 11);
  transition(b, BatchStatus::Cancelled, 12);
  EXPECT_EQ(b.cancelling_at, 11);
  EXPECT_EQ(b.cancelled_at, 12);
  EXPECT_THROW(transition(b, BatchStatus::InProgress, 13), Error);  // terminal
  BatchRecord c;
  EXPECT_THROW(transition(c, BatchStatus::Completed, 1), Error);    // validating -> completed skips steps
  transition(c, BatchStatus::InProgress, 1);
  transition(c, BatchStatus::Finalizing, 2);
  EXPECT_FALSE(can_transition(BatchStatus::Finalizing, BatchStatus::Cancelling));
  transition(c, BatchStatus::Completed, 3);
  EXPECT_TRUE(is_terminal(c.status));
  EXPECT_TRUE(can_transition(BatchStatus::Validating, BatchStatus::Cancelled));
  EXPECT_EQ(batch_status_from_name("in_progress"), BatchStatus::InProgress);
  EXPECT_THROW(batch_status_from_name("expired?"), Error);
}

TEST(BatchState, JsonShapeAndStoredRoundTrip) {
  BatchRecord b;
  b.id = "batch_abc";
  b.endpoint = "/v1/chat/completions";
  b.input_file_id = "file-in";
  b.created_at = 1000;
  b.counts = {5, 3, 1};
  b.metadata = {{"k", "v"}};
  b.output_file_id = "file-out";
  b.reserved_error_file_id = "file-err";
  b.seq = 7;
  transition(b, BatchStatus::InProgress, 1001);
  const auto j = batch_json(b);
  EXPECT_EQ(j["object"], "batch");
  EXPECT_EQ(j["status"], "in_progress");
  EXPECT_TRUE(j["error_file_id"].is_null());
  EXPECT_TRUE(j["completed_at"].is_null());
  EXPECT_EQ(j["in_progress_at"], 1001);
  EXPECT_EQ(j["expires_at"], 1000 + 86400);
  EXPECT_EQ(j["request_counts"]["completed"], 3);
  EXPECT_EQ(j["metadata"]["k"], "v");
  EXPECT_FALSE(j.contains("reserved_error_file_id"));
  const BatchRecord back = batch_from_stored(batch_to_stored(b));
  EXPECT_EQ(batch_to_stored(back), batch_to_stored(b));
  EXPECT_THROW(batch_from_stored("{\"id\": 1}"), Error);
  EXPECT_THROW(batch_from_stored("not json"), Error);
}

TEST(BatchStore, CreateSaveReloadAndInputSnapshot) {
  ScratchDir dir("batch_store");
  const std::string input = dir.file("upload.jsonl");
  test::write_text(input, request_line("a") + "\n");
  std::string id;
  {
    BatchStore store(dir.file("batches"));
    BatchRecord b;
    b.endpoint = "/v1/completions";
    b.input_file_id = "file-in";
    const BatchRecord created = store.create(b, input);
    id = created.id;
    EXPECT_EQ(id.rfind("batch_", 0), 0u);
    EXPECT_GT(created.created_at, 0);
    BatchRecord changed = created;
    transition(changed, BatchStatus::InProgress, 5);
    store.save(changed);
    store.create(b, input);
    ASSERT_EQ(store.list().size(), 2u);
    EXPECT_NE(store.list()[0].id, id);  // newest first
  }
  fs::remove(input);  // the uploaded file goes away; the batch keeps its input
  fs::create_directories(dir.file("batches/batch_torn"));  // a crash while creating a batch
  BatchStore store(dir.file("batches"));
  ASSERT_TRUE(store.get(id).has_value());
  EXPECT_EQ(store.get(id)->status, BatchStatus::InProgress);
  EXPECT_EQ(store.get(id)->in_progress_at, 5);
  EXPECT_EQ(read_whole_file(store.input_path(id)), request_line("a") + "\n");
  EXPECT_FALSE(fs::exists(dir.file("batches/batch_torn")));
  EXPECT_EQ(store.list().size(), 2u);
}

TEST(BatchStore, UnreadableStateNamesTheFile) {
  ScratchDir dir("batch_store_bad");
  fs::create_directories(dir.file("batches/batch_bad"));
  test::write_text(dir.file("batches/batch_bad/batch.json"), "{not json");
  try {
    BatchStore store(dir.file("batches"));
    FAIL() << "expected db::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("batch_bad"), std::string::npos) << e.what();
  }
}

std::string input_check_code(const std::string& text, const std::string& endpoint = "/v1/completions") {
  ScratchDir dir("input_check");
  test::write_text(dir.file("in.jsonl"), text);
  try {
    check_batch_input(dir.file("in.jsonl"), endpoint);
  } catch (const api::ApiError& e) {
    EXPECT_EQ(e.status(), 400);
    EXPECT_EQ(e.param(), "input_file_id");
    return e.code() + ": " + e.what();
  }
  return "ok";
}

TEST(InputCheck, AcceptsRequestsOfTheEndpointAndCountsThem) {
  ScratchDir dir("input_ok");
  test::write_text(dir.file("in.jsonl"), request_line("a") + "\r\n\n  \n" + request_line("b") + "\n");
  EXPECT_EQ(check_batch_input(dir.file("in.jsonl"), "/v1/completions"), 2u);
  EXPECT_EQ(input_check_code(request_line("a", "/v1/chat/completions"), "/v1/chat/completions"), "ok");
}

TEST(InputCheck, RefusesFilesThatAreNotBatchFiles) {
  EXPECT_NE(input_check_code("").find("empty_batch_file"), std::string::npos);
  EXPECT_NE(input_check_code("hello world\n").find("line 1: not valid JSON"), std::string::npos);
  EXPECT_NE(input_check_code("[1, 2]\n").find("not a JSON object"), std::string::npos);
  EXPECT_NE(input_check_code(request_line("a") + "\n" + request_line("a") + "\n").find("line 2"), std::string::npos);
  EXPECT_NE(input_check_code(request_line("a", "/v1/chat/completions")).find("url"), std::string::npos);
  EXPECT_NE(input_check_code(R"({"custom_id": "a", "method": "GET", "url": "/v1/completions", "body": {}})")
                .find("method"),
            std::string::npos);
  EXPECT_NE(input_check_code(R"({"custom_id": "a", "method": "POST", "url": "/v1/completions"})").find("body"),
            std::string::npos);
  EXPECT_NE(input_check_code(R"({"method": "POST", "url": "/v1/completions", "body": {}})").find("custom_id"),
            std::string::npos);
}

TEST(JournalSplit, SuccessesAndErrorsApartTornTailLeftOut) {
  ScratchDir dir("split");
  const std::string ok = R"({"id":"r1","custom_id":"a","response":{"status_code":200},"error":null})";
  const std::string bad = R"({"id":"r2","custom_id":"b","response":null,"error":{"code":"x","message":"m"}})";
  test::write_text(dir.file("j.jsonl"), ok + "\n" + bad + "\n" + ok + "\n{\"id\":\"torn");
  const SplitJournal s = split_journal(dir.file("j.jsonl"));
  EXPECT_EQ(s.completed, 2);
  EXPECT_EQ(s.failed, 1);
  EXPECT_EQ(s.output, ok + "\n" + ok + "\n");
  EXPECT_EQ(s.errors, bad + "\n");
  EXPECT_EQ(split_journal(dir.file("missing.jsonl")).completed, 0);
  test::write_text(dir.file("bad.jsonl"), "garbage\n");
  EXPECT_THROW(split_journal(dir.file("bad.jsonl")), Error);
}

TEST(Query, DecodesPairs) {
  const auto q = parse_query("limit=2&after=batch_x&name=a%20b+c&flag&=v");
  ASSERT_EQ(q.size(), 5u);
  EXPECT_EQ(q[0], (std::pair<std::string, std::string>{"limit", "2"}));
  EXPECT_EQ(q[2].second, "a b c");
  EXPECT_EQ(q[3], (std::pair<std::string, std::string>{"flag", ""}));
  EXPECT_TRUE(parse_query("").empty());
}

}  // namespace
}  // namespace db::server
