// Routes requests by method and path pattern to handlers. A pattern is a path whose
// segments may be "{name}", which matches one non-empty segment and is captured
// (e.g. "/v1/files/{id}/content"). Unknown path: 404; known path, other method: 405
// with Allow; both answered with the error body function. HEAD is served by the GET
// route of a path (the transport drops the body).
//
// Access is part of the route table: every route is guarded unless added as open, and
// the guard runs on the same normalized path (Request::path) that matching uses, before
// the handler, a 404 or a 405. A path matched only by open routes skips the guard.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "http/server.h"

namespace db::http {

// Captured "{name}" segments in pattern order.
struct PathParams {
  std::vector<std::pair<std::string, std::string>> values;
  // The value captured for `name`; "" when absent.
  const std::string& get(const std::string& name) const;
};

using RouteHandler = std::function<void(Request&&, const PathParams&, std::shared_ptr<Responder>)>;

// Decides whether a request to a guarded route may go on: true lets it pass; false
// means the guard has answered it (e.g. 401). It may note who sent the request in
// Request::principal for the handler.
using RouteGuard = std::function<bool(Request&, Responder&)>;

enum class Access {
  guarded,  // the guard runs first (e.g. the API key)
  open,     // anyone may call it (probes, scrapers)
};

class Router {
 public:
  explicit Router(ErrorBody error_body);
  // Adds a route; the first added match wins.
  void add(std::string method, std::string pattern, RouteHandler handler, Access access = Access::guarded);
  // Sets the guard of guarded routes (none: every route is callable).
  void set_guard(RouteGuard guard);
  // Runs the guard unless the path is open, then answers 404/405 or calls the matching handler.
  void dispatch(Request&& req, std::shared_ptr<Responder> res) const;

 private:
  struct Route {
    std::string method;
    std::vector<std::string> segments;  // "{name}" = capture
    RouteHandler handler;
    Access access;
  };
  std::vector<Route> routes_;
  ErrorBody error_body_;
  RouteGuard guard_;
};

}  // namespace db::http
