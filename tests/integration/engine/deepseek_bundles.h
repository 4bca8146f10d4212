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

}  // namespace db::test
