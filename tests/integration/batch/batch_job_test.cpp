// A small real batch on the default model, run in-process: one record per line,
// OpenAI shapes for completions and chat, error records for the bad lines, and
// a rerun that finds everything done.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "batch/batch_job.h"
#include "batch_test_util.h"
#include "bundle/model_bundle.h"
#include "engine/engine.h"

namespace db::test {
namespace {

using nlohmann::json;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> small_batch() {
  const json user = json::array({{{"role", "user"}, {"content", "What is the capital of France?"}}});
  return {
      completion_line("c-plain", {{"prompt", "The capital of France is"}, {"max_tokens", 12}, {"temperature", 0}}),
      completion_line("c-same-1", {{"prompt", "Once upon a time"}, {"max_tokens", 10}, {"temperature", 0}}),
      completion_line("c-same-2", {{"prompt", "Once upon a time"}, {"max_tokens", 10}, {"temperature", 0}}),
      completion_line("c-multi", {{"prompt", json::array({"One, two,", "Red, green,"})}, {"n", 2}, {"max_tokens", 6},
                                  {"temperature", 0}}),
      completion_line("c-stop", {{"prompt", "1, 2, 3, 4,"}, {"max_tokens", 24}, {"stop", ","}, {"temperature", 0}}),
      completion_line("c-echo", {{"prompt", "Hello"}, {"max_tokens", 5}, {"echo", true}, {"temperature", 0}}),
      completion_line("c-logprobs", {{"prompt", "The sun is"}, {"max_tokens", 4}, {"logprobs", 2}, {"temperature", 0}}),
      completion_line("c-tokens", {{"prompt", json::array({504, 3575, 282, 4649})}, {"max_tokens", 6},
                                   {"temperature", 0}}),
      chat_line("chat-1", {{"messages", user}, {"max_tokens", 16}, {"temperature", 0}}),
      chat_line("chat-2", {{"messages", json::array({{{"role", "system"}, {"content", "Answer briefly."}},
                                                     {{"role", "user"}, {"content", "Name a color."}}})},
                           {"max_completion_tokens", 12},
                           {"temperature", 0}}),
      chat_line("chat-parts", {{"messages", json::array({{{"role", "user"},
                                                          {"content", json::array({{{"type", "text"}, {"text", "Say"}},
                                                                                   {{"type", "text"}, {"text", "hi"}}})}}})},
                               {"max_tokens", 8},
                               {"temperature", 0}}),
      chat_line("chat-logprobs", {{"messages", user}, {"max_tokens", 5}, {"logprobs", true}, {"top_logprobs", 3},
                                  {"temperature", 0}}),
      chat_line("chat-seeded", {{"messages", user}, {"max_tokens", 8}, {"temperature", 0.8}, {"seed", 42}}),
      chat_line("chat-n2", {{"messages", user}, {"max_tokens", 6}, {"n", 2}, {"temperature", 0.7}, {"seed", 7}}),
      chat_line("chat-penalties", {{"messages", user}, {"max_tokens", 8}, {"temperature", 0},
                                   {"repetition_penalty", 1.2}, {"presence_penalty", 0.5}}),
      completion_line("c-too-long", {{"prompt", "Hi"}, {"max_tokens", 100000000}}),
      // The three bad lines.
      R"({"custom_id": "broken", "method": "POST", "url": "/v1/completions", "body": {"prompt": )",
      completion_line("c-plain", {{"prompt", "dup"}, {"max_tokens", 4}}),
      completion_line("c-bad-type", {{"prompt", "x"}, {"temperature", "hot"}}),
      chat_line("chat-last", {{"messages", user}, {"max_tokens", 4}, {"temperature", 0}}),
  };
}

void check_usage(const json& body) {
  const auto& u = body.at("usage");
  EXPECT_GT(u.at("prompt_tokens").get<int>(), 0);
  EXPECT_EQ(u.at("total_tokens").get<int>(), u.at("prompt_tokens").get<int>() + u.at("completion_tokens").get<int>());
}

TEST(BatchJob, SmallBatchOnTheDefaultModel) {
  ASSERT_TRUE(default_model_present());
  ScratchDir dir("batch_job");
  const auto lines = small_batch();
  ASSERT_EQ(lines.size(), 20u);
  write_lines(dir.file("in.jsonl"), lines);

  auto bundle = ModelBundle::open(kDefaultModelPath);
  EngineConfig cfg;
  cfg.threads = 2;
  cfg.max_num_seqs = 16;
  cfg.kv_cache_memory = 96ll << 20;
  Engine engine(*bundle, cfg);
  batch::BatchJobOptions opts;
  opts.input_path = dir.file("in.jsonl");
  opts.output_path = dir.file("out.jsonl");
  opts.model_name = "smollm2";
  opts.max_context = bundle->model().config().max_context;
  opts.max_in_flight = 8;  // smaller than the batch: exercises the submission window

  const batch::BatchSummary s = batch::run_batch_job(engine, *bundle, opts);
  EXPECT_EQ(s.input_lines, 20u);
  EXPECT_EQ(s.ok, 16u);
  EXPECT_EQ(s.failed, 4u);
  EXPECT_EQ(s.skipped, 0u);
  EXPECT_GT(s.generated_tokens, 0);

  const auto records = read_records(opts.output_path);
  ASSERT_EQ(records.size(), 20u);
  std::map<std::string, json> by_id;
  std::multiset<std::string> error_codes;
  for (const json& r : records) {
    ASSERT_TRUE(r.at("id").get<std::string>().rfind("batch_req_", 0) == 0) << r;
    if (r.at("error").is_null()) {
      EXPECT_EQ(r.at("response").at("status_code"), 200);
      EXPECT_TRUE(r.at("response").at("request_id").is_string());
    } else {
      EXPECT_TRUE(r.at("response").is_null());
      error_codes.insert(r["error"]["code"].get<std::string>());
      EXPECT_TRUE(r["error"]["message"].is_string());
    }
    const std::string id = r["custom_id"].is_null() ? "<null>" : r["custom_id"].get<std::string>();
    if (by_id.count(id)) by_id[id + "#2"] = r;
    else by_id[id] = r;
  }
  EXPECT_EQ(error_codes, (std::multiset<std::string>{"invalid_json", "duplicate_custom_id", "invalid_type",
                                                     "context_length_exceeded"}));
  EXPECT_TRUE(by_id.count("<null>"));
  EXPECT_EQ(by_id.at("c-bad-type")["error"]["code"], "invalid_type");
  EXPECT_NE(by_id.at("c-bad-type")["error"]["message"].get<std::string>().find("temperature"), std::string::npos);
  EXPECT_EQ(by_id.at("c-too-long")["error"]["code"], "context_length_exceeded");
  // The first c-plain ran; the duplicate line got an error.
  ASSERT_TRUE(by_id.count("c-plain#2"));
  const json& plain_ok = by_id.at("c-plain")["error"].is_null() ? by_id.at("c-plain") : by_id.at("c-plain#2");
  const json& plain_dup = by_id.at("c-plain")["error"].is_null() ? by_id.at("c-plain#2") : by_id.at("c-plain");
  EXPECT_EQ(plain_dup["error"]["code"], "duplicate_custom_id");

  // Completion shapes.
  const json& body = plain_ok["response"]["body"];
  EXPECT_EQ(body["object"], "text_completion");
  EXPECT_EQ(body["model"], "smollm2");
  EXPECT_TRUE(body["id"].get<std::string>().rfind("cmpl-", 0) == 0);
  EXPECT_TRUE(body["created"].is_number_integer());
  ASSERT_EQ(body["choices"].size(), 1u);
  EXPECT_EQ(body["choices"][0]["index"], 0);
  EXPECT_TRUE(body["choices"][0]["text"].is_string());
  EXPECT_TRUE(body["choices"][0]["logprobs"].is_null());
  const std::string finish = body["choices"][0]["finish_reason"];
  EXPECT_TRUE(finish == "stop" || finish == "length") << finish;
  EXPECT_LE(body["usage"]["completion_tokens"].get<int>(), 12);
  check_usage(body);

  // Greedy: the same request twice gives the same text.
  EXPECT_EQ(choice_texts(by_id.at("c-same-1")), choice_texts(by_id.at("c-same-2")));
  // Two prompts x n=2: four choices, prompt-major, indices 0..3; greedy samples of one prompt agree.
  const auto multi = choice_texts(by_id.at("c-multi"));
  ASSERT_EQ(multi.size(), 4u);
  EXPECT_EQ(multi[0], multi[1]);
  EXPECT_EQ(multi[2], multi[3]);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(by_id.at("c-multi")["response"]["body"]["choices"][i]["index"], i);
  check_usage(by_id.at("c-multi")["response"]["body"]);
  // Stop strings end the text and are not part of it.
  const json& stop_choice = by_id.at("c-stop")["response"]["body"]["choices"][0];
  EXPECT_EQ(stop_choice["text"].get<std::string>().find(','), std::string::npos) << stop_choice;
  EXPECT_EQ(stop_choice["finish_reason"], "stop");
  // Echo: the text starts with the prompt.
  EXPECT_EQ(choice_texts(by_id.at("c-echo"))[0].rfind("Hello", 0), 0u);
  // Completion logprobs: one entry per generated token, two alternatives each.
  const json& clp = by_id.at("c-logprobs")["response"]["body"]["choices"][0]["logprobs"];
  const int c_tokens = by_id.at("c-logprobs")["response"]["body"]["usage"]["completion_tokens"];
  EXPECT_EQ(clp["tokens"].size(), static_cast<size_t>(c_tokens));
  EXPECT_EQ(clp["token_logprobs"].size(), static_cast<size_t>(c_tokens));
  ASSERT_GT(c_tokens, 0);
  EXPECT_EQ(clp["top_logprobs"][0].size(), 2u);
  EXPECT_LE(clp["token_logprobs"][0].get<double>(), 0.0);

  // Chat shapes.
  const json& chat = by_id.at("chat-1")["response"]["body"];
  EXPECT_EQ(chat["object"], "chat.completion");
  EXPECT_TRUE(chat["id"].get<std::string>().rfind("chatcmpl-", 0) == 0);
  EXPECT_EQ(chat["choices"][0]["message"]["role"], "assistant");
  EXPECT_FALSE(chat["choices"][0]["message"]["content"].get<std::string>().empty());
  check_usage(chat);
  EXPECT_EQ(choice_texts(by_id.at("chat-n2")).size(), 2u);
  const json& lp = by_id.at("chat-logprobs")["response"]["body"]["choices"][0]["logprobs"]["content"];
  ASSERT_GT(lp.size(), 0u);
  EXPECT_EQ(lp.size(), by_id.at("chat-logprobs")["response"]["body"]["usage"]["completion_tokens"].get<size_t>());
  EXPECT_EQ(lp[0]["top_logprobs"].size(), 3u);
  EXPECT_TRUE(lp[0]["bytes"].is_array());

  // A rerun finds every line done and leaves the file as it was.
  const std::string before = slurp(opts.output_path);
  const batch::BatchSummary again = batch::run_batch_job(engine, *bundle, opts);
  EXPECT_EQ(again.ok, 0u);
  EXPECT_EQ(again.failed, 0u);
  EXPECT_EQ(again.skipped, 20u);
  EXPECT_EQ(slurp(opts.output_path), before);
}

}  // namespace
}  // namespace db::test
