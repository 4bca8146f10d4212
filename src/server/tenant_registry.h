// Tenants of `deepbatch serve`: who may call it (one API key each), the most urgent
// priority class each may use, and their quotas. Read once at start from the
// --api-keys file:
//
//   {"tenants": [{"name": "team-a", "key": "sk-...", "max_priority": 0,
//                 "max_concurrent_requests": 8, "max_tokens_per_minute": 100000,
//                 "max_queued_batch_requests": 5000}, ...]}
//
// `name` and `key` are required, non-empty and unique; `max_priority` (0, 1 or 2;
// default 0) is the most urgent class the tenant may ask for; the limits are
// optional (absent or 0 = unlimited). Anything else (unknown fields, wrong types,
// negative numbers) is refused. Immutable once built, so any thread may read it.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace db::server {

struct TenantLimits {
  int64_t max_concurrent_requests = 0;    // generation requests in flight at once (0 = unlimited)
  int64_t max_tokens_per_minute = 0;      // prompt + generated tokens over a sliding 60 s (0 = unlimited)
  int64_t max_queued_batch_requests = 0;  // requests in unfinished batches (0 = unlimited)
};

struct Tenant {
  std::string name;      // owner of its files and batches; EngineRequest::tenant of its requests
  std::string key;       // its bearer token (never logged)
  int max_priority = 0;  // most urgent class it may use: 0 interactive, 1 normal, 2 background
  TenantLimits limits;
};

class TenantRegistry {
 public:
  TenantRegistry() = default;  // no keys: every request passes, as nobody in particular
  explicit TenantRegistry(std::vector<Tenant> tenants);
  // --api-key KEY: one tenant named "" (the default owner), unlimited, every class.
  static TenantRegistry single_key(std::string key);

  // True when requests need no key at all.
  bool open() const { return tenants_.empty(); }
  // The tenant whose key is `key`, or nullptr. Compares `key` with every key in
  // constant time and never stops at a match, so timing tells nothing about which
  // key (if any) matched or how much of one did.
  const Tenant* find_by_key(std::string_view key) const;
  // The tenant called `name`, or nullptr.
  const Tenant* find_by_name(std::string_view name) const;
  const std::vector<Tenant>& tenants() const { return tenants_; }

 private:
  std::vector<Tenant> tenants_;
};

// Parses the --api-keys file format above. Throws db::Error saying what is wrong
// (e.g. "tenants[1].key: duplicate key"); never quotes a key.
std::vector<Tenant> parse_tenants(std::string_view json_text);
// Reads and parses `path`; the db::Error message starts with the path.
std::vector<Tenant> load_tenants_file(const std::string& path);

// `a` == `b` without an early exit: the time depends only on the lengths.
bool equal_constant_time(std::string_view a, std::string_view b);

}  // namespace db::server
