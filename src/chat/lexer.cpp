#include "chat/lexer.h"

#include <cerrno>
#include <cstdlib>

#include "chat/text.h"
#include "util/error.h"

namespace db::chat {

namespace {

// Newlines become "\n" and one trailing newline is dropped (jinja2's
// keep_trailing_newline=False).
std::string normalize_newlines(const std::string& src) {
  std::string out;
  out.reserve(src.size());
  for (size_t i = 0; i < src.size(); ++i) {
    if (src[i] == '\r') {
      out.push_back('\n');
      if (i + 1 < src.size() && src[i + 1] == '\n') ++i;
    } else {
      out.push_back(src[i]);
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

class Lexer {
 public:
  explicit Lexer(std::string src) : src_(std::move(src)) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < src_.size(); ++i) {
      if (src_[i] == '\n') line_starts_.push_back(i + 1);
    }
  }

  std::vector<Token> run() {
    while (pos_ < src_.size()) lex_root();
    push(TokenType::End, "", src_.size());
    return std::move(tokens_);
  }

 private:
  SourcePos position(size_t offset) const {
    size_t lo = 0, hi = line_starts_.size();
    while (hi - lo > 1) {
      const size_t mid = (lo + hi) / 2;
      if (line_starts_[mid] <= offset) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    return SourcePos{static_cast<int>(lo) + 1, static_cast<int>(offset - line_starts_[lo]) + 1};
  }

  [[noreturn]] void fail(size_t offset, const std::string& msg) const {
    const SourcePos p = position(offset);
    throw Error("chat template syntax error at line " + std::to_string(p.line) + ", column " +
                std::to_string(p.column) + ": " + msg);
  }

  Token& push(TokenType type, std::string text, size_t offset) {
    Token t;
    t.type = type;
    t.text = std::move(text);
    t.pos = position(offset);
    tokens_.push_back(std::move(t));
    return tokens_.back();
  }

  // Length in bytes of the whitespace code point at `at`, or 0.
  size_t space_at(size_t at) const {
    if (at >= src_.size()) return 0;
    const auto b = static_cast<unsigned char>(src_[at]);
    if (b < 0x80) return text::is_space(b) ? 1 : 0;
    size_t len = (b & 0xE0) == 0xC0 ? 2 : (b & 0xF0) == 0xE0 ? 3 : (b & 0xF8) == 0xF0 ? 4 : 1;
    if (at + len > src_.size()) return 0;
    const std::u32string cp = text::decode(std::string_view(src_).substr(at, len));
    return (cp.size() == 1 && text::is_space(cp[0])) ? len : 0;
  }

  size_t skip_spaces(size_t at) const {
    while (size_t n = space_at(at)) at += n;
    return at;
  }

  bool starts_with(size_t at, std::string_view s) const { return src_.compare(at, s.size(), s) == 0; }

  // Data before a tag, with `{%-`/`-` stripping and lstrip_blocks applied.
  void emit_data(size_t begin, size_t end, char sign, bool is_variable) {
    std::string data = src_.substr(begin, end - begin);
    if (sign == '-') {
      data = text::strip(data, std::nullopt, false, true);
    } else if (sign != '+' && !is_variable) {
      const size_t nl = data.rfind('\n');
      const size_t l_pos = nl == std::string::npos ? 0 : nl + 1;
      if (l_pos > 0 || line_starting_) {
        const std::string tail = data.substr(l_pos);
        if (!tail.empty() && text::strip(tail, std::nullopt, true, false).empty()) data.resize(l_pos);
      }
    }
    if (!data.empty()) push(TokenType::Data, std::move(data), begin);
  }

  // Consumes an end marker "%}" / "#}" (trim_blocks) or "}}" after an optional
  // '+'/'-' sign; returns false when none starts at pos_.
  bool consume_end(std::string_view marker, bool trim_newline) {
    if (src_[pos_] == '+' && starts_with(pos_ + 1, marker) && marker != "}}") {
      pos_ += 1 + marker.size();
    } else if (src_[pos_] == '-' && starts_with(pos_ + 1, marker)) {
      pos_ = skip_spaces(pos_ + 1 + marker.size());
    } else if (starts_with(pos_, marker)) {
      pos_ += marker.size();
      if (trim_newline && pos_ < src_.size() && src_[pos_] == '\n') ++pos_;
    } else {
      return false;
    }
    line_starting_ = src_[pos_ - 1] == '\n';
    return true;
  }

  void lex_root() {
    size_t i = pos_;
    while (true) {
      i = src_.find('{', i);
      if (i == std::string::npos || i + 1 >= src_.size()) {
        push(TokenType::Data, src_.substr(pos_), pos_);
        pos_ = src_.size();
        return;
      }
      const char kind = src_[i + 1];
      if (kind == '{' || kind == '%' || kind == '#') break;
      ++i;
    }
    const char kind = src_[i + 1];
    const char sign = (i + 2 < src_.size() && (src_[i + 2] == '-' || src_[i + 2] == '+')) ? src_[i + 2] : 0;
    emit_data(pos_, i, sign, kind == '{');
    pos_ = i + 2 + (sign ? 1 : 0);
    line_starting_ = false;
    if (kind == '#') {
      lex_comment(i);
    } else if (kind == '%' && try_raw(i)) {
      return;
    } else if (kind == '%') {
      push(TokenType::BlockBegin, "{%", i);
      lex_tag("%}", true);
    } else {
      push(TokenType::VariableBegin, "{{", i);
      lex_tag("}}", false);
    }
  }

  void lex_comment(size_t start) {
    while (pos_ < src_.size()) {
      if (src_[pos_] == '#' || src_[pos_] == '-' || src_[pos_] == '+') {
        if (consume_end("#}", true)) return;
      }
      ++pos_;
    }
    fail(start, "missing end of comment tag");
  }

  // `{% raw %}...{% endraw %}`: the body is data, not parsed.
  bool try_raw(size_t start) {
    size_t p = skip_spaces(pos_);
    if (!starts_with(p, "raw")) return false;
    p = skip_spaces(p + 3);
    if (starts_with(p, "-%}")) {
      p = skip_spaces(p + 3);
    } else if (starts_with(p, "%}")) {
      p += 2;
    } else {
      return false;
    }
    line_starting_ = src_[p - 1] == '\n';
    for (size_t q = p;; q += 2) {
      q = src_.find("{%", q);
      if (q == std::string::npos) fail(start, "missing end of raw directive");
      const char sign = (q + 2 < src_.size() && (src_[q + 2] == '-' || src_[q + 2] == '+')) ? src_[q + 2] : 0;
      size_t r = skip_spaces(q + 2 + (sign ? 1 : 0));
      if (!starts_with(r, "endraw")) continue;
      r = skip_spaces(r + 6);
      if (!starts_with(r, "%}") && !starts_with(r, "-%}") && !starts_with(r, "+%}")) continue;
      emit_data(p, q, sign, false);
      pos_ = r;
      consume_end("%}", true);
      return true;
    }
  }

  void lex_tag(std::string_view end_marker, bool is_block) {
    std::vector<char> balance;
    while (true) {
      if (pos_ >= src_.size()) fail(pos_, is_block ? "unexpected end of template inside a {% %} tag"
                                                  : "unexpected end of template inside a {{ }} tag");
      if (balance.empty()) {
        const size_t at = pos_;
        if (consume_end(end_marker, is_block)) {
          push(is_block ? TokenType::BlockEnd : TokenType::VariableEnd, std::string(end_marker), at);
          return;
        }
      }
      if (size_t n = space_at(pos_)) {
        pos_ = skip_spaces(pos_ + n);
        continue;
      }
      if (lex_number() || lex_name() || lex_string() || lex_operator(balance)) continue;
      fail(pos_, "unexpected char '" + std::string(1, src_[pos_]) + "'");
    }
  }

  // (\d+_)*\d+ at p; returns the end or p when absent.
  size_t scan_digits(size_t p) const {
    size_t q = p;
    if (q >= src_.size() || !is_digit(src_[q])) return p;
    while (true) {
      while (q < src_.size() && is_digit(src_[q])) ++q;
      if (q + 1 < src_.size() && src_[q] == '_' && is_digit(src_[q + 1])) {
        ++q;
        continue;
      }
      return q;
    }
  }

  static std::string without_underscores(std::string_view s) {
    std::string out;
    for (char c : s) {
      if (c != '_') out.push_back(c);
    }
    return out;
  }

  bool lex_number() {
    const size_t start = pos_;
    if (!is_digit(src_[start])) return false;
    // Float: digits [fraction] exponent | digits fraction, not after a '.'.
    if (start == 0 || src_[start - 1] != '.') {
      const size_t int_end = scan_digits(start);
      size_t frac_end = int_end;
      if (int_end < src_.size() && src_[int_end] == '.') {
        const size_t f = scan_digits(int_end + 1);
        if (f > int_end + 1) frac_end = f;
      }
      size_t exp_end = frac_end;
      if (frac_end < src_.size() && (src_[frac_end] == 'e' || src_[frac_end] == 'E')) {
        size_t e = frac_end + 1;
        if (e < src_.size() && (src_[e] == '+' || src_[e] == '-')) ++e;
        const size_t d = scan_digits(e);
        if (d > e) exp_end = d;
      }
      if (exp_end > frac_end || frac_end > int_end) {
        const std::string lit = without_underscores(std::string_view(src_).substr(start, exp_end - start));
        Token& t = push(TokenType::Float, lit, start);
        t.float_value = std::strtod(lit.c_str(), nullptr);
        pos_ = exp_end;
        return true;
      }
    }
    int base = 10;
    size_t p = start;
    if (src_[start] == '0' && start + 1 < src_.size()) {
      const char x = static_cast<char>(src_[start + 1] | 0x20);
      base = x == 'b' ? 2 : x == 'o' ? 8 : x == 'x' ? 16 : 10;
    }
    auto is_base_digit = [base](char c) {
      if (base == 2) return c == '0' || c == '1';
      if (base == 8) return c >= '0' && c <= '7';
      if (base == 16) return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
      return is_digit(c);
    };
    std::string digits;
    if (base != 10) {
      p = start + 2;
      while (p < src_.size()) {
        if (src_[p] == '_' && p + 1 < src_.size() && is_base_digit(src_[p + 1])) ++p;
        if (!is_base_digit(src_[p])) break;
        digits.push_back(src_[p++]);
      }
      if (digits.empty()) base = 10;  // plain "0" followed by a name
    }
    if (base == 10) {
      if (src_[start] == '0') {
        p = start + 1;
        while (p + 1 < src_.size() && (src_[p] == '0' || (src_[p] == '_' && src_[p + 1] == '0'))) ++p;
        if (p < src_.size() && src_[p] == '0') ++p;
        digits = "0";
      } else {
        p = scan_digits(start);
        digits = without_underscores(std::string_view(src_).substr(start, p - start));
      }
    }
    errno = 0;
    const long long value = std::strtoll(digits.c_str(), nullptr, base);
    if (errno == ERANGE) fail(start, "integer literal too large");
    Token& t = push(TokenType::Integer, src_.substr(start, p - start), start);
    t.int_value = value;
    pos_ = p;
    return true;
  }

  bool lex_name() {
    if (!is_name_start(src_[pos_])) return false;
    size_t p = pos_;
    while (p < src_.size() && is_name_char(src_[p])) ++p;
    push(TokenType::Name, src_.substr(pos_, p - pos_), pos_);
    pos_ = p;
    return true;
  }

  static int hex_value(char c) {
    if (is_digit(c)) return c - '0';
    c = static_cast<char>(c | 0x20);
    return (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
  }

  // Python "unicode-escape" decoding of a literal's body.
  std::string unescape(size_t begin, size_t end) const {
    std::string out;
    size_t i = begin;
    while (i < end) {
      const char c = src_[i];
      if (c != '\\' || i + 1 >= end) {
        out.push_back(c);
        ++i;
        continue;
      }
      const char e = src_[i + 1];
      i += 2;
      switch (e) {
        case '\n': break;
        case '\\': out.push_back('\\'); break;
        case '\'': out.push_back('\''); break;
        case '"': out.push_back('"'); break;
        case 'a': out.push_back('\a'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'v': out.push_back('\v'); break;
        case 'x':
        case 'u':
        case 'U': {
          const int width = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          char32_t cp = 0;
          for (int k = 0; k < width; ++k) {
            const int h = i + k < end ? hex_value(src_[i + k]) : -1;
            if (h < 0) fail(i - 2, std::string("truncated \\") + e + " escape in string literal");
            cp = cp * 16 + static_cast<char32_t>(h);
          }
          if (cp > 0x10FFFF) fail(i - 2, "illegal Unicode character in string literal");
          text::append(out, cp);
          i += width;
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            char32_t cp = static_cast<char32_t>(e - '0');
            for (int k = 0; k < 2 && i < end && src_[i] >= '0' && src_[i] <= '7'; ++k) cp = cp * 8 + (src_[i++] - '0');
            text::append(out, cp);
          } else {
            out.push_back('\\');
            out.push_back(e);
          }
      }
    }
    return out;
  }

  bool lex_string() {
    const char quote = src_[pos_];
    if (quote != '\'' && quote != '"') return false;
    size_t p = pos_ + 1;
    while (p < src_.size() && src_[p] != quote) p += src_[p] == '\\' ? 2 : 1;
    if (p >= src_.size()) fail(pos_, "unterminated string literal");
    push(TokenType::String, unescape(pos_ + 1, p), pos_);
    pos_ = p + 1;
    return true;
  }

  bool lex_operator(std::vector<char>& balance) {
    static const char* const kTwo[] = {"//", "**", "==", "!=", ">=", "<="};
    for (const char* op : kTwo) {
      if (starts_with(pos_, op)) {
        push(TokenType::Operator, op, pos_);
        pos_ += 2;
        return true;
      }
    }
    const char c = src_[pos_];
    if (std::string_view("+-/*%~[](){}><=.:|,;").find(c) == std::string_view::npos) return false;
    if (c == '(' || c == '[' || c == '{') {
      balance.push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
    } else if (c == ')' || c == ']' || c == '}') {
      if (balance.empty()) fail(pos_, std::string("unexpected '") + c + "'");
      if (balance.back() != c) fail(pos_, std::string("unexpected '") + c + "', expected '" + balance.back() + "'");
      balance.pop_back();
    }
    push(TokenType::Operator, std::string(1, c), pos_);
    ++pos_;
    return true;
  }

  std::string src_;
  std::vector<size_t> line_starts_;  // byte offset of each line's start
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  bool line_starting_ = true;  // the last consumed text ended with a newline
};

}  // namespace

std::vector<Token> tokenize(const std::string& source) { return Lexer(normalize_newlines(source)).run(); }

std::string describe(const Token& t) {
  switch (t.type) {
    case TokenType::Data: return "template data";
    case TokenType::VariableBegin: return "'{{'";
    case TokenType::VariableEnd: return "end of print statement";
    case TokenType::BlockBegin: return "'{%'";
    case TokenType::BlockEnd: return "end of statement block";
    case TokenType::Name: return "'" + t.text + "'";
    case TokenType::String: return "string literal";
    case TokenType::Integer: return "integer literal";
    case TokenType::Float: return "float literal";
    case TokenType::Operator: return "'" + t.text + "'";
    case TokenType::End: return "end of template";
  }
  return "token";
}

}  // namespace db::chat
