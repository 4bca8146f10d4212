// The tiny DeepSeek fixtures (tests/data/model/deepseek_v{2,3}_tiny) as engine
// bundles. The fixtures carry no tokenizer, so each is opened from a copy with
// a byte-level one (gguf_copy.h); prompts are token ids.
#pragma once
#include <string>

#include "bundle/model_bundle.h"

namespace db::test {

// model-<format>.gguf of tests/data/model/<fixture> ("deepseek_v2_tiny", "q8_0"),
// opened once per process and shared by the tests (loaded on 2 threads).
ModelBundle& deepseek_bundle(const std::string& fixture, const std::string& format);
// The file that bundle was opened from: the fixture with its tokenizer.
const std::string& deepseek_model_file(const std::string& fixture, const std::string& format);

// A one-block V3 model (the V3 fixture's MoE block 2, token embeddings scaled
// to RMS 1) with a multi-token-prediction layer that repeats that block and
// reads only the token: eh_proj = [I | 0], enorm = hnorm = 1, its head the
// model's. Its MTP entry j then equals the model's own last block on the
// sequence without its first token (t_1 .. t_{j+1} at positions 0 .. j), so
// its drafts are the model's greedy continuation of that shifted sequence.
const std::string& deepseek_mtp_file();
ModelBundle& deepseek_mtp_bundle();

}  // namespace db::test
