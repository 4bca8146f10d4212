// Byte-level BPE tokenizer (GPT-2 family: SmolLM2, Llama-3, Qwen2, DeepSeek-V3/R1),
// loaded from GGUF metadata or from Hugging Face tokenizer.json (+ tokenizer_config.json),
// producing the same ids as the Hugging Face tokenizer of the model.
//
// encode: added/special tokens are found first (leftmost, longest); the text between
// them is pre-tokenized (model-specific regex splits), and each piece is encoded by BPE.
// Bytes that are not valid UTF-8 are encoded one byte token each, never rejected (a byte
// the vocabulary has no token for is dropped, as the reference tokenizer does).
// A Tokenizer is immutable after loading; every method may be called from many threads.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tokenizer/added_tokens.h"
#include "tokenizer/bpe.h"
#include "tokenizer/pre_tokenizer.h"

namespace db {

class GGUFFile;

enum class TokenKind : uint8_t {
  Normal,   // vocabulary entry stored in byte-level form
  Special,  // control token (BOS, EOS, chat markers): raw text, parsed only on request
  Added,    // user-defined added token: raw text, always parsed
  Unused,   // id without a token (a gap in the vocabulary); decodes to nothing
};

// Everything a Tokenizer is built from; the loaders fill it, tests may too.
struct TokenizerParts {
  std::vector<std::string> tokens;                          // stored text per id
  std::vector<TokenKind> kinds;                             // per id; empty = all Normal
  std::vector<std::pair<std::string, std::string>> merges;  // BPE merges in rank order
  std::vector<AddedToken> added;                            // tokens found before pre-tokenization
  PreTokenizer pre_tokenizer;                               // must end with ByteLevel
  bool ignore_merges = false;                               // whole-piece vocabulary lookup first
  int32_t bos_id = -1, eos_id = -1, unk_id = -1, pad_id = -1;  // -1 = none
  int32_t bpe_unk_id = -1;  // stands for bytes the vocabulary lacks (HF model.unk_token); -1 drops them
  bool add_bos = false;                                     // encode(add_special) prepends BOS
  bool add_eos = false;                                     // encode(add_special) appends EOS
  std::vector<int32_t> end_of_generation;                   // more ids that end generation
  std::string source;                                       // file name for messages
};

class Tokenizer {
 public:
  // From GGUF metadata (tokenizer.ggml.model "gpt2"). Throws db::Error naming the key.
  static std::unique_ptr<Tokenizer> from_gguf(const GGUFFile& file);
  // From tokenizer.json, and tokenizer_config.json when given (bos/eos tokens, add_bos_token).
  static std::unique_ptr<Tokenizer> from_hf(const std::string& tokenizer_json,
                                            const std::optional<std::string>& tokenizer_config = std::nullopt);
  // From a directory holding tokenizer.json, optionally tokenizer_config.json, and
  // optionally generation_config.json (its eos_token_id ids join eos_ids()).
  static std::unique_ptr<Tokenizer> from_hf_dir(const std::string& dir);
  // The parts from_hf_dir builds its tokenizer from (what a converter writes
  // into another format: tokenizer/tokenizer_gguf_keys.h).
  static TokenizerParts hf_dir_parts(const std::string& dir);
  // Validates `parts` (ids in range, byte-level pre-tokenizer); throws db::Error otherwise.
  static std::unique_ptr<Tokenizer> from_parts(TokenizerParts parts);

  // `add_special`: add BOS/EOS as the model asks (add_bos/add_eos). `parse_special`:
  // special tokens written in the text become their ids; otherwise their text is encoded.
  std::vector<int32_t> encode(std::string_view text, bool add_special, bool parse_special = true) const;
  // encode(), but only while the ids number at most `max_tokens`: nullopt as soon as
  // they would number more. Work and memory grow with max_tokens (times the longest
  // token), not with the text: added tokens are searched only as far as the limit,
  // pre-tokenized pieces are encoded one at a time, and a piece too long to fit in the
  // ids left is refused unencoded.
  std::optional<std::vector<int32_t>> encode_bounded(std::string_view text, size_t max_tokens, bool add_special,
                                                     bool parse_special = true) const;
  // The most bytes of text one token stands for: a text of n bytes holds at least
  // n / max_token_bytes() tokens, unless it holds bytes the vocabulary has no token for
  // (they are dropped) or the pre-tokenizer removes some of it.
  size_t max_token_bytes() const { return max_token_bytes_; }
  // The text of `ids`, ill-formed UTF-8 replaced by U+FFFD. Unknown ids decode to nothing.
  std::string decode(const std::vector<int32_t>& ids, bool skip_special = false) const;
  // The raw bytes of `ids` (may end inside a character).
  std::string decode_bytes(const std::vector<int32_t>& ids, bool skip_special = false) const;
  // Raw bytes a token stands for; empty for unknown ids.
  const std::string& token_to_piece(int32_t id) const;

  size_t vocab_size() const { return tokens_.size(); }
  int32_t bos_id() const { return bos_id_; }  // -1 when none
  int32_t eos_id() const { return eos_id_; }  // -1 when none
  int32_t pad_id() const { return pad_id_; }  // -1 when none
  int32_t unk_id() const { return unk_id_; }  // -1 when none
  bool add_bos() const { return add_bos_; }
  bool add_eos() const { return add_eos_; }
  // Ids that end generation, sorted: EOS, the end-of-turn/eot/eom ids the metadata
  // names, and special tokens whose text is a known end marker (<|im_end|>,
  // <|endoftext|>, <|eot_id|>, <|end_of_text|>, <|eom_id|>, <｜end▁of▁sentence｜>, ...).
  const std::vector<int32_t>& eos_ids() const { return eos_ids_; }
  bool is_eos(int32_t id) const;
  bool is_special(int32_t id) const { return kind(id) == TokenKind::Special; }
  TokenKind kind(int32_t id) const;
  // Id of a stored token text (byte-level form for Normal tokens, raw text for
  // added ones), or -1.
  int32_t token_id(std::string_view text) const;
  // Stored text of a token; empty for unknown ids.
  const std::string& token_text(int32_t id) const;
  const std::string& source() const { return source_; }

 private:
  explicit Tokenizer(TokenizerParts parts);
  void encode_text(std::string_view text, std::vector<int32_t>& out) const;
  void encode_valid(std::string_view text, std::vector<int32_t>& out) const;
  // encode_text / encode_valid that stop (returning false) once `out` would pass `limit` ids.
  bool encode_text_bounded(std::string_view text, std::vector<int32_t>& out, size_t limit) const;
  bool encode_piece_bounded(std::string_view piece, std::vector<int32_t>& out, size_t limit) const;

  std::vector<std::string> tokens_;
  std::vector<TokenKind> kinds_;
  std::vector<std::string> pieces_;  // raw bytes per id
  BpeModel bpe_;
  AddedTokenMatcher added_;
  PreTokenizer pre_;
  int32_t bos_id_ = -1, eos_id_ = -1, unk_id_ = -1, pad_id_ = -1;
  bool add_bos_ = false, add_eos_ = false;
  std::vector<int32_t> eos_ids_;
  size_t max_token_bytes_ = 0;  // longest raw piece of any id
  std::string source_;
};

}  // namespace db
