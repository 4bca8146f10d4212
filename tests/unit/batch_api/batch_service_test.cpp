// The batch API's routes end to end in process: requests go through
// BatchService::routes() into a recording Responder, batches run on a real engine
// with the default model (small batches, few tokens).
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "batch/batch_job.h"
#include "batch_api_test_util.h"
#include "bundle/model_bundle.h"
#include "default_model.h"
#include "engine/engine.h"
#include "server/batch_api/atomic_file.h"
#include "server/batch_api/batch_service.h"
#include "server/batch_api/batch_store.h"
#include "util/error.h"

namespace db::server {
namespace {

using nlohmann::json;

const char* kBoundary = "----deepbatchTestBoundary7MA4YWxk";

struct Reply {
  int status = 0;
  std::string body;
  json js() const { return json::parse(body); }
};

std::string request_line(const std::string& id, const json& body, const char* url = "/v1/completions") {
  return json{{"custom_id", id}, {"method", "POST"}, {"url", url}, {"body", body}}.dump();
}

json greedy(const std::string& prompt, int max_tokens) {
  return {{"prompt", prompt}, {"max_tokens", max_tokens}, {"temperature", 0}};
}

std::string multipart_upload(const std::string& purpose, const std::string& data, bool with_file = true) {
  std::string body = std::string("--") + kBoundary + "\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\n" +
                     purpose + "\r\n";
  if (with_file)
    body += std::string("--") + kBoundary +
            "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"in.jsonl\"\r\n"
            "Content-Type: application/jsonl\r\n\r\n" +
            data + "\r\n";
  return body + "--" + kBoundary + "--\r\n";
}

class BatchServiceTest : public test::DefaultModelSuite<ModelBundle> {
 protected:
  void SetUp() override {
    DefaultModelSuite::SetUp();
    if (HasFatalFailure()) return;
    engine_ = test::make_engine(*model_, 16);
    start_service();
  }
  void TearDown() override {
    service_.reset();
    engine_.reset();
  }

  BatchServiceOptions options() const {
    BatchServiceOptions o;
    o.data_dir = dir_.file("data");
    o.model_name = "smollm2";
    o.max_context = model_->model().config().max_context;
    return o;
  }
  void start_service() { service_ = std::make_unique<BatchService>(*engine_, *model_, options()); }

  Reply call(const std::string& method, const std::string& pattern, const std::string& id = "",
             std::string body = "", std::string query = "", std::string content_type = "application/json") {
    for (BatchRoute& r : service_->routes()) {
      if (r.method != method || r.pattern != pattern) continue;
      http::Request req;
      req.method = method;
      req.path = pattern;
      req.query = std::move(query);
      req.body = std::move(body);
      req.headers = {{"content-type", content_type}};
      http::PathParams params;
      if (!id.empty()) params.values.emplace_back("id", id);
      auto res = std::make_shared<test::RecordingResponder>();
      r.handler(std::move(req), params, res);
      EXPECT_TRUE(res->wait(60)) << method << " " << pattern << " got no response";
      EXPECT_EQ(res->responses(), 1);
      return {res->status(), res->body()};
    }
    ADD_FAILURE() << "no route " << method << " " << pattern;
    return {};
  }

  std::string upload(const std::vector<std::string>& lines) {
    std::string data;
    for (const std::string& l : lines) data += l + "\n";
    const Reply r = call("POST", "/v1/files", "", multipart_upload("batch", data), "",
                         std::string("multipart/form-data; boundary=") + kBoundary);
    EXPECT_EQ(r.status, 200) << r.body;
    return r.js()["id"];
  }

  json create_batch(const std::string& file_id, const std::string& endpoint = "/v1/completions") {
    const Reply r = call("POST", "/v1/batches", "",
                         json{{"input_file_id", file_id}, {"endpoint", endpoint}, {"completion_window", "24h"},
                              {"metadata", {{"job", "test"}}}}
                             .dump());
    EXPECT_EQ(r.status, 200) << r.body;
    return r.js();
  }

  json get_batch(const std::string& id) {
    const Reply r = call("GET", "/v1/batches/{id}", id);
    EXPECT_EQ(r.status, 200) << r.body;
    return r.js();
  }

