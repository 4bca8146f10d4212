#include "model/checkpoint_converter.h"

#include <chrono>
#include <cstdio>

#include "io/hf_checkpoint.h"
#include "io/mapped_range.h"
#include "model/fp8_convert.h"
#include "model/int4_repack.h"
#include "util/error.h"

namespace db {

namespace {

bool converter_is_fp8(DType t) { return t == DType::F8_E4M3 || t == DType::F8_E5M2; }

// "<prefix>." of a name ending in ".weight"; empty otherwise.
std::string converter_layer_prefix(const std::string& name) {
  const std::string suffix = ".weight";
  if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return "";
  return name.substr(0, name.size() - suffix.size() + 1);
}

}  // namespace

CheckpointConverter::CheckpointConverter(const HFCheckpoint& hf, CheckpointQuant quant, std::optional<DType> target)
    : hf_(hf), quant_(quant), target_(target) {}

bool CheckpointConverter::converts(const std::string& name) const {
  if (auto t = hf_.find(name)) return converter_is_fp8(t->dtype);
  if (quant_.method != CheckpointQuantMethod::Awq && quant_.method != CheckpointQuantMethod::Gptq) return false;
  const std::string prefix = converter_layer_prefix(name);
  return !prefix.empty() && hf_.find(prefix + "qweight").has_value();
}

std::optional<ConvertedMatrix> CheckpointConverter::convert(const std::string& name) {
  if (auto w = hf_.find(name)) {
    if (!converter_is_fp8(w->dtype)) return std::nullopt;
    const std::string what = hf_.file_of(name) + ": tensor '" + name + "'";
    if (quant_.method != CheckpointQuantMethod::Fp8)
      throw Error(what + ": expected an FP8 checkpoint (config.json quantization_config.quant_method \"fp8\") for a " +
                  dtype_name(w->dtype) + " tensor, got quant_method " + quant_method_name(quant_.method));
    auto scale = hf_.find(name + "_scale_inv");
    if (!scale) throw Error(what + ": expected its block scales '" + name + "_scale_inv', got none in the checkpoint");
    ConvertedMatrix m = convert_fp8_matrix(*w, *scale, quant_.block_rows, quant_.block_cols,
                                           target_.value_or(DType::Q8_0), pool_, hf_.file_of(name), name);
    release_mapped_range(w->data, w->nbytes());  // read once: the shard's pages are not needed again
    return m;
  }
  if (!converts(name)) return std::nullopt;
  const std::string prefix = converter_layer_prefix(name);
  const std::string what = hf_.file_of(prefix + "qweight") + ": tensor '" + prefix;
  auto need = [&](const char* part) {
    auto t = hf_.find(prefix + part);
    if (!t) throw Error(what + part + "': expected beside " + prefix + "qweight, got none in the checkpoint");
    return *t;
  };
  Int4Layer layer{need("qweight"), need("qzeros"), need("scales"), hf_.find(prefix + "g_idx")};
  Int4Result r = repack_int4(quant_, layer, target_, pool_, what);
  if (r.path == Int4Path::ThroughFloats && (!target_ || *target_ == DType::Q4_1)) ++through_floats_;
  return std::move(r.matrix);
}

std::optional<TensorView> CheckpointConverter::find(const std::string& name) {
  if (auto it = held_.find(name); it != held_.end()) return it->second.matrix.view();
  const auto start = std::chrono::steady_clock::now();
  std::optional<ConvertedMatrix> m = convert(name);
  if (!m) return std::nullopt;
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ++converted_;
  ++by_type_[dtype_name(m->dtype)];
  const int64_t rows = m->shape[0];
  held_bytes_ += m->data.size();
  peak_bytes_ = std::max(peak_bytes_, held_bytes_);
  Held& h = held_.emplace(name, Held{std::move(*m), std::vector<bool>(static_cast<size_t>(rows)), rows, false})
                .first->second;
  return h.matrix.view();
}

CheckpointConverter::Held* CheckpointConverter::holder_of(const TensorView& v, int64_t* first_row) {
  const auto* p = static_cast<const uint8_t*>(v.data);
  for (auto& [name, h] : held_) {
    const uint8_t* begin = h.matrix.data.data();
    if (p < begin || p >= begin + h.matrix.data.size()) continue;
    const size_t row_bytes_h = row_bytes(h.matrix.dtype, h.matrix.shape[1]);
    *first_row = static_cast<int64_t>(static_cast<size_t>(p - begin) / row_bytes_h);
    return &h;
  }
  return nullptr;
}

void CheckpointConverter::mark_rows(const TensorView& v) {
  int64_t r0 = 0;
  Held* h = holder_of(v, &r0);
  if (h == nullptr || v.layout != TensorLayout::Rows) return;
  const int64_t n = std::min(v.rows(), h->matrix.shape[0] - r0);
  for (int64_t r = r0; r < r0 + n; ++r) {
    if (h->row_done[static_cast<size_t>(r)]) continue;
    h->row_done[static_cast<size_t>(r)] = true;
    --h->rows_left;
  }
  if (h->rows_left > 0 || h->kept) return;
  held_bytes_ -= h->matrix.data.size();
  for (auto it = held_.begin(); it != held_.end(); ++it)
    if (&it->second == h) {
      held_.erase(it);
      break;
    }
}

void CheckpointConverter::prepared(const TensorView& source, const TensorView& prepared) {
  if (prepared.data == source.data) {
    int64_t r0 = 0;
    if (Held* h = holder_of(source, &r0)) h->kept = true;
    return;
  }
  mark_rows(source);
}

void CheckpointConverter::done_with(const TensorView& source) { mark_rows(source); }

std::string CheckpointConverter::summary() const {
  const char* kind = quant_.method == CheckpointQuantMethod::Fp8    ? "FP8"
                     : quant_.method == CheckpointQuantMethod::Awq  ? "AWQ"
                     : quant_.method == CheckpointQuantMethod::Gptq ? "GPTQ"
                                                                    : "quantized";
  std::string types;
  for (const auto& [type, n] : by_type_) types += (types.empty() ? "" : ", ") + std::to_string(n) + " to " + type;
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.2f", seconds_);
  std::string line = std::string(kind) + " checkpoint: " + std::to_string(converted_) + " matrices " +
                     (quant_.method == CheckpointQuantMethod::Fp8 ? "converted" : "repacked") + " (" + types +
                     ") in " + secs + " s";
  if (through_floats_ > 0)
    line += "; " + std::to_string(through_floats_) + " through floats (inputs not in whole 32-blocks of one group)";
  return line;
}

}  // namespace db
