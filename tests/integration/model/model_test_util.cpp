#include "model_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

namespace db::test {

Fixture load_fixture(const std::string& name) {
  Fixture f;
  f.dir = std::string(DB_TEST_DATA) + "/model/" + name;
  std::ifstream in(f.dir + "/reference.json");
  if (!in) throw std::runtime_error("missing fixture " + f.dir + "/reference.json (run scripts/gen_model_fixtures.py)");
  const nlohmann::json j = nlohmann::json::parse(in);
  f.arch = j.at("arch").get<std::string>();
  f.vocab = j.at("vocab").get<int>();
  f.sequences = j.at("sequences").get<std::vector<std::vector<int32_t>>>();
  std::ifstream bin(f.dir + "/" + j.at("logits_file").get<std::string>(), std::ios::binary);
  for (const auto& s : f.sequences) {
    std::vector<float> rows(s.size() * static_cast<size_t>(f.vocab));
    bin.read(reinterpret_cast<char*>(rows.data()), static_cast<std::streamsize>(rows.size() * sizeof(float)));
    if (!bin) throw std::runtime_error("truncated reference logits in " + f.dir);
    f.reference.push_back(std::move(rows));
  }
  return f;
}

std::string fixture_model_path(const Fixture& f, const std::string& format) {
  return format == "safetensors" ? f.dir : f.dir + "/model-" + format + ".gguf";
}

PagedRunner::PagedRunner(Model& model, int block_size, int64_t num_blocks, DType kv_dtype, int threads,
                         uint32_t shuffle_seed)
    : model_(model),
      block_size_(block_size),
      kv_(std::make_unique<KVStore>(model.kv_cache_shape(), num_blocks, block_size, kv_dtype, model.kv_memory())),
      pool_(std::make_unique<ThreadPool>(threads)) {
  for (int32_t b = 0; b < num_blocks; ++b) free_blocks_.push_back(b);
  std::mt19937 rng(shuffle_seed);
  for (size_t i = free_blocks_.size(); i > 1; --i) std::swap(free_blocks_[i - 1], free_blocks_[rng() % i]);
}

int PagedRunner::add_sequence(std::vector<int32_t> tokens) {
  seqs_.push_back(Seq{std::move(tokens), 0, {}, {}});
  return static_cast<int>(seqs_.size()) - 1;
}

int PagedRunner::step(const std::vector<std::pair<int, int>>& chunks) {
  Batch batch;
  AttentionMetadata attn;
  attn.block_size = block_size_;
  batch.query_start.push_back(0);
  for (const auto& [id, n] : chunks) {
    Seq& s = seqs_[id];
    const int ctx = s.fed + n;
    while (static_cast<int>(s.blocks.size()) * block_size_ < ctx) {
      if (free_blocks_.empty()) throw std::runtime_error("test KV store too small");
      s.blocks.push_back(free_blocks_.back());
      free_blocks_.pop_back();
    }
    for (int p = s.fed; p < ctx; ++p) {
      batch.logits_indices.push_back(batch.num_tokens());
      batch.token_ids.push_back(s.tokens[p]);
      batch.positions.push_back(p);
      attn.slot_mapping.push_back(int64_t{s.blocks[p / block_size_]} * block_size_ + p % block_size_);
    }
    batch.query_start.push_back(batch.num_tokens());
    attn.context_lens.push_back(ctx);
    attn.block_tables.push_back(s.blocks);
  }
  model_.forward(batch, attn, *kv_, *pool_, step_logits_);
  const size_t vocab = static_cast<size_t>(model_.config().vocab);
  size_t row = 0;
  for (const auto& [id, n] : chunks) {
    Seq& s = seqs_[id];
    s.logits.insert(s.logits.end(), step_logits_.begin() + row * vocab, step_logits_.begin() + (row + n) * vocab);
    row += static_cast<size_t>(n);
    s.fed += n;
  }
  return batch.num_tokens();
}

int32_t PagedRunner::greedy_next(int seq) const {
  const size_t vocab = static_cast<size_t>(model_.config().vocab);
  const std::vector<float>& l = seqs_[seq].logits;
  if (l.size() < vocab) throw std::runtime_error("no logits yet");
  auto last = l.end() - static_cast<std::ptrdiff_t>(vocab);
  return static_cast<int32_t>(std::max_element(last, l.end()) - last);
}

SeqLogits run_all_at_once(PagedRunner& r, const std::vector<std::vector<int32_t>>& seqs) {
  std::vector<std::pair<int, int>> chunks;
  std::vector<int> ids;
  for (const auto& s : seqs) {
    ids.push_back(r.add_sequence(s));
    chunks.push_back({ids.back(), static_cast<int>(s.size())});
  }
  r.step(chunks);
  SeqLogits out;
  for (int id : ids) out.push_back(r.logits(id));
  return out;
}

SeqLogits run_one_by_one(PagedRunner& r, const std::vector<std::vector<int32_t>>& seqs) {
  SeqLogits out;
  for (const auto& s : seqs) {
    const int id = r.add_sequence(s);
    r.step({{id, static_cast<int>(s.size())}});
    out.push_back(r.logits(id));
  }
  return out;
}

SeqLogits run_chunked_mixed(PagedRunner& r, const std::vector<std::vector<int32_t>>& seqs) {
  static const int kChunkPattern[] = {5, 1, 7, 3, 16, 2};
  std::vector<int> ids;
  for (const auto& s : seqs) ids.push_back(r.add_sequence(s));
  for (int step = 0;; ++step) {
    std::vector<std::pair<int, int>> chunks;
    for (size_t i = 0; i < ids.size(); ++i) {
      const int id = ids[i];
      if (static_cast<int>(i) > step || r.finished(id)) continue;  // sequence i joins at step i
      const int len = static_cast<int>(seqs[i].size()), prompt = std::max(1, len / 2);
      const int want = r.fed(id) < prompt ? std::min(kChunkPattern[(step + i) % 6], prompt - r.fed(id)) : 1;
      chunks.push_back({id, want});
    }
    if (chunks.empty()) {
      if (std::all_of(ids.begin(), ids.end(), [&](int id) { return r.finished(id); })) break;
      continue;
    }
    // Alternate the order of sequences inside the batch.
    if (step % 2 == 1) std::reverse(chunks.begin(), chunks.end());
    r.step(chunks);
  }
  SeqLogits out;
  for (int id : ids) out.push_back(r.logits(id));
  return out;
}

std::vector<int32_t> greedy_decode(PagedRunner& r, const std::vector<int32_t>& prompt, int n, int* seq) {
  const int id = r.add_sequence(prompt);
  if (seq) *seq = id;
  r.step({{id, static_cast<int>(prompt.size())}});
  std::vector<int32_t> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(r.greedy_next(id));
    r.append(id, out.back());
    if (i + 1 < n) r.step({{id, 1}});
  }
  return out;
}

