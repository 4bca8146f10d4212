// Speculative decoding's part of a benchmark report: what one run drafted and
// accepted (the engine's SpecDecodeStats after it minus before it).
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "spec/spec_decode_stats.h"

namespace db::bench {

struct SpecReport {
  std::string proposer;          // "" when speculation is off (every other field is 0)
  int64_t drafts = 0;            // verifications
  int64_t draft_tokens = 0;      // draft tokens verified
  int64_t accepted_tokens = 0;   // ... of which accepted
  int64_t emitted_tokens = 0;    // tokens the verifying steps emitted
  double acceptance_rate = 0;    // accepted / draft tokens
  double mean_accepted_length = 0;  // emitted tokens per verification
  bool empty() const { return proposer.empty(); }
};

SpecReport make_spec_report(const SpecDecodeStats& after, const SpecDecodeStats& before);
nlohmann::json to_json(const SpecReport& r);
std::string spec_table_header();
std::string spec_table_row(int max_num_seqs, const char* phase, const SpecReport& r);

}  // namespace db::bench
