// Paged attention throughput per ISA level: a causal prefill chunk of one
// sequence, a batched decode step, and a decode step and a prompt chunk of one
// 4096-position sequence, with the SmolLM2-135M head layout
// (9 query heads over 3 kv heads, head_dim 64) and an F16 cache; and the
// batched decode step with the DeepSeek-R1-Distill-Qwen-1.5B layout (12 over
// 2, head_dim 128: six queries share each key), as Decode64x200Qwen, and as
// Decode64x200QwenCold with the cache out of the CPU's caches, as in a model's
// step (each iteration takes the next of 8 layers' caches, 118 MB in all).
// Decode{B}x8192{Qwen,V2LiteLatent}{Shared,Distinct}/{F16,Q8_0}: a decode step
// at an 8k context per KV cache type, B sequences sharing one prompt's cache
// rows or each with its own; the latent is DeepSeek-V2-Lite's (one layer).
//
//   kernels_attention_bench --benchmark_filter='x8192Qwen.*/t2'
//
//   kernels_attention_bench --benchmark_filter='Prefill512/avx512'
//
// ChunkAt7000/rows{R}: a prompt chunk of R rows at position 7,000 (CPU time per
// row and position as a counter).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <sys/resource.h>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/attention_kv_write.h"
#include "tensor/kv_row_bytes.h"

namespace {

using db::DType;
using db::IsaLevel;

constexpr int kBlock = 16;

// Query heads, kv heads and head_dim of a model; latent_v > 0: MLA's latent
// layout (one kv head whose values are the first latent_v elements of its key).
struct HeadLayout {
  int heads, kv_heads, head_dim, latent_v = 0;
};
constexpr HeadLayout kSmolLM2{9, 3, 64}, kQwen15B{12, 2, 128}, kV2Lite{16, 1, 576, 512};

// Sequences with their query rows and a paged cache of `dtype` holding every
// position they reach (shared: every sequence's block table is the first's,
// as when a prompt is shared through the prefix cache; the sequences must
// then have the same rows and positions).
struct Problem {
  HeadLayout layout;
  DType dtype;
  std::vector<uint8_t> k, v;  // [num_slots] rows of kv_heads * head_dim elements (v unused when latent)
  std::vector<float> q;       // [n_tokens][heads][head_dim]
  std::vector<int32_t> query_start{0}, positions;
  std::vector<std::vector<int32_t>> tables;
  int64_t num_slots = 0;

  // seq_rows[s] query rows per sequence, the first at position first_pos[s].
  Problem(const std::vector<int>& first_pos, const std::vector<int>& seq_rows, HeadLayout hl = kSmolLM2,
          DType kv_dtype = DType::F16, bool shared = false)
      : layout(hl), dtype(kv_dtype) {
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    int32_t next_block = 0;
    for (size_t s = 0; s < first_pos.size(); ++s) {
      const int ctx = first_pos[s] + seq_rows[s];
      tables.emplace_back();
      if (shared && s > 0)
        tables.back() = tables[0];
      else
        for (int b = 0; b * kBlock < ctx; ++b) tables.back().push_back(next_block++);
      for (int r = 0; r < seq_rows[s]; ++r) positions.push_back(first_pos[s] + r);
      query_start.push_back(query_start.back() + seq_rows[s]);
    }
    num_slots = int64_t{next_block} * kBlock;
    const int64_t row = int64_t{hl.kv_heads} * hl.head_dim;
    k.resize(static_cast<size_t>(num_slots) * db::kv_row_bytes(kv_dtype, row));
    if (hl.latent_v == 0) v.resize(k.size());
    const auto out = hl.latent_v ? db::kernels::PagedKVLayerOut::keys_only(k.data(), kv_dtype, num_slots, row)
                                 : db::kernels::PagedKVLayerOut::key_value(k.data(), v.data(), kv_dtype, num_slots, row);
    constexpr int64_t kRowsAtOnce = 1024;  // rows converted per write (bounds the f32 staging)
    std::vector<float> kf, vf;
    std::vector<int64_t> slots;
    for (int64_t s0 = 0; s0 < num_slots; s0 += kRowsAtOnce) {
      const int64_t n = std::min(kRowsAtOnce, num_slots - s0);
      kf.resize(static_cast<size_t>(n * row));
      vf.resize(kf.size());
      slots.resize(static_cast<size_t>(n));
      for (auto& x : kf) x = normal(rng);
      for (auto& x : vf) x = normal(rng);
      for (int64_t i = 0; i < n; ++i) slots[static_cast<size_t>(i)] = s0 + i;
      db::kernels::write_kv_rows(kf.data(), vf.data(), row, n, slots.data(), out);
    }
    q.resize(static_cast<size_t>(query_start.back()) * hl.heads * hl.head_dim);
    for (auto& x : q) x = normal(rng);
  }

