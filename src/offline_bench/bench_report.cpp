#include "offline_bench/bench_report.h"

#include <algorithm>
#include <cstdio>

#include "util/error.h"

namespace db::bench {

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::Mixed: return "mixed";
    case Phase::Prefill: return "prefill";
    case Phase::Decode: return "decode";
  }
  return "";
}

Phase parse_phase(const std::string& text) {
  for (Phase p : {Phase::Mixed, Phase::Prefill, Phase::Decode})
    if (text == phase_name(p)) return p;
  throw Error("--phase must be mixed, prefill or decode, got '" + text + "'");
}

namespace {

double per_second(double count, double seconds) { return seconds > 0 ? count / seconds : 0.0; }

// Ended by the engine rather than by the request's own stop conditions.
bool failed(FinishReason f) {
  return f == FinishReason::Error || f == FinishReason::Abort || f == FinishReason::Timeout ||
         f == FinishReason::QueueTimeout;
}

}  // namespace

RunReport make_run_report(const RunMeasurements& m) {
  RunReport r;
  r.max_num_seqs = m.max_num_seqs;
  r.phase = m.phase;
  r.requests = static_cast<int64_t>(m.requests.size());
  std::vector<double> ttft, tpot, e2e;
  for (const RequestRecord& q : m.requests) {
    r.prompt_tokens += q.stats.prompt_tokens;
    r.cached_prompt_tokens += q.stats.cached_prompt_tokens;
    r.generated_tokens += q.stats.generated_tokens;
    if (failed(q.finish)) {
      ++r.failed_requests;
      continue;
    }
    if (q.stats.generated_tokens < 1) continue;
    ttft.push_back(q.stats.ttft_seconds);
    e2e.push_back(q.stats.e2e_seconds);
    if (q.stats.generated_tokens > 1)
      tpot.push_back((q.stats.e2e_seconds - q.stats.ttft_seconds) / (q.stats.generated_tokens - 1));
  }
  r.computed_prompt_tokens = m.computed_prompt_tokens;
  r.wall_seconds = m.wall_seconds;
  r.requests_per_s = per_second(static_cast<double>(r.requests), m.wall_seconds);
  r.prompt_tokens_per_s = per_second(static_cast<double>(r.computed_prompt_tokens), m.wall_seconds);
  r.generated_tokens_per_s = per_second(static_cast<double>(r.generated_tokens), m.wall_seconds);
  r.total_tokens_per_s =
      per_second(static_cast<double>(r.computed_prompt_tokens + r.generated_tokens), m.wall_seconds);
  if (m.phase == Phase::Decode)
    r.decode_tokens_per_s = per_second(static_cast<double>(m.decode_window_tokens), m.decode_window_seconds);
  r.ttft = summarize(std::move(ttft));
  r.tpot = summarize(std::move(tpot));
  r.e2e = summarize(std::move(e2e));
  r.peak_kv_usage = m.peak_kv_usage;
  r.mean_kv_usage = m.mean_kv_usage;
  r.prefix_cache_hit_rate =
      r.prompt_tokens > 0 ? static_cast<double>(r.cached_prompt_tokens) / static_cast<double>(r.prompt_tokens) : 0.0;
  r.preemptions = m.preemptions;
  r.steps = m.steps;
  r.router = make_router_report(m.router);
  r.spec = m.spec;
  r.pool = m.pool;
  return r;
}

nlohmann::json to_json(const LatencySummary& s) {
  return {{"count", s.count}, {"mean", s.mean}, {"p50", s.p50}, {"p90", s.p90},
          {"p99", s.p99},     {"min", s.min},   {"max", s.max}};
}

