// LayerProfile bookkeeping: steps grouped by shape, times added to the open step
// only, per-block sums, the table's rows and order, the environment switch, and
// a timer that reads no clock without a profile.
#include "model/layer_profile.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "util/error.h"

namespace db {
namespace {

TEST(LayerProfile, GroupsStepsByShapeAndSumsTheirBlocks) {
  LayerProfile p(2);
  p.begin_step(64, 64);
  p.add(0, LayerBlock::AttnQkv, 0.010);
  p.add(1, LayerBlock::Experts, 0.020);
  p.add(p.step_row(), LayerBlock::Head, 0.005);
  p.end_step();
  p.begin_step(512, 1);
  p.add(0, LayerBlock::DenseFfn, 0.100);
  p.end_step();
  p.begin_step(64, 64);
  p.add(1, LayerBlock::Experts, 0.030);
  p.end_step();

  ASSERT_EQ(p.groups().size(), 2u);
  const LayerProfile::Group& decode = p.groups()[0];
  EXPECT_EQ(decode.tokens, 64);
  EXPECT_EQ(decode.seqs, 64);
  EXPECT_EQ(decode.steps, 2);
  EXPECT_DOUBLE_EQ(decode.at(1, LayerBlock::Experts), 0.050);
  EXPECT_DOUBLE_EQ(decode.at(0, LayerBlock::AttnQkv), 0.010);
  EXPECT_DOUBLE_EQ(decode.at(0, LayerBlock::Experts), 0.0);
  EXPECT_DOUBLE_EQ(decode.block_total(LayerBlock::Experts), 0.050);
  EXPECT_DOUBLE_EQ(decode.total(), 0.065);
  EXPECT_GE(decode.step_seconds, 0.0);
  const LayerProfile::Group& prompt = p.groups()[1];
  EXPECT_EQ(prompt.tokens, 512);
  EXPECT_EQ(prompt.steps, 1);
  EXPECT_DOUBLE_EQ(prompt.total(), 0.100);
}

TEST(LayerProfile, IgnoresTimeOutsideAStepAndRejectsBadRows) {
  LayerProfile p(1);
  p.add(0, LayerBlock::AttnCore, 1.0);  // no step open
  EXPECT_TRUE(p.groups().empty());
  EXPECT_EQ(p.table(), "");
  p.begin_step(1, 1);
  EXPECT_THROW(p.add(2, LayerBlock::AttnCore, 1.0), Error);  // rows 0 and 1 (the step row) only
  p.end_step();
  p.add(0, LayerBlock::AttnCore, 1.0);  // closed again
  EXPECT_DOUBLE_EQ(p.groups()[0].total(), 0.0);
  EXPECT_EQ(p.groups()[0].steps, 1);
}

TEST(LayerProfile, StepTimeCoversWhatRanInside) {
  LayerProfile p(1);
  p.begin_step(1, 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  p.end_step();
  EXPECT_GE(p.groups()[0].step_seconds, 0.005);
}

TEST(LayerProfile, TableListsEveryLayerPerStepAndTheLongestGroupFirst) {
  LayerProfile p(2);
  p.begin_step(1, 1);
  p.add(1, LayerBlock::Router, 0.002);
  p.end_step();
  p.begin_step(512, 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the longer group
  p.add(0, LayerBlock::DenseFfn, 0.004);
  p.end_step();
  const std::string t = p.table();
  const size_t prompt = t.find("1 steps of 512 tokens in 1 sequences");
  const size_t decode = t.find("1 steps of 1 tokens in 1 sequences");
  ASSERT_NE(prompt, std::string::npos) << t;
  ASSERT_NE(decode, std::string::npos) << t;
  EXPECT_LT(prompt, decode);
  EXPECT_NE(t.find("   dense"), std::string::npos);
  EXPECT_NE(t.find("   4.000"), std::string::npos) << t;  // 4 ms of layer 0's dense FFN
  EXPECT_NE(t.find("   2.000"), std::string::npos) << t;  // 2 ms of layer 1's router
  EXPECT_NE(t.find("    step"), std::string::npos);
  EXPECT_NE(t.find(" share %"), std::string::npos);
}

TEST(LayerProfile, TimerAddsToItsRowAndNullReadsNothing) {
  LayerProfile p(1);
  p.begin_step(1, 1);
  {
    LayerTimer t(&p, 0, LayerBlock::Shared);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  { LayerTimer off(nullptr, 5, LayerBlock::Shared); }  // no profile: no row check, nothing added
  p.end_step();
  EXPECT_GE(p.groups()[0].at(0, LayerBlock::Shared), 0.002);
  EXPECT_DOUBLE_EQ(p.groups()[0].total(), p.groups()[0].at(0, LayerBlock::Shared));
}

TEST(LayerProfile, RequestedByTheEnvironment) {
  const char* old = std::getenv("DB_PROFILE_LAYERS");
  const std::string saved = old ? old : "";
  ::unsetenv("DB_PROFILE_LAYERS");
  EXPECT_FALSE(layer_profile_requested());
  ::setenv("DB_PROFILE_LAYERS", "", 1);
  EXPECT_FALSE(layer_profile_requested());
  ::setenv("DB_PROFILE_LAYERS", "0", 1);
  EXPECT_FALSE(layer_profile_requested());
  ::setenv("DB_PROFILE_LAYERS", "1", 1);
  EXPECT_TRUE(layer_profile_requested());
  if (old) ::setenv("DB_PROFILE_LAYERS", saved.c_str(), 1); else ::unsetenv("DB_PROFILE_LAYERS");
}

}  // namespace
}  // namespace db
