// add_routes() lives apart from the rest of the service so that users of routes()
// do not need the router's definition.
#include "http/router.h"
#include "server/batch_api/batch_service.h"

namespace db::server {

void BatchService::add_routes(http::Router& router) {
  for (BatchRoute& r : routes()) router.add(std::move(r.method), std::move(r.pattern), std::move(r.handler));
}

}  // namespace db::server
