// The R1 reasoning split: text before "</think>" is reasoning (a leading "<think>"
// dropped), the rest the answer; the streaming splitter gives the same parts for
// every way the text can be cut into deltas; R1 templates are recognised.
#include "chat/reasoning_split.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace db::chat {
namespace {

TEST(ReasoningSplit, SplitsAtTheClosingTag) {
  ReasoningParts p = split_reasoning("<think>\nLet me see.\n</think>\n\nIt is 4.");
  EXPECT_EQ(p.reasoning, "\nLet me see.\n");
  ASSERT_TRUE(p.content);
  EXPECT_EQ(*p.content, "\n\nIt is 4.");
  p = split_reasoning("Thinking without the opening tag</think>Done");
  EXPECT_EQ(p.reasoning, "Thinking without the opening tag");
  EXPECT_EQ(*p.content, "Done");
  p = split_reasoning("still thinking <thi");
  EXPECT_EQ(p.reasoning, "still thinking <thi");
  EXPECT_FALSE(p.content) << "no answer before </think>";
  p = split_reasoning("a</think>b</think>c");
  EXPECT_EQ(p.reasoning, "a");
  EXPECT_EQ(*p.content, "b</think>c") << "only the first closing tag splits";
}

// Every split of `text` into three deltas gives split_reasoning's parts.
void expect_stream_matches(const std::string& text) {
  const ReasoningParts want = split_reasoning(text);
  for (size_t i = 0; i <= text.size(); ++i) {
    for (size_t j = i; j <= text.size(); ++j) {
      ReasoningStreamSplitter s;
      std::string reasoning, content;
      for (const std::string& piece : {text.substr(0, i), text.substr(i, j - i), text.substr(j)}) {
        const auto d = s.push(piece);
        reasoning += d.reasoning;
        content += d.content;
      }
      const auto d = s.flush();
      reasoning += d.reasoning;
      content += d.content;
      EXPECT_EQ(reasoning, want.reasoning) << "cuts " << i << ", " << j << " of " << text;
      EXPECT_EQ(content, want.content.value_or("")) << "cuts " << i << ", " << j << " of " << text;
    }
  }
}

TEST(ReasoningSplit, StreamingGivesTheSamePartsWhereverTheTextIsCut) {
  for (const std::string& text : {"<think>ab<c</think>de</f", "<thin", "x<think>y</thin", "</think>", "<think></think>",
                                  "no tags at all", "<<think>></think>>"})
    expect_stream_matches(text);
}

TEST(ReasoningSplit, RecognisesTemplatesThatThink) {
  for (const char* name : {"deepseek-r1", "deepseek-r1-0528", "deepseek-r1-distill-qwen", "deepseek-r1-distill-llama"}) {
    std::ifstream f(std::string(DB_SOURCE_DIR) + "/tests/data/chat/templates/" + name + ".jinja");
    ASSERT_TRUE(f) << name;
    std::stringstream ss;
    ss << f.rdbuf();
    EXPECT_TRUE(template_thinks(ss.str())) << name;
  }
  for (const char* name : {"deepseek-v3", "smollm2", "qwen2.5-instruct"}) {
    std::ifstream f(std::string(DB_SOURCE_DIR) + "/tests/data/chat/templates/" + name + ".jinja");
    ASSERT_TRUE(f) << name;
    std::stringstream ss;
    ss << f.rdbuf();
    EXPECT_FALSE(template_thinks(ss.str())) << name;
  }
}

}  // namespace
}  // namespace db::chat
