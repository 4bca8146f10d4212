// Admission counts a request's choices (prompts x n), so that a list of prompts or a
// large n can neither walk around --max-queued-requests nor take the whole queue.
#include "server/admission.h"

#include <gtest/gtest.h>

#include "test_model.h"

namespace db::server {
namespace {

using testing::test_bundle;

api::ApiRequest completion(int prompts, int n) {
  api::Json body = {{"prompt", api::Json::array()}, {"n", n}, {"max_tokens", 1}};
  for (int i = 0; i < prompts; ++i) body["prompt"].push_back("p" + std::to_string(i));
  return api::parse_request(api::Endpoint::Completions, body);
}

api::ApiRequest chat(int n) {
  api::Json body = {{"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"n", n}};
  return api::parse_request(api::Endpoint::ChatCompletions, body);
}

class AdmissionTest : public ::testing::Test {
 protected:
  static EngineConfig engine_config() {
    EngineConfig c;
    c.threads = 1;
    c.kv_cache_memory = 8 << 20;
    return c;
  }

  // The status of the ApiError check_admission throws, or 0 when it admits.
  int admit(const api::ApiRequest& req, std::string* code = nullptr) {
    try {
      check_admission(ctx_, req);
      return 0;
    } catch (const api::ApiError& e) {
      if (code) *code = e.code();
      return e.status();
    }
  }

  Engine engine_{test_bundle(), engine_config()};
  ServeConfig config_;
  ServerMetrics metrics_{"tiny"};
  RequestTracker tracker_{engine_};
  WorkQueue queue_{1};
  TenantRegistry tenants_;
  TenantQuotas quotas_{tenants_};
  ServerContext ctx_{engine_, test_bundle(), config_, metrics_, tracker_, queue_, tenants_, quotas_};
};

TEST_F(AdmissionTest, ChoicesArePromptsTimesN) {
  EXPECT_EQ(request_choices(completion(1, 1)), 1);
  EXPECT_EQ(request_choices(completion(3, 2)), 6);
  EXPECT_EQ(request_choices(chat(4)), 4);
}

TEST_F(AdmissionTest, MoreChoicesThanThePerRequestCapIs400) {
  config_.max_choices_per_request = 8;
  config_.max_queued_requests = 0;
  EXPECT_EQ(admit(completion(8, 1)), 0);
  EXPECT_EQ(admit(completion(4, 2)), 0);
  std::string code;
  EXPECT_EQ(admit(completion(9, 1), &code), 400);
  EXPECT_EQ(code, "too_many_choices");
  EXPECT_EQ(admit(completion(3, 3)), 400);
  EXPECT_EQ(admit(chat(9)), 400);
}

TEST_F(AdmissionTest, APromptListCountsAgainstTheQueueLimit) {
  config_.max_choices_per_request = 0;
  config_.max_queued_requests = 10;
  EXPECT_EQ(admit(completion(10, 1)), 0);
  std::string code;
  EXPECT_EQ(admit(completion(11, 1), &code), 429);  // an empty queue, yet 11 sequences do not fit in 10
  EXPECT_EQ(code, "rate_limit_exceeded");
  EXPECT_EQ(admit(completion(2, 6)), 429);
  EXPECT_EQ(admit(chat(11)), 429);
}

TEST_F(AdmissionTest, DefaultsKeepOneRequestToAQuarterOfTheQueue) {
  const ServeConfig defaults;
  EXPECT_EQ(defaults.max_choices_per_request * 4, defaults.max_queued_requests);
}

}  // namespace
}  // namespace db::server