  db::kernels::PagedKVLayer layer() const {
    if (layout.latent_v) return db::kernels::PagedKVLayer::latent(k.data(), dtype, num_slots, layout.head_dim, layout.latent_v);
    return db::kernels::PagedKVLayer::key_value(k.data(), v.data(), dtype, num_slots, layout.kv_heads, layout.head_dim);
  }
};

// Runs the problems' steps in turn, one per iteration (all of one shape).
void run(benchmark::State& state, const std::vector<const Problem*>& problems, IsaLevel isa, int threads) {
  if (!db::isa_supported(isa)) {
    state.SkipWithError("ISA level not supported by this CPU");
    return;
  }
  std::vector<db::kernels::AttentionQueries> qs;
  std::vector<db::kernels::PagedKVLayer> kv;
  for (const Problem* pp : problems) {
    const Problem& p = *pp;
    qs.push_back({p.q.data(), p.layout.heads, static_cast<int>(p.tables.size()), p.query_start.data(),
                  p.positions.data(), p.tables.data(), kBlock, 1.0f / std::sqrt(float(p.layout.head_dim))});
    kv.push_back(p.layer());
  }
  std::vector<float> out(problems[0]->q.size());
  db::kernels::AttentionWorkspace ws;
  db::ThreadPool pool(threads);
  size_t i = 0;
  for (auto _ : state) {
    db::kernels::paged_attention_isa(isa, qs[i], kv[i], out.data(), ws, pool);
    benchmark::DoNotOptimize(out.data());
    i = (i + 1) % problems.size();
  }
  state.counters["queries/s"] = benchmark::Counter(static_cast<double>(problems[0]->positions.size()),
                                                   benchmark::Counter::kIsIterationInvariantRate);
}

void run(benchmark::State& state, const Problem& p, IsaLevel isa, int threads) {
  run(state, std::vector<const Problem*>{&p}, isa, threads);
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
  std::vector<const Problem*> each;
  for (const Problem& p : layers) each.push_back(&p);
  run(state, each, isa, threads);
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

// A decode step of `batch` sequences at an 8,192-token context, one query row
// each, their cache rows shared (one prompt through the prefix cache: a layer's
// share stays in the L3 while every sequence reads it) or distinct (each reads
// its own from memory).
Problem decode_8k(HeadLayout layout, DType dtype, int batch, bool shared) {
  return Problem(std::vector<int>(static_cast<size_t>(batch), 8192), std::vector<int>(static_cast<size_t>(batch), 1),
                 layout, dtype, shared);
}

// A prompt chunk of `rows` rows at position 7,000 (an 8,000-token prompt's
// prefill late in its course), two threads: how the work per row and position
// grows as chunks shrink. cpu_ns_per_row_position counts both threads' CPU time.
void register_deep_chunks() {
  for (int rows : {1, 2, 4, 7, 16, 64, 512}) {
    const std::string name = "ChunkAt7000/rows" + std::to_string(rows) + "/avx512/t2";
    benchmark::RegisterBenchmark(name.c_str(), [rows](benchmark::State& state) {
      static std::map<int, Problem> problems;
      const Problem& p = problems.try_emplace(rows, std::vector<int>{7000}, std::vector<int>{rows}).first->second;
      rusage before{}, after{};
      getrusage(RUSAGE_SELF, &before);
      run(state, p, IsaLevel::Avx512, 2);
      getrusage(RUSAGE_SELF, &after);
      const double cpu_s = static_cast<double>(after.ru_utime.tv_sec - before.ru_utime.tv_sec) +
                           1e-6 * static_cast<double>(after.ru_utime.tv_usec - before.ru_utime.tv_usec);
      state.counters["cpu_ns_per_row_position"] =
          cpu_s * 1e9 / (static_cast<double>(state.iterations()) * rows * 7000.0);
    })->Unit(benchmark::kMicrosecond);
  }
}

// Decode at 8k per cache type: B sequences, shared or distinct prompts; the
// Qwen 1.5B layout and DeepSeek-V2-Lite's latent (one layer's attention).
void register_8k() {
  struct Case {
    const char* name;
    HeadLayout layout;
    int batch;
    bool shared;
  };
  for (const Case& c : {Case{"Qwen", kQwen15B, 1, true}, Case{"Qwen", kQwen15B, 32, true},
                        Case{"Qwen", kQwen15B, 32, false}, Case{"V2LiteLatent", kV2Lite, 1, true},
                        Case{"V2LiteLatent", kV2Lite, 32, true}, Case{"V2LiteLatent", kV2Lite, 32, false}})
    for (DType dtype : {DType::F16, DType::Q8_0})
      for (int t : {1, 2}) {
        const std::string name = "Decode" + std::to_string(c.batch) + "x8192" + c.name +
                                 (c.batch > 1 ? (c.shared ? "Shared" : "Distinct") : "") + "/" +
                                 db::dtype_name(dtype) + "/avx512/t" + std::to_string(t);
        benchmark::RegisterBenchmark(name.c_str(), [c, dtype, t](benchmark::State& state) {
          static std::map<std::string, Problem> problems;  // built on first use, kept for the other thread count
          const std::string key = std::string(c.name) + std::to_string(c.batch) + (c.shared ? "s" : "d") +
                                  db::dtype_name(dtype);
          auto it = problems.find(key);
          if (it == problems.end()) {
            problems.clear();  // one problem at a time: the distinct ones are hundreds of MB
            it = problems.emplace(key, decode_8k(c.layout, dtype, c.batch, c.shared)).first;
          }
          run(state, it->second, IsaLevel::Avx512, t);
        })->Unit(benchmark::kMillisecond);
      }
}

void register_all() {
  register_8k();
  register_deep_chunks();
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
