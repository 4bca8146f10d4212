#include "server/auth.h"

#include <gtest/gtest.h>

namespace db::server {
namespace {

http::Request request(std::string path, std::string auth = "") {
  http::Request r;
  r.method = "POST";
  r.path = std::move(path);
  r.target = r.path;
  if (!auth.empty()) r.headers.emplace_back("authorization", std::move(auth));
  return r;
}

TEST(Auth, NoKeyConfiguredLetsEverythingPass) {
  EXPECT_FALSE(check_api_key(request("/v1/completions"), "").has_value());
}

TEST(Auth, V1NeedsTheBearerKey) {
  EXPECT_FALSE(check_api_key(request("/v1/completions", "Bearer sk-1"), "sk-1").has_value());
  EXPECT_FALSE(check_api_key(request("/v1/models", "bearer sk-1"), "sk-1").has_value());
  for (const char* bad : {"", "Bearer sk-2", "Bearer sk-1x", "Bearer sk-", "Basic sk-1", "sk-1", "Bearer "}) {
    auto err = check_api_key(request("/v1/completions", bad), "sk-1");
    ASSERT_TRUE(err.has_value()) << bad;
    EXPECT_EQ(err->status(), 401);
    EXPECT_EQ(err->code(), "invalid_api_key");
  }
}

TEST(Auth, TheKeyCheckDoesNotLookAtThePath) {
  // Which routes are open is the route table's decision (http::Access); the check itself
  // asks for the key whatever the path, so no spelling of a path can skip it.
  for (const char* path : {"/v1/completions", "v1/completions", "//v1/models", "/health", "/metrics", ""}) {
    EXPECT_TRUE(check_api_key(request(path), "sk-1").has_value()) << path;
    EXPECT_FALSE(check_api_key(request(path, "Bearer sk-1"), "sk-1").has_value()) << path;
  }
}

TEST(Auth, TheKeyNamesTheTenant) {
  Tenant a, b;
  a.name = "team-a";
  a.key = "sk-a";
  b.name = "team-b";
  b.key = "sk-b";
  const TenantRegistry tenants({a, b});
  EXPECT_EQ(authenticate(request("/v1/completions", "Bearer sk-a"), tenants)->name, "team-a");
  EXPECT_EQ(authenticate(request("/v1/completions", "Bearer sk-b"), tenants)->name, "team-b");
  for (const char* bad : {"", "Bearer sk-c", "Bearer sk-", "Bearer sk-ab", "Basic sk-a"}) {
    try {
      authenticate(request("/v1/completions", bad), tenants);
      ADD_FAILURE() << "passed: " << bad;
    } catch (const api::ApiError& e) {
      EXPECT_EQ(e.status(), 401) << bad;
      EXPECT_EQ(std::string(e.what()).find("sk-"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(authenticate(request("/v1/completions"), TenantRegistry()), nullptr);  // no keys: nobody in particular
}

}  // namespace
}  // namespace db::server
