// The priority class a tenant's generation request runs at: at most as urgent as the
// tenant's max_priority (a more urgent class named in the body: 403
// priority_not_allowed); a body that names none runs at the default class 1, or at
// max_priority when that is less urgent.
#pragma once
#include "api/request_common.h"
#include "server/tenant_registry.h"

namespace db::server {

// The engine priority a request with fields `c` from `tenant` (nullptr: nobody in
// particular, every class allowed) runs at. Throws api::ApiError 403 when not allowed.
int tenant_priority(const Tenant* tenant, const api::CommonFields& c);

}  // namespace db::server
