// JSONL prompt files and ShareGPT dumps: what they turn into, and errors that name
// the offending line or entry.
#include <gtest/gtest.h>

#include <sstream>

#include "error_of.h"
#include "loadtest/prompt_files.h"

namespace db::loadtest {
namespace {

LoadedPrompts jsonl(const std::string& text, int32_t default_max_tokens = 64) {
  std::istringstream in(text);
  return parse_prompt_jsonl(in, "prompts.jsonl", default_max_tokens);
}

LoadedPrompts sharegpt(const std::string& text) {
  std::istringstream in(text);
  return parse_sharegpt(in, "sharegpt.json");
}

using test::error_of;

TEST(PromptJsonl, ReadsPromptsAndChatMessages) {
  const LoadedPrompts p = jsonl(
      "{\"prompt\": \"one two three four five six seven eight nine ten\"}\n"
      "\n"
      "{\"messages\": [{\"role\": \"system\", \"content\": \"be brief\"},"
      " {\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"hello there\"}]}], \"max_tokens\": 9}\n");
  ASSERT_EQ(p.requests.size(), 2u);
  EXPECT_FALSE(p.requests[0].is_chat());
  EXPECT_EQ(p.requests[0].prompt_tokens, 13);  // 10 words x 1.3
  EXPECT_EQ(p.requests[0].max_tokens, 64);
  EXPECT_TRUE(p.requests[1].is_chat());
  EXPECT_EQ(p.requests[1].messages.size(), 2u);
  EXPECT_EQ(p.requests[1].prompt_tokens, 3 + 3);  // "be brief" and "hello there": round(2 x 1.3) each
  EXPECT_EQ(p.requests[1].max_tokens, 9);
}

TEST(PromptJsonl, MalformedLinesAreNamed) {
  const std::string good = "{\"prompt\": \"hi\"}\n";
  EXPECT_EQ(error_of([&] { jsonl(good + "\n{\"prompt\": \"x\"\n"); }), "prompts.jsonl:3: not valid JSON");
  EXPECT_EQ(error_of([&] { jsonl(good + "[1, 2]\n"); }), "prompts.jsonl:2: expected a JSON object");
  EXPECT_EQ(error_of([&] { jsonl("{\"prompt\": \"a\", \"messages\": []}\n"); }),
            "prompts.jsonl:1: expected exactly one of \"prompt\" and \"messages\"");
  EXPECT_EQ(error_of([&] { jsonl("{\"prompt\": 5}\n"); }), "prompts.jsonl:1: \"prompt\" must be a string");
  EXPECT_EQ(error_of([&] { jsonl(good + good + "{\"messages\": [{\"content\": \"x\"}]}\n"); }),
            "prompts.jsonl:3: messages[0] needs a string \"role\"");
  EXPECT_EQ(error_of([&] { jsonl("{\"prompt\": \"a\", \"max_tokens\": 0}\n"); }),
            "prompts.jsonl:1: \"max_tokens\" must be an integer >= 1");
  EXPECT_EQ(error_of([&] { jsonl("\n\n"); }), "prompts.jsonl: no prompts");
}

TEST(PromptJsonl, MissingFileNamesThePath) {
  EXPECT_NE(error_of([] { load_prompt_jsonl("/nonexistent/prompts.jsonl", 8); }).find("/nonexistent/prompts.jsonl"),
            std::string::npos);
}

TEST(ShareGpt, FirstHumanTurnIsThePromptAndTheNextGptTurnSetsMaxTokens) {
  const LoadedPrompts p = sharegpt(R"([
    {"id": "a", "conversations": [
      {"from": "system", "value": "ignored"},
      {"from": "human", "value": "what is two plus two"},
      {"from": "human", "value": "a second question"},
      {"from": "gpt", "value": "one two three four five six seven eight nine ten"},
      {"from": "human", "value": "later turns are ignored"}]},
    {"conversations": [{"from": "human", "value": "no answer"}]},
    {"conversations": [{"from": "gpt", "value": "answer without question"}]},
    {"conversations": [{"from": "human", "value": "short"}, {"from": "gpt", "value": "ok"}]}
  ])");
  ASSERT_EQ(p.requests.size(), 2u);
  EXPECT_EQ(p.skipped, 2);
  EXPECT_EQ(p.requests[0].prompt, "what is two plus two");
  EXPECT_EQ(p.requests[0].prompt_tokens, 7);  // round(5 x 1.3 = 6.5)
  EXPECT_EQ(p.requests[0].max_tokens, 13);    // 10 words x 1.3
  EXPECT_EQ(p.requests[1].max_tokens, 1);     // round(1.3)
}

TEST(ShareGpt, MalformedEntriesAreNamed) {
  EXPECT_EQ(error_of([] { sharegpt("{\"conversations\": []}"); }),
            "sharegpt.json: expected a JSON list of conversations");
  EXPECT_EQ(error_of([] { sharegpt(R"([{"conversations": [{"from": "human", "value": "a"}, {"from": "gpt", "value": "b"}]},
                                       {"turns": []}])"); }),
            "sharegpt.json: entry 1: expected an object with a \"conversations\" list");
  EXPECT_EQ(error_of([] { sharegpt(R"([{"conversations": [{"from": "human", "value": 3}]}])"); }),
            "sharegpt.json: entry 0: conversations[0] needs string \"from\" and \"value\"");
  EXPECT_NE(error_of([] { sharegpt("[{"); }).find("sharegpt.json: not valid JSON"), std::string::npos);
  EXPECT_EQ(error_of([] { sharegpt(R"([{"conversations": []}])"); }),
            "sharegpt.json: no conversation has a human turn followed by a gpt turn");
}

}  // namespace
}  // namespace db::loadtest
