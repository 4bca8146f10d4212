#include "offline_bench/spec_report.h"

#include <cstdio>

namespace db::bench {

SpecReport make_spec_report(const SpecDecodeStats& after, const SpecDecodeStats& before) {
  SpecReport r;
  r.proposer = after.proposer;
  if (r.empty()) return r;
  r.drafts = after.num_drafts - before.num_drafts;
  r.draft_tokens = after.num_draft_tokens - before.num_draft_tokens;
  r.accepted_tokens = after.num_accepted_tokens - before.num_accepted_tokens;
  r.emitted_tokens = after.num_emitted_tokens - before.num_emitted_tokens;
  if (r.draft_tokens > 0) r.acceptance_rate = static_cast<double>(r.accepted_tokens) / static_cast<double>(r.draft_tokens);
  if (r.drafts > 0) r.mean_accepted_length = static_cast<double>(r.emitted_tokens) / static_cast<double>(r.drafts);
  return r;
}

nlohmann::json to_json(const SpecReport& r) {
  return {{"proposer", r.proposer},
          {"drafts", r.drafts},
          {"draft_tokens", r.draft_tokens},
          {"accepted_tokens", r.accepted_tokens},
          {"emitted_tokens", r.emitted_tokens},
          {"acceptance_rate", r.acceptance_rate},
          {"mean_accepted_length", r.mean_accepted_length}};
}

std::string spec_table_header() {
  char line[256];
  std::snprintf(line, sizeof line, "%6s %-7s %-9s %9s %12s %9s %10s %12s\n", "seqs", "phase", "proposer", "drafts",
                "draft tok", "accepted", "accept %", "mean length");
  return "Speculative decoding (mean length = tokens emitted per verification)\n" + std::string(line);
}

std::string spec_table_row(int max_num_seqs, const char* phase, const SpecReport& r) {
  char line[256];
  std::snprintf(line, sizeof line, "%6d %-7s %-9s %9lld %12lld %9lld %9.1f%% %12.2f\n", max_num_seqs, phase,
                r.proposer.c_str(), static_cast<long long>(r.drafts), static_cast<long long>(r.draft_tokens),
                static_cast<long long>(r.accepted_tokens), 100 * r.acceptance_rate, r.mean_accepted_length);
  return line;
}

}  // namespace db::bench
