#include "batch/batch_input.h"

#include <fstream>
#include <unordered_set>
#include <variant>

#include "api/api_error.h"
#include "api/bounded_json.h"
#include "util/error.h"

namespace db::batch {

namespace {

bool is_blank(std::string_view s) { return s.find_first_not_of(" \t\r\n") == std::string_view::npos; }

std::string at_line(size_t line_no, const std::string& what) { return "line " + std::to_string(line_no) + ": " + what; }

// One line -> item or error. `seen` holds the custom_ids of earlier lines.
std::variant<BatchItem, LineError> parse_line(std::string_view text, size_t line_no,
                                              std::unordered_set<std::string>& seen) {
  LineError err;
  err.line_no = line_no;
  api::Json line;
  try {
    line = api::parse_json_bounded(text);  // nesting, string and value limits bound the line's memory
  } catch (const api::ApiError& e) {
    err.code = kInvalidJson;
    err.message = at_line(line_no, e.what());
    return err;
  }
  if (!line.is_object()) {
    err.code = kInvalidJson;
    err.message = at_line(line_no, "a request line must be a JSON object, got " + api::json_type_name(line));
    return err;
  }
  auto id = line.find("custom_id");
  if (id == line.end() || !id->is_string() || id->get<std::string>().empty()) {
    err.code = kMissingCustomId;
    err.message = at_line(line_no, id == line.end() ? "'custom_id' is required"
                                                    : "'custom_id' must be a non-empty string, got " + id->dump());
    return err;
  }
  const std::string custom_id = id->get<std::string>();
  err.custom_id = custom_id;
  if (!seen.insert(custom_id).second) {
    err.code = kDuplicateCustomId;
    err.message = at_line(line_no, "custom_id \"" + custom_id + "\" already appears on an earlier line");
    return err;
  }
  auto method = line.find("method");
  if (method == line.end() || !method->is_string() || method->get<std::string>() != "POST") {
    err.code = "invalid_method";
    err.message = at_line(line_no, "'method' must be \"POST\", got " +
                                       (method == line.end() ? std::string("nothing") : method->dump()));
    return err;
  }
  auto url = line.find("url");
  std::optional<api::Endpoint> endpoint;
  if (url != line.end() && url->is_string()) endpoint = api::endpoint_from_url(url->get<std::string>());
  if (!endpoint) {
    err.code = "invalid_url";
    err.message = at_line(line_no, "'url' must be \"/v1/completions\" or \"/v1/chat/completions\", got " +
                                       (url == line.end() ? std::string("nothing") : url->dump()));
    return err;
  }
  auto body = line.find("body");
  if (body == line.end() || !body->is_object()) {
    err.code = "invalid_request";
    err.message = at_line(line_no, "'body' must be a JSON object holding the request");
    return err;
  }
  try {
    api::ApiRequest req = api::parse_request(*endpoint, *body);
    if (api::common_fields(req).stream)
      throw api::ApiError("'stream' is not supported in batch requests", "stream", "invalid_value");
    return BatchItem{line_no, custom_id, *endpoint, std::move(req)};
  } catch (const api::ApiError& e) {
    err.code = e.code().empty() ? "invalid_request" : e.code();
    err.message = at_line(line_no, std::string("invalid body: ") + e.what());
    return err;
  }
}

}  // namespace

bool is_line_level_code(std::string_view code) {
  return code == kInvalidJson || code == kMissingCustomId || code == kDuplicateCustomId;
}

namespace {

// Collects the input line by line (blank lines skipped), in file order.
class InputBuilder {
 public:
  void add(std::string_view text, size_t line_no) {
    if (is_blank(text)) return;
    ++out_.lines;
    auto parsed = parse_line(text, line_no, seen_);
    if (auto* item = std::get_if<BatchItem>(&parsed)) out_.items.push_back(std::move(*item));
    else out_.errors.push_back(std::move(std::get<LineError>(parsed)));
  }
  BatchInput take() { return std::move(out_); }

 private:
  BatchInput out_;
  std::unordered_set<std::string> seen_;
};

}  // namespace

BatchInput parse_batch_input(std::istream& in) {
  InputBuilder builder;
  std::string text;
  size_t line_no = 0;
  while (std::getline(in, text)) builder.add(text, ++line_no);
  return builder.take();
}

BatchInput parse_numbered_lines(const std::vector<NumberedLine>& lines) {
  InputBuilder builder;
  for (const NumberedLine& line : lines) builder.add(line.text, line.line_no);
  return builder.take();
}

BatchInput read_batch_input(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open the batch input file");
  BatchInput out = parse_batch_input(in);
  if (in.bad()) throw Error(path + ": read error");
  return out;
}

}  // namespace db::batch
