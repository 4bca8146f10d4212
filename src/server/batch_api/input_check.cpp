#include "server/batch_api/input_check.h"

#include <fstream>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "api/api_error.h"
#include "api/bounded_json.h"
#include "util/error.h"

namespace db::server {

namespace {

[[noreturn]] void refuse(size_t line_no, const std::string& what) {
  throw api::ApiError("the input file is not a valid batch file: line " + std::to_string(line_no) + ": " + what,
                      "input_file_id", "invalid_batch_file", 400);
}

void check_line(const std::string& text, size_t line_no, const std::string& endpoint,
                std::unordered_set<std::string>& ids) {
  nlohmann::json line;
  try {
    line = api::parse_json_bounded(text);  // nesting, string and value limits bound the line's memory
  } catch (const api::ApiError& e) {
    refuse(line_no, e.what());
  }
  if (!line.is_object()) refuse(line_no, "not a JSON object");
  const auto id = line.find("custom_id");
  if (id == line.end() || !id->is_string() || id->get<std::string>().empty())
    refuse(line_no, "no custom_id string");
  if (!ids.insert(id->get<std::string>()).second)
    refuse(line_no, "custom_id '" + id->get<std::string>() + "' appears more than once");
  const auto method = line.find("method");
  if (method == line.end() || *method != "POST") refuse(line_no, "method must be \"POST\"");
  const auto url = line.find("url");
  if (url == line.end() || !url->is_string() || url->get<std::string>() != endpoint)
    refuse(line_no, "url must be the batch's endpoint \"" + endpoint + "\"");
  const auto body = line.find("body");
  if (body == line.end() || !body->is_object()) refuse(line_no, "body must be a JSON object");
}

}  // namespace

size_t check_batch_input(const std::string& path, const std::string& endpoint) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open the batch input");
  std::unordered_set<std::string> ids;
  std::string text;
  size_t line_no = 0, requests = 0;
  while (std::getline(in, text)) {
    ++line_no;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (text.find_first_not_of(" \t") == std::string::npos) continue;
    check_line(text, line_no, endpoint, ids);
    if (++requests > kMaxBatchRequests)
      throw api::ApiError("the input file holds more than " + std::to_string(kMaxBatchRequests) + " requests",
                          "input_file_id", "too_many_requests_in_batch", 400);
  }
  if (requests == 0)
    throw api::ApiError("the input file holds no requests", "input_file_id", "empty_batch_file", 400);
  return requests;
}

}  // namespace db::server
