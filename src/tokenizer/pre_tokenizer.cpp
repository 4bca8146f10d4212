#include "tokenizer/pre_tokenizer.h"

#include "util/error.h"

namespace db {

const char* const kGpt2Pattern = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

namespace {

// One stretch of a piece: [begin, end) and whether it is (after inversion) a match.
struct Stretch {
  size_t begin, end;
  bool match;
};

// Cuts [0, size) into alternating gaps and matches (empty matches stay as cut points).
void to_stretches(const std::vector<MatchSpan>& matches, size_t size, bool invert, std::vector<Stretch>& out) {
  out.clear();
  size_t prev = 0;
  for (const auto& [b, e] : matches) {
    if (b > prev) out.push_back({prev, b, invert});
    out.push_back({b, e, !invert});
    prev = e;
  }
  if (prev < size) out.push_back({prev, size, invert});
}

// Applies a Hugging Face split behavior; the result lists the pieces to keep.
void apply_behavior(SplitBehavior behavior, const std::vector<Stretch>& in, std::vector<Stretch>& out) {
  out.clear();
  switch (behavior) {
    case SplitBehavior::Isolated:
      out = in;
      return;
    case SplitBehavior::Removed:
      for (const auto& s : in)
        if (!s.match) out.push_back(s);
      return;
    case SplitBehavior::MergedWithPrevious: {
      bool previous_match = false;
      for (const auto& s : in) {
        if (s.match && !previous_match && !out.empty()) out.back().end = s.end;
        else out.push_back(s);
        previous_match = s.match;
      }
      return;
    }
    case SplitBehavior::MergedWithNext: {
      bool next_match = false;  // walking right to left
      std::vector<Stretch> rev;
      for (size_t i = in.size(); i-- > 0;) {
        const auto& s = in[i];
        if (s.match && !next_match && !rev.empty()) rev.back().begin = s.begin;
        else rev.push_back(s);
        next_match = s.match;
      }
      out.assign(rev.rbegin(), rev.rend());
      return;
    }
    case SplitBehavior::Contiguous: {
      bool previous_match = false;
      for (const auto& s : in) {
        if (s.match == previous_match && !out.empty()) out.back().end = s.end;
        else out.push_back(s);
        previous_match = s.match;
      }
      return;
    }
  }
}

}  // namespace

void PreTokenizer::add_split(const std::string& pattern, bool literal, SplitBehavior behavior, bool invert) {
  if (!steps_.empty() && steps_.back().kind == Step::Kind::ByteLevel)
    throw Error("pre-tokenizer: a Split after ByteLevel is not supported (pattern \"" + pattern + "\")");
  Step s;
  s.kind = Step::Kind::Split;
  s.regex = std::make_shared<const Regex>(pattern, literal);
  s.literal = literal;
  s.behavior = behavior;
  s.invert = invert;
  steps_.push_back(std::move(s));
}

void PreTokenizer::add_digits(bool individual) {
  add_split("\\p{N}", false, individual ? SplitBehavior::Isolated : SplitBehavior::Contiguous, false);
}

void PreTokenizer::add_byte_level(bool add_prefix_space, bool use_regex) {
  if (ends_with_byte_level()) throw Error("pre-tokenizer: ByteLevel given twice");
  Step s;
  s.kind = Step::Kind::ByteLevel;
  if (use_regex) s.regex = std::make_shared<const Regex>(kGpt2Pattern, false);
  s.add_prefix_space = add_prefix_space;
  steps_.push_back(std::move(s));
}

namespace {

// `pattern` with its literal control characters written as regex escapes
// (a literal line feed as \n), which match the same: tokenizer.json files hold
// the one spelling, the presets the other.
std::string escaped_controls(const std::string& pattern) {
  std::string out;
  bool escaping = false;  // the previous character is a backslash that escapes this one
  for (const char c : pattern) {
    const char* name = c == '\n' ? "n" : c == '\r' ? "r" : c == '\t' ? "t" : c == '\f' ? "f" : c == '\v' ? "v" : nullptr;
    if (name != nullptr) {
      out += escaping ? name : std::string("\\") + name;
      escaping = false;
      continue;
    }
    out += c;
    escaping = c == '\\' && !escaping;
  }
  return out;
}

}  // namespace

bool PreTokenizer::same_steps(const PreTokenizer& other) const {
  if (steps_.size() != other.steps_.size()) return false;
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step &a = steps_[i], &b = other.steps_[i];
    if (a.kind != b.kind || a.behavior != b.behavior || a.invert != b.invert || a.literal != b.literal ||
        a.add_prefix_space != b.add_prefix_space || (a.regex == nullptr) != (b.regex == nullptr) ||
        (a.regex && escaped_controls(a.regex->pattern()) != escaped_controls(b.regex->pattern())))
      return false;
  }
  return true;
}

bool PreTokenizer::ends_with_byte_level() const {
  return !steps_.empty() && steps_.back().kind == Step::Kind::ByteLevel;
}

void PreTokenizer::split_piece(const Step& step, std::string_view piece, std::vector<std::string>& out,
                               std::vector<MatchSpan>& scratch) const {
  scratch.clear();
  step.regex->find_all(piece, scratch);
  if (scratch.empty()) {
    // No match: the whole piece is one gap, which every behavior except an inverted Removed keeps.
    if (!(step.invert && step.behavior == SplitBehavior::Removed)) out.emplace_back(piece);
    return;
  }
  thread_local std::vector<Stretch> stretches, kept;
  to_stretches(scratch, piece.size(), step.invert, stretches);
  apply_behavior(step.behavior, stretches, kept);
  for (const auto& s : kept)
    if (s.end > s.begin) out.emplace_back(piece.substr(s.begin, s.end - s.begin));
}

void PreTokenizer::apply(const Step& step, const std::string& piece, std::vector<std::string>& out,
                         std::vector<MatchSpan>& scratch) const {
  if (step.kind == Step::Kind::Split) {
    split_piece(step, piece, out, scratch);
    return;
  }
  std::string prefixed;
  std::string_view text = piece;
  if (step.add_prefix_space && (piece.empty() || piece[0] != ' ')) {
    prefixed = " " + piece;
    text = prefixed;
  }
  if (step.regex) split_piece(step, text, out, scratch);
  else if (!text.empty()) out.emplace_back(text);
}

void PreTokenizer::split(std::string_view text, std::vector<std::string>& out) const {
  if (text.empty()) return;
  std::vector<std::string> current{std::string(text)}, next;
  std::vector<MatchSpan> scratch;
  for (const auto& step : steps_) {
    next.clear();
    for (const auto& piece : current) apply(step, piece, next, scratch);
    current.swap(next);
  }
  for (auto& p : current) out.push_back(std::move(p));
}

}  // namespace db
