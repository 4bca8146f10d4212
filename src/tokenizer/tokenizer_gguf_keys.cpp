#include "tokenizer/tokenizer_gguf_keys.h"

#include <algorithm>

#include "io/gguf_writer.h"
#include "util/error.h"

namespace db {

namespace {

// llama.cpp's token types, as tokenizer_gguf.cpp reads them back.
int64_t gguf_token_type(TokenKind k) {
  switch (k) {
    case TokenKind::Normal: return 1;
    case TokenKind::Special: return 3;
    case TokenKind::Added: return 4;
    case TokenKind::Unused: return 5;
  }
  return 1;
}

}  // namespace

void add_tokenizer_gguf_keys(const TokenizerParts& p, GGUFWriter& w) {
  const std::string where = p.source + ": cannot be written as GGUF tokenizer keys: ";
  const auto pre = PreTokenizer::gguf_name_for(p.pre_tokenizer, p.ignore_merges);
  if (!pre)
    throw Error(where + "its pre_tokenizer (with ignore_merges " + (p.ignore_merges ? "true" : "false") +
                ") is none of the ones a tokenizer.ggml.pre name stands for");
  for (const AddedToken& a : p.added)
    if (a.lstrip || a.rstrip || a.single_word)
      throw Error(where + "added token \"" + a.content + "\" (id " + std::to_string(a.id) +
                  ") has lstrip, rstrip or single_word set, which GGUF files cannot record");
  if (p.bpe_unk_id >= 0)
    throw Error(where + "model.unk_token stands for bytes the vocabulary lacks, which GGUF files cannot record");
  std::vector<std::string> merges;
  merges.reserve(p.merges.size());
  for (const auto& [a, b] : p.merges) {
    if (a.empty() || a.find(' ') != std::string::npos)
      throw Error(where + "merge \"" + a + "\" + \"" + b + "\": a first token with a space cannot be written");
    merges.push_back(a + " " + b);
  }
  std::vector<int64_t> extra_ends;
  for (int32_t id : p.end_of_generation)
    if (id != p.eos_id && std::find(extra_ends.begin(), extra_ends.end(), id) == extra_ends.end())
      extra_ends.push_back(id);
  if (extra_ends.size() > 2)
    throw Error(where + std::to_string(extra_ends.size()) +
                " ids besides EOS end generation (generation_config.json); GGUF files name at most two");

  w.add_string("tokenizer.ggml.model", "gpt2");
  w.add_string("tokenizer.ggml.pre", *pre);
  w.add_string_array("tokenizer.ggml.tokens", p.tokens);
  std::vector<int64_t> types(p.tokens.size(), gguf_token_type(TokenKind::Normal));
  for (size_t i = 0; i < p.kinds.size() && i < types.size(); ++i) types[i] = gguf_token_type(p.kinds[i]);
  w.add_int_array("tokenizer.ggml.token_type", GGUFType::INT32, types);
  w.add_string_array("tokenizer.ggml.merges", merges);
  const std::pair<const char*, int32_t> ids[] = {{"tokenizer.ggml.bos_token_id", p.bos_id},
                                                 {"tokenizer.ggml.eos_token_id", p.eos_id},
                                                 {"tokenizer.ggml.unknown_token_id", p.unk_id},
                                                 {"tokenizer.ggml.padding_token_id", p.pad_id}};
  for (const auto& [key, id] : ids)
    if (id >= 0) w.add_uint32(key, static_cast<uint32_t>(id));
  const char* const end_keys[] = {"tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"};
  for (size_t i = 0; i < extra_ends.size(); ++i) w.add_uint32(end_keys[i], static_cast<uint32_t>(extra_ends[i]));
  w.add_bool("tokenizer.ggml.add_bos_token", p.add_bos);
  w.add_bool("tokenizer.ggml.add_eos_token", p.add_eos);
}

std::string tokenizer_difference(const Tokenizer& a, const Tokenizer& b) {
  if (a.vocab_size() != b.vocab_size())
    return "vocabulary size " + std::to_string(a.vocab_size()) + " vs " + std::to_string(b.vocab_size());
  std::vector<std::string> samples = {
      "Hello, world! It's 2026: 1234567 tokens.", "  two spaces\n\nnew lines\t\ttabs  ",
      "na\u00efve caf\u00e9 \u65e5\u672c\u8a9e \u4e2d\u6587 \u3072\u3089\u304c\u306a",
      "emoji \U0001F642 symbols \u00a9\u00ae\u2122 -- ...", "for (int i = 0; i < n; ++i) { x += i; }"};
  for (size_t id = 0; id < a.vocab_size(); ++id) {
    const auto i = static_cast<int32_t>(id);
    if (a.token_text(i) != b.token_text(i)) return "token " + std::to_string(id) + " text";
    if (a.kind(i) != b.kind(i)) return "token " + std::to_string(id) + " kind";
    if ((a.kind(i) == TokenKind::Special || a.kind(i) == TokenKind::Added) && samples.size() < 256)
      samples.push_back("x" + a.token_text(i) + " y" + a.token_text(i));
  }
  const std::pair<const char*, std::pair<int32_t, int32_t>> ids[] = {{"BOS id", {a.bos_id(), b.bos_id()}},
                                                                     {"EOS id", {a.eos_id(), b.eos_id()}},
                                                                     {"UNK id", {a.unk_id(), b.unk_id()}},
                                                                     {"PAD id", {a.pad_id(), b.pad_id()}}};
  for (const auto& [what, pair] : ids)
    if (pair.first != pair.second)
      return std::string(what) + " " + std::to_string(pair.first) + " vs " + std::to_string(pair.second);
  if (a.add_bos() != b.add_bos()) return "add_bos";
  if (a.add_eos() != b.add_eos()) return "add_eos";
  if (a.eos_ids() != b.eos_ids()) return "the ids that end generation";
  for (const std::string& text : samples)
    for (const bool special : {true, false})
      if (a.encode(text, special, special) != b.encode(text, special, special))
        return "the ids of \"" + text + "\"" + (special ? "" : " (special tokens as text)");
  return "";
}

}  // namespace db
