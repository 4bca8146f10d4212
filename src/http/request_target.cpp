#include "http/request_target.h"

#include <vector>

#include "util/ascii.h"

namespace db::http {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

// The path part of an absolute-form target ("/" when it has none); nullopt when the
// scheme is not http or https, or the authority is empty.
std::optional<std::string_view> absolute_form_path(std::string_view target) {
  size_t skip = 0;
  if (starts_with_nocase(target, "http://")) skip = 7;
  else if (starts_with_nocase(target, "https://")) skip = 8;
  else return std::nullopt;
  std::string_view rest = target.substr(skip);
  const size_t end = rest.find_first_of("/?");
  if (end == 0 || rest.empty()) return std::nullopt;
  if (end == std::string_view::npos) return std::string_view("/");
  rest.remove_prefix(end);
  if (rest.front() == '?') return std::nullopt;  // "http://h?q": a query without a path
  return rest;
}

// Percent-decodes `raw`; false (with `why`) on a bad escape, an encoded '/', or a control byte.
bool percent_decode(std::string_view raw, std::string& out, std::string& why) {
  out.clear();
  out.reserve(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(raw[i]);
    if (c == '%') {
      const int h = i + 2 < raw.size() ? hex_value(raw[i + 1]) : -1;
      const int l = i + 2 < raw.size() ? hex_value(raw[i + 2]) : -1;
      if (h < 0 || l < 0) {
        why = "a '%' in the path is not followed by two hex digits";
        return false;
      }
      c = static_cast<unsigned char>(h * 16 + l);
      if (c == '/') {
        why = "an encoded '/' (%2F) in the path";
        return false;
      }
      i += 2;
    }
    if (is_control(c)) {
      why = "a control character in the path";
      return false;
    }
    out.push_back(static_cast<char>(c));
  }
  return true;
}

// Resolves "." and ".." segments of an absolute path; false when ".." climbs above the root.
bool remove_dot_segments(const std::string& path, std::string& out) {
  std::vector<std::string_view> kept;
  std::string_view rest(path);
  rest.remove_prefix(1);  // the leading '/'
  while (true) {
    const size_t slash = rest.find('/');
    const std::string_view segment = rest.substr(0, slash);
    const bool last = slash == std::string_view::npos;
    if (segment == "..") {
      if (kept.empty()) return false;
      kept.pop_back();
      if (last) kept.emplace_back();  // "/a/.." names the directory "/": keep the trailing slash
    } else if (segment == ".") {
      if (last) kept.emplace_back();
    } else {
      kept.push_back(segment);
    }
    if (last) break;
    rest.remove_prefix(slash + 1);
  }
  out.clear();
  for (std::string_view s : kept) {
    out += '/';
    out += s;
  }
  if (out.empty()) out = "/";
  return true;
}

}  // namespace

std::optional<RequestTarget> parse_request_target(std::string_view target, std::string& why) {
  std::string_view path_and_query = target;
  if (target.empty() || target.front() != '/') {
    const std::optional<std::string_view> from_absolute = absolute_form_path(target);
    if (!from_absolute) {
      why = "the request-target must be an absolute path starting with '/' (or an http:// URL)";
      return std::nullopt;
    }
    path_and_query = *from_absolute;
  }
  if (path_and_query.find('#') != std::string_view::npos) {
    why = "the request-target must not contain a fragment ('#')";
    return std::nullopt;
  }
  const size_t q = path_and_query.find('?');
  RequestTarget out;
  if (q != std::string_view::npos) out.query = std::string(path_and_query.substr(q + 1));
  std::string decoded;
  if (!percent_decode(path_and_query.substr(0, q), decoded, why)) return std::nullopt;
  if (!remove_dot_segments(decoded, out.path)) {
    why = "the path's '..' segments climb above the root";
    return std::nullopt;
  }
  return out;
}

}  // namespace db::http
