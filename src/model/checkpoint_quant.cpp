#include "model/checkpoint_quant.h"

#include <nlohmann/json.hpp>

#include "util/error.h"

namespace db {

namespace {

using json = nlohmann::json;

// quantization_config.<key> as an integer; `fallback` when absent.
int64_t qc_int(const json& qc, const std::string& key, int64_t fallback, const std::string& where) {
  auto it = qc.find(key);
  if (it == qc.end() || it->is_null()) return fallback;
  if (!it->is_number_integer()) throw Error(where + key + ": expected an integer, got " + it->dump());
  return it->get<int64_t>();
}

bool qc_bool(const json& qc, const std::string& key, bool fallback, const std::string& where) {
  auto it = qc.find(key);
  if (it == qc.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) throw Error(where + key + ": expected true or false, got " + it->dump());
  return it->get<bool>();
}

std::string qc_string(const json& qc, const std::string& key, const std::string& fallback, const std::string& where) {
  auto it = qc.find(key);
  if (it == qc.end() || it->is_null()) return fallback;
  if (!it->is_string()) throw Error(where + key + ": expected a string, got " + it->dump());
  return it->get<std::string>();
}

void read_fp8(const json& qc, const std::string& where, CheckpointQuant& q) {
  const std::string fmt = qc_string(qc, "fmt", "e4m3", where);
  if (fmt != "e4m3" && fmt != "e5m2") throw Error(where + "fmt: expected \"e4m3\" or \"e5m2\", got \"" + fmt + "\"");
  auto it = qc.find("weight_block_size");
  if (it == qc.end() || !it->is_array() || it->size() != 2 || !(*it)[0].is_number_integer() ||
      !(*it)[1].is_number_integer() || (*it)[0].get<int64_t>() <= 0 || (*it)[1].get<int64_t>() <= 0)
    throw Error(where + "weight_block_size: expected [rows, cols] of positive integers (block-scaled FP8; "
                "per-tensor FP8 scales are not supported), got " +
                (it == qc.end() ? std::string("none") : it->dump()));
  q.block_rows = (*it)[0].get<int64_t>();
  q.block_cols = (*it)[1].get<int64_t>();
}

// Bits and group size shared by AWQ and GPTQ ("w_bit" / "q_group_size" are AutoAWQ's older spellings).
void read_int4_common(const json& qc, const std::string& where, CheckpointQuant& q) {
  q.bits = static_cast<int>(qc_int(qc, "bits", qc_int(qc, "w_bit", 0, where), where));
  if (q.bits != 4) throw Error(where + "bits: expected 4 (the only width loaded), got " + std::to_string(q.bits));
  const int64_t g = qc_int(qc, "group_size", qc_int(qc, "q_group_size", 0, where), where);
  if (g != 32 && g != 64 && g != 128)
    throw Error(where + "group_size: expected 32, 64 or 128, got " + std::to_string(g));
  q.group_size = static_cast<int>(g);
}

void read_awq(const json& qc, const std::string& where, CheckpointQuant& q) {
  read_int4_common(qc, where, q);
  std::string version = qc_string(qc, "version", "gemm", where);
  for (char& ch : version) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (version != "gemm")
    throw Error(where + "version: expected \"gemm\" (AutoAWQ's GEMM packing), got \"" + version + "\"");
  if (!qc_bool(qc, "zero_point", true, where)) throw Error(where + "zero_point: expected true, got false");
}

void read_gptq(const json& qc, const std::string& where, CheckpointQuant& q) {
  read_int4_common(qc, where, q);
  q.desc_act = qc_bool(qc, "desc_act", false, where);
  q.sym = qc_bool(qc, "sym", true, where);
  const std::string fmt = qc_string(qc, "checkpoint_format", "gptq", where);
  if (fmt != "gptq" && fmt != "gptq_v2")
    throw Error(where + "checkpoint_format: expected \"gptq\" or \"gptq_v2\", got \"" + fmt + "\"");
  q.zero_plus_one = fmt == "gptq";
}

}  // namespace

std::string quant_method_name(CheckpointQuantMethod m) {
  switch (m) {
    case CheckpointQuantMethod::Fp8: return "fp8";
    case CheckpointQuantMethod::Awq: return "awq";
    case CheckpointQuantMethod::Gptq: return "gptq";
    case CheckpointQuantMethod::None: break;
  }
  return "none";
}

CheckpointQuant read_checkpoint_quant(const json& config, const std::string& config_path) {
  CheckpointQuant q;
  auto it = config.find("quantization_config");
  if (it == config.end() || it->is_null()) return q;
  const std::string where = config_path + ": quantization_config.";
  if (!it->is_object()) throw Error(config_path + ": quantization_config: expected an object, got " + it->dump());
  const std::string method = qc_string(*it, "quant_method", "", where);
  if (method == "fp8") {
    q.method = CheckpointQuantMethod::Fp8;
    read_fp8(*it, where, q);
  } else if (method == "awq") {
    q.method = CheckpointQuantMethod::Awq;
    read_awq(*it, where, q);
  } else if (method == "gptq") {
    q.method = CheckpointQuantMethod::Gptq;
    read_gptq(*it, where, q);
  } else {
    throw Error(where + "quant_method: expected \"fp8\", \"awq\" or \"gptq\", got \"" + method + "\"");
  }
  return q;
}

}  // namespace db
