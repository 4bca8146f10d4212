// Constrained decoding on the default model: outputs under a JSON schema parse
// and follow it (greedy, sampled, n > 1), regexes and choices hold, invalid specs
// are refused, and a constraint does not break exactness: a request's greedy
// tokens are the same alone and in a batch whose small KV pool forces preemption
// (the constraint state is rebuilt from the output tokens).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "engine_test_util.h"
#include "grammar/constraint_compiler.h"
#include "util/error.h"

namespace db::test {
namespace {

const char* kPersonSchema = R"({
  "type": "object",
  "properties": {
    "name": {"type": "string", "maxLength": 24},
    "age": {"type": "integer", "minimum": 0, "maximum": 150},
    "city": {"type": "string", "enum": ["Paris", "London", "Tokyo", "Lima"]},
    "tags": {"type": "array", "items": {"type": "string", "maxLength": 12}, "minItems": 1, "maxItems": 3}
  },
  "required": ["name", "age", "city", "tags"],
  "additionalProperties": false
})";

std::shared_ptr<const TokenConstraint> compile(GrammarSpec::Kind kind, std::string text,
                                               std::vector<std::string> choices = {}) {
  GrammarSpec spec;
  spec.kind = kind;
  spec.text = std::move(text);
  spec.choices = std::move(choices);
  return default_bundle()->constraint_compiler().compile(spec);
}

EngineRequest chat_request(const std::string& question, const std::shared_ptr<const TokenConstraint>& c,
                           int32_t max_tokens = 96) {
  EngineRequest r;
  r.prompt = default_bundle()->encode_chat({{"user", question}});
  r.sampling.temperature = 0;
  r.sampling.constraint = c;
  r.max_tokens = max_tokens;
  return r;
}

const std::vector<std::string>& questions() {
  static const std::vector<std::string> q = {
      "Describe a person who lives in Paris, as JSON.",
      "Invent a character for a story and give their details.",
      "Who is the oldest person you can imagine? Answer in JSON.",
      "Tell me about a traveller from Tokyo.",
      "Make up a baker and list what they like.",
      "Give me a profile of a young student.",
  };
  return q;
}

void expect_person(const SampleResult& s, const std::string& where) {
  ASSERT_EQ(s.finish, FinishReason::Stop) << where << ": " << s.text;
  const nlohmann::json j = nlohmann::json::parse(s.text, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << where << ": not JSON: " << s.text;
  ASSERT_TRUE(j.is_object()) << where;
  EXPECT_EQ(j.size(), 4u) << where << ": " << s.text;
  ASSERT_TRUE(j.contains("name") && j["name"].is_string()) << where << ": " << s.text;
  EXPECT_LE(j["name"].get<std::string>().size(), 24u * 4) << where;  // maxLength counts characters
  ASSERT_TRUE(j.contains("age") && j["age"].is_number_integer()) << where << ": " << s.text;
  EXPECT_GE(j["age"].get<int64_t>(), 0) << where;
  EXPECT_LE(j["age"].get<int64_t>(), 150) << where;
  ASSERT_TRUE(j.contains("city") && j["city"].is_string()) << where;
  EXPECT_TRUE(std::set<std::string>({"Paris", "London", "Tokyo", "Lima"}).count(j["city"].get<std::string>()))
      << where << ": " << s.text;
  ASSERT_TRUE(j.contains("tags") && j["tags"].is_array()) << where;
  EXPECT_GE(j["tags"].size(), 1u) << where;
  EXPECT_LE(j["tags"].size(), 3u) << where;
}

TEST(EngineConstraint, JsonSchemaOutputsParseAndFollowTheSchema) {
  ASSERT_NE(default_bundle(), nullptr);
  const auto schema = compile(GrammarSpec::Kind::JsonSchema, kPersonSchema);
  std::vector<EngineRequest> reqs;
  for (const std::string& q : questions()) reqs.push_back(chat_request(q, schema));
  for (size_t i = 0; i < questions().size(); ++i) {  // sampled, and n = 3 from one state
    EngineRequest r = chat_request(questions()[i], schema);
    r.sampling.temperature = 1.0f;
    r.sampling.seed = 100 + i;
    r.n = i % 2 ? 3 : 1;
    reqs.push_back(r);
  }
  EngineConfig cfg;
  const std::vector<RequestResult> got = run_batch(cfg, reqs);
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].samples.size(), static_cast<size_t>(reqs[i].n)) << "request " << i;
    for (size_t s = 0; s < got[i].samples.size(); ++s)
      expect_person(got[i].samples[s], "request " + std::to_string(i) + " sample " + std::to_string(s));
  }
}

