// Shared helpers of the model integration tests: the generated fixtures, a tiny
// paged-KV driver that plays the batching core's role, and comparisons.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "error_of.h"
#include "model/kv_store.h"
#include "model/model.h"
#include "util/thread_pool.h"

namespace db::test {

// tests/data/model/<name>: reference.json + reference_logits.bin (+ checkpoint and GGUF files).
struct Fixture {
  std::string dir;
  std::string arch;
  int vocab = 0;
  std::vector<std::vector<int32_t>> sequences;
  std::vector<std::vector<float>> reference;  // per sequence: [len][vocab] logits from transformers
};
Fixture load_fixture(const std::string& name);

// Model path of a fixture format: "safetensors" (the directory), "f32", "f16", "q8_0" (GGUF files).
std::string fixture_model_path(const Fixture& f, const std::string& format);

// Drives a model over fixed token sequences the way the batching core does:
// blocks come from a shuffled free list, each step feeds chunks of several
// sequences, and logits of every fed position are kept per sequence.
class PagedRunner {
 public:
  PagedRunner(Model& model, int block_size, int64_t num_blocks, DType kv_dtype, int threads, uint32_t shuffle_seed);

  int add_sequence(std::vector<int32_t> tokens);
  // Appends a token to feed later (e.g. a greedy pick).
  void append(int seq, int32_t token) { seqs_[seq].tokens.push_back(token); }
  // Argmax of the logits of the last position fed.
  int32_t greedy_next(int seq) const;
  // One forward: for each (sequence, n), feeds its next n tokens. Returns the batch size.
  int step(const std::vector<std::pair<int, int>>& chunks);
  bool finished(int seq) const { return seqs_[seq].fed == static_cast<int>(seqs_[seq].tokens.size()); }
  int fed(int seq) const { return seqs_[seq].fed; }
  // [len][vocab] logits of every position fed so far.
  const std::vector<float>& logits(int seq) const { return seqs_[seq].logits; }
  KVStore& kv() { return *kv_; }

 private:
  struct Seq {
    std::vector<int32_t> tokens;
    int fed = 0;
    std::vector<int32_t> blocks;
    std::vector<float> logits;
  };
  Model& model_;
  int block_size_;
  std::unique_ptr<KVStore> kv_;
  std::unique_ptr<ThreadPool> pool_;
  std::vector<int32_t> free_blocks_;  // popped from the back
  std::vector<Seq> seqs_;
  std::vector<float> step_logits_;
};

// `count` token sequences of vocab ids, sequence s holding first_len + s * len_step
// tokens of a fixed pattern (distinct per sequence; the same on every call).
std::vector<std::vector<int32_t>> patterned_sequences(int vocab, int count, int first_len, int len_step);

// Per-sequence logits under three schedules of the same sequences.
using SeqLogits = std::vector<std::vector<float>>;
// Every sequence in one batch, whole.
SeqLogits run_all_at_once(PagedRunner& r, const std::vector<std::vector<int32_t>>& seqs);
// Each sequence alone in its own forward.
SeqLogits run_one_by_one(PagedRunner& r, const std::vector<std::vector<int32_t>>& seqs);
// Staggered starts; prompts (first half) fed in uneven chunks, then one token per
// step, so prefill chunks and decodes of different sequences share batches.
SeqLogits run_chunked_mixed(PagedRunner& r, const std::vector<std::vector<int32_t>>& seqs);

// Adds `prompt` to r as a new sequence, feeds it, then decodes n greedy tokens,
// feeding each but the last; r.logits(*seq) keeps every fed position's logits.
std::vector<int32_t> greedy_decode(PagedRunner& r, const std::vector<int32_t>& prompt, int n, int* seq = nullptr);

// Largest |logit - reference| accepted for a fixture run through `format` with a
// KV cache of `kv_dtype`: an absolute part plus parts proportional to the
// reference's largest |logit|. F32 and F16 fixture weights hold the same numbers
// (the generator rounds them to values both represent), so only float summation
// order separates them from the reference; Q8_0 rounds every weight (and the
// kernels every activation row) to 8 bits. A 16-bit KV cache rounds every cached
// K and V element (BF16 keeps 8 significant bits, F16 11); a Q8_0 cache rounds
// each to one of 255 steps of its 32-element block's largest |value|.
double reference_tolerance(const Fixture& f, const std::string& format, DType kv_dtype);

// Largest |a - b| over all elements (a, b of equal shape); infinity when any is not finite.
double max_abs_diff(const SeqLogits& a, const SeqLogits& b);
bool bit_identical(const SeqLogits& a, const SeqLogits& b);

}  // namespace db::test
