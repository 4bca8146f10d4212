// Top-k and top-p candidate selection. Candidates are ranked by (logit desc,
// id asc), which makes every cut deterministic on ties.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

namespace db {

// True when token a ranks before token b.
struct RankBefore {
  const float* logits;
  bool operator()(int32_t a, int32_t b) const { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); }
};

// Overwrites `out` with the ids of the k best-ranked tokens of logits[0, vocab), in no
// particular order; 0 < k <= vocab. A single heap pass when k is small, nth_element otherwise.
void select_top_k(const float* logits, int32_t vocab, int32_t k, std::vector<int32_t>& out);

// Top-p over the candidates `ids`, whose weights are exp(-key) with
// key = (max_logit - logit) * inv_temperature. A candidate is kept iff the total
// weight of the candidates ranked above it is < target_mass (> 0), so the best one
// always is. Moves the kept candidates to the front of ids (the rest of ids is left
// unspecified) and returns their count.
// Expected O(ids.size()): candidates are bucketed by key and only the bucket
// where the cut falls is sorted.
class NucleusSelector {
 public:
  int32_t select(std::span<int32_t> ids, const float* logits, const float* weights, float max_logit,
                 float inv_temperature, double target_mass);

 private:
  std::vector<double> bucket_mass_;  // per bucket of key: weight of the candidates in it
  std::vector<uint16_t> bucket_of_;  // per candidate position: its bucket
  std::vector<int32_t> cut_ids_;     // candidates in the bucket where the cut falls
};

}  // namespace db
