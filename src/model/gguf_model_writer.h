// A GGUF model file written tensor by tensor, each weight matrix the loaders
// multiply by whole stored pre-packed for an ISA level when one is given and
// the level prefers its type packed (model/gguf_pack.h says which), the rest
// as rows. Both `deepbatch convert` paths write through it: a GGUF file
// repacked (pack_gguf) and a Hugging Face checkpoint converted
// (model/checkpoint_gguf.h).
//
// Use: add the metadata through metadata(), declare every tensor (its name
// and rank fix the header's size), then give each tensor's bytes in
// declaration order. A tensor's type and shape are those of the bytes given,
// so a converter may learn them as it goes. Each tensor is written as it
// arrives (the writer holds one chunk of packed rows at a time); the header
// is written last. The file is written
// under "<out_path>.tmp" and renamed by finish(): a conversion that fails
// never leaves a file that looks complete.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "io/gguf_writer.h"
#include "util/cpu_features.h"
#include "util/thread_pool.h"

namespace db {

class GgufModelWriter {
 public:
  // `level`: pack for this ISA level (the file then records it and
  // kPanelLayoutVersion); nullopt: every tensor as rows, a file any GGUF
  // reader takes.
  // `chunk_bytes`: source rows written (and packed) at a time, rounded down to
  // whole panel groups (at least one).
  GgufModelWriter(std::string out_path, std::optional<IsaLevel> level, ThreadPool* pool,
                  int64_t chunk_bytes = int64_t{64} << 20);
  ~GgufModelWriter();  // removes the temporary file unless finish() succeeded
  GgufModelWriter(const GgufModelWriter&) = delete;
  GgufModelWriter& operator=(const GgufModelWriter&) = delete;

  // Metadata keys; before the first write().
  GGUFWriter& metadata() { return w_; }
  // A tensor of `rank` dimensions to come; `parts` > 1: a stack {parts, rows,
  // cols} whose matrices are given one by one. Returns its index for write().
  // Before the first write().
  size_t declare(const std::string& name, size_t rank, int64_t parts = 1);
  // True if a tensor of this name, type and rank would be stored pre-packed.
  bool would_pack(const std::string& name, DType dtype, size_t rank) const;

  // The bytes of tensor `index` (all of it, a stack too, in Rows layout), or
  // of matrix `part` of a stack declared with parts > 1 ({rows, cols}).
  // Tensors and parts come in order, the parts of a stack all of one type and
  // shape. They are written (and packed) chunk_bytes of rows at a time;
  // `release_mapped`: t lies in a read-only file mapping, whose pages are
  // handed back as each chunk is written (io/mapped_range.h; never for heap
  // memory). Throws db::Error naming the tensor when the rank, order, type or
  // shape is not the declared or first one, or naming the file when writing fails.
  void write(size_t index, const TensorView& t, int64_t part = 0, bool release_mapped = false);

  struct Report {
    int64_t packed = 0;  // tensors stored pre-packed (a stack counts once)
    int64_t rows = 0;    // tensors stored as rows
    uint64_t bytes = 0;  // size of the file
  };
  // Writes the header, closes the file and gives it its name.
  Report finish();

 private:
  struct Declared {
    std::string name;
    size_t rank;
    int64_t parts;
  };
  struct Current {
    DType dtype = DType::F32;
    std::vector<int64_t> part_shape;
    bool packed = false;
    uint64_t offset = 0;      // in the data section
    uint64_t part_bytes = 0;  // bytes of one part
    int64_t next_part = 0;
  };
  void begin();  // fixes the header's size on the first write
  void write_at(uint64_t offset, const void* p, size_t n);

  std::string path_, tmp_path_;
  std::optional<IsaLevel> level_;
  ThreadPool* pool_;
  int64_t chunk_bytes_;
  GGUFWriter w_;
  std::vector<Declared> declared_;
  Current cur_;
  size_t next_ = 0;         // the tensor being written (or next to be)
  uint64_t header_size_ = 0;
  bool begun_ = false, finished_ = false;
  int fd_ = -1;
  Report report_;
};

}  // namespace db
