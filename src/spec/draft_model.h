// A draft model for speculative decoding: a smaller model that shares the
// target's vocabulary, opened from a GGUF file or a Hugging Face checkpoint.
//
// The vocabularies must agree token for token: every id both tokenizers have
// must stand for the same stored text, the two may differ in size by at most
// kMaxVocabSizeDifference (models of one family pad their embeddings to
// different sizes), and their EOS ids must match. Drafts are argmaxes over the
// ids both the draft's logits and the target's vocabulary cover.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "model/model.h"
#include "tokenizer/tokenizer.h"
#include "util/thread_pool.h"

namespace db {

class DraftModel {
 public:
  static constexpr int64_t kMaxVocabSizeDifference = 128;

  // Opens `path` and checks its vocabulary against the target's (`target_vocab`:
  // the width of the target's logits). Throws db::Error naming the file and the
  // first difference when the vocabularies do not match, or when it cannot be read.
  static std::unique_ptr<DraftModel> open(const std::string& path, const Tokenizer& target, int32_t target_vocab,
                                          ThreadPool* load_pool = nullptr);

  Model& model() { return *model_; }
  const Model& model() const { return *model_; }
  // Ids a draft may take: [0, draft_vocab()).
  int32_t draft_vocab() const { return draft_vocab_; }

 private:
  DraftModel() = default;
  std::unique_ptr<Model> model_;
  int32_t draft_vocab_ = 0;
};

// Throws db::Error (prefixed with `what`) when `draft` cannot draft for `target`
// under the rule above. Exposed for tests.
void check_draft_vocabulary(const Tokenizer& draft, const Tokenizer& target, const std::string& what);

}  // namespace db
