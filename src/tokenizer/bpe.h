// Byte-level BPE: a piece's bytes start as one symbol each (the token of the
// byte's character) and the adjacent pair of lowest merge rank is merged until no
// pair has a rank (ties: leftmost first), as Hugging Face's BPE model does.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tokenizer/flat_maps.h"

namespace db {

class BpeModel {
 public:
  BpeModel() = default;
  // `tokens`: stored text per id (byte-level form). `merges`: pairs of token texts in
  // rank order; pairs naming a token the vocabulary lacks are ignored. `ignore_merges`:
  // a piece that is itself a token is emitted whole. `unk_id` (or -1): stands for a
  // byte whose character has no token; without one such bytes are dropped.
  BpeModel(std::vector<std::string> tokens, const std::vector<std::pair<std::string, std::string>>& merges,
           bool ignore_merges, int32_t unk_id);

  // Appends the ids of one pre-tokenized piece (raw bytes).
  void encode_piece(std::string_view bytes, std::vector<int32_t>& out) const;

  // Id of a stored token text, or -1.
  int32_t find(std::string_view token_text) const { return ids_.find(token_text); }
  size_t num_merges() const { return merges_.size(); }
  // Bytes of `bytes` encode_piece keeps (those with a token, or all with an unknown
  // token); each id it emits stands for at most the longest token's length of them.
  size_t kept_bytes(std::string_view bytes) const;

 private:
  TokenIndex ids_;
  MergeTable merges_;
  int32_t byte_ids_[256] = {};  // token of each byte's character, or -1
  bool ignore_merges_ = false;
  int32_t unk_id_ = -1;
};

}  // namespace db
