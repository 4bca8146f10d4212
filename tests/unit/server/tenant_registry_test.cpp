// The --api-keys file: every malformed form is refused with a message naming the
// problem (and never the key), and keys are looked up without an early exit.
#include "server/tenant_registry.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "util/error.h"

namespace db::server {
namespace {

// The db::Error message parse_tenants() throws for `text` ("" when it parses).
std::string refusal(const std::string& text) {
  try {
    parse_tenants(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(TenantRegistry, ParsesTenantsWithDefaultsAndLimits) {
  const std::vector<Tenant> t = parse_tenants(R"({"tenants": [
      {"name": "team-a", "key": "sk-a", "max_priority": 1, "max_concurrent_requests": 8,
       "max_tokens_per_minute": 100000, "max_queued_batch_requests": 5000},
      {"name": "team-b", "key": "sk-b"}]})");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].name, "team-a");
  EXPECT_EQ(t[0].key, "sk-a");
  EXPECT_EQ(t[0].max_priority, 1);
  EXPECT_EQ(t[0].limits.max_concurrent_requests, 8);
  EXPECT_EQ(t[0].limits.max_tokens_per_minute, 100000);
  EXPECT_EQ(t[0].limits.max_queued_batch_requests, 5000);
  EXPECT_EQ(t[1].max_priority, 0);  // every class
  EXPECT_EQ(t[1].limits.max_concurrent_requests, 0);  // unlimited
  EXPECT_EQ(t[1].limits.max_tokens_per_minute, 0);
  EXPECT_EQ(t[1].limits.max_queued_batch_requests, 0);
}

TEST(TenantRegistry, RefusesEachMalformedFileSayingWhy) {
  const struct {
    const char* text;
    const char* problem;  // a part of the message
  } cases[] = {
      {R"({"tenants": [)", "not valid JSON"},
      {R"([])", "must hold a JSON object"},
      {R"({})", "tenants: missing"},
      {R"({"tenants": {}})", "tenants: must be an array"},
      {R"({"tenants": []})", "tenants: is empty"},
      {R"({"tenants": [], "extra": 1})", "unknown field 'extra'"},
      {R"({"tenants": ["sk-a"]})", "tenants[0]: must be an object"},
      {R"({"tenants": [{"key": "sk-a"}]})", "tenants[0].name: missing"},
      {R"({"tenants": [{"name": "a"}]})", "tenants[0].key: missing"},
      {R"({"tenants": [{"name": "a", "key": ""}]})", "tenants[0].key: must not be empty"},
      {R"({"tenants": [{"name": "", "key": "sk-a"}]})", "tenants[0].name: must not be empty"},
      {R"({"tenants": [{"name": "a", "key": "sk a"}]})", "tenants[0].key: must be printable ASCII"},
      {R"({"tenants": [{"name": "a", "key": 7}]})", "tenants[0].key: must be a string"},
      {R"({"tenants": [{"name": "a", "key": "sk-a", "keys": "x"}]})", "tenants[0]: unknown field 'keys'"},
      {R"({"tenants": [{"name": "a", "key": "sk-a"}, {"name": "a", "key": "sk-b"}]})",
       "tenants[1].name: duplicate name 'a'"},
      {R"({"tenants": [{"name": "a", "key": "sk-a"}, {"name": "b", "key": "sk-a"}]})", "tenants[1].key: duplicate key"},
      {R"({"tenants": [{"name": "a", "key": "sk-a", "max_priority": 3}]})", "tenants[0].max_priority: must be 0, 1 or 2"},
      {R"({"tenants": [{"name": "a", "key": "sk-a", "max_priority": "0"}]})",
       "tenants[0].max_priority: must be a non-negative integer, got string"},
      {R"({"tenants": [{"name": "a", "key": "sk-a", "max_concurrent_requests": -1}]})",
       "tenants[0].max_concurrent_requests: must not be negative"},
      {R"({"tenants": [{"name": "a", "key": "sk-a", "max_tokens_per_minute": 1.5}]})",
       "tenants[0].max_tokens_per_minute: must be a non-negative integer, got a fractional number"},
      {R"({"tenants": [{"name": "a", "key": "sk-a", "max_queued_batch_requests": true}]})",
       "tenants[0].max_queued_batch_requests: must be a non-negative integer, got boolean"},
      {R"({"tenants": [{"name": "a", "key": "sk-a", "max_queued_batch_requests": null}]})",
       "tenants[0].max_queued_batch_requests: must be a non-negative integer, got null"},
  };
  for (const auto& c : cases) {
    const std::string message = refusal(c.text);
    EXPECT_NE(message.find(c.problem), std::string::npos) << c.text << "\n  got: " << message;
  }
}

TEST(TenantRegistry, MessagesNeverQuoteAKey) {
  for (const char* text : {R"({"tenants": [{"name": "a", "key": sk-secret1}]})",
                           R"({"tenants": [{"name": "a", "key": "sk-secret1"}, {"name": "b", "key": "sk-secret1"}]})",
                           R"({"tenants": [{"name": "a", "key": "sk secret1"}]})"}) {
    const std::string message = refusal(text);
    EXPECT_FALSE(message.empty()) << text;
    EXPECT_EQ(message.find("secret1"), std::string::npos) << message;
  }
}

TEST(TenantRegistry, LoadingAFileNamesItInTheMessage) {
  const std::string path = (std::filesystem::temp_directory_path() / "tenant_registry_test_keys.json").string();
  std::ofstream(path) << R"({"tenants": [{"name": "a", "key": "sk-a", "max_priority": -1}]})";
  try {
    load_tenants_file(path);
    ADD_FAILURE() << "a negative max_priority was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("max_priority"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
  EXPECT_THROW(load_tenants_file(path), Error);  // missing
}

TEST(TenantRegistry, FindsEveryTenantByItsKeyAndNothingElse) {
  const TenantRegistry reg(parse_tenants(R"({"tenants": [{"name": "a", "key": "sk-aaaa"},
      {"name": "b", "key": "sk-aaaab"}, {"name": "c", "key": "sk-c"}]})"));
  EXPECT_FALSE(reg.open());
  for (const char* name : {"a", "b", "c"}) {
    const Tenant* t = reg.find_by_name(name);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(reg.find_by_key(t->key), t) << name;
  }
  for (const char* wrong : {"", "sk-", "sk-aaa", "sk-aaaaa", "sk-aaaabb", "SK-AAAA", "sk-c ", "sk-d"})
    EXPECT_EQ(reg.find_by_key(wrong), nullptr) << wrong;
  EXPECT_EQ(reg.find_by_name("d"), nullptr);
}

TEST(TenantRegistry, EqualConstantTimeIsPlainEquality) {
  EXPECT_TRUE(equal_constant_time("", ""));
  EXPECT_TRUE(equal_constant_time("sk-1", "sk-1"));
  EXPECT_FALSE(equal_constant_time("sk-1", "sk-2"));
  EXPECT_FALSE(equal_constant_time("sk-1", "sk-10"));
  EXPECT_FALSE(equal_constant_time("sk-10", "sk-1"));
  EXPECT_FALSE(equal_constant_time(std::string("a\0", 2), "a"));
}

TEST(TenantRegistry, SingleKeyIsTheDefaultTenantWithEveryClassAndNoLimits) {
  EXPECT_TRUE(TenantRegistry::single_key("").open());
  const TenantRegistry reg = TenantRegistry::single_key("sk-1");
  const Tenant* t = reg.find_by_key("sk-1");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->name, "");
  EXPECT_EQ(t->max_priority, 0);
  EXPECT_EQ(t->limits.max_concurrent_requests, 0);
  EXPECT_EQ(reg.find_by_key("sk-2"), nullptr);
}

}  // namespace
}  // namespace db::server