nlohmann::json to_json(const RunReport& r) {
  nlohmann::json j;
  j["max_num_seqs"] = r.max_num_seqs;
  j["phase"] = phase_name(r.phase);
  j["requests"] = r.requests;
  j["failed_requests"] = r.failed_requests;
  j["prompt_tokens"] = r.prompt_tokens;
  j["cached_prompt_tokens"] = r.cached_prompt_tokens;
  j["computed_prompt_tokens"] = r.computed_prompt_tokens;
  j["generated_tokens"] = r.generated_tokens;
  j["wall_seconds"] = r.wall_seconds;
  j["requests_per_s"] = r.requests_per_s;
  j["prompt_tokens_per_s"] = r.prompt_tokens_per_s;
  j["generated_tokens_per_s"] = r.generated_tokens_per_s;
  j["total_tokens_per_s"] = r.total_tokens_per_s;
  if (r.phase == Phase::Decode) j["decode_tokens_per_s"] = r.decode_tokens_per_s;
  j["ttft_seconds"] = to_json(r.ttft);
  j["tpot_seconds"] = to_json(r.tpot);
  j["e2e_seconds"] = to_json(r.e2e);
  j["peak_kv_usage"] = r.peak_kv_usage;
  j["mean_kv_usage"] = r.mean_kv_usage;
  j["prefix_cache_hit_rate"] = r.prefix_cache_hit_rate;
  j["preemptions"] = r.preemptions;
  j["steps"] = r.steps;
  if (!r.router.empty()) j["router"] = to_json(r.router);
  if (!r.spec.empty()) j["speculative"] = to_json(r.spec);
  j["kv_pool"] = to_json(r.pool);
  return j;
}

nlohmann::json to_json(const WorkloadSpec& w) {
  return {{"num_requests", w.num_requests},
          {"input_len", w.input_len.describe()},
          {"output_len", w.output_len.describe()},
          {"shared_prefix_fraction", w.shared_prefix_fraction},
          {"shared_prefix_len", w.shared_prefix_len},
          {"seed", w.seed}};
}

nlohmann::json bench_json(const nlohmann::json& settings, const WorkloadSpec& workload,
                          const std::vector<RunReport>& runs) {
  nlohmann::json j;
  j["settings"] = settings;
  j["workload"] = to_json(workload);
  j["definitions"] = metric_definitions();
  j["runs"] = nlohmann::json::array();
  for (const RunReport& r : runs) j["runs"].push_back(to_json(r));
  return j;
}

nlohmann::json metric_definitions() {
  return {
      {"prompt_tokens", "sum of the prompt lengths of the requests"},
      {"cached_prompt_tokens", "prompt tokens served by the prefix cache instead of being computed"},
      {"computed_prompt_tokens", "prompt tokens the model computed (recomputation after preemption included)"},
      {"wall_seconds", "first submit to the last request's final output"},
      {"prompt_tokens_per_s",
       "computed_prompt_tokens / wall_seconds. In phase 'mixed' prefill and decode share engine steps, so this is "
       "the prompt share of the run's throughput, not a prefill speed; phase 'prefill' (max_tokens = 1) measures "
       "the prefill speed"},
      {"generated_tokens_per_s", "generated_tokens / wall_seconds (prefill time included)"},
      {"total_tokens_per_s", "(computed_prompt_tokens + generated_tokens) / wall_seconds"},
      {"decode_tokens_per_s",
       "phase 'decode' only: requests run in waves of max_num_seqs; tokens sampled after every prompt of a wave "
       "was computed, divided by the time from that moment to the wave's end, summed over waves"},
      {"ttft_seconds", "submit to first token, per request"},
      {"tpot_seconds", "(e2e - ttft) / (generated tokens - 1), per request with more than one token"},
      {"e2e_seconds", "submit to final output, per request"},
      {"peak_kv_usage", "largest sampled fraction of KV cache blocks in use"},
      {"mean_kv_usage", "time-weighted mean of the sampled fractions of KV cache blocks in use"},
      {"prefix_cache_hit_rate", "cached_prompt_tokens / prompt_tokens"},
      {"percentiles", "linear interpolation between closest ranks (numpy's default)"},
      {"router",
       "MoE models only: tokens the router sent to each expert of each MoE layer during the run (a token counts "
       "once per expert chosen for it); imbalance = tokens on a layer's busiest expert / mean tokens per expert "
       "(1 = balanced), summarized over the layers; busiest = the expert with the largest share of its layer's "
       "tokens"},
      {"speculative",
       "with speculative decoding only: verifications (drafts), draft tokens verified and accepted, tokens the "
       "verifying steps emitted, acceptance_rate = accepted / draft tokens, mean_accepted_length = emitted / drafts"},
      {"kv_pool",
       "the KV block pool at the end of the run: usable and free blocks, the longest run of consecutive free block "
       "ids (contiguity of the free memory), blocks registered in the prefix cache, blocks whose memory has been "
       "touched (resident); evicted_blocks: prefix-cache blocks evicted during the run"},
  };
}

