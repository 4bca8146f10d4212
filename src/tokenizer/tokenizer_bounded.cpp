// Tokenizer::encode_bounded: encode() that stops at a token limit, so that a prompt far
// longer than any context costs work and memory in proportion to the limit.
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace db {

bool Tokenizer::encode_piece_bounded(std::string_view piece, std::vector<int32_t>& out, size_t limit) const {
  // Each id stands for at most max_token_bytes_ of the bytes BPE keeps, so a piece
  // keeping more than that many per id left cannot fit (counted only for long pieces).
  const size_t room = limit - out.size();
  if (max_token_bytes_ > 0 && piece.size() / max_token_bytes_ > room &&
      bpe_.kept_bytes(piece) / max_token_bytes_ > room)
    return false;
  bpe_.encode_piece(piece, out);
  return out.size() <= limit;
}

bool Tokenizer::encode_text_bounded(std::string_view text, std::vector<int32_t>& out, size_t limit) const {
  const PreTokenizer::PieceSink sink = [&](std::string_view piece) { return encode_piece_bounded(piece, out, limit); };
  return utf8::for_each_run(
      text, [&](std::string_view run) { return pre_.split_each(run, sink); },
      [&](std::string_view stray) { return encode_piece_bounded(stray, out, limit); });
}

std::optional<std::vector<int32_t>> Tokenizer::encode_bounded(std::string_view text, size_t max_tokens,
                                                              bool add_special, bool parse_special) const {
  const bool bos = add_special && add_bos_, eos = add_special && add_eos_;
  if (max_tokens < size_t{bos} + size_t{eos}) return std::nullopt;
  const size_t limit = max_tokens - size_t{eos};  // ids before the EOS
  std::vector<int32_t> out;
  if (bos) out.push_back(bos_id_);
  std::vector<TextSegment> segments;
  if (!added_.split(text, parse_special, segments, limit - out.size())) return std::nullopt;
  for (const auto& seg : segments) {
    if (seg.id >= 0) {
      out.push_back(seg.id);
      if (out.size() > limit) return std::nullopt;
    } else if (!encode_text_bounded(text.substr(seg.begin, seg.end - seg.begin), out, limit)) {
      return std::nullopt;
    }
  }
  if (eos) out.push_back(eos_id_);
  return out;
}

}  // namespace db
