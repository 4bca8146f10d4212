#include "http/router.h"

#include <algorithm>
#include <string_view>

namespace db::http {
namespace {

// Splits "/a/b/c" into {"a","b","c"}; empty segments (e.g. from "//" or a trailing '/') are kept.
std::vector<std::string> split_path(std::string_view path) {
  std::vector<std::string> out;
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  size_t start = 0;
  while (true) {
    size_t slash = path.find('/', start);
    out.emplace_back(path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return out;
}

bool is_capture(const std::string& segment) {
  return segment.size() >= 3 && segment.front() == '{' && segment.back() == '}';
}

// True when `segments` matches `pattern`; fills `params` with the captures.
bool match(const std::vector<std::string>& pattern, const std::vector<std::string>& segments, PathParams* params) {
  if (pattern.size() != segments.size()) return false;
  PathParams found;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (is_capture(pattern[i])) {
      if (segments[i].empty()) return false;
      found.values.emplace_back(pattern[i].substr(1, pattern[i].size() - 2), segments[i]);
    } else if (pattern[i] != segments[i]) {
      return false;
    }
  }
  if (params) *params = std::move(found);
  return true;
}

}  // namespace

const std::string& PathParams::get(const std::string& name) const {
  static const std::string kEmpty;
  for (const auto& [key, value] : values) {
    if (key == name) return value;
  }
  return kEmpty;
}

Router::Router(ErrorBody error_body) : error_body_(std::move(error_body)) {}

void Router::add(std::string method, std::string pattern, RouteHandler handler, Access access) {
  routes_.push_back(Route{std::move(method), split_path(pattern), std::move(handler), access});
}

void Router::set_guard(RouteGuard guard) { guard_ = std::move(guard); }

void Router::dispatch(Request&& req, std::shared_ptr<Responder> res) const {
  const std::vector<std::string> segments = split_path(req.path);
  const std::string method = req.method == "HEAD" ? "GET" : req.method;
  const Route* target = nullptr;
  PathParams target_params;
  bool open = false;  // some route of this path is open, and none is guarded
  bool guarded = false;
  std::vector<std::string> allowed;
  for (const Route& route : routes_) {
    PathParams params;
    if (!match(route.segments, segments, &params)) continue;
    (route.access == Access::open ? open : guarded) = true;
    if (route.method == method && !target) {
      target = &route;
      target_params = std::move(params);
    }
    if (std::find(allowed.begin(), allowed.end(), route.method) == allowed.end()) allowed.push_back(route.method);
  }
  if (guard_ && (guarded || !open) && !guard_(req, *res)) return;
  if (target) {
    target->handler(std::move(req), target_params, std::move(res));
    return;
  }
  if (std::find(allowed.begin(), allowed.end(), "GET") != allowed.end()) allowed.push_back("HEAD");
  std::string allow;
  for (const std::string& m : allowed) allow += (allow.empty() ? "" : ", ") + m;
  const Headers json = {{"Content-Type", "application/json"}};
  if (allow.empty()) {
    res->send(404, json, error_body_(404, "no route for " + req.method + " " + req.path));
    return;
  }
  Headers headers = json;
  headers.emplace_back("Allow", allow);
  res->send(405, std::move(headers), error_body_(405, "method " + req.method + " not allowed; allowed: " + allow));
}

}  // namespace db::http
