#include "tokenizer/tokenizer.h"

#include <algorithm>

#include "tokenizer/byte_level.h"
#include "tokenizer/utf8.h"
#include "util/error.h"

namespace db {

namespace {

// Texts of special tokens that end a model's turn in the chat formats we serve.
constexpr const char* kEndMarkers[] = {
    "<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|eom_id|>", "<|end_of_text|>", "<|end|>",
    "<end_of_turn>", "<|end▁of▁sentence|>", "<｜end▁of▁sentence｜>",
};

bool is_end_marker(const std::string& text) {
  for (const char* m : kEndMarkers)
    if (text == m) return true;
  return false;
}

const std::string kEmpty;

void check_id(int32_t id, size_t n, const std::string& what, const std::string& source) {
  if (id < -1 || id >= static_cast<int64_t>(n))
    throw Error(source + ": " + what + " id " + std::to_string(id) + " is outside the vocabulary of " +
                std::to_string(n) + " tokens");
}

}  // namespace

std::unique_ptr<Tokenizer> Tokenizer::from_parts(TokenizerParts parts) {
  const std::string& src = parts.source.empty() ? std::string("tokenizer") : parts.source;
  const size_t n = parts.tokens.size();
  if (n == 0) throw Error(src + ": the vocabulary is empty");
  if (parts.kinds.empty()) parts.kinds.assign(n, TokenKind::Normal);
  if (parts.kinds.size() != n)
    throw Error(src + ": " + std::to_string(parts.kinds.size()) + " token kinds for " + std::to_string(n) +
                " tokens");
  check_id(parts.bos_id, n, "BOS", src);
  check_id(parts.eos_id, n, "EOS", src);
  check_id(parts.unk_id, n, "UNK", src);
  check_id(parts.pad_id, n, "PAD", src);
  check_id(parts.bpe_unk_id, n, "BPE unknown-token", src);
  for (int32_t id : parts.end_of_generation) check_id(id, n, "end-of-generation", src);
  for (const auto& a : parts.added) {
    check_id(a.id, n, "added token \"" + a.content + "\"", src);
    if (a.id < 0) throw Error(src + ": added token \"" + a.content + "\" has no id");
  }
  if (parts.add_bos && parts.bos_id < 0) throw Error(src + ": the model asks for a BOS token but names none");
  if (parts.add_eos && parts.eos_id < 0) throw Error(src + ": the model asks for an EOS token but names none");
  if (!parts.pre_tokenizer.ends_with_byte_level())
    throw Error(src + ": only byte-level BPE is supported: the pre-tokenizer must end with ByteLevel");
  return std::unique_ptr<Tokenizer>(new Tokenizer(std::move(parts)));
}

Tokenizer::Tokenizer(TokenizerParts parts)
    : tokens_(std::move(parts.tokens)),
      kinds_(std::move(parts.kinds)),
      added_(parts.added),
      pre_(std::move(parts.pre_tokenizer)),
      bos_id_(parts.bos_id),
      eos_id_(parts.eos_id),
      unk_id_(parts.unk_id),
      pad_id_(parts.pad_id),
      add_bos_(parts.add_bos),
      add_eos_(parts.add_eos),
      source_(std::move(parts.source)) {
  std::vector<std::string> bpe_tokens(tokens_.size());
  pieces_.resize(tokens_.size());
  for (size_t i = 0; i < tokens_.size(); ++i) {
    if (kinds_[i] == TokenKind::Unused) continue;
    bpe_tokens[i] = tokens_[i];
    if (kinds_[i] == TokenKind::Normal) {
      auto bytes = byte_level::decode(tokens_[i]);
      pieces_[i] = bytes ? std::move(*bytes) : tokens_[i];
    } else {
      pieces_[i] = tokens_[i];
    }
  }
  bpe_ = BpeModel(std::move(bpe_tokens), parts.merges, parts.ignore_merges, parts.bpe_unk_id);
  for (const auto& p : pieces_) max_token_bytes_ = std::max(max_token_bytes_, p.size());

  if (eos_id_ >= 0) eos_ids_.push_back(eos_id_);
  for (int32_t id : parts.end_of_generation) eos_ids_.push_back(id);
  for (size_t i = 0; i < tokens_.size(); ++i)
    if (kinds_[i] == TokenKind::Special && is_end_marker(tokens_[i])) eos_ids_.push_back(static_cast<int32_t>(i));
  std::sort(eos_ids_.begin(), eos_ids_.end());
  eos_ids_.erase(std::unique(eos_ids_.begin(), eos_ids_.end()), eos_ids_.end());
}

void Tokenizer::encode_valid(std::string_view text, std::vector<int32_t>& out) const {
  thread_local std::vector<std::string> pieces;
  pieces.clear();
  pre_.split(text, pieces);
  for (const auto& p : pieces) bpe_.encode_piece(p, out);
}

void Tokenizer::encode_text(std::string_view text, std::vector<int32_t>& out) const {
  const auto valid = [&](std::string_view run) {
    encode_valid(run, out);
    return true;
  };
  const auto stray = [&](std::string_view byte) {
    bpe_.encode_piece(byte, out);
    return true;
  };
  utf8::for_each_run(text, valid, stray);
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special, bool parse_special) const {
  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 2);
  if (add_special && add_bos_) out.push_back(bos_id_);
  std::vector<TextSegment> segments;
  added_.split(text, parse_special, segments);
  for (const auto& seg : segments) {
    if (seg.id >= 0) out.push_back(seg.id);
    else encode_text(text.substr(seg.begin, seg.end - seg.begin), out);
  }
  if (add_special && add_eos_) out.push_back(eos_id_);
  return out;
}

std::string Tokenizer::decode_bytes(const std::vector<int32_t>& ids, bool skip_special) const {
  std::string out;
  for (int32_t id : ids) {
    if (skip_special && is_special(id)) continue;
    out += token_to_piece(id);
  }
  return out;
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids, bool skip_special) const {
  return utf8::repair(decode_bytes(ids, skip_special));
}

const std::string& Tokenizer::token_to_piece(int32_t id) const {
  return (id >= 0 && static_cast<size_t>(id) < pieces_.size()) ? pieces_[id] : kEmpty;
}

const std::string& Tokenizer::token_text(int32_t id) const {
  return (id >= 0 && static_cast<size_t>(id) < tokens_.size()) ? tokens_[id] : kEmpty;
}

TokenKind Tokenizer::kind(int32_t id) const {
  return (id >= 0 && static_cast<size_t>(id) < kinds_.size()) ? kinds_[id] : TokenKind::Unused;
}

bool Tokenizer::is_eos(int32_t id) const { return std::binary_search(eos_ids_.begin(), eos_ids_.end(), id); }

int32_t Tokenizer::token_id(std::string_view text) const { return bpe_.find(text); }

}  // namespace db
