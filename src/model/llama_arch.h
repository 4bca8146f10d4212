// The registry entries of the llama family: architectures built by LlamaDecoder
// (model/llama_decoder.h) that differ only in configuration.
#pragma once
#include "model/registry.h"

namespace db {

// "llama" (model_type "llama"): GGUF q/k rows come permuted by llama.cpp's converter,
// so GGUF rotates interleaved pairs; checkpoints take q/k/v biases from attention_bias.
Architecture llama_architecture();
// "qwen2" (model_type "qwen2"): NeoX rotation in both formats; q/k/v always carry biases.
Architecture qwen2_architecture();

}  // namespace db
