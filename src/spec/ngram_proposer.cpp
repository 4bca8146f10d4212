#include "spec/ngram_proposer.h"

#include <algorithm>
#include <string>

#include "util/error.h"

namespace db {

NgramProposer::NgramProposer(int32_t min_n, int32_t max_n) : min_n_(min_n), max_n_(max_n) {
  if (min_n < 1 || max_n < min_n)
    throw Error("n-gram sizes: need 1 <= ngram-min <= ngram-max, got " + std::to_string(min_n) + " and " +
                std::to_string(max_n));
}

std::vector<int32_t> NgramProposer::draft(std::span<const int32_t> tokens, int32_t max_drafts) const {
  const auto len = static_cast<int64_t>(tokens.size());
  for (int64_t n = std::min<int64_t>(max_n_, len - 1); n >= min_n_; --n) {
    const std::span<const int32_t> suffix = tokens.last(static_cast<size_t>(n));
    // Occurrences start at j < len - n (not the suffix itself); the latest wins.
    for (int64_t j = len - n - 1; j >= 0; --j) {
      if (tokens[static_cast<size_t>(j)] != suffix[0] ||
          !std::equal(suffix.begin(), suffix.end(), tokens.begin() + j))
        continue;
      const int64_t from = j + n;
      const int64_t count = std::min<int64_t>(max_drafts, len - from);
      return {tokens.begin() + from, tokens.begin() + from + count};
    }
  }
  return {};
}

void NgramProposer::propose(std::span<const DraftQuery> queries, std::vector<std::vector<int32_t>>& drafts) {
  drafts.resize(queries.size());
  for (size_t i = 0; i < queries.size(); ++i) drafts[i] = draft(queries[i].tokens, queries[i].max_drafts);
}

}  // namespace db
