#include <gtest/gtest.h>

#include "http/router.h"
#include "test_client.h"

namespace db::http {
namespace {

// Records the one response a handler gives.
class RecordingResponder : public Responder {
 public:
  void send(int s, Headers h, std::string b) override {
    status = s;
    headers = std::move(h);
    body = std::move(b);
  }
  void begin_stream(int, Headers) override {}
  void write(std::string) override {}
  void end() override {}
  bool client_gone() const override { return false; }
  void on_client_gone(std::function<void()>) override {}

  std::string header(const std::string& name) const {
    for (const auto& [k, v] : headers) {
      if (k == name) return v;
    }
    return "";
  }
  int status = 0;
  Headers headers;
  std::string body;
};

Request make_request(std::string method, std::string target) {
  Request r;
  r.method = std::move(method);
  r.target = std::move(target);
  size_t q = r.target.find('?');
  r.path = r.target.substr(0, q);
  r.query = q == std::string::npos ? "" : r.target.substr(q + 1);
  return r;
}

struct RouterFixture : ::testing::Test {
  Router router{testing::test_error_body};
  std::string hit;
  PathParams params;

  void SetUp() override {
    auto record = [this](std::string name) {
      return [this, name](Request&&, const PathParams& p, std::shared_ptr<Responder> res) {
        hit = name;
        params = p;
        res->send(200, {}, name);
      };
    };
    router.add("GET", "/v1/files", record("list"));
    router.add("POST", "/v1/files", record("upload"));
    router.add("GET", "/v1/files/{id}", record("get"));
    router.add("DELETE", "/v1/files/{id}", record("delete"));
    router.add("GET", "/v1/files/{id}/content", record("content"));
    router.add("GET", "/v1/{a}/x/{b}", record("two"));
  }

  std::shared_ptr<RecordingResponder> run(std::string method, std::string target) {
    auto res = std::make_shared<RecordingResponder>();
    hit.clear();
    router.dispatch(make_request(std::move(method), std::move(target)), res);
    return res;
  }
};

TEST_F(RouterFixture, MatchesLiteralAndCapturedSegments) {
  EXPECT_EQ(run("GET", "/v1/files")->status, 200);
  EXPECT_EQ(hit, "list");
  EXPECT_EQ(run("POST", "/v1/files")->body, "upload");
  run("GET", "/v1/files/file-abc/content");
  EXPECT_EQ(hit, "content");
  EXPECT_EQ(params.get("id"), "file-abc");
  run("GET", "/v1/one/x/two");
  EXPECT_EQ(hit, "two");
  ASSERT_EQ(params.values.size(), 2u);
  EXPECT_EQ(params.values[0], (std::pair<std::string, std::string>{"a", "one"}));
  EXPECT_EQ(params.get("b"), "two");
  EXPECT_EQ(params.get("missing"), "");
}

TEST_F(RouterFixture, QueryStringIsIgnoredForMatching) {
  run("GET", "/v1/files/f1?limit=2&after=x");
  EXPECT_EQ(hit, "get");
  EXPECT_EQ(params.get("id"), "f1");
}

TEST_F(RouterFixture, UnknownPathIs404WithJsonError) {
  auto res = run("GET", "/v2/nothing");
  EXPECT_EQ(res->status, 404);
  EXPECT_EQ(hit, "");
  EXPECT_EQ(res->header("Content-Type"), "application/json");
  EXPECT_NE(res->body.find("\"code\":404"), std::string::npos);
  EXPECT_EQ(run("GET", "/v1/files/")->status, 404);  // an empty segment never matches a capture
  EXPECT_EQ(run("GET", "/v1/files/a/b")->status, 404);
}

TEST_F(RouterFixture, KnownPathOtherMethodIs405WithAllow) {
  auto res = run("PUT", "/v1/files/abc");
  EXPECT_EQ(res->status, 405);
  EXPECT_EQ(res->header("Allow"), "GET, DELETE, HEAD");
  EXPECT_NE(res->body.find("\"code\":405"), std::string::npos);
  EXPECT_EQ(run("DELETE", "/v1/files")->header("Allow"), "GET, POST, HEAD");
}

TEST_F(RouterFixture, FirstAddedRouteWins) {
  router.add("GET", "/v1/files/special", [](Request&&, const PathParams&, std::shared_ptr<Responder> r) {
    r->send(200, {}, "late");
  });
  run("GET", "/v1/files/special");
  EXPECT_EQ(hit, "get");
}

TEST_F(RouterFixture, HeadIsServedByTheGetRoute) {
  EXPECT_EQ(run("HEAD", "/v1/files/f1")->status, 200);
  EXPECT_EQ(hit, "get");
  EXPECT_EQ(run("HEAD", "/v1/files")->status, 200);
  EXPECT_EQ(hit, "list");
}

TEST_F(RouterFixture, GuardRunsForGuardedAndUnknownPathsNotForOpenOnes) {
  router.add(
      "GET", "/health", [](Request&&, const PathParams&, std::shared_ptr<Responder> r) { r->send(200, {}, "ok"); },
      Access::open);
  std::vector<std::string> guarded;
  router.set_guard([&guarded](const Request& req, Responder& res) {
    guarded.push_back(req.method + " " + req.path);
    if (req.header("authorization")) return true;
    res.send(401, {}, "no key");
    return false;
  });
  EXPECT_EQ(run("GET", "/health")->status, 200);
  EXPECT_EQ(run("POST", "/health")->status, 405);  // open path, other method: no guard either
  EXPECT_TRUE(guarded.empty());
  for (const char* method : {"GET", "POST", "DELETE", "PUT", "HEAD"}) {
    for (const char* path : {"/v1/files", "/v1/files/x", "/v1/files/x/content", "/v2/nothing", "/", ""}) {
      guarded.clear();
      auto res = run(method, path);
      EXPECT_EQ(res->status, 401) << method << " " << path;
      EXPECT_EQ(hit, "") << method << " " << path;
      EXPECT_EQ(guarded.size(), 1u) << method << " " << path;
    }
  }
  Request with_key = make_request("GET", "/v1/files/x");
  with_key.headers.emplace_back("authorization", "k");
  auto res = std::make_shared<RecordingResponder>();
  router.dispatch(std::move(with_key), res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(hit, "get");
}

TEST(RequestTest, HeaderLookupReturnsFirstValue) {
  Request r;
  r.headers = {{"content-type", "text/plain"}, {"x-a", "1"}, {"x-a", "2"}};
  ASSERT_NE(r.header("x-a"), nullptr);
  EXPECT_EQ(*r.header("x-a"), "1");
  EXPECT_EQ(*r.header("content-type"), "text/plain");
  EXPECT_EQ(r.header("missing"), nullptr);
}

}  // namespace
}  // namespace db::http