double reference_tolerance(const Fixture& f, const std::string& format, DType kv_dtype) {
  double scale = 0.0;
  for (const auto& rows : f.reference)
    for (float v : rows) scale = std::max(scale, std::abs(static_cast<double>(v)));
  double tol = format == "q8_0" ? 4e-2 * scale : 1e-3;
  if (kv_dtype == DType::F16) tol += 1e-3 * scale;
  if (kv_dtype == DType::BF16) tol += 6e-3 * scale;
  // Q8_0 keeps about 8 bits relative to each 32-element block's largest |value|:
  // measured 0.31% (llama) and 0.51% (qwen2) of the largest |logit|, so 1% bounds it.
  if (kv_dtype == DType::Q8_0) tol += 1e-2 * scale;
  return tol;
}

double max_abs_diff(const SeqLogits& a, const SeqLogits& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0.0;
  for (size_t s = 0; s < a.size() && s < b.size(); ++s) {
    EXPECT_EQ(a[s].size(), b[s].size()) << "sequence " << s;
    for (size_t i = 0; i < a[s].size() && i < b[s].size(); ++i) {
      if (!std::isfinite(a[s][i]) || !std::isfinite(b[s][i])) return std::numeric_limits<double>::infinity();
      m = std::max(m, std::abs(static_cast<double>(a[s][i]) - b[s][i]));
    }
  }
  return m;
}

bool bit_identical(const SeqLogits& a, const SeqLogits& b) {
  if (a.size() != b.size()) return false;
  for (size_t s = 0; s < a.size(); ++s)
    if (a[s].size() != b[s].size() || std::memcmp(a[s].data(), b[s].data(), a[s].size() * sizeof(float)) != 0)
      return false;
  return true;
}

std::vector<std::vector<int32_t>> patterned_sequences(int vocab, int count, int first_len, int len_step) {
  std::vector<std::vector<int32_t>> seqs;
  for (int s = 0; s < count; ++s) {
    std::vector<int32_t> t;
    for (int i = 0; i < first_len + len_step * s; ++i) t.push_back((s * 131 + i * 37 + 5) % vocab);
    seqs.push_back(t);
  }
  return seqs;
}

}  // namespace db::test
