#include "server/batch_api/multipart.h"

#include "api/api_error.h"
#include "util/ascii.h"

namespace db::server {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

[[noreturn]] void bad(const std::string& message) {
  throw api::ApiError("invalid multipart/form-data body: " + message, "", "invalid_multipart", 400);
}

// Reads a quoted string starting at text[pos] == '"'; leaves pos after the closing quote.
std::string read_quoted(std::string_view text, size_t& pos) {
  std::string out;
  ++pos;
  while (pos < text.size()) {
    const char c = text[pos++];
    if (c == '"') return out;
    if (c == '\\' && pos < text.size()) {
      out += text[pos++];
    } else {
      out += c;
    }
  }
  bad("unterminated quoted string in a header parameter");
}

// One "name=value" parameter at text[pos...]; leaves pos at the next ';' or the end.
void read_param(std::string_view text, size_t& pos, HeaderValue& out) {
  const size_t eq = text.find_first_of("=;", pos);
  if (eq == std::string_view::npos || text[eq] == ';') {  // a bare token without a value
    const std::string_view name = trim(text.substr(pos, eq == std::string_view::npos ? eq : eq - pos));
    if (!name.empty()) out.params.emplace_back(ascii_lower(name), "");
    pos = eq == std::string_view::npos ? text.size() : eq;
    return;
  }
  const std::string name = ascii_lower(trim(text.substr(pos, eq - pos)));
  pos = eq + 1;
  while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t')) ++pos;
  std::string value;
  if (pos < text.size() && text[pos] == '"') {
    value = read_quoted(text, pos);
    while (pos < text.size() && text[pos] != ';') ++pos;
  } else {
    const size_t end = text.find(';', pos);
    value = std::string(trim(text.substr(pos, end == std::string_view::npos ? end : end - pos)));
    pos = end == std::string_view::npos ? text.size() : end;
  }
  out.params.emplace_back(name, std::move(value));
}

// Reads the part headers in `head` (CRLF-separated lines) into `part`.
void read_part_headers(std::string_view head, MultipartPart& part, size_t index) {
  bool has_disposition = false;
  size_t pos = 0;
  while (pos < head.size()) {
    size_t eol = head.find("\r\n", pos);
    if (eol == std::string_view::npos) eol = head.size();
    const std::string_view line = head.substr(pos, eol - pos);
    pos = eol + 2;
    if (line.empty()) continue;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) bad("part " + std::to_string(index + 1) + ": a header line without ':'");
    const std::string name = ascii_lower(trim(line.substr(0, colon)));
    const std::string_view value = trim(line.substr(colon + 1));
    if (name == "content-disposition") {
      const HeaderValue hv = parse_header_value(value);
      if (hv.value != "form-data")
        bad("part " + std::to_string(index + 1) + ": Content-Disposition is '" + hv.value + "', expected form-data");
      has_disposition = true;
      part.name = hv.param("name").value_or("");
      part.filename = hv.param("filename");
    } else if (name == "content-type") {
      part.content_type = std::string(value);
    }
  }
  if (!has_disposition) bad("part " + std::to_string(index + 1) + " has no Content-Disposition header");
  if (part.name.empty()) bad("part " + std::to_string(index + 1) + " has no name");
}

}  // namespace

std::optional<std::string> HeaderValue::param(std::string_view lower_name) const {
  for (const auto& [name, value] : params)
    if (name == lower_name) return value;
  return std::nullopt;
}

HeaderValue parse_header_value(std::string_view text) {
  HeaderValue out;
  size_t pos = text.find(';');
  out.value = ascii_lower(trim(text.substr(0, pos)));
  while (pos != std::string_view::npos && pos < text.size()) {
    ++pos;  // past ';'
    read_param(text, pos, out);
  }
  return out;
}

std::string multipart_boundary(std::string_view content_type) {
  const HeaderValue hv = parse_header_value(content_type);
  if (hv.value != "multipart/form-data")
    throw api::ApiError("the body must be multipart/form-data (got Content-Type '" + std::string(content_type) + "')",
                        "", "invalid_content_type", 400);
  const std::optional<std::string> boundary = hv.param("boundary");
  if (!boundary || boundary->empty()) bad("the Content-Type has no boundary parameter");
  if (boundary->size() > 200) bad("the boundary is longer than 200 characters");
  return *boundary;
}

std::vector<MultipartPart> parse_multipart(std::string_view body, std::string_view boundary) {
  if (boundary.empty()) bad("empty boundary");
  const std::string dash = "--" + std::string(boundary);
  const std::string delimiter = "\r\n" + dash;
  // The first boundary line may open the body or follow a preamble.
  size_t pos;
  if (body.substr(0, dash.size()) == dash) {
    pos = dash.size();
  } else {
    const size_t first = body.find(delimiter);
    if (first == std::string_view::npos) bad("no boundary line '" + dash + "' in the body");
    pos = first + delimiter.size();
  }
  std::vector<MultipartPart> parts;
  while (true) {
    if (body.substr(pos, 2) == "--") return parts;  // the closing boundary; the epilogue is ignored
    // Transport padding after the boundary, then CRLF.
    while (pos < body.size() && (body[pos] == ' ' || body[pos] == '\t')) ++pos;
    if (body.substr(pos, 2) != "\r\n") bad("a boundary line is not followed by CRLF");
    pos += 2;
    const size_t head_end = body.find("\r\n\r\n", pos);
    const size_t next = body.find(delimiter, pos);
    MultipartPart part;
    if (body.substr(pos, 2) == "\r\n") {  // no headers at all
      bad("part " + std::to_string(parts.size() + 1) + " has no Content-Disposition header");
    }
    if (head_end == std::string_view::npos || (next != std::string_view::npos && head_end > next))
      bad("part " + std::to_string(parts.size() + 1) + ": headers without the blank line that ends them");
    read_part_headers(body.substr(pos, head_end - pos), part, parts.size());
    const size_t data_start = head_end + 4;
    const size_t data_end = body.find(delimiter, data_start);
    if (data_end == std::string_view::npos)
      bad("part " + std::to_string(parts.size() + 1) + " ('" + part.name + "') has no closing boundary");
    part.data = body.substr(data_start, data_end - data_start);
    parts.push_back(std::move(part));
    pos = data_end + delimiter.size();
  }
}

}  // namespace db::server
