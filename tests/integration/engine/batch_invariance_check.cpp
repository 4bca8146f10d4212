#include "batch_invariance_check.h"

#include <cstdio>
#include <set>
#include <string>

namespace db::test {

namespace {

// One engine configuration a batch runs under.
struct InvarianceCase {
  const char* name;
  int budget;           // max_num_batched_tokens
  int threshold;        // long_prefill_threshold (0 = auto)
  bool prefix_caching;  // enable_prefix_caching
  int kv_blocks;        // KV pool size; 0 = plenty, else small enough to force preemption
  // The admission rule, and for Reserve the outputs each admission reserves blocks
  // for: with a small pool, one output (fewer than any request asks for), so that
  // sequences outgrow their reservations and preempt one another.
  AdmissionPolicy admission = AdmissionPolicy::Reserve;
  int decode_headroom = EngineConfig{}.decode_headroom;
};

// The reserve rule preempts only a sequence that crosses into a block beyond its
// reservation while none is free, so its case uses 16-token blocks, which the
// batches' 6..16 outputs cross about once a sequence (with 64-token blocks most
// never cross one: 0 to 3 preemptions a run, the steps' timing deciding), and
// prefix caching, whose hits on blocks other sequences hold are admitted without
// taking free ones, so the pool runs full (without it, the blocks that finishing
// sequences free mostly cover the growth: 0 to 2 a run on the DeepSeek fixtures;
// with it, 9 to 23 there).
std::vector<InvarianceCase> invariance_cases(int block_size) {
  constexpr AdmissionPolicy kFirstChunk = AdmissionPolicy::FirstChunk, kReserve = AdmissionPolicy::Reserve;
  if (block_size == 16)
    return {{"Budget16_PrefixCache", 16, 0, true, 0},
            {"Threshold16_NoPrefixCache", 512, 16, false, 0},
            {"Preemption_PrefixCache", 256, 0, true, 40, kFirstChunk},
            {"ReservePreemption_PrefixCache", 256, 0, true, 24, kReserve, 1}};
  return {{"Budget16_PrefixCache", 16, 0, true, 0},
          {"Preemption_Threshold16_NoPrefixCache", 256, 16, false, 12, kFirstChunk}};
}

// Each of `base` alone in an engine of `cfg` with a KV pool of 2048 tokens.
std::vector<RequestResult> run_alone_reference(ModelBundle& bundle, EngineConfig cfg,
                                               const std::vector<EngineRequest>& base) {
  cfg.kv_cache_memory = kv_bytes_for_blocks(bundle, cfg, 1 + 2048 / cfg.block_size);
  const std::vector<RequestResult> alone = run_alone(bundle, cfg, base);
  std::set<std::vector<int32_t>> distinct;
  for (size_t i = 0; i < alone.size(); ++i) {
    EXPECT_EQ(alone[i].samples.size(), 1u) << "alone request " << i;
    if (alone[i].samples.empty()) continue;
    EXPECT_EQ(alone[i].samples[0].tokens.size(), static_cast<size_t>(base[i].max_tokens)) << "alone request " << i;
    EXPECT_EQ(alone[i].samples[0].finish, FinishReason::Length) << "alone request " << i;
    distinct.insert(alone[i].samples[0].tokens);
  }
  EXPECT_GT(distinct.size(), base.size() / 2) << "the outputs alone hardly depend on the prompt";
  return alone;
}

void expect_batch_matches_alone(ModelBundle& bundle, EngineConfig cfg, const InvarianceCase& c,
                                const std::vector<BatchEntry>& batch, const std::vector<RequestResult>& alone) {
  SCOPED_TRACE(std::string(c.name) + ", block size " + std::to_string(cfg.block_size));
  std::vector<EngineRequest> reqs;
  int64_t samples = 0;
  for (const BatchEntry& e : batch) {
    reqs.push_back(e.request);
    samples += e.request.n;
  }
  cfg.max_num_seqs = static_cast<int>(reqs.size());
  cfg.max_num_batched_tokens = c.budget;
  cfg.long_prefill_threshold = c.threshold;
  cfg.enable_prefix_caching = c.prefix_caching;
  // A small pool forces preemption under the first-chunk rule whatever the steps'
  // timing; the default rule (Reserve) admits what the pool holds for the next
  // decode_headroom outputs, so it preempts only sequences that outgrow that
  // (scheduler.h): its small-pool case reserves fewer outputs than any request asks for.
  cfg.admission = c.admission;
  cfg.decode_headroom = c.decode_headroom;
  // The prefix-cache case must see hits: interactive steps (the default while
  // priority-0 requests run and a second after) admit the other classes' prompts
  // in small chunks side by side, so repeats of a prompt arrive before its blocks
  // are full; the preemption case keeps them on.
  if (c.prefix_caching) cfg.interactive_step_tokens = 0;
  cfg.kv_cache_memory =
      kv_bytes_for_blocks(bundle, cfg, c.kv_blocks ? c.kv_blocks : 1 + samples * 512 / cfg.block_size);
  EngineStats stats;
  const std::vector<RequestResult> got = run_batch(bundle, cfg, reqs, &stats);

  for (size_t i = 0; i < reqs.size(); ++i) {
    const size_t a = batch[i].alone_index;
    const std::vector<int32_t>& ref = alone.at(a).samples.at(0).tokens;
    ASSERT_LE(reqs[i].max_tokens, static_cast<int32_t>(ref.size())) << "request " << i;
    const std::vector<int32_t> want(ref.begin(), ref.begin() + reqs[i].max_tokens);
    ASSERT_EQ(got[i].samples.size(), static_cast<size_t>(reqs[i].n)) << "request " << i;
    for (size_t s = 0; s < got[i].samples.size(); ++s) {
      EXPECT_EQ(got[i].samples[s].tokens, want) << "request " << i << " sample " << s << " (prompt " << a << ")";
      EXPECT_EQ(got[i].samples[s].finish, FinishReason::Length) << "request " << i << " sample " << s;
    }
    EXPECT_EQ(got[i].finals, 1) << "request " << i;
  }
  std::printf(
      "[ stats ] %s bs%d: %zu requests, %lld samples: steps %lld, prompt tokens %lld, cached %lld, "
      "preemptions %lld\n",
      c.name, cfg.block_size, reqs.size(), static_cast<long long>(samples), static_cast<long long>(stats.steps),
      static_cast<long long>(stats.prompt_tokens), static_cast<long long>(stats.cached_prompt_tokens),
      static_cast<long long>(stats.preemptions));
  if (c.kv_blocks) {
    EXPECT_GT(stats.preemptions, 0) << "the KV budget was meant to force preemption";
  }
  if (c.prefix_caching) {
    EXPECT_GT(stats.cached_prompt_tokens, 0);
  }
  if (!c.prefix_caching) {
    EXPECT_EQ(stats.cached_prompt_tokens, 0);
  }
  EXPECT_EQ(stats.free_blocks, stats.num_blocks - 1);
  if (cfg.speculative.enabled()) {
    std::printf("[ stats ] %s bs%d speculation: %lld drafts, %lld draft tokens, %lld accepted\n", c.name,
                cfg.block_size, static_cast<long long>(stats.spec.num_drafts),
                static_cast<long long>(stats.spec.num_draft_tokens),
                static_cast<long long>(stats.spec.num_accepted_tokens));
    EXPECT_GT(stats.spec.num_drafts, 0);
    EXPECT_GT(stats.spec.num_accepted_tokens, 0);
    EXPECT_LT(stats.spec.num_accepted_tokens, stats.spec.num_draft_tokens) << "no draft was ever rejected";
    EXPECT_EQ(stats.spec.proposer_kv_blocks, 0) << "the draft model's cache kept blocks";
  }
}

}  // namespace

void expect_batch_invariance(ModelBundle& bundle, const EngineConfig& cfg, const std::vector<EngineRequest>& base,
                             const std::vector<BatchEntry>& batch) {
  EngineConfig plain = cfg;
  plain.speculative = {};
  const std::vector<RequestResult> alone = run_alone_reference(bundle, plain, base);
  if (::testing::Test::HasFailure()) return;
  if (cfg.speculative.enabled()) {
    EngineConfig alone_cfg = cfg;
    alone_cfg.kv_cache_memory = kv_bytes_for_blocks(bundle, cfg, 1 + 2048 / cfg.block_size);
    const std::vector<RequestResult> drafted = run_alone(bundle, alone_cfg, base);
    for (size_t i = 0; i < base.size(); ++i)
      EXPECT_EQ(drafted.at(i).samples.at(0).tokens, alone[i].samples.at(0).tokens) << "alone request " << i;
  }
  for (const InvarianceCase& c : invariance_cases(cfg.block_size))
    expect_batch_matches_alone(bundle, cfg, c, batch, alone);
}

}  // namespace db::test
