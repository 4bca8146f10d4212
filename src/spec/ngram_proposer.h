// Prompt lookup: drafts by finding the sequence's last n tokens earlier in its
// own prompt and output, and proposing what followed them there. No model runs;
// it pays off on text that quotes or rewrites its prompt (edits, extraction,
// code changes) and proposes nothing on text that does not repeat.
//
// For n from max_n down to min_n, the most recent earlier occurrence of the
// last n tokens wins, and the draft is the (up to max_drafts) tokens after it.
#pragma once
#include <cstdint>

#include "spec/draft_proposer.h"

namespace db {

class NgramProposer final : public DraftProposer {
 public:
  // 1 <= min_n <= max_n; throws db::Error otherwise.
  NgramProposer(int32_t min_n, int32_t max_n);
  void propose(std::span<const DraftQuery> queries, std::vector<std::vector<int32_t>>& drafts) override;
  std::string name() const override { return "ngram"; }

  // The draft for one token sequence (exposed for tests).
  std::vector<int32_t> draft(std::span<const int32_t> tokens, int32_t max_drafts) const;

 private:
  int32_t min_n_, max_n_;
};

}  // namespace db