  // Polls until `done(batch)` or `timeout_s`; returns the last batch object.
  json wait_batch(const std::string& id, const std::function<bool(const json&)>& done, double timeout_s = 120) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    json b = get_batch(id);
    while (!done(b) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      b = get_batch(id);
    }
    return b;
  }
  static bool finished(const json& b) {
    const std::string s = b["status"];
    return s == "completed" || s == "failed" || s == "cancelled";
  }

  // Records of a file's content, parsed.
  std::vector<json> records(const std::string& file_id) {
    const Reply r = call("GET", "/v1/files/{id}/content", file_id);
    EXPECT_EQ(r.status, 200) << r.body;
    std::vector<json> out;
    std::istringstream in(r.body);
    std::string line;
    while (std::getline(in, line))
      if (!line.empty()) out.push_back(json::parse(line));
    return out;
  }

  test::ScratchDir dir_{"batch_service"};
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<BatchService> service_;
};

int64_t error_status(const Reply& r, const std::string& want_param = "") {
  const json j = json::parse(r.body, nullptr, false);
  EXPECT_TRUE(j.is_object() && j.contains("error")) << r.body;
  if (!want_param.empty()) {
    EXPECT_EQ(j["error"]["param"], want_param) << r.body;
  }
  return r.status;
}

TEST_F(BatchServiceTest, FileEndpoints) {
  const std::string line = request_line("a", greedy("Hello", 2));
  const std::string id = upload({line});
  Reply r = call("GET", "/v1/files/{id}", id);
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.js()["filename"], "in.jsonl");
  EXPECT_EQ(r.js()["purpose"], "batch");
  EXPECT_EQ(r.js()["bytes"], line.size() + 1);
  r = call("GET", "/v1/files/{id}/content", id);
  EXPECT_EQ(r.body, line + "\n");
  const std::string id2 = upload({line});
  r = call("GET", "/v1/files", "", "", "limit=1");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.js()["data"].size(), 1u);
  EXPECT_EQ(r.js()["data"][0]["id"], id2);
  EXPECT_TRUE(r.js()["has_more"].get<bool>());
  r = call("GET", "/v1/files", "", "", "after=" + id2);
  EXPECT_EQ(r.js()["data"][0]["id"], id);
  EXPECT_FALSE(r.js()["has_more"].get<bool>());
  r = call("GET", "/v1/files", "", "", "order=asc");
  EXPECT_EQ(r.js()["data"][0]["id"], id);
  EXPECT_EQ(error_status(call("GET", "/v1/files", "", "", "limit=0"), "limit"), 400);

  r = call("DELETE", "/v1/files/{id}", id);
  ASSERT_EQ(r.status, 200);
  EXPECT_TRUE(r.js()["deleted"].get<bool>());
  EXPECT_EQ(error_status(call("GET", "/v1/files/{id}", id)), 404);
  EXPECT_EQ(error_status(call("GET", "/v1/files/{id}/content", id)), 404);
  EXPECT_EQ(error_status(call("DELETE", "/v1/files/{id}", id)), 404);
  EXPECT_EQ(error_status(call("GET", "/v1/files/{id}", "../../etc/passwd")), 404);
}

TEST_F(BatchServiceTest, UploadErrorsAre400) {
  const std::string type = std::string("multipart/form-data; boundary=") + kBoundary;
  EXPECT_EQ(error_status(call("POST", "/v1/files", "", multipart_upload("fine-tune", "x\n"), "", type), "purpose"),
            400);
  EXPECT_EQ(error_status(call("POST", "/v1/files", "", multipart_upload("batch", "", false), "", type), "file"), 400);
  EXPECT_EQ(error_status(call("POST", "/v1/files", "", "{}", "", "application/json")), 400);
  EXPECT_EQ(error_status(call("POST", "/v1/files", "", "--x\r\nbroken", "", "multipart/form-data; boundary=x")), 400);
}