// `copies` copies of `base` in one batch on `blocks` KV blocks (enough to force
// preemption under the first-chunk admission rule) give each request the greedy
// tokens it gave alone.
void expect_same_tokens_when_preempted(const EngineConfig& cfg, const std::vector<EngineRequest>& base,
                                       const std::vector<RequestResult>& alone, int copies, int64_t blocks) {
  std::vector<EngineRequest> batch;
  for (int k = 0; k < copies; ++k) batch.insert(batch.end(), base.begin(), base.end());
  EngineConfig small = cfg;
  small.max_num_seqs = static_cast<int>(batch.size());
  small.max_num_batched_tokens = 256;
  small.admission = AdmissionPolicy::FirstChunk;
  small.kv_cache_memory = kv_bytes_for_blocks(small, blocks);
  EngineStats stats;
  const std::vector<RequestResult> got = run_batch(small, batch, &stats);
  EXPECT_GT(stats.preemptions, 0) << "the KV budget was meant to force preemption";
  for (size_t i = 0; i < batch.size(); ++i) {
    const SampleResult& want = alone[i % base.size()].samples.at(0);
    ASSERT_EQ(got[i].samples.size(), 1u);
    EXPECT_EQ(got[i].samples[0].tokens, want.tokens) << "request " << i << ": " << got[i].samples[0].text;
  }
}

TEST(EngineConstraint, GreedyTokensAreTheSameAloneAndInAPreemptingBatch) {
  ASSERT_NE(default_bundle(), nullptr);
  const auto schema = compile(GrammarSpec::Kind::JsonSchema, kPersonSchema);
  const auto object = compile(GrammarSpec::Kind::JsonObject, "");
  std::vector<EngineRequest> base;
  for (size_t i = 0; i < questions().size(); ++i) base.push_back(chat_request(questions()[i], i % 2 ? object : schema));
  EngineConfig cfg;
  cfg.kv_cache_memory = kv_bytes_for_blocks(cfg, 1 + 2048 / cfg.block_size);
  const std::vector<RequestResult> alone = run_alone(cfg, base);
  expect_same_tokens_when_preempted(cfg, base, alone, 4, 40);
  for (size_t i = 0; i < base.size(); i += 2) expect_person(alone[i].samples.at(0), "alone " + std::to_string(i));
}

// A constraint after a token (a reasoning model's "</think>"): the text before the
// token is free (a +100 bias makes the token the first one), the rest follows the
// constraint (the bias no longer wins once the mask applies), and the greedy tokens
// are the same alone and in a preempting batch (the state is rebuilt past the token).
TEST(EngineConstraint, AConstraintAfterATokenStartsThere) {
  ASSERT_NE(default_bundle(), nullptr);
  const std::vector<int32_t> marker_ids = default_bundle()->tokenizer().encode("Hmm", false);
  ASSERT_FALSE(marker_ids.empty());
  const int32_t marker = marker_ids[0];
  const std::string marker_text = default_bundle()->tokenizer().decode({marker});
  std::vector<EngineRequest> base;
  for (size_t i = 0; i < 4; ++i) {
    EngineRequest r = chat_request(questions()[i], compile(GrammarSpec::Kind::Regex, "[0-9]{3}-[0-9]{4}"));
    r.sampling.constraint_after_token = marker;
    r.sampling.logit_bias = {{marker, 100.0f}};
    base.push_back(r);
  }
  EngineConfig cfg;
  const std::vector<RequestResult> alone = run_alone(cfg, base);
  for (const RequestResult& r : alone) {
    const SampleResult& s = r.samples.at(0);
    ASSERT_FALSE(s.tokens.empty());
    EXPECT_EQ(s.tokens[0], marker) << "before its token the constraint does not apply: " << s.text;
    EXPECT_EQ(s.finish, FinishReason::Stop) << s.text;
    ASSERT_EQ(s.text.substr(0, marker_text.size()), marker_text);
    EXPECT_TRUE(std::regex_match(s.text.substr(marker_text.size()), std::regex("[0-9]{3}-[0-9]{4}"))) << s.text;
  }
  expect_same_tokens_when_preempted(cfg, base, alone, 6, 24);
}

