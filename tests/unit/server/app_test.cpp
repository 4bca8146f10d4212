// The server's front door (authentication, routing, shutdown) driven through
// ServerApp::handle with the in-memory responder.
#include "server/app.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "recording_responder.h"
#include "test_model.h"

namespace db::server {
namespace {

using testing::RecordingResponder;
using testing::test_bundle;

class AppTest : public ::testing::Test {
 protected:
  static EngineConfig engine_config() {
    EngineConfig c;
    c.threads = 1;
    c.kv_cache_memory = 8 << 20;
    return c;
  }
  static ServeConfig serve_config() {
    ServeConfig c;
    c.port = 0;
    c.api_key = "sk-unit";
    c.model_name = "tiny";
    c.max_context = 2048;
    c.shutdown_timeout_s = 5;
    return c;
  }

  std::shared_ptr<RecordingResponder> get(const std::string& method, const std::string& path,
                                          const std::string& auth = "", const std::string& body = "") {
    http::Request req;
    req.method = method;
    req.path = req.target = path;
    req.body = body;
    if (!auth.empty()) req.headers.emplace_back("authorization", auth);
    auto res = std::make_shared<RecordingResponder>();
    app_.handle(std::move(req), res);
    EXPECT_TRUE(res->wait_done());
    return res;
  }

  Engine engine_{test_bundle(), engine_config()};
  ServerApp app_{engine_, test_bundle(), serve_config()};
};

TEST_F(AppTest, V1NeedsTheKeyHealthAndMetricsDoNot) {
  EXPECT_EQ(get("GET", "/v1/models")->status(), 401);
  EXPECT_EQ(get("GET", "/v1/models", "Bearer nope")->status(), 401);
  auto models = get("GET", "/v1/models", "Bearer sk-unit");
  ASSERT_EQ(models->status(), 200);
  EXPECT_EQ(nlohmann::json::parse(models->body())["data"][0]["id"], "tiny");
  EXPECT_EQ(get("GET", "/health")->status(), 200);
  auto metrics = get("GET", "/metrics");
  EXPECT_EQ(metrics->status(), 200);
  EXPECT_NE(metrics->body().find("deepbatch:http_requests_total{code=\"401\"} 2"), std::string::npos);
}

TEST_F(AppTest, UnknownPathsNeedTheKeyAndHeadIsServedByGet) {
  EXPECT_EQ(get("GET", "/v1/nothing")->status(), 401);
  EXPECT_EQ(get("GET", "/nothing")->status(), 401);
  EXPECT_EQ(get("POST", "/health")->status(), 405);  // an open path: no key needed to learn the method is wrong
  auto head = get("HEAD", "/health");
  EXPECT_EQ(head->status(), 200);
  EXPECT_EQ(get("HEAD", "/v1/models")->status(), 401);
  EXPECT_EQ(get("HEAD", "/v1/models", "Bearer sk-unit")->status(), 200);
}

TEST_F(AppTest, UnknownRoutesAndModelsAre404JsonAndWrongMethods405) {
  auto route = get("GET", "/v1/nothing", "Bearer sk-unit");
  EXPECT_EQ(route->status(), 404);
  EXPECT_TRUE(nlohmann::json::parse(route->body()).contains("error"));
  EXPECT_EQ(get("GET", "/v1/models/other", "Bearer sk-unit")->status(), 404);
  EXPECT_EQ(get("GET", "/v1/completions", "Bearer sk-unit")->status(), 405);
}

TEST_F(AppTest, AfterShutdownEverythingButMetricsIs503) {
  auto ok = get("POST", "/v1/completions", "Bearer sk-unit", R"({"prompt": "Hi", "max_tokens": 2})");
  EXPECT_EQ(ok->status(), 200) << ok->body();
  app_.shutdown();
  auto late = get("POST", "/v1/completions", "Bearer sk-unit", R"({"prompt": "Hi", "max_tokens": 2})");
  EXPECT_EQ(late->status(), 503);
  EXPECT_EQ(late->header("Retry-After"), "1");
  EXPECT_EQ(get("GET", "/health")->status(), 503);
  EXPECT_EQ(get("GET", "/metrics")->status(), 200);
}

}  // namespace
}  // namespace db::server