namespace {

std::string ms3(const LatencySummary& s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f/%.1f/%.1f", s.p50 * 1e3, s.p90 * 1e3, s.p99 * 1e3);
  return buf;
}

}  // namespace

std::string format_table(const std::vector<RunReport>& runs) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%6s %-7s %6s %9s %9s %9s %9s %8s %11s %10s %11s %10s\n", "seqs", "phase",
                "reqs", "prompt", "cached", "gen", "wall_s", "req/s", "prompt_t/s", "gen_t/s", "total_t/s",
                "decode_t/s");
  out += line;
  for (const RunReport& r : runs) {
    std::snprintf(line, sizeof line, "%6d %-7s %6lld %9lld %9lld %9lld %9.3f %8.2f %11.1f %10.1f %11.1f %10s\n",
                  r.max_num_seqs, phase_name(r.phase), static_cast<long long>(r.requests),
                  static_cast<long long>(r.prompt_tokens), static_cast<long long>(r.cached_prompt_tokens),
                  static_cast<long long>(r.generated_tokens), r.wall_seconds, r.requests_per_s,
                  r.prompt_tokens_per_s, r.generated_tokens_per_s, r.total_tokens_per_s,
                  r.phase == Phase::Decode ? std::to_string(static_cast<long long>(r.decode_tokens_per_s + 0.5)).c_str()
                                           : "-");
    out += line;
  }
  out += "\n";
  std::snprintf(line, sizeof line, "%6s %-7s %22s %10s %22s %10s %13s %6s %8s %7s %6s\n", "seqs", "phase",
                "TTFT p50/p90/p99 ms", "mean", "TPOT p50/p90/p99 ms", "mean", "KV peak/mean", "hit%", "preempt",
                "steps", "failed");
  out += line;
  for (const RunReport& r : runs) {
    char kv[32];
    std::snprintf(kv, sizeof kv, "%.1f%%/%.1f%%", r.peak_kv_usage * 100, r.mean_kv_usage * 100);
    std::snprintf(line, sizeof line, "%6d %-7s %22s %10.1f %22s %10.1f %13s %6.1f %8lld %7lld %6lld\n",
                  r.max_num_seqs, phase_name(r.phase), ms3(r.ttft).c_str(), r.ttft.mean * 1e3, ms3(r.tpot).c_str(),
                  r.tpot.mean * 1e3, kv, r.prefix_cache_hit_rate * 100, static_cast<long long>(r.preemptions),
                  static_cast<long long>(r.steps), static_cast<long long>(r.failed_requests));
    out += line;
  }
  return out;
}

std::string format_spec_table(const std::vector<RunReport>& runs) {
  std::string out;
  for (const RunReport& r : runs) {
    if (r.spec.empty()) continue;
    if (out.empty()) out = "\n" + spec_table_header();
    out += spec_table_row(r.max_num_seqs, phase_name(r.phase), r.spec);
  }
  return out;
}

std::string format_router_table(const std::vector<RunReport>& runs) {
  std::string out;
  for (const RunReport& r : runs) {
    if (r.router.empty()) continue;
    if (out.empty()) out = "\n" + router_table_header();
    out += router_table_row(r.max_num_seqs, phase_name(r.phase), r.router);
  }
  return out;
}

std::string format_pool_table(const std::vector<RunReport>& runs) {
  std::string out = "\n" + pool_table_header();
  for (const RunReport& r : runs) out += pool_table_row(r.max_num_seqs, phase_name(r.phase), r.pool);
  return out;
}

}  // namespace db::bench
