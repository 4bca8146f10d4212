// The engine's output side on scripted events: text assembly, stop strings,
// stop tokens, n > 1 samples, abort, stats.
#include "engine/output_processor.h"

#include <gtest/gtest.h>

#include "tokenizer/byte_level.h"

namespace db {
namespace {

constexpr int32_t kEos = 256;

// Ids 0-255 are the bytes; 256 is a special end-of-text token.
std::unique_ptr<Tokenizer> byte_tokenizer() {
  TokenizerParts parts;
  for (int b = 0; b < 256; ++b) parts.tokens.push_back(byte_level::char_of_byte(static_cast<uint8_t>(b)));
  parts.tokens.push_back("<eos>");
  parts.kinds.assign(257, TokenKind::Normal);
  parts.kinds[kEos] = TokenKind::Special;
  parts.eos_id = kEos;
  parts.pre_tokenizer.add_byte_level(false, true);
  return Tokenizer::from_parts(parts);
}

struct Delivered {
  RequestId id;
  SampleOutput out;
  RequestStats stats;
  bool final;
};

class OutputProcessorTest : public ::testing::Test {
 protected:
  OutputProcessorTest()
      : tok_(byte_tokenizer()),
        proc_(*tok_, [this](RequestId seq) { finished_seqs_.push_back(seq); }, [this] { ++groups_done_; }) {}

  void register_group(RequestId id, int32_t n, std::vector<std::string> stop = {},
                      std::vector<int32_t> stop_ids = {}) {
    auto info = std::make_shared<GroupInfo>();
    info->id = id;
    info->n = n;
    info->prompt_tokens = 7;
    info->stop = std::move(stop);
    info->stop_token_ids = std::move(stop_ids);
    info->callback = [this](RequestId rid, const SampleOutput& o, const RequestStats& s, bool final) {
      delivered_.push_back({rid, o, s, final});
    };
    info->submit_time = t0_;
    OutputEvent e;
    e.kind = OutputEvent::Kind::Register;
    e.group_id = id;
    e.group = info;
    proc_.handle(e);
  }

  void tokens(RequestId group, int32_t sample, const std::string& bytes, RequestStatus status = RequestStatus::Running,
              int32_t stop_token = -1, int ms = 10) {
    OutputEvent e;
    e.kind = OutputEvent::Kind::Tokens;
    e.group_id = group;
    e.sample_index = sample;
    for (unsigned char c : bytes) e.tokens.push_back(SampledToken{c, std::nullopt, {}});
    if (stop_token >= 0) e.tokens.push_back(SampledToken{stop_token, std::nullopt, {}});
    e.status = status;
    e.stop_token = stop_token;
    e.time = t0_ + std::chrono::milliseconds(ms);
    proc_.handle(e);
  }

  std::string text_of(int32_t sample) const {
    std::string s;
    for (const Delivered& d : delivered_)
      if (d.out.index == sample) s += d.out.new_text;
    return s;
  }

