#include "server/batch_api/batch_handlers.h"

#include <algorithm>
#include <cctype>
#include <exception>

#include <nlohmann/json.hpp>

#include "api/api_error.h"
#include "io/mapped_file.h"
#include "server/batch_api/atomic_file.h"
#include "server/batch_api/completion_window.h"
#include "server/batch_api/input_check.h"
#include "server/batch_api/multipart.h"
#include "server/quota_error.h"
#include "server/tenant_quotas.h"
#include "util/error.h"

namespace db::server {

namespace {

using OJson = nlohmann::ordered_json;

HttpReply json_reply(const OJson& body, int status = 200) {
  return {status, {{"Content-Type", "application/json"}},
          body.dump(-1, ' ', false, OJson::error_handler_t::replace)};
}

HttpReply error_reply(const api::ApiError& e) {
  HttpReply reply = json_reply(api::error_body(e), e.status());
  if (const auto* quota = dynamic_cast<const QuotaExceeded*>(&e))
    reply.headers.emplace_back("Retry-After", std::to_string(quota->retry_after_s()));
  return reply;
}

const std::string* find_header(const http::Request& req, const std::string& lower_name) {
  for (const auto& [name, value] : req.headers)
    if (name == lower_name) return &value;
  return nullptr;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percent_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && hex_value(s[i + 1]) >= 0 &&
               hex_value(s[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// The query parameter `key`, or nullopt.
std::optional<std::string> query_param(const http::Request& req, const std::string& key) {
  for (const auto& [k, v] : parse_query(req.query))
    if (k == key) return v;
  return std::nullopt;
}

// `limit` from the query: an integer in [1, max], `fallback` when absent.
int64_t query_limit(const http::Request& req, int64_t fallback, int64_t max) {
  const std::optional<std::string> text = query_param(req, "limit");
  if (!text) return fallback;
  const bool digits = !text->empty() && text->size() < 10 &&
                      std::all_of(text->begin(), text->end(), [](char c) { return c >= '0' && c <= '9'; });
  const int64_t value = digits ? std::stoll(*text) : 0;
  if (value < 1 || value > max)
    throw api::ApiError("limit must be an integer between 1 and " + std::to_string(max) + ", got '" + *text + "'",
                        "limit", "invalid_value");
  return value;
}

// One page of `items` (already in the requested order) after the item with id `after`.
template <class T, class ToJson>
OJson list_page(const std::vector<T>& items, const std::optional<std::string>& after, int64_t limit,
                ToJson to_json) {
  size_t begin = 0;
  if (after) {
    auto it = std::find_if(items.begin(), items.end(), [&](const T& x) { return x.id == *after; });
    begin = it == items.end() ? items.size() : static_cast<size_t>(it - items.begin()) + 1;
  }
  const size_t end = std::min(items.size(), begin + static_cast<size_t>(limit));
  OJson data = OJson::array();
  for (size_t i = begin; i < end; ++i) data.push_back(to_json(items[i]));
  OJson page;
  page["object"] = "list";
  page["data"] = std::move(data);
  page["first_id"] = end > begin ? OJson(items[begin].id) : OJson(nullptr);
  page["last_id"] = end > begin ? OJson(items[end - 1].id) : OJson(nullptr);
  page["has_more"] = end < items.size();
  return page;
}

api::ApiError no_such_file(const std::string& id) {
  return api::ApiError("No such File object: " + id, "id", "file_not_found", 404);
}

// The string field `key` of `body`; throws ApiError when missing or not a string.
std::string required_string(const nlohmann::json& body, const char* key) {
  const auto it = body.find(key);
  if (it == body.end() || it->is_null())
    throw api::ApiError(std::string("Missing required parameter: '") + key + "'.", key, "missing_required_parameter");
  if (!it->is_string())
    throw api::ApiError(std::string("'") + key + "' must be a string.", key, "invalid_type");
  return it->get<std::string>();
}

}  // namespace

std::vector<std::pair<std::string, std::string>> parse_query(const std::string& query) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t pos = 0;
  while (pos <= query.size() && !query.empty()) {
    size_t amp = query.find('&', pos);
    if (amp == std::string::npos) amp = query.size();
    const std::string item = query.substr(pos, amp - pos);
    if (!item.empty()) {
      const size_t eq = item.find('=');
      out.emplace_back(percent_decode(item.substr(0, eq)),
                       eq == std::string::npos ? "" : percent_decode(item.substr(eq + 1)));
    }
    pos = amp + 1;
  }
  return out;
}

HttpReply BatchHandlers::guarded(const std::function<HttpReply()>& fn) {
  try {
    return fn();
  } catch (const api::ApiError& e) {
    return error_reply(e);
  } catch (const std::exception& e) {
    return json_reply(api::error_body(e.what()), 500);
  }
}

FileObject BatchHandlers::file_or_404(const std::string& tenant, const std::string& id) const {
  std::optional<FileObject> f = files_.get(id);
  if (!f || f->owner != tenant) throw no_such_file(id);
  return *f;
}

BatchRecord BatchHandlers::batch_or_404(const std::string& tenant, const std::string& id) const {
  std::optional<BatchRecord> b = runner_.current(id);
  if (!b || b->owner != tenant) throw no_such_batch(id);
  return *b;
}

int64_t BatchHandlers::queued_batch_requests(const std::string& tenant) const {
  int64_t queued = 0;
  for (const BatchRecord& stored : batches_.list()) {
    if (stored.owner != tenant || is_terminal(stored.status)) continue;
    const BatchRecord b = runner_.current(stored.id).value_or(stored);
    queued += std::max<int64_t>(0, b.counts.total - b.counts.completed - b.counts.failed);
  }
  return queued;
}

HttpReply BatchHandlers::upload_file(const http::Request& req) {
  const std::string* content_type = find_header(req, "content-type");
  if (!content_type)
    throw api::ApiError("the body must be multipart/form-data with the fields 'file' and 'purpose'", "",
                        "invalid_content_type");
  // A large upload arrives on disk (http::BodySpool) and is read through a mapping.
  std::unique_ptr<MappedFile> spooled;
  std::string_view body = req.body;
  if (req.body_file && req.body_file->size() > 0) {
    spooled = MappedFile::open(req.body_file->path());
    body = std::string_view(reinterpret_cast<const char*>(spooled->data()), spooled->size());
  }
  const std::vector<MultipartPart> parts = parse_multipart(body, multipart_boundary(*content_type));
  const MultipartPart* file = nullptr;
  const MultipartPart* purpose = nullptr;
  for (const MultipartPart& p : parts) {
    if (p.name == "file" && !file) file = &p;
    if (p.name == "purpose" && !purpose) purpose = &p;
  }
  if (!purpose)
    throw api::ApiError("Missing required parameter: 'purpose'.", "purpose", "missing_required_parameter");
  if (!file) throw api::ApiError("Missing required parameter: 'file'.", "file", "missing_required_parameter");
  if (purpose->data != "batch")
    throw api::ApiError("purpose must be 'batch' (the only purpose this server accepts), got '" +
                            std::string(purpose->data) + "'",
                        "purpose", "invalid_value");
  const std::string filename = file->filename && !file->filename->empty() ? *file->filename : "upload.jsonl";
  return json_reply(file_json(files_.create(filename, std::string(purpose->data), file->data, "", req.principal)));
}

HttpReply BatchHandlers::list_files(const http::Request& req) {
  const int64_t limit = query_limit(req, 10000, 10000);
  const std::optional<std::string> order = query_param(req, "order");
  if (order && *order != "asc" && *order != "desc")
    throw api::ApiError("order must be 'asc' or 'desc', got '" + *order + "'", "order", "invalid_value");
  const std::optional<std::string> purpose = query_param(req, "purpose");
  std::vector<FileObject> files = files_.list();
  files.erase(std::remove_if(files.begin(), files.end(),
                             [&](const FileObject& f) {
                               return f.owner != req.principal || (purpose && f.purpose != *purpose);
                             }),
              files.end());
  if (order == std::optional<std::string>("asc")) std::reverse(files.begin(), files.end());
  return json_reply(list_page(files, query_param(req, "after"), limit, file_json));
}

HttpReply BatchHandlers::get_file(const std::string& tenant, const std::string& id) {
  return json_reply(file_json(file_or_404(tenant, id)));
}

HttpReply BatchHandlers::file_content(const std::string& tenant, const std::string& id) {
  file_or_404(tenant, id);
  std::shared_ptr<OpenFile> file = OpenFile::open(files_.content_path(id));
  if (!file) throw no_such_file(id);  // deleted meanwhile
  return {200, {{"Content-Type", "application/octet-stream"}}, "", std::move(file)};
}

HttpReply BatchHandlers::delete_file(const std::string& tenant, const std::string& id) {
  file_or_404(tenant, id);
  if (!files_.remove(id)) throw no_such_file(id);
  OJson body;
  body["id"] = id;
  body["object"] = "file";
  body["deleted"] = true;
  return json_reply(body);
}

HttpReply BatchHandlers::create_batch(const http::Request& req) {
  const nlohmann::json body = nlohmann::json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.is_object())
    throw api::ApiError("the request body must be a JSON object", "", "invalid_json");
  BatchRecord b;
  b.input_file_id = required_string(body, "input_file_id");
  b.endpoint = required_string(body, "endpoint");
  b.completion_window = required_string(body, "completion_window");
  if (b.endpoint != "/v1/completions" && b.endpoint != "/v1/chat/completions")
    throw api::ApiError("endpoint must be '/v1/completions' or '/v1/chat/completions', got '" + b.endpoint + "'",
                        "endpoint", "invalid_value");
  if (!completion_window_seconds(b.completion_window))
    throw api::ApiError("completion_window must be a whole number of seconds, minutes or hours such as '24h', "
                        "'10m' or '30s', from 1s to 168h; got '" + b.completion_window + "'",
                        "completion_window", "invalid_value");
  if (auto it = body.find("metadata"); it != body.end()) {
    const bool strings = it->is_object() && std::all_of(it->begin(), it->end(), [](const nlohmann::json& v) {
      return v.is_string() && v.get_ref<const std::string&>().size() <= 512;
    });
    if (!it->is_null() && (!strings || it->size() > 16))
      throw api::ApiError("metadata must be an object of at most 16 string values (each at most 512 characters)",
                          "metadata", "invalid_value");
    b.metadata = *it;
  }
  const std::optional<FileObject> input = files_.get(b.input_file_id);
  if (!input || input->owner != req.principal) throw no_such_file(b.input_file_id);
  if (input->purpose != "batch")
    throw api::ApiError("the input file must have purpose 'batch', it has '" + input->purpose + "'",
                        "input_file_id", "invalid_value");
  const std::string input_path = files_.content_path(b.input_file_id);
  b.counts.total = static_cast<int64_t>(check_batch_input(input_path, b.endpoint));
  if (quotas_) quotas_->check_batch_queue(req.principal, queued_batch_requests(req.principal), b.counts.total);
  b.owner = req.principal;
  const BatchRecord created = batches_.create(std::move(b), input_path);
  runner_.enqueue(created.id);
  return json_reply(batch_json(created));
}

HttpReply BatchHandlers::list_batches(const http::Request& req) {
  const int64_t limit = query_limit(req, 20, 100);
  std::vector<BatchRecord> all = batches_.list();
  all.erase(std::remove_if(all.begin(), all.end(), [&](const BatchRecord& b) { return b.owner != req.principal; }),
            all.end());
  for (BatchRecord& b : all)
    if (std::optional<BatchRecord> live = runner_.current(b.id)) b = *live;
  return json_reply(list_page(all, query_param(req, "after"), limit, batch_json));
}

HttpReply BatchHandlers::get_batch(const std::string& tenant, const std::string& id) {
  return json_reply(batch_json(batch_or_404(tenant, id)));
}

HttpReply BatchHandlers::cancel_batch(const std::string& tenant, const std::string& id) {
  batch_or_404(tenant, id);  // an owner never changes, so the check holds for the cancel that follows
  return json_reply(batch_json(runner_.cancel(id)));
}

}  // namespace db::server
