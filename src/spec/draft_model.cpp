#include "spec/draft_model.h"

#include <algorithm>
#include <filesystem>

#include "io/gguf.h"
#include "util/error.h"

namespace db {

void check_draft_vocabulary(const Tokenizer& draft, const Tokenizer& target, const std::string& what) {
  const auto nd = static_cast<int64_t>(draft.vocab_size()), nt = static_cast<int64_t>(target.vocab_size());
  if (std::abs(nd - nt) > DraftModel::kMaxVocabSizeDifference)
    throw Error(what + ": its vocabulary has " + std::to_string(nd) + " tokens, the target's " + std::to_string(nt) +
                "; a draft model must share the target's vocabulary");
  for (int32_t id = 0; id < static_cast<int32_t>(std::min(nd, nt)); ++id)
    if (draft.token_text(id) != target.token_text(id))
      throw Error(what + ": token " + std::to_string(id) + " is '" + draft.token_text(id) + "' in the draft and '" +
                  target.token_text(id) + "' in the target; a draft model must share the target's vocabulary");
  if (draft.eos_ids() != target.eos_ids())
    throw Error(what + ": its end-of-sequence tokens differ from the target's");
}

std::unique_ptr<DraftModel> DraftModel::open(const std::string& path, const Tokenizer& target, int32_t target_vocab,
                                             ThreadPool* load_pool) {
  const std::string what = "draft model " + path;
  std::unique_ptr<Tokenizer> tok;
  try {
    if (std::filesystem::is_directory(path)) {
      tok = Tokenizer::from_hf_dir(path);
    } else {
      const auto gguf = GGUFFile::open(path);
      tok = Tokenizer::from_gguf(*gguf);
    }
  } catch (const Error& e) {
    throw Error(what + ": " + e.what());
  }
  check_draft_vocabulary(*tok, target, what);
  std::unique_ptr<DraftModel> d(new DraftModel);
  d->model_ = load_model(path, load_pool);
  d->draft_vocab_ = std::min(d->model_->config().vocab, target_vocab);
  return d;
}

}  // namespace db
