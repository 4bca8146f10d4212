// Paged attention throughput per ISA level: a causal prefill chunk of one
// sequence, a batched decode step, and a decode step and a prompt chunk of one
// 4096-position sequence, with the SmolLM2-135M head layout
// (9 query heads over 3 kv heads, head_dim 64) and an F16 cache; and the
// batched decode step with the DeepSeek-R1-Distill-Qwen-1.5B layout (12 over
// 2, head_dim 128: six queries share each key), as Decode64x200Qwen, and as
// Decode64x200QwenCold with the cache out of the CPU's caches, as in a model's
// step (each iteration takes the next of 8 layers' caches, 118 MB in all).
//
//   kernels_attention_bench --benchmark_filter='Prefill512/avx512'
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/attention.h"
#include "util/fp16.h"

namespace {

using db::DType;
using db::IsaLevel;

constexpr int kBlock = 16;

// Query heads, kv heads and head_dim of a model.
struct HeadLayout {
  int heads, kv_heads, head_dim;
};
constexpr HeadLayout kSmolLM2{9, 3, 64}, kQwen15B{12, 2, 128};

// Sequences with their query rows and a paged F16 cache holding every position they reach.
struct Problem {
  HeadLayout layout;
  std::vector<uint16_t> k, v;  // [num_slots][kv_heads][head_dim]
  std::vector<float> q;        // [n_tokens][heads][head_dim]
  std::vector<int32_t> query_start{0}, positions;
  std::vector<std::vector<int32_t>> tables;
  int64_t num_slots = 0;

  // seq_rows[s] query rows per sequence, the first at position first_pos[s].
  Problem(const std::vector<int>& first_pos, const std::vector<int>& seq_rows, HeadLayout hl = kSmolLM2)
      : layout(hl) {
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    int32_t next_block = 0;
    for (size_t s = 0; s < first_pos.size(); ++s) {
      const int ctx = first_pos[s] + seq_rows[s];
      tables.emplace_back();
      for (int b = 0; b * kBlock < ctx; ++b) tables.back().push_back(next_block++);
      for (int r = 0; r < seq_rows[s]; ++r) positions.push_back(first_pos[s] + r);
      query_start.push_back(query_start.back() + seq_rows[s]);
    }
    num_slots = int64_t{next_block} * kBlock;
    k.resize(static_cast<size_t>(num_slots) * hl.kv_heads * hl.head_dim);
    v.resize(k.size());
    for (auto& x : k) x = db::f32_to_fp16(normal(rng));
    for (auto& x : v) x = db::f32_to_fp16(normal(rng));
    q.resize(static_cast<size_t>(query_start.back()) * hl.heads * hl.head_dim);
    for (auto& x : q) x = normal(rng);
  }
};

// Runs the problems' steps in turn, one per iteration (all of one shape).
void run(benchmark::State& state, const std::vector<Problem>& problems, IsaLevel isa, int threads) {
  if (!db::isa_supported(isa)) {
    state.SkipWithError("ISA level not supported by this CPU");
    return;
  }
  std::vector<db::kernels::AttentionQueries> qs;
  std::vector<db::kernels::PagedKVLayer> kv;
  for (const Problem& p : problems) {
    qs.push_back({p.q.data(), p.layout.heads, static_cast<int>(p.tables.size()), p.query_start.data(),
                  p.positions.data(), p.tables.data(), kBlock, 1.0f / std::sqrt(float(p.layout.head_dim))});
    kv.push_back(db::kernels::PagedKVLayer::key_value(p.k.data(), p.v.data(), DType::F16, p.num_slots,
                                                      p.layout.kv_heads, p.layout.head_dim));
  }
  std::vector<float> out(problems[0].q.size());
  db::kernels::AttentionWorkspace ws;
  db::ThreadPool pool(threads);
  size_t i = 0;
  for (auto _ : state) {
    db::kernels::paged_attention_isa(isa, qs[i], kv[i], out.data(), ws, pool);
    benchmark::DoNotOptimize(out.data());
    i = (i + 1) % problems.size();
  }
  state.counters["queries/s"] = benchmark::Counter(static_cast<double>(problems[0].positions.size()),
                                                   benchmark::Counter::kIsIterationInvariantRate);
}

void run(benchmark::State& state, const Problem& p, IsaLevel isa, int threads) {
  run(state, std::vector<Problem>{p}, isa, threads);
}

void prefill(benchmark::State& state, IsaLevel isa, int threads) {
  static const Problem p({0}, {512});
  run(state, p, isa, threads);
}

// 64 sequences of about 200 positions, one query row each.
Problem batched_decode(HeadLayout layout) {
  std::vector<int> first(64), rows(64, 1);
  for (int s = 0; s < 64; ++s) first[static_cast<size_t>(s)] = 180 + (s * 7) % 41;
  return Problem(first, rows, layout);
}

void decode(benchmark::State& state, IsaLevel isa, int threads) {
  static const Problem p = batched_decode(kSmolLM2);
  run(state, p, isa, threads);
}

void decode_qwen(benchmark::State& state, IsaLevel isa, int threads) {
  static const Problem p = batched_decode(kQwen15B);
  run(state, p, isa, threads);
}

void decode_qwen_cold(benchmark::State& state, IsaLevel isa, int threads) {
  static const std::vector<Problem> layers(8, batched_decode(kQwen15B));
  run(state, layers, isa, threads);
}

// One long sequence's decode step: 3 kv heads over 2 threads leave one idle a
// third of the time unless its keys are split over the threads (split-K).
void decode_long(benchmark::State& state, IsaLevel isa, int threads) {
  static const Problem p({4095}, {1});
  run(state, p, isa, threads);
}

// One short sequence's decode step (a chat's first replies): fixed costs dominate.
void decode_short(benchmark::State& state, IsaLevel isa, int threads) {
  static const Problem p({127}, {1});
  run(state, p, isa, threads);
}

// A 64-row prompt chunk late in a long sequence (chunked prefill).
void chunk_long(benchmark::State& state, IsaLevel isa, int threads) {
  static const Problem p({4032}, {64});
  run(state, p, isa, threads);
}

void register_all() {
  for (IsaLevel isa : {IsaLevel::Scalar, IsaLevel::Avx2, IsaLevel::Avx512}) {
    for (int t : {1, 2}) {
      const std::string suffix = std::string("/") + db::isa_name(isa) + "/t" + std::to_string(t);
      benchmark::RegisterBenchmark(("Prefill512" + suffix).c_str(), prefill, isa, t)->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("Decode64x200" + suffix).c_str(), decode, isa, t)->Unit(benchmark::kMicrosecond);
      benchmark::RegisterBenchmark(("Decode64x200Qwen" + suffix).c_str(), decode_qwen, isa, t)
          ->Unit(benchmark::kMicrosecond);
      benchmark::RegisterBenchmark(("Decode64x200QwenCold" + suffix).c_str(), decode_qwen_cold, isa, t)
          ->Unit(benchmark::kMicrosecond);
      benchmark::RegisterBenchmark(("Decode1x4096" + suffix).c_str(), decode_long, isa, t)->Unit(benchmark::kMicrosecond);
      benchmark::RegisterBenchmark(("Decode1x128" + suffix).c_str(), decode_short, isa, t)->Unit(benchmark::kMicrosecond);
      benchmark::RegisterBenchmark(("Chunk64at4096" + suffix).c_str(), chunk_long, isa, t)->Unit(benchmark::kMicrosecond);
    }
  }
}

}  // namespace

void register_benchmarks() { register_all(); }