  EngineClock::time_point t0_ = EngineClock::now();
  std::unique_ptr<Tokenizer> tok_;
  std::vector<RequestId> finished_seqs_;
  int groups_done_ = 0;
  std::vector<Delivered> delivered_;
  OutputProcessor proc_;
};

TEST_F(OutputProcessorTest, TextIsReleasedOnlyAsWholeCharacters) {
  register_group(5, 1);
  tokens(5, 0, "caf\xC3");
  tokens(5, 0, "\xA9!", RequestStatus::FinishedLength);
  ASSERT_EQ(delivered_.size(), 2u);
  EXPECT_EQ(delivered_[0].out.new_text, "caf");
  EXPECT_EQ(delivered_[1].out.new_text, "\xC3\xA9!");
  EXPECT_EQ(delivered_[1].out.finish, FinishReason::Length);
  EXPECT_FALSE(delivered_[0].final);
  EXPECT_TRUE(delivered_[1].final);
  EXPECT_EQ(delivered_[1].stats.generated_tokens, 6);
  EXPECT_EQ(delivered_[1].stats.prompt_tokens, 7);
  EXPECT_EQ(groups_done_, 1);
  EXPECT_EQ(proc_.num_groups(), 0u);
}

TEST_F(OutputProcessorTest, StopStringAcrossEventsEndsTheSampleAndStopsItsSequence) {
  register_group(5, 1, {"END"});
  tokens(5, 0, "ab");
  tokens(5, 0, "cE");
  tokens(5, 0, "NDxy");
  tokens(5, 0, "late");  // computed before the step side saw the stop: dropped
  ASSERT_EQ(delivered_.size(), 3u);
  EXPECT_EQ(delivered_[0].out.new_text, "ab");
  EXPECT_EQ(delivered_[1].out.new_text, "c");
  EXPECT_EQ(delivered_[2].out.new_text, "");
  EXPECT_EQ(delivered_[2].out.finish, FinishReason::Stop);
  EXPECT_EQ(delivered_[2].out.stop_reason, "END");
  EXPECT_TRUE(delivered_[2].final);
  EXPECT_EQ(finished_seqs_, (std::vector<RequestId>{5}));
}

TEST_F(OutputProcessorTest, StopTokenIsATokenWithoutText) {
  register_group(9, 1, {}, {'!'});
  tokens(9, 0, "hi", RequestStatus::FinishedStopped, '!');
  ASSERT_EQ(delivered_.size(), 1u);
  EXPECT_EQ(delivered_[0].out.new_text, "hi");
  EXPECT_EQ(delivered_[0].out.new_token_ids, (std::vector<int32_t>{'h', 'i', '!'}));
  EXPECT_EQ(delivered_[0].out.stop_reason, "33");
  register_group(10, 1);
  tokens(10, 0, "ok", RequestStatus::FinishedStopped, kEos);  // EOS: no stop_reason
  EXPECT_EQ(delivered_.back().out.new_text, "ok");
  EXPECT_EQ(delivered_.back().out.stop_reason, "");
  EXPECT_TRUE(finished_seqs_.empty());
}

TEST_F(OutputProcessorTest, SamplesFinishIndependentlyAndAbortEndsTheRest) {
  register_group(20, 3, {"x"});
  tokens(20, 1, "ax");  // sample 1 stops on a stop string: sequence 21
  tokens(20, 0, "b", RequestStatus::FinishedLength);
  tokens(20, 2, "c");
  OutputEvent abort;
  abort.kind = OutputEvent::Kind::Aborted;
  abort.group_id = 20;
  abort.time = t0_ + std::chrono::milliseconds(50);
  proc_.handle(abort);
  proc_.handle(abort);  // the group is gone: ignored
  ASSERT_EQ(delivered_.size(), 4u);
  EXPECT_EQ(delivered_[0].out.finish, FinishReason::Stop);
  EXPECT_EQ(delivered_[0].out.new_text, "a");
  EXPECT_EQ(delivered_[1].out.finish, FinishReason::Length);
  EXPECT_EQ(delivered_[2].out.finish, FinishReason::None);
  EXPECT_EQ(delivered_[3].out.index, 2);
  EXPECT_EQ(delivered_[3].out.finish, FinishReason::Abort);
  int finals = 0;
  for (const Delivered& d : delivered_) finals += d.final;
  EXPECT_EQ(finals, 1);
  EXPECT_TRUE(delivered_[3].final);
  EXPECT_EQ(finished_seqs_, (std::vector<RequestId>{21}));
  EXPECT_EQ(groups_done_, 1);
}

TEST_F(OutputProcessorTest, StatsFollowTheRequestsLife) {
  register_group(1, 1);
  OutputEvent sched;
  sched.kind = OutputEvent::Kind::Scheduled;
  sched.group_id = 1;
  sched.num_cached_tokens = 4;
  sched.time = t0_ + std::chrono::milliseconds(5);
  proc_.handle(sched);
  tokens(1, 0, "a", RequestStatus::Running, -1, 20);
  tokens(1, 0, "b", RequestStatus::FinishedLength, -1, 30);
  const RequestStats& s = delivered_.back().stats;
  EXPECT_EQ(s.cached_prompt_tokens, 4);
  EXPECT_NEAR(s.queue_seconds, 0.005, 1e-9);
  EXPECT_NEAR(s.ttft_seconds, 0.020, 1e-9);
  EXPECT_NEAR(s.e2e_seconds, 0.030, 1e-9);
  EXPECT_EQ(s.generated_tokens, 2);
}

TEST_F(OutputProcessorTest, FailureEndsSamplesWithTheError) {
  register_group(3, 2);
  OutputEvent fail;
  fail.kind = OutputEvent::Kind::Failed;
  fail.group_id = 3;
  fail.error = "boom";
  proc_.handle(fail);
  ASSERT_EQ(delivered_.size(), 2u);
  EXPECT_EQ(delivered_[0].out.finish, FinishReason::Error);
  EXPECT_EQ(delivered_[1].out.stop_reason, "boom");
  EXPECT_TRUE(delivered_[1].final);
}

}  // namespace
}  // namespace db

namespace db {
namespace {

// Prompt logprobs go out once and in order: a recomputed prefill (after a
// preemption) repeats positions that are dropped; a gap is never filled from later ones.
TEST_F(OutputProcessorTest, PromptLogprobsGoOutOnceInOrder) {
  register_group(1, 2);
  auto scored = [&](int32_t first, std::vector<int32_t> ids) {
    OutputEvent e;
    e.kind = OutputEvent::Kind::PromptLogprobs;
    e.group_id = 1;
    e.first_position = first;
    for (int32_t id : ids)
      e.tokens.push_back(SampledToken{id, first == 0 && e.tokens.empty() ? std::nullopt : std::optional<float>(-1.0f),
                                      {{id, -1.0f}}});
    e.time = t0_;
    proc_.handle(e);
  };
  scored(0, {'a', 'b', 'c'});
  scored(0, {'a', 'b', 'c', 'd'});  // recomputed from the start: only 'd' is new
  scored(6, {'x'});                 // a gap: dropped
  scored(4, {'e'});
  std::vector<int32_t> ids;
  std::vector<std::optional<float>> lps;
  for (const Delivered& d : delivered_) {
    EXPECT_EQ(d.out.index, 0) << "the prompt comes with sample 0";
    EXPECT_FALSE(d.final);
    ids.insert(ids.end(), d.out.prompt_token_ids.begin(), d.out.prompt_token_ids.end());
    lps.insert(lps.end(), d.out.prompt_logprobs.begin(), d.out.prompt_logprobs.end());
  }
  EXPECT_EQ(ids, (std::vector<int32_t>{'a', 'b', 'c', 'd', 'e'}));
  ASSERT_EQ(lps.size(), 5u);
  EXPECT_FALSE(lps[0]);
  EXPECT_EQ(lps[4], -1.0f);
}

}  // namespace
}  // namespace db
