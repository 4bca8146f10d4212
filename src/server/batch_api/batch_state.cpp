#include "server/batch_api/batch_state.h"

#include "server/batch_api/completion_window.h"
#include "util/error.h"

namespace db::server {

namespace {

using OJson = nlohmann::ordered_json;

struct StatusName {
  BatchStatus status;
  const char* name;
};
constexpr StatusName kStatusNames[] = {
    {BatchStatus::Validating, "validating"}, {BatchStatus::InProgress, "in_progress"},
    {BatchStatus::Finalizing, "finalizing"}, {BatchStatus::Completed, "completed"},
    {BatchStatus::Failed, "failed"},         {BatchStatus::Cancelling, "cancelling"},
    {BatchStatus::Cancelled, "cancelled"},   {BatchStatus::Expired, "expired"},
};

OJson time_or_null(int64_t t) { return t > 0 ? OJson(t) : OJson(nullptr); }
OJson id_or_null(const std::optional<std::string>& id) { return id ? OJson(*id) : OJson(nullptr); }

int64_t time_field(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it == j.end() || it->is_null() ? 0 : it->get<int64_t>();
}

std::optional<std::string> id_field(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return it->get<std::string>();
}

}  // namespace

const char* batch_status_name(BatchStatus s) {
  for (const auto& n : kStatusNames)
    if (n.status == s) return n.name;
  return "";
}

BatchStatus batch_status_from_name(const std::string& name) {
  for (const auto& n : kStatusNames)
    if (name == n.name) return n.status;
  throw Error("unknown batch status '" + name + "'");
}

bool is_terminal(BatchStatus s) {
  return s == BatchStatus::Completed || s == BatchStatus::Failed || s == BatchStatus::Cancelled ||
         s == BatchStatus::Expired;
}

bool can_transition(BatchStatus from, BatchStatus to) {
  using S = BatchStatus;
  switch (from) {
    case S::Validating: return to == S::InProgress || to == S::Failed || to == S::Cancelled;
    case S::InProgress: return to == S::Finalizing || to == S::Cancelling || to == S::Failed;
    case S::Finalizing: return to == S::Completed || to == S::Expired || to == S::Failed;
    case S::Cancelling: return to == S::Cancelled || to == S::Failed;
    default: return false;
  }
}

void transition(BatchRecord& b, BatchStatus to, int64_t now) {
  if (!can_transition(b.status, to))
    throw Error("batch " + b.id + ": cannot go from " + batch_status_name(b.status) + " to " + batch_status_name(to));
  b.status = to;
  switch (to) {
    case BatchStatus::InProgress: b.in_progress_at = now; break;
    case BatchStatus::Finalizing: b.finalizing_at = now; break;
    case BatchStatus::Completed: b.completed_at = now; break;
    case BatchStatus::Failed: b.failed_at = now; break;
    case BatchStatus::Cancelling: b.cancelling_at = now; break;
    case BatchStatus::Cancelled: b.cancelled_at = now; break;
    case BatchStatus::Expired: b.expired_at = now; break;
    case BatchStatus::Validating: break;
  }
}

int64_t expires_at(const BatchRecord& b) {
  return b.created_at + completion_window_seconds(b.completion_window).value_or(kDefaultCompletionWindowSeconds);
}

namespace {

OJson usage_json(const std::optional<BatchUsage>& u) {
  if (!u) return nullptr;
  OJson j;
  j["input_tokens"] = u->input_tokens;
  j["input_tokens_details"] = OJson{{"cached_tokens", 0}};
  j["output_tokens"] = u->output_tokens;
  j["output_tokens_details"] = OJson{{"reasoning_tokens", 0}};
  j["total_tokens"] = u->input_tokens + u->output_tokens;
  return j;
}

std::optional<BatchUsage> usage_field(const nlohmann::json& j) {
  const auto it = j.find("usage");
  if (it == j.end() || it->is_null()) return std::nullopt;
  BatchUsage u;
  u.input_tokens = it->at("input_tokens").get<int64_t>();
  u.output_tokens = it->at("output_tokens").get<int64_t>();
  return u;
}

}  // namespace

OJson batch_json(const BatchRecord& b) {
  OJson j;
  j["id"] = b.id;
  j["object"] = "batch";
  j["endpoint"] = b.endpoint;
  if (b.error_code.empty()) {
    j["errors"] = nullptr;
  } else {
    OJson err;
    err["code"] = b.error_code;
    err["message"] = b.error_message;
    err["param"] = nullptr;
    err["line"] = nullptr;
    j["errors"] = OJson{{"object", "list"}, {"data", OJson::array({err})}};
  }
  j["input_file_id"] = b.input_file_id;
  j["completion_window"] = b.completion_window;
  j["status"] = batch_status_name(b.status);
  j["output_file_id"] = id_or_null(b.output_file_id);
  j["error_file_id"] = id_or_null(b.error_file_id);
  j["created_at"] = b.created_at;
  j["in_progress_at"] = time_or_null(b.in_progress_at);
  j["expires_at"] = expires_at(b);
  j["finalizing_at"] = time_or_null(b.finalizing_at);
  j["completed_at"] = time_or_null(b.completed_at);
  j["failed_at"] = time_or_null(b.failed_at);
  j["expired_at"] = time_or_null(b.expired_at);
  j["cancelling_at"] = time_or_null(b.cancelling_at);
  j["cancelled_at"] = time_or_null(b.cancelled_at);
  j["request_counts"] = OJson{{"total", b.counts.total}, {"completed", b.counts.completed},
                              {"failed", b.counts.failed}};
  j["usage"] = usage_json(b.usage);
  j["metadata"] = b.metadata;
  return j;
}

std::string batch_to_stored(const BatchRecord& b) {
  OJson j = batch_json(b);
  j["seq"] = b.seq;
  j["reserved_output_file_id"] = b.reserved_output_file_id;
  j["reserved_error_file_id"] = b.reserved_error_file_id;
  j["error_code"] = b.error_code;
  j["error_message"] = b.error_message;
  j["owner"] = b.owner;
  return j.dump(-1, ' ', false, OJson::error_handler_t::replace);
}

BatchRecord batch_from_stored(const std::string& text) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    BatchRecord b;
    b.id = j.at("id").get<std::string>();
    b.endpoint = j.at("endpoint").get<std::string>();
    b.input_file_id = j.at("input_file_id").get<std::string>();
    b.completion_window = j.at("completion_window").get<std::string>();
    b.status = batch_status_from_name(j.at("status").get<std::string>());
    b.output_file_id = id_field(j, "output_file_id");
    b.error_file_id = id_field(j, "error_file_id");
    b.reserved_output_file_id = j.value("reserved_output_file_id", "");
    b.reserved_error_file_id = j.value("reserved_error_file_id", "");
    b.created_at = j.at("created_at").get<int64_t>();
    b.in_progress_at = time_field(j, "in_progress_at");
    b.finalizing_at = time_field(j, "finalizing_at");
    b.completed_at = time_field(j, "completed_at");
    b.failed_at = time_field(j, "failed_at");
    b.cancelling_at = time_field(j, "cancelling_at");
    b.cancelled_at = time_field(j, "cancelled_at");
    b.expired_at = time_field(j, "expired_at");
    const auto& c = j.at("request_counts");
    b.counts.total = c.at("total").get<int64_t>();
    b.counts.completed = c.at("completed").get<int64_t>();
    b.counts.failed = c.at("failed").get<int64_t>();
    b.usage = usage_field(j);
    b.metadata = j.value("metadata", nlohmann::json());
    b.error_code = j.value("error_code", "");
    b.error_message = j.value("error_message", "");
    b.seq = j.at("seq").get<uint64_t>();
    b.owner = j.value("owner", "");  // stored before tenants existed: the default tenant's
    return b;
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("not a stored batch (") + e.what() + ")");
  }
}

}  // namespace db::server