TEST_F(BatchServiceTest, CreateBatchErrors) {
  const std::string good = upload({request_line("a", greedy("Hi", 2))});
  const auto create = [&](const json& body) { return call("POST", "/v1/batches", "", body.dump()); };
  EXPECT_EQ(error_status(create({{"endpoint", "/v1/completions"}, {"completion_window", "24h"}}), "input_file_id"),
            400);
  EXPECT_EQ(error_status(create({{"input_file_id", good}, {"endpoint", "/v1/embeddings"},
                                 {"completion_window", "24h"}}),
                         "endpoint"),
            400);
  EXPECT_EQ(error_status(create({{"input_file_id", good}, {"endpoint", "/v1/completions"},
                                 {"completion_window", "1d"}}),
                         "completion_window"),
            400);
  EXPECT_EQ(error_status(create({{"input_file_id", good}, {"endpoint", "/v1/completions"},
                                 {"completion_window", "24h"}, {"metadata", {{"n", 1}}}}),
                         "metadata"),
            400);
  EXPECT_EQ(error_status(create({{"input_file_id", "file-nope"}, {"endpoint", "/v1/completions"},
                                 {"completion_window", "24h"}})),
            404);
  // A chat request file for the completions endpoint, and a file that is not JSONL at all.
  const std::string chat = upload({request_line("a", {{"messages", json::array()}}, "/v1/chat/completions")});
  EXPECT_EQ(error_status(create({{"input_file_id", chat}, {"endpoint", "/v1/completions"},
                                 {"completion_window", "24h"}}),
                         "input_file_id"),
            400);
  const std::string junk = upload({"this is not json"});
  EXPECT_EQ(error_status(create({{"input_file_id", junk}, {"endpoint", "/v1/completions"},
                                 {"completion_window", "24h"}}),
                         "input_file_id"),
            400);
  EXPECT_EQ(error_status(call("POST", "/v1/batches", "", "not json")), 400);
  EXPECT_EQ(error_status(call("GET", "/v1/batches/{id}", "batch_nope")), 404);
  EXPECT_EQ(error_status(call("POST", "/v1/batches/{id}/cancel", "batch_nope")), 404);
  EXPECT_EQ(call("GET", "/v1/batches").js()["data"].size(), 0u);
}

TEST_F(BatchServiceTest, BatchCompletesWithOutputAndErrorFilesMatchingTheOfflineRun) {
  std::vector<std::string> lines;
  const char* prompts[] = {"The capital of France is", "One, two, three,", "def add(a, b):", "Once upon a time"};
  for (int i = 0; i < 4; ++i) lines.push_back(request_line("req-" + std::to_string(i), greedy(prompts[i], 4)));
  lines.push_back(request_line("bad", {{"prompt", "x"}, {"max_tokens", -3}}));
  const std::string file_id = upload(lines);
  const json created = create_batch(file_id);
  EXPECT_EQ(created["object"], "batch");
  EXPECT_EQ(created["status"], "validating");
  EXPECT_EQ(created["request_counts"]["total"], 5);
  EXPECT_EQ(created["metadata"]["job"], "test");
  const std::string id = created["id"];

  const json done = wait_batch(id, finished);
  ASSERT_EQ(done["status"], "completed") << done.dump();
  EXPECT_EQ(done["request_counts"], (json{{"total", 5}, {"completed", 4}, {"failed", 1}}));
  EXPECT_TRUE(done["in_progress_at"].is_number());
  EXPECT_TRUE(done["completed_at"].is_number());
  ASSERT_TRUE(done["output_file_id"].is_string());
  ASSERT_TRUE(done["error_file_id"].is_string());

  std::map<std::string, std::string> served;
  for (const json& rec : records(done["output_file_id"])) {
    EXPECT_TRUE(rec["error"].is_null());
    EXPECT_EQ(rec["response"]["status_code"], 200);
    EXPECT_TRUE(served.emplace(rec["custom_id"], rec["response"]["body"]["choices"][0]["text"]).second);
  }
  EXPECT_EQ(served.size(), 4u);
  const std::vector<json> errors = records(done["error_file_id"]);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0]["custom_id"], "bad");
  const Reply meta = call("GET", "/v1/files/{id}", done["output_file_id"]);
  EXPECT_EQ(meta.js()["purpose"], "batch_output");

  // The same file through the offline job on the same engine gives the same greedy texts.
  const std::string input = dir_.file("offline_in.jsonl");
  test::write_text(input, call("GET", "/v1/files/{id}/content", file_id).body);
  batch::BatchJobOptions job;
  job.input_path = input;
  job.output_path = dir_.file("offline_out.jsonl");
  job.model_name = "smollm2";
  job.max_context = options().max_context;
  batch::run_batch_job(*engine_, *model_, job);
  std::istringstream offline(read_whole_file(job.output_path));
  std::string line;
  size_t compared = 0;
  while (std::getline(offline, line)) {
    const json rec = json::parse(line);
    if (!rec["error"].is_null()) continue;
    EXPECT_EQ(served.at(rec["custom_id"]), rec["response"]["body"]["choices"][0]["text"]) << rec["custom_id"];
    ++compared;
  }
  EXPECT_EQ(compared, 4u);

  const Reply list = call("GET", "/v1/batches", "", "", "limit=10");
  EXPECT_EQ(list.js()["data"][0]["id"], id);
  EXPECT_EQ(error_status(call("POST", "/v1/batches/{id}/cancel", id)), 400);  // finished batches stay finished
}