TEST(EngineConstraint, RegexGrammarAndChoiceHold) {
  ASSERT_NE(default_bundle(), nullptr);
  std::vector<EngineRequest> reqs = {
      chat_request("What is your phone number?", compile(GrammarSpec::Kind::Regex, "[0-9]{3}-[0-9]{4}")),
      chat_request("Is the sky blue?", compile(GrammarSpec::Kind::Choice, "", {"yes", "no", "maybe \"so\""})),
      chat_request("Count to three.",
                   compile(GrammarSpec::Kind::Ebnf, "root ::= \"one\" (\", \" number)* \".\"\nnumber ::= \"two\" | \"three\"")),
  };
  reqs[1].sampling.temperature = 1.0f;
  reqs[1].sampling.seed = 7;
  reqs[1].n = 4;
  const std::vector<RequestResult> got = run_batch(EngineConfig{}, reqs);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_TRUE(std::regex_match(got[0].samples.at(0).text, std::regex("[0-9]{3}-[0-9]{4}"))) << got[0].samples[0].text;
  for (const SampleResult& s : got[1].samples)
    EXPECT_TRUE(s.text == "yes" || s.text == "no" || s.text == "maybe \"so\"") << s.text;
  EXPECT_TRUE(std::regex_match(got[2].samples.at(0).text, std::regex("one(, (two|three))*\\.")))
      << got[2].samples[0].text;
  for (const RequestResult& r : got)
    for (const SampleResult& s : r.samples) EXPECT_EQ(s.finish, FinishReason::Stop) << s.text;
}

TEST(EngineConstraint, InvalidSpecsAreRefusedAndCompilationsCached) {
  ASSERT_NE(default_bundle(), nullptr);
  EXPECT_THROW(compile(GrammarSpec::Kind::JsonSchema, R"({"type": "object", "properties": 3})"), Error);
  EXPECT_THROW(compile(GrammarSpec::Kind::Regex, "([0-9]"), Error);
  EXPECT_THROW(compile(GrammarSpec::Kind::Ebnf, "root ::= undefined_rule"), Error);
  EXPECT_THROW(compile(GrammarSpec::Kind::Choice, "", {}), Error);
  try {
    compile(GrammarSpec::Kind::Ebnf, "root ::= \"a\" b ::= \"c\"");
    ADD_FAILURE() << "two rules on one line compiled";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find(".cc:"), std::string::npos) << "no engine source paths: " << e.what();
    EXPECT_NE(std::string(e.what()).find("invalid grammar"), std::string::npos) << e.what();
  }
  ConstraintCompiler& cc = default_bundle()->constraint_compiler();
  const ConstraintCompilerStats before = cc.stats();
  const auto a = compile(GrammarSpec::Kind::Regex, "[a-z]+@example\\.com");
  const auto b = compile(GrammarSpec::Kind::Regex, "[a-z]+@example\\.com");
  EXPECT_EQ(a.get(), b.get()) << "one schema compiles once";
  EXPECT_EQ(cc.stats().compiled, before.compiled + 1);
  EXPECT_EQ(cc.stats().cache_hits, before.cache_hits + 1);
  EXPECT_GT(cc.stats().cache_bytes, 0);
}

TEST(EngineConstraint, TheCacheIsBoundedInBytes) {
  ASSERT_NE(default_bundle(), nullptr);
  ConstraintCompiler small(default_bundle()->tokenizer(), default_bundle()->model().config().vocab, 256,
                           /*cache_bytes=*/1);
  GrammarSpec a{GrammarSpec::Kind::Regex, "[0-9]+", {}}, b{GrammarSpec::Kind::Regex, "[a-z]+", {}};
  const auto first = small.compile(a);
  small.compile(b);  // over the byte budget: the older entry goes, the newest stays
  EXPECT_EQ(small.compile(b).get(), small.compile(b).get());
  const auto again = small.compile(a);
  EXPECT_NE(first.get(), again.get()) << "recompiled after eviction";
  EXPECT_EQ(small.stats().compiled, 3);
  EXPECT_NE(first->start(), nullptr) << "an evicted constraint lives on while used";
}

}  // namespace
}  // namespace db::test
