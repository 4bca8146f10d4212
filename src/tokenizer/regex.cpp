#include "tokenizer/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "util/error.h"

namespace db {

namespace {

// The Unicode White_Space property as class items (what Oniguruma's \s matches).
constexpr const char* kWhiteSpaceItems =
    "\\x{9}-\\x{d}\\x{20}\\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}";

struct MatchDataDeleter {
  void operator()(pcre2_match_data* m) const { pcre2_match_data_free(m); }
};

}  // namespace

std::string rewrite_whitespace_escapes(const std::string& p) {
  std::string out;
  out.reserve(p.size() + 64);
  bool in_class = false;
  size_t class_start = 0;  // index just after "[" or "[^" of the open class
  for (size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      const char e = p[i + 1];
      if (e == 's') {
        out += in_class ? std::string(kWhiteSpaceItems) : "[" + std::string(kWhiteSpaceItems) + "]";
      } else if (e == 'S' && !in_class) {
        out += "[^" + std::string(kWhiteSpaceItems) + "]";
      } else {
        out += c;
        out += e;
      }
      ++i;
      continue;
    }
    if (!in_class && c == '[') {
      in_class = true;
      out += c;
      if (i + 1 < p.size() && p[i + 1] == '^') out += p[++i];
      class_start = i + 1;
      continue;
    }
    if (in_class && c == '[' && i + 1 < p.size() && p[i + 1] == ':') {
      const size_t end = p.find(":]", i + 2);
      if (end != std::string::npos) {
        out.append(p, i, end + 2 - i);
        i = end + 1;
        continue;
      }
    }
    if (in_class && c == ']' && i != class_start) in_class = false;
    out += c;
  }
  return out;
}

struct Regex::Impl {
  pcre2_code* code = nullptr;
  ~Impl() { pcre2_code_free(code); }
};

Regex::Regex(const std::string& pattern, bool literal) : pattern_(pattern), impl_(std::make_unique<Impl>()) {
  const std::string source = literal ? pattern : rewrite_whitespace_escapes(pattern);
  const uint32_t options = literal ? (PCRE2_UTF | PCRE2_LITERAL) : (PCRE2_UTF | PCRE2_UCP);
  int error = 0;
  PCRE2_SIZE error_offset = 0;
  impl_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(source.data()), source.size(), options, &error,
                              &error_offset, nullptr);
  if (impl_->code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof(message));
    throw Error("tokenizer regex does not compile: pattern \"" + pattern + "\" at offset " +
                std::to_string(error_offset) + ": " + reinterpret_cast<const char*>(message));
  }
  pcre2_jit_compile(impl_->code, PCRE2_JIT_COMPLETE);  // best effort; the interpreter is the fallback
}

Regex::~Regex() = default;
Regex::Regex(Regex&&) noexcept = default;
Regex& Regex::operator=(Regex&&) noexcept = default;

void Regex::find_all(std::string_view subject, std::vector<MatchSpan>& out) const {
  Cursor cursor;
  MatchSpan m;
  while (next_match(subject, cursor, m)) out.push_back(m);
}

bool Regex::next_match(std::string_view subject, Cursor& c, MatchSpan& out) const {
  thread_local std::unique_ptr<pcre2_match_data, MatchDataDeleter> match_data(pcre2_match_data_create(1, nullptr));
  DB_CHECK(match_data != nullptr, "pcre2_match_data_create failed");
  const auto* text = reinterpret_cast<PCRE2_SPTR>(subject.data());
  while (!c.done && c.pos <= subject.size()) {
    int rc = pcre2_match(impl_->code, text, subject.size(), c.pos, PCRE2_NO_UTF_CHECK | c.extra, match_data.get(),
                         nullptr);
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT)
      rc = pcre2_match(impl_->code, text, subject.size(), c.pos, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT | c.extra,
                       match_data.get(), nullptr);
    if (rc == PCRE2_ERROR_NOMATCH && c.extra != 0) {
      // No non-empty match at the empty match's position: step over one character.
      c.extra = 0;
      if (c.pos >= subject.size()) break;
      ++c.pos;
      while (c.pos < subject.size() && (static_cast<uint8_t>(subject[c.pos]) & 0xC0) == 0x80) ++c.pos;
      continue;
    }
    if (rc < 0) break;  // no match, or resources exhausted
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(match_data.get());
    out = {ov[0], ov[1]};
    c.pos = ov[1];
    c.extra = ov[0] == ov[1] ? (PCRE2_NOTEMPTY_ATSTART | PCRE2_ANCHORED) : 0;
    return true;
  }
  c.done = true;
  return false;
}

}  // namespace db
