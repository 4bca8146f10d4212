#include "server/batch_api/journal_split.h"

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "util/error.h"

namespace db::server {

SplitJournal split_journal(const std::string& path) {
  SplitJournal out;
  if (!std::filesystem::exists(path)) return out;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open the batch journal");
  std::string text;
  size_t line_no = 0;
  while (std::getline(in, text)) {
    if (in.eof()) break;  // no newline: a torn last line
    ++line_no;
    if (text.empty()) continue;
    const nlohmann::json r = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!r.is_object() || !r.contains("error"))
      throw Error(path + " line " + std::to_string(line_no) + ": not a batch output record");
    if (r["error"].is_null()) {
      out.output += text;
      out.output += '\n';
      ++out.completed;
    } else {
      out.errors += text;
      out.errors += '\n';
      ++out.failed;
    }
  }
  return out;
}

}  // namespace db::server
