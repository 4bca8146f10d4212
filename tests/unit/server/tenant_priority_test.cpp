// A tenant's priority class: a more urgent class than allowed is 403; a request that
// names none runs at the default class, or at the tenant's least urgent allowance.
#include "server/tenant_priority.h"

#include <gtest/gtest.h>

#include "api/api_error.h"

namespace db::server {
namespace {

api::CommonFields fields(std::optional<int> priority) {
  api::CommonFields c;
  c.priority = priority.value_or(1);
  c.priority_given = priority.has_value();
  return c;
}

Tenant allowed(int max_priority) {
  Tenant t;
  t.name = "t";
  t.max_priority = max_priority;
  return t;
}

const Tenant kAllowed[] = {allowed(0), allowed(1), allowed(2)};

int status_of(const Tenant& t, std::optional<int> priority) {
  try {
    tenant_priority(&t, fields(priority));
    return 200;
  } catch (const api::ApiError& e) {
    EXPECT_EQ(e.code(), "priority_not_allowed");
    EXPECT_EQ(e.param(), "priority");
    return e.status();
  }
}

TEST(TenantPriority, NoTenantMayUseEveryClass) {
  for (int p : {0, 1, 2}) EXPECT_EQ(tenant_priority(nullptr, fields(p)), p);
  EXPECT_EQ(tenant_priority(nullptr, fields(std::nullopt)), 1);
}

TEST(TenantPriority, MoreUrgentThanAllowedIs403) {
  EXPECT_EQ(status_of(allowed(1), 0), 403);
  EXPECT_EQ(status_of(allowed(2), 0), 403);
  EXPECT_EQ(status_of(allowed(2), 1), 403);
  EXPECT_EQ(tenant_priority(&kAllowed[1], fields(1)), 1);
  EXPECT_EQ(tenant_priority(&kAllowed[1], fields(2)), 2);
  EXPECT_EQ(tenant_priority(&kAllowed[0], fields(0)), 0);
}

TEST(TenantPriority, UnnamedClassIsTheDefaultOrTheLeastUrgentAllowance) {
  const Tenant interactive = allowed(0), background = allowed(2);
  EXPECT_EQ(tenant_priority(&interactive, fields(std::nullopt)), 1);
  EXPECT_EQ(tenant_priority(&background, fields(std::nullopt)), 2);
}

}  // namespace
}  // namespace db::server
