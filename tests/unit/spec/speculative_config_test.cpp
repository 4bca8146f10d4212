#include "spec/speculative_config.h"

#include <gtest/gtest.h>

#include "util/error.h"

namespace db {
namespace {

SpeculativeConfig with(const std::string& method, const std::string& model = "") {
  SpeculativeConfig c;
  c.method = method;
  c.model = model;
  return c;
}

TEST(SpeculativeConfig, MethodAndDraftModelGoTogether) {
  EXPECT_NO_THROW(with("").validate());
  EXPECT_NO_THROW(with("ngram").validate());
  EXPECT_NO_THROW(with("draft_model", "draft.gguf").validate());
  EXPECT_THROW(with("draft_model").validate(), Error) << "a draft model method without a file";
  EXPECT_THROW(with("ngram", "draft.gguf").validate(), Error) << "a file the method would ignore";
  EXPECT_THROW(with("medusa").validate(), Error);
}

TEST(SpeculativeConfig, SizesAreBounded) {
  SpeculativeConfig c = with("ngram");
  c.num_tokens = 0;
  EXPECT_THROW(c.validate(), Error);
  c.num_tokens = 33;
  EXPECT_THROW(c.validate(), Error);
  c = with("ngram");
  c.ngram_min = 3;
  c.ngram_max = 2;
  EXPECT_THROW(c.validate(), Error);
}

}  // namespace
}  // namespace db