TEST_F(BatchServiceTest, CancelStopsTheBatchAndKeepsWhatFinished) {
  std::vector<std::string> lines;
  for (int i = 0; i < 60; ++i)
    lines.push_back(request_line("c" + std::to_string(i), greedy("Count: " + std::to_string(i), 48)));
  const std::string id = create_batch(upload(lines))["id"];
  wait_batch(id, [](const json& b) { return b["status"] != "validating"; }, 30);
  const Reply r = call("POST", "/v1/batches/{id}/cancel", id);
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string status = r.js()["status"];
  EXPECT_TRUE(status == "cancelling" || status == "cancelled") << status;
  const json done = wait_batch(id, finished, 60);
  ASSERT_EQ(done["status"], "cancelled") << done.dump();
  EXPECT_TRUE(done["cancelled_at"].is_number());
  EXPECT_LT(done["request_counts"]["completed"].get<int>(), 60);
  std::set<std::string> ids;
  if (done["output_file_id"].is_string()) {
    for (const json& rec : records(done["output_file_id"])) EXPECT_TRUE(ids.insert(rec["custom_id"]).second);
  }
  EXPECT_EQ(ids.size(), done["request_counts"]["completed"].get<size_t>());
  EXPECT_TRUE(done["error_file_id"].is_null());  // aborted requests get no error records
}

TEST_F(BatchServiceTest, CancelBeforeStartIsImmediate) {
  std::vector<std::string> lines;
  for (int i = 0; i < 40; ++i)
    lines.push_back(request_line("q" + std::to_string(i), greedy("Word " + std::to_string(i), 32)));
  const std::string file_id = upload(lines);
  const std::string first = create_batch(file_id)["id"];
  const std::string second = create_batch(file_id)["id"];  // runs beside the first (two at once)
  const std::string third = create_batch(file_id)["id"];   // queued behind them (FIFO)
  const Reply r = call("POST", "/v1/batches/{id}/cancel", third);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.js()["status"], "cancelled");
  EXPECT_TRUE(r.js()["output_file_id"].is_null());
  call("POST", "/v1/batches/{id}/cancel", first);
  call("POST", "/v1/batches/{id}/cancel", second);
  EXPECT_EQ(wait_batch(first, finished, 60)["status"], "cancelled");
  EXPECT_EQ(wait_batch(second, finished, 60)["status"], "cancelled");
  const Reply page = call("GET", "/v1/batches", "", "", "limit=1");
  EXPECT_EQ(page.js()["data"][0]["id"], third);
  EXPECT_TRUE(page.js()["has_more"].get<bool>());
  EXPECT_EQ(call("GET", "/v1/batches", "", "", "after=" + third).js()["data"][0]["id"], second);
}

