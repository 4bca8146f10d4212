// Edited copies of GGUF files for tests: extra or dropped metadata and tensors,
// retyped tensors, and a byte-level tokenizer for fixtures that carry none.
#pragma once
#include <functional>
#include <string>

#include "io/gguf_writer.h"
#include "tensor/tensor.h"

namespace db::test {

// A copy of a GGUF file; `edit` may add metadata and tensors; `keep(name)` false drops
// a tensor or metadata key (so that edit can write another in its place); `retype`
// gives the stored type of each kept tensor (default: as stored; else it must be F32).
// Records a gtest failure when a non-F32 tensor is asked to change type.
void copy_gguf(const std::string& from, const std::string& to, const std::function<void(GGUFWriter&)>& edit,
               const std::function<bool(const std::string&)>& keep = nullptr,
               const std::function<DType(const std::string&, const TensorView&)>& retype = nullptr);

// A copy of a 256-token model (the generated fixtures carry no tokenizer) with a
// byte-level tokenizer: token i is byte i, token 2 (the config's eos) a special token.
void write_with_tokenizer(const std::string& from, const std::string& to);

}  // namespace db::test
