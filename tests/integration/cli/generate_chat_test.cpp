// `deepbatch generate` and `deepbatch chat` run through the built binary on the
// default model: generate prints what the engine produces for the same request,
// and chat's second turn finds the first turn in the prefix cache.
#include <gtest/gtest.h>

#include <filesystem>
#include <mutex>
#include <regex>

#include "bundle/model_bundle.h"
#include "cli_test_util.h"
#include "default_model.h"
#include "engine/engine.h"

namespace db::test {
namespace {

const std::vector<std::string> kCommon = {"-m", kDefaultModelPath, "-t", "2", "--kv-cache-memory", "64M"};

std::vector<std::string> with_common(std::vector<std::string> head, const std::vector<std::string>& tail) {
  head.insert(head.end(), kCommon.begin(), kCommon.end());
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

class CliEngine : public DefaultModelSuite<ModelBundle> {
 protected:
  // Greedy texts of the prompts, submitted together to an engine configured as the CLI runs it.
  static std::vector<std::string> engine_texts(const std::vector<std::string>& prompts, int32_t max_tokens) {
    EngineConfig cfg;
    cfg.threads = 2;
    cfg.kv_cache_memory = int64_t{64} << 20;
    Engine engine(*model_, cfg);
    std::mutex mu;
    std::vector<std::string> texts(prompts.size());
    for (size_t i = 0; i < prompts.size(); ++i) {
      EngineRequest r;
      r.prompt = model_->encode_prompt(prompts[i]);
      r.sampling.temperature = 0;
      r.max_tokens = max_tokens;
      r.ignore_eos = true;
      engine.submit(r, [&, i](RequestId, const SampleOutput& out, const RequestStats&, bool) {
        std::lock_guard<std::mutex> lock(mu);
        texts[i] += out.new_text;
      });
    }
    engine.wait_idle();
    return texts;
  }
};


TEST_F(CliEngine, GenerateStreamsTheEngineGreedyText) {
  const std::string prompt = "The three primary colors are";
  const std::string expected = engine_texts({prompt}, 24).front();
  ASSERT_FALSE(expected.empty());
  const CliResult r = run_deepbatch(with_common({"generate"}, {"-n", "24", "--ignore-eos", "-p", prompt}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, prompt + expected + "\n");
  EXPECT_NE(r.err.find("1 request(s): prompt"), std::string::npos) << r.err;
}

TEST_F(CliEngine, GenerateSeveralPromptsPrintsEachInOrder) {
  const std::vector<std::string> prompts = {"Once upon a time", "def fibonacci(n):"};
  const auto expected = engine_texts(prompts, 12);
  const CliResult r =
      run_deepbatch(with_common({"generate"}, {"-n", "12", "--ignore-eos", "-p", prompts[0], "-p", prompts[1]}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "=== [0] " + prompts[0] + "\n" + expected[0] + "\n--- finish_reason: length\n" + "=== [1] " +
                       prompts[1] + "\n" + expected[1] + "\n--- finish_reason: length\n");
}

struct TurnStats {
  int prompt = 0, cached = 0;
};

std::vector<TurnStats> turn_stats(const std::string& err) {
  std::vector<TurnStats> out;
  const std::regex re(R"(turn (\d+): prompt (\d+) tokens \((\d+) cached)");
  for (auto it = std::sregex_iterator(err.begin(), err.end(), re); it != std::sregex_iterator(); ++it)
    out.push_back({std::stoi((*it)[2]), std::stoi((*it)[3])});
  return out;
}

TEST_F(CliEngine, ChatSecondTurnReusesTheFirstFromThePrefixCache) {
  const std::string first = "Hello! Please name a fruit.";
  const CliResult r = run_deepbatch(with_common({"chat"}, {"-n", "12"}), first + "\nNow name a vegetable.\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto turns = turn_stats(r.err);
  ASSERT_EQ(turns.size(), 2u) << r.err;
  const int first_prompt = static_cast<int>(model_->encode_chat({{"user", first}}).size());
  EXPECT_EQ(turns[0].prompt, first_prompt);
  EXPECT_EQ(turns[0].cached, 0);
  EXPECT_GT(turns[1].prompt, turns[0].prompt);
  // Every full 16-token block of turn 1's prompt is served from the cache on turn 2.
  EXPECT_GE(turns[1].cached, first_prompt / 16 * 16) << r.err;
  EXPECT_GT(turns[1].cached, 0);
  EXPECT_LT(turns[1].cached, turns[1].prompt);
  EXPECT_EQ(r.out.rfind("> ", 0), 0u) << r.out;  // the input prompt, then the streamed replies
}

TEST_F(CliEngine, ChatRejectsBadSamplingOptionsClearly) {
  const CliResult r = run_deepbatch(with_common({"chat"}, {"--top-p", "7"}), "hi\n");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("top_p"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace db::test
