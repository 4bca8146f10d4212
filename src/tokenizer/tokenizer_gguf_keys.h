// Writing a tokenizer as the "tokenizer.ggml.*" metadata keys that
// Tokenizer::from_gguf reads (tokenizer/tokenizer_gguf.cpp), so that a model
// file converted from a Hugging Face checkpoint carries its tokenizer.
#pragma once

#include "tokenizer/tokenizer.h"

namespace db {

class GGUFWriter;

// Adds the keys of `p` (byte-level BPE) to `w`: model "gpt2", the GGUF name of
// its pre-tokenizer, tokens with their types, merges, the BOS / EOS / UNK / PAD
// ids, add_bos / add_eos, and up to two more end-of-generation ids (as
// eot_token_id, eom_token_id). Throws db::Error naming p.source and the part
// when the keys cannot say it: a pre-tokenizer no GGUF name stands for, an
// added token that strips white space or matches single words only, a BPE
// unknown token, a merge whose first token holds a space, more than two ids
// besides EOS that end generation.
void add_tokenizer_gguf_keys(const TokenizerParts& p, GGUFWriter& w);

// The first way in which two tokenizers differ (the one built from the parts
// and the one read back from the keys): their tokens, token kinds, special
// ids, BOS / EOS flags, end-of-generation ids, or the ids of sample texts (the
// added tokens among them); empty when they agree on all of these.
std::string tokenizer_difference(const Tokenizer& a, const Tokenizer& b);

}  // namespace db
