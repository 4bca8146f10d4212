// Routes requests by method and path pattern to handlers. A pattern is a path whose
// segments may be "{name}", which matches one non-empty segment and is captured
// (e.g. "/v1/files/{id}/content"). Unknown path: 404; known path, other method: 405
// with Allow; both answered with the error body function.
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

class Router {
 public:
  explicit Router(ErrorBody error_body);
  // Adds a route; the first added match wins.
  void add(std::string method, std::string pattern, RouteHandler handler);
  // Answers 404/405 or calls the matching handler.
  void dispatch(Request&& req, std::shared_ptr<Responder> res) const;

 private:
  struct Route {
    std::string method;
    std::vector<std::string> segments;  // "{name}" = capture
    RouteHandler handler;
  };
  std::vector<Route> routes_;
  ErrorBody error_body_;
};

}  // namespace db::http
