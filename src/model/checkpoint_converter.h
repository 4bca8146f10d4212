// The matrices of a quantized Hugging Face checkpoint (FP8 block-scaled, AWQ,
// GPTQ: model/checkpoint_quant.h) converted on first request into types the
// kernels compute with, and held until the loader has prepared them.
//
// Memory: a matrix is converted when the loader asks for it (ModelSource::find),
// the FP8 source's mapped pages are handed back right after (io/mapped_range.h),
// and the converted bytes are freed once the loader reports that every row was
// copied elsewhere (prepared(): repacked into panels; done_with(): read into a
// matrix of its own) and no view of them was kept. Loading layer by layer thus
// holds about one converted matrix at a time besides the model's own packed
// copies, never the whole model in a float type. A view the model keeps (the
// running ISA level does not repack that type) pins its matrix for the life of
// the converter. A matrix freed and then asked for again is converted again.
//
// Not thread-safe: called by the loading thread (the pool only converts rows).
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/checkpoint_quant.h"
#include "model/converted_matrix.h"
#include "util/thread_pool.h"

namespace db {

class HFCheckpoint;

class CheckpointConverter {
 public:
  // `target`: LoadOptions::quantize (nullopt: Q8_0 for FP8, Q4_1 for AWQ / GPTQ).
  CheckpointConverter(const HFCheckpoint& hf, CheckpointQuant quant, std::optional<DType> target);

  const CheckpointQuant& quant() const { return quant_; }
  // Rows are converted on this pool while it is set (nullptr: the calling thread).
  void set_pool(ThreadPool* pool) { pool_ = pool; }

  // The converted matrix of checkpoint tensor `name` ("...q_proj.weight"), converting
  // it now if needed; nullopt when the checkpoint stores that name in a computable
  // type (or not at all). Throws db::Error naming the file and tensor when its
  // scales, zero points or shapes are missing or wrong.
  std::optional<TensorView> find(const std::string& name);
  // True when `name` would be converted (present in a stored quantized form); converts nothing.
  bool converts(const std::string& name) const;

  // The loader copied `source` (a view of rows of a held matrix, or any other
  // tensor: then ignored) into `prepared`; when both are the same view it keeps it.
  void prepared(const TensorView& source, const TensorView& prepared);
  // The loader no longer reads `source` (rows of a held matrix) except through its own copies.
  void done_with(const TensorView& source);

  // One line for the start-up log: "FP8 checkpoint: 42 matrices converted to Q8_0 in 0.3 s".
  std::string summary() const;
  int64_t converted_count() const { return converted_; }
  size_t bytes_held() const { return held_bytes_; }
  // The most converted bytes held at once since construction.
  size_t peak_bytes_held() const { return peak_bytes_; }

 private:
  struct Held {
    ConvertedMatrix matrix;
    std::vector<bool> row_done;  // rows the loader has copied elsewhere
    int64_t rows_left = 0;
    bool kept = false;  // a view of it is in use: never freed
  };
  std::optional<ConvertedMatrix> convert(const std::string& name);
  Held* holder_of(const TensorView& v, int64_t* first_row);
  void mark_rows(const TensorView& v);

  const HFCheckpoint& hf_;
  CheckpointQuant quant_;
  std::optional<DType> target_;
  ThreadPool* pool_ = nullptr;
  std::map<std::string, Held> held_;
  std::map<std::string, int64_t> by_type_;  // "Q8_0" -> matrices converted to it
  int64_t converted_ = 0, through_floats_ = 0;
  double seconds_ = 0;
  size_t held_bytes_ = 0, peak_bytes_ = 0;
};

}  // namespace db
