#include "tokenizer/detokenizer.h"

#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace db {

IncrementalDetokenizer::IncrementalDetokenizer(const Tokenizer& tokenizer, bool skip_special)
    : tokenizer_(&tokenizer), skip_special_(skip_special) {}

std::string IncrementalDetokenizer::take_complete() {
  const size_t tail = utf8::incomplete_tail_length(pending_);
  std::string out = utf8::repair(std::string_view(pending_).substr(0, pending_.size() - tail));
  pending_.erase(0, pending_.size() - tail);
  return out;
}

std::string IncrementalDetokenizer::feed(int32_t id) {
  if (skip_special_ && tokenizer_->is_special(id)) return {};
  pending_ += tokenizer_->token_to_piece(id);
  return take_complete();
}

std::string IncrementalDetokenizer::feed(const std::vector<int32_t>& ids) {
  for (int32_t id : ids)
    if (!(skip_special_ && tokenizer_->is_special(id))) pending_ += tokenizer_->token_to_piece(id);
  return take_complete();
}

std::string IncrementalDetokenizer::flush() {
  std::string out = utf8::repair(pending_);
  pending_.clear();
  return out;
}

}  // namespace db
