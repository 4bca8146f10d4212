// How a Hugging Face checkpoint's weights are quantized, read from config.json's
// "quantization_config": FP8 with block scales (DeepSeek-V3 / R1 as released),
// AWQ (AutoAWQ's GEMM packing) or GPTQ (AutoGPTQ / GPTQModel), 4-bit.
//
// Contract: read_checkpoint_quant returns method None when the key is absent, a
// fully validated description otherwise, and throws db::Error naming the file
// and the key for a method, format, bit width or group size this build does not
// load (so such a checkpoint fails at open, never with garbage weights).
#pragma once
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace db {

enum class CheckpointQuantMethod { None, Fp8, Awq, Gptq };

struct CheckpointQuant {
  CheckpointQuantMethod method = CheckpointQuantMethod::None;
  // FP8: each `<name>.weight` (F8_E4M3 / F8_E5M2, {rows, cols}) has a float32
  // `<name>.weight_scale_inv` {ceil(rows / block_rows), ceil(cols / block_cols)};
  // the weight is fp8 * scale_inv[r / block_rows][c / block_cols].
  int64_t block_rows = 0, block_cols = 0;
  // AWQ / GPTQ: 4-bit codes with a scale and zero point per group of
  // `group_size` inputs (32, 64 or 128); the weight is (q - z) * s.
  int bits = 0;
  int group_size = 0;
  bool desc_act = false;     // GPTQ: g_idx orders inputs by activation, groups need not be contiguous
  bool sym = true;           // GPTQ: symmetric quantization (zero points all 2^(bits-1)); informative only
  bool zero_plus_one = false;  // GPTQ checkpoint_format "gptq": qzeros hold z - 1 ("gptq_v2": z)
};

// "fp8", "awq", "gptq" or "none".
std::string quant_method_name(CheckpointQuantMethod m);

// `config`: the parsed config.json; `config_path` names it in errors.
CheckpointQuant read_checkpoint_quant(const nlohmann::json& config, const std::string& config_path);

}  // namespace db
