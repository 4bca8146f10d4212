// Progress of a batch job on stderr: on a terminal one line redrawn in place
// (bar, done/total, tokens/s, ETA); otherwise a plain line every few seconds.
// And the summary printed at the end.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace db::batch {

struct ProgressSnapshot {
  size_t done = 0;               // requests finished this run (ok or failed)
  size_t total = 0;              // requests this run will finish
  size_t failed = 0;             // of done, those that got an error record
  int64_t generated_tokens = 0;  // tokens generated this run
  double elapsed_seconds = 0;    // since the run started
};

// "12s", "3m05s", "1h02m03s"; "--" for a negative or non-finite time.
std::string format_duration(double seconds);
// "[#######.......] 120/300  40.0%  1234 tok/s  ETA 12s" (bar `bar_width` wide; no bar when 0).
std::string format_progress(const ProgressSnapshot& s, int bar_width);

class ProgressReporter {
 public:
  // `tty`: redraw one line; otherwise print a line every `plain_interval_seconds`.
  ProgressReporter(std::FILE* out, bool tty, double plain_interval_seconds = 5.0);
  // Shows `s` if enough time has passed since the last line (rate-limited).
  void update(const ProgressSnapshot& s);
  // Shows `s` and ends the line.
  void finish(const ProgressSnapshot& s);

 private:
  void draw(const ProgressSnapshot& s);
  std::FILE* out_;
  bool tty_;
  double interval_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_;
};

struct BatchSummary {
  size_t input_lines = 0;        // non-blank lines in the input
  size_t ok = 0;                 // requests answered this run
  size_t failed = 0;             // error records written this run (bad lines included)
  size_t skipped = 0;            // lines already in the output file from an earlier run
  int64_t prompt_tokens = 0;     // prompt tokens of the requests answered this run
  int64_t cached_prompt_tokens = 0;  // of those, served by the prefix cache
  int64_t generated_tokens = 0;  // tokens generated this run
  double wall_seconds = 0;       // wall time of this run
  bool stopped = false;          // BatchJobOptions::stop ended the run before every request finished
  size_t expired = 0;            // of `failed`: "batch_expired" records (BatchJobOptions::deadline passed)
  int64_t constraint_masks = 0;  // masks filled for constrained outputs this run
  double constraint_mask_seconds = 0;  // ... and their seconds, summed over threads
  std::string spec_proposer;     // speculative decoding's proposer ("" = off)
  int64_t spec_drafts = 0;       // verifications of draft tokens this run
  int64_t spec_draft_tokens = 0; // draft tokens verified this run
  int64_t spec_accepted_tokens = 0;  // ... of which accepted
};

// Multi-line human-readable summary (ends with a newline).
std::string format_summary(const BatchSummary& s, const std::string& output_path);

}  // namespace db::batch