TEST_F(BatchServiceTest, TwoBatchesRunAtOnce) {
  std::vector<std::string> lines;
  for (int i = 0; i < 60; ++i)
    lines.push_back(request_line("t" + std::to_string(i), greedy("Story " + std::to_string(i), 48)));
  const std::string file_id = upload(lines);
  const std::string first = create_batch(file_id)["id"];
  const std::string second = create_batch(file_id)["id"];
  // One at a time, the second would wait in "validating" until the first is done.
  bool both_running = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!both_running && std::chrono::steady_clock::now() < deadline) {
    const json a = get_batch(first), b = get_batch(second);
    both_running = a["status"] == "in_progress" && b["status"] == "in_progress" &&
                   a["request_counts"]["completed"].get<int>() < 60;
    if (finished(a)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(both_running) << "the second batch never ran beside the first";
  for (const std::string& id : {first, second}) call("POST", "/v1/batches/{id}/cancel", id);
  for (const std::string& id : {first, second}) EXPECT_TRUE(finished(wait_batch(id, finished, 60)));
}

TEST_F(BatchServiceTest, RestartResumesFromTheJournalWithoutRedoingAnything) {
  std::vector<std::string> lines;
  for (int i = 0; i < 40; ++i)
    lines.push_back(request_line("r" + std::to_string(i), greedy("Item " + std::to_string(i) + ":", 12)));
  const std::string id = create_batch(upload(lines))["id"];
  wait_batch(
      id, [](const json& b) { return b["request_counts"]["completed"].get<int>() >= 3 || finished(b); }, 60);
  service_->shutdown();
  const std::string journal = dir_.file("data/batches/" + id + "/journal.jsonl");
  std::set<std::string> before;
  {
    std::ifstream in(journal);
    std::string line;
    while (std::getline(in, line)) before.insert(json::parse(line)["custom_id"].get<std::string>());
  }
  const BatchRecord stored = BatchStore(dir_.file("data/batches")).get(id).value();
  if (stored.status == BatchStatus::Completed) GTEST_SKIP() << "the batch finished before the restart";
  EXPECT_EQ(stored.status, BatchStatus::InProgress);
  EXPECT_GE(before.size(), 3u);
  EXPECT_LT(before.size(), 40u);

  service_.reset();
  start_service();
  const json done = wait_batch(id, finished, 120);
  ASSERT_EQ(done["status"], "completed") << done.dump();
  EXPECT_EQ(done["request_counts"]["completed"], 40);
  std::map<std::string, int> seen;
  for (const json& rec : records(done["output_file_id"])) ++seen[rec["custom_id"]];
  EXPECT_EQ(seen.size(), 40u);
  for (const auto& [cid, n] : seen) EXPECT_EQ(n, 1) << cid;
}

TEST_F(BatchServiceTest, OneServicePerDataDirectory) {
  try {
    BatchService second(*engine_, *model_, options());
    FAIL() << "a second service on the same data directory started";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("another server"), std::string::npos) << e.what();
  }
  BatchServiceOptions no_dir = options();
  no_dir.data_dir = "";
  EXPECT_THROW(BatchService(*engine_, *model_, no_dir), Error);
}

TEST_F(BatchServiceTest, InterruptedStatesSettleOnStartup) {
  service_.reset();
  const std::string input = dir_.file("in.jsonl");
  test::write_text(input, request_line("only", greedy("Hi", 2)) + "\n");
  std::string cancelling_id, finalizing_id;
  {
    BatchStore store(dir_.file("data/batches"));
    BatchRecord b;
    b.endpoint = "/v1/completions";
    b.input_file_id = "file-gone";
    b.counts.total = 1;
    BatchRecord c = store.create(b, input);
    transition(c, BatchStatus::InProgress, 1);
    transition(c, BatchStatus::Cancelling, 2);
    store.save(c);
    cancelling_id = c.id;
    BatchRecord f = store.create(b, input);
    transition(f, BatchStatus::InProgress, 1);
    transition(f, BatchStatus::Finalizing, 2);
    store.save(f);
    finalizing_id = f.id;
    test::write_text(store.journal_path(f.id),
                     R"({"id":"x","custom_id":"only","response":{"status_code":200,"body":{}},"error":null})" "\n");
  }
  start_service();
  ASSERT_TRUE(service_->wait_idle(30));
  EXPECT_EQ(get_batch(cancelling_id)["status"], "cancelled");
  const json f = get_batch(finalizing_id);
  EXPECT_EQ(f["status"], "completed");
  EXPECT_EQ(f["request_counts"]["completed"], 1);
  EXPECT_EQ(records(f["output_file_id"]).size(), 1u);
}

}  // namespace
}  // namespace db::server
