#include "engine/request_validation.h"

#include <gtest/gtest.h>

#include "util/error.h"

namespace db {
namespace {

RequestLimits limits() {
  RequestLimits l;
  l.vocab = 100;
  l.max_context = 64;
  l.max_num_seqs = 4;
  l.block_size = 16;
  l.num_usable_blocks = 3;
  return l;
}

EngineRequest ok() {
  EngineRequest r;
  r.prompt = {1, 2, 3};
  r.max_tokens = 8;
  return r;
}

void expect_error(const EngineRequest& r, const std::string& part) {
  try {
    validate_request(r, limits());
    ADD_FAILURE() << "accepted a request that should fail with: " << part;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(RequestValidation, AcceptsAValidRequest) {
  EXPECT_NO_THROW(validate_request(ok(), limits()));
  EngineRequest r = ok();
  r.max_tokens = 1000;  // capped by the context: 64 tokens = 4 blocks > 3
  expect_error(r, "needs 4 KV blocks");
  r.max_tokens = 45;  // 48 tokens = 3 blocks
  EXPECT_NO_THROW(validate_request(r, limits()));
}

TEST(RequestValidation, RejectsEachBadField) {
  EngineRequest r = ok();
  r.prompt.clear();
  expect_error(r, "prompt is empty");
  r = ok();
  r.prompt = {1, 100};
  expect_error(r, "token id 100 is outside the vocabulary [0, 100)");
  r = ok();
  r.prompt.assign(64, 1);
  expect_error(r, "at most 63");
  r = ok();
  r.max_tokens = 0;
  expect_error(r, "max_tokens: must be at least 1, got 0");
  r = ok();
  r.n = 0;
  expect_error(r, "n: must be in [1, 4]");
  r = ok();
  r.sampling.temperature = -1;
  expect_error(r, "temperature");
  r = ok();
  r.stop = {"a", ""};
  expect_error(r, "stop strings must not be empty");
  r = ok();
  r.stop_token_ids = {-1};
  expect_error(r, "stop_token_ids");
  r = ok();
  r.priority = -1;
  expect_error(r, "priority");
}

TEST(RequestValidation, NeverAcceptsMoreSamplesThanTheRequestLimit) {
  RequestLimits l = limits();
  l.max_num_seqs = 4 * kMaxSamplesPerPrompt;
  l.num_usable_blocks = 1000;
  EngineRequest r = ok();
  r.n = kMaxSamplesPerPrompt;
  EXPECT_NO_THROW(validate_request(r, l));
  r.n = kMaxSamplesPerPrompt + 1;
  try {
    validate_request(r, l);
    ADD_FAILURE() << "accepted n = " << r.n;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("n: must be in [1, " + std::to_string(kMaxSamplesPerPrompt) + "]"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace db
