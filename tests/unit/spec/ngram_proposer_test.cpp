#include "spec/ngram_proposer.h"

#include <gtest/gtest.h>

#include "util/error.h"

namespace db {
namespace {

TEST(NgramProposer, ProposesWhatFollowedTheLatestEarlierOccurrence) {
  const NgramProposer p(1, 3);
  // Last 3 tokens (7 8 9) occurred at 1..3 followed by 4 5 6, and at 6..8 followed by 1 2.
  const std::vector<int32_t> t = {0, 7, 8, 9, 4, 5, 7, 8, 9, 1, 2, 3, 7, 8, 9};
  EXPECT_EQ(p.draft(t, 2), (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(p.draft(t, 10), (std::vector<int32_t>{1, 2, 3, 7, 8, 9}));  // up to the end of the sequence
}

TEST(NgramProposer, LongerNgramsWinOverShorterOnes) {
  const NgramProposer p(1, 2);
  // Bigram (3 4) occurs once, followed by 10; unigram 4 occurs later followed by 20.
  const std::vector<int32_t> t = {3, 4, 10, 4, 20, 3, 4};
  EXPECT_EQ(p.draft(t, 1), (std::vector<int32_t>{10}));
  const NgramProposer unigram(1, 1);
  EXPECT_EQ(unigram.draft(t, 1), (std::vector<int32_t>{20}));
}

TEST(NgramProposer, NoMatchNoDraft) {
  const NgramProposer p(2, 4);
  EXPECT_TRUE(p.draft(std::vector<int32_t>{1, 2, 3, 4, 5}, 4).empty());
  EXPECT_TRUE(p.draft(std::vector<int32_t>{1}, 4).empty());
  EXPECT_TRUE(p.draft(std::vector<int32_t>{}, 4).empty());
  // A periodic sequence drafts its own continuation (the match overlaps the suffix).
  EXPECT_EQ(p.draft(std::vector<int32_t>{5, 6, 5, 6, 5, 6}, 3), (std::vector<int32_t>{5, 6}));
}

TEST(NgramProposer, BatchedProposalsMatchSingleOnes) {
  NgramProposer p(2, 3);
  const std::vector<int32_t> a = {1, 2, 3, 1, 2}, b = {9, 9, 9};
  const DraftQuery q[] = {{1, a, 2, 3}, {2, b, 1, 1}};
  std::vector<std::vector<int32_t>> drafts;
  p.propose(q, drafts);
  ASSERT_EQ(drafts.size(), 2u);
  EXPECT_EQ(drafts[0], p.draft(a, 3));
  EXPECT_EQ(drafts[1], (std::vector<int32_t>{9}));
}

TEST(NgramProposer, RejectsBadSizes) {
  EXPECT_THROW(NgramProposer(0, 2), Error);
  EXPECT_THROW(NgramProposer(3, 2), Error);
}

}  // namespace
}  // namespace db
