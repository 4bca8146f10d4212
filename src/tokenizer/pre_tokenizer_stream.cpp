// PreTokenizer::split_each: the pieces of split(), produced one at a time. Each step
// cuts a piece at its regex matches as they are found and applies the split behavior
// with at most one stretch held back, so nothing proportional to the text is stored.
#include <optional>

#include "tokenizer/pre_tokenizer.h"

namespace db {

namespace {

// One stretch of a piece: [begin, end) and whether it is (after inversion) a match.
struct Stretch {
  size_t begin, end;
  bool match;
};

// A Hugging Face split behavior applied to stretches arriving left to right: gives
// `emit` each kept stretch, merged as the behavior asks, once no later stretch can
// change it (the same stretches, in the same order, as the behavior applied to the
// whole list at once).
class BehaviorStream {
 public:
  explicit BehaviorStream(SplitBehavior b) : behavior_(b) {}

  template <typename Emit>
  bool push(Stretch s, const Emit& emit) {
    switch (behavior_) {
      case SplitBehavior::Isolated: return emit(s);
      case SplitBehavior::Removed: return s.match || emit(s);
      case SplitBehavior::MergedWithPrevious: return merge_into_pending(s, s.match && !previous_match_, emit);
      case SplitBehavior::Contiguous: return merge_into_pending(s, s.match == previous_match_, emit);
      case SplitBehavior::MergedWithNext: return merged_with_next(s, emit);
    }
    return true;
  }

  template <typename Emit>
  bool finish(const Emit& emit) {
    if (!pending_) return true;
    const Stretch last = *pending_;
    pending_.reset();
    return emit(last);
  }

 private:
  // The pending stretch grows over `s` when `merge`; otherwise it is final and `s` waits.
  template <typename Emit>
  bool merge_into_pending(Stretch s, bool merge, const Emit& emit) {
    previous_match_ = s.match;
    if (merge && pending_) {
      pending_->end = s.end;
      return true;
    }
    const std::optional<Stretch> done = pending_;
    pending_ = s;
    return !done || emit(*done);
  }

  // A match joins the stretch after it when that one is not a match; it waits to see it.
  template <typename Emit>
  bool merged_with_next(Stretch s, const Emit& emit) {
    if (s.match) {
      const std::optional<Stretch> done = pending_;
      pending_ = s;
      return !done || emit(*done);
    }
    if (!pending_) return emit(s);
    const Stretch joined{pending_->begin, s.end, false};
    pending_.reset();
    return emit(joined);
  }

  SplitBehavior behavior_;
  std::optional<Stretch> pending_;  // the last kept stretch, still open to merging
  bool previous_match_ = false;     // whether the previous stretch was a match
};

}  // namespace

bool PreTokenizer::split_each(std::string_view text, const PieceSink& sink) const {
  if (text.empty()) return true;
  return each_piece(0, text, sink);
}

bool PreTokenizer::each_piece(size_t step, std::string_view piece, const PieceSink& sink) const {
  if (step == steps_.size()) return sink(piece);
  const Step& s = steps_[step];
  if (s.kind == Step::Kind::Split) return each_split(s, step + 1, piece, sink);
  std::string prefixed;
  std::string_view text = piece;
  if (s.add_prefix_space && (piece.empty() || piece[0] != ' ')) {
    prefixed = " " + std::string(piece);
    text = prefixed;
  }
  if (s.regex) return each_split(s, step + 1, text, sink);
  return text.empty() || each_piece(step + 1, text, sink);
}

bool PreTokenizer::each_split(const Step& step, size_t next, std::string_view piece, const PieceSink& sink) const {
  const auto emit = [&](Stretch s) {
    return s.end <= s.begin || each_piece(next, piece.substr(s.begin, s.end - s.begin), sink);
  };
  BehaviorStream stream(step.behavior);
  const bool invert = step.invert;
  Regex::Cursor cursor;
  MatchSpan m;
  size_t prev = 0;
  while (step.regex->next_match(piece, cursor, m)) {
    if (m.first > prev && !stream.push({prev, m.first, invert}, emit)) return false;
    if (!stream.push({m.first, m.second, !invert}, emit)) return false;
    prev = m.second;
  }
  if (prev < piece.size() && !stream.push({prev, piece.size(), invert}, emit)) return false;
  return stream.finish(emit);
}

}  // namespace db
