#include "batch/progress.h"

#include <algorithm>
#include <cmath>

namespace db::batch {

namespace {

std::string printf_string(const char* fmt, double a, double b = 0, double c = 0) {
  char buf[128];
  std::snprintf(buf, sizeof buf, fmt, a, b, c);
  return buf;
}

double rate(double amount, double seconds) { return seconds > 0 ? amount / seconds : 0.0; }

}  // namespace

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--";
  const long long t = std::llround(seconds);
  char buf[64];
  if (t < 60) std::snprintf(buf, sizeof buf, "%llds", t);
  else if (t < 3600) std::snprintf(buf, sizeof buf, "%lldm%02llds", t / 60, t % 60);
  else std::snprintf(buf, sizeof buf, "%lldh%02lldm%02llds", t / 3600, (t / 60) % 60, t % 60);
  return buf;
}

std::string format_progress(const ProgressSnapshot& s, int bar_width) {
  const double frac = s.total ? static_cast<double>(s.done) / static_cast<double>(s.total) : 1.0;
  std::string line;
  if (bar_width > 0) {
    const size_t width = static_cast<size_t>(bar_width);
    const size_t filled = std::min(width, static_cast<size_t>(std::max(0.0, frac) * static_cast<double>(width)));
    line.reserve(width + 64);
    line += '[';
    line.append(filled, '#');
    line.append(width - filled, '.');
    line += "] ";
  }
  line += std::to_string(s.done) + "/" + std::to_string(s.total);
  line += printf_string(" %5.1f%%", 100.0 * frac);
  if (s.failed) line += "  " + std::to_string(s.failed) + " failed";
  line += printf_string("  %.0f tok/s", rate(static_cast<double>(s.generated_tokens), s.elapsed_seconds));
  const double eta = s.done ? s.elapsed_seconds / static_cast<double>(s.done) * static_cast<double>(s.total - s.done)
                            : -1.0;
  line += "  ETA " + (s.done == s.total ? std::string("0s") : format_duration(eta));
  return line;
}

ProgressReporter::ProgressReporter(std::FILE* out, bool tty, double plain_interval_seconds)
    : out_(out), tty_(tty), interval_(plain_interval_seconds), last_(std::chrono::steady_clock::now()) {}

void ProgressReporter::update(const ProgressSnapshot& s) {
  const auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - last_).count();
  if (since < (tty_ ? 0.2 : interval_)) return;
  draw(s);
}

void ProgressReporter::finish(const ProgressSnapshot& s) {
  if (s.total == 0 && !drawn_) return;  // nothing ran: the summary says it all
  draw(s);
  if (tty_ && drawn_) std::fputc('\n', out_);
  std::fflush(out_);
}

void ProgressReporter::draw(const ProgressSnapshot& s) {
  last_ = std::chrono::steady_clock::now();
  if (!out_) return;
  if (tty_) {
    std::fprintf(out_, "\r\033[K%s", format_progress(s, 30).c_str());
  } else {
    std::fprintf(out_, "[deepbatch run] progress: %s\n", format_progress(s, 0).c_str());
  }
  std::fflush(out_);
  drawn_ = true;
}

std::string format_summary(const BatchSummary& s, const std::string& output_path) {
  const double wall = s.wall_seconds;
  const int64_t total_tokens = s.prompt_tokens + s.generated_tokens;
  std::string out = "[deepbatch run] done: " + std::to_string(s.input_lines) + " input lines: " + std::to_string(s.ok) +
                    " ok, " + std::to_string(s.failed) + " failed, " + std::to_string(s.skipped) +
                    " skipped (already in the output)\n";
  out += "[deepbatch run] tokens: " + std::to_string(s.prompt_tokens) + " prompt (" +
         std::to_string(s.cached_prompt_tokens) + " from the prefix cache), " + std::to_string(s.generated_tokens) +
         " generated, " + std::to_string(total_tokens) + " total\n";
  const double requests = static_cast<double>(s.ok + s.failed);
  out += "[deepbatch run] wall time " + printf_string("%.2f s", wall) +
         printf_string(": %.2f requests/s, %.1f generated tokens/s, %.1f total tokens/s\n", rate(requests, wall),
                       rate(static_cast<double>(s.generated_tokens), wall),
                       rate(static_cast<double>(total_tokens), wall));
  if (s.constraint_masks > 0)
    out += printf_string("[deepbatch run] constrained outputs: %.0f token masks, %.1f us per mask\n",
                         static_cast<double>(s.constraint_masks),
                         1e6 * s.constraint_mask_seconds / static_cast<double>(s.constraint_masks));
  if (!s.spec_proposer.empty()) {
    const double drafts = static_cast<double>(s.spec_drafts), draft_tokens = static_cast<double>(s.spec_draft_tokens);
    const double accepted = static_cast<double>(s.spec_accepted_tokens);
    out += "[deepbatch run] speculative decoding (" + s.spec_proposer + "): " +
           printf_string("%.0f drafts, %.0f draft tokens, %.0f accepted", drafts, draft_tokens, accepted) +
           printf_string(" (%.1f%%), mean accepted length %.2f tokens per verification\n",
                         100 * rate(accepted, draft_tokens), 1 + rate(accepted, drafts));
  }
  out += "[deepbatch run] output: " + output_path + " (one record per line, in completion order, not input order)\n";
  return out;
}

}  // namespace db::batch
