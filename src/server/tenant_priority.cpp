#include "server/tenant_priority.h"

#include <algorithm>
#include <string>

#include "api/api_error.h"

namespace db::server {

int tenant_priority(const Tenant* tenant, const api::CommonFields& c) {
  if (!tenant) return c.priority;
  if (!c.priority_given) return std::max(c.priority, tenant->max_priority);
  if (c.priority < tenant->max_priority)
    throw api::ApiError("priority " + std::to_string(c.priority) + " is more urgent than this API key may use (" +
                            std::to_string(tenant->max_priority) + " at most; 0 is the most urgent)",
                        "priority", "priority_not_allowed", 403, "permission_error");
  return c.priority;
}

}  // namespace db::server
