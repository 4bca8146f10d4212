#include "sample/truncation.h"

#include <algorithm>
#include <numeric>

#include "util/error.h"

namespace db {
namespace {

// Buckets are 1 / kBucketsPerKey wide in key = -log(weight); keys past the last
// bucket's start (weights below e^-32) share the last bucket.
constexpr int32_t kBuckets = 2048;
constexpr float kBucketsPerKey = 64.0f;
constexpr float kMaxKey = (kBuckets - 1) / kBucketsPerKey;

inline uint16_t bucket_of(float logit, float max_logit, float inv_temperature) {
  const float key = (max_logit - logit) * inv_temperature;
  return static_cast<uint16_t>((key < kMaxKey ? key : kMaxKey) * kBucketsPerKey);
}

}  // namespace

void select_top_k(const float* logits, int32_t vocab, int32_t k, std::vector<int32_t>& out) {
  DB_CHECK(k > 0 && k <= vocab, "top-k count out of range");
  const RankBefore before{logits};
  if (k > vocab / 16) {
    out.resize(vocab);
    std::iota(out.begin(), out.end(), 0);
    std::nth_element(out.begin(), out.begin() + (k - 1), out.end(), before);
    out.resize(k);
    return;
  }
  // Max-heap under `before`: the front is the worst of the kept tokens. Ids arrive in
  // increasing order, so a later token beats the front only with a strictly larger logit.
  out.resize(k);
  std::iota(out.begin(), out.end(), 0);
  std::make_heap(out.begin(), out.end(), before);
  float worst = logits[out.front()];
  for (int32_t id = k; id < vocab; ++id) {
    if (!(logits[id] > worst)) continue;
    std::pop_heap(out.begin(), out.end(), before);
    out.back() = id;
    std::push_heap(out.begin(), out.end(), before);
    worst = logits[out.front()];
  }
}

int32_t NucleusSelector::select(std::span<int32_t> ids, const float* logits, const float* weights, float max_logit,
                                float inv_temperature, double target_mass) {
  const int32_t count = static_cast<int32_t>(ids.size());
  bucket_mass_.assign(kBuckets, 0.0);
  bucket_of_.resize(count);
  for (int32_t i = 0; i < count; ++i) bucket_of_[i] = bucket_of(logits[ids[i]], max_logit, inv_temperature);
  for (int32_t i = 0; i < count; ++i) bucket_mass_[bucket_of_[i]] += weights[ids[i]];
  // The cut falls in bucket `cut`: the buckets before it hold less than the target.
  double above = 0.0;
  int32_t cut = 0;
  while (cut < kBuckets - 1 && above + bucket_mass_[cut] < target_mass) above += bucket_mass_[cut++];

  // Compact: the buckets before the cut (all kept), then the cut bucket by rank; the rest is dropped.
  int32_t before_cut = 0;
  cut_ids_.clear();
  for (int32_t i = 0; i < count; ++i) {
    if (bucket_of_[i] < cut) ids[before_cut++] = ids[i];
    else if (bucket_of_[i] == cut) cut_ids_.push_back(ids[i]);
  }
  std::sort(cut_ids_.begin(), cut_ids_.end(), RankBefore{logits});
  int32_t kept = before_cut;
  for (int32_t id : cut_ids_) {
    if (above >= target_mass) break;
    ids[kept++] = id;
    above += weights[id];
  }
  return kept;
}

}  // namespace db
