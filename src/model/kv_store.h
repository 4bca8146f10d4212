// Preallocated storage for the paged KV cache, shaped by a KVCacheShape:
//   KeyValue: per layer a K array [num_slots][k_width] and a V array [num_slots][v_width];
//   Latent:   per layer one array [num_slots][k_width]; V is the first v_width values of
//             each row, so v_layer(l) == k_layer(l) and V rows have K's stride.
// Elements are `dtype`; a Q8_0 row is kv_row_bytes() long: GGML Q8_0 blocks of
// 32 elements from the row's start (one fp16 scale, 32 int8 codes), quantized
// from that row's values alone. A slot is block_id * block_size + row; a slot's row holds
// all kv heads (or the latent) of one position. Which blocks belong to which
// sequence is decided elsewhere (block pool); this class only owns the memory
// and finds rows.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

#include "backend/device_buffer.h"
#include "kvcache/kv_cache_shape.h"
#include "tensor/dtype.h"

namespace db {

class ComputeBackend;

class KVStore {
 public:
  // dtype: F16 (default), F32, BF16 or Q8_0; anything else throws db::Error, as do an
  // invalid shape and non-positive block counts. Memory is reserved zeroed and
  // committed by the OS as it is touched; throws db::Error when it cannot be
  // reserved. `memory`: a device backend (Model::kv_memory()) whose memory holds the
  // arrays instead (zeroed, allocated at once; the addresses below are then
  // addresses in that backend's memory, for its ops only); it must outlive the store.
  KVStore(const KVCacheShape& shape, int64_t num_blocks, int block_size, DType dtype = DType::F16,
          ComputeBackend* memory = nullptr);
  KVStore(const KVStore&) = delete;
  KVStore& operator=(const KVStore&) = delete;

  const KVCacheShape& shape() const { return shape_; }
  KVLayout layout() const { return shape_.layout; }
  int n_layers() const { return shape_.n_layers; }
  int64_t num_blocks() const { return num_blocks_; }
  int block_size() const { return block_size_; }
  int64_t num_slots() const { return num_blocks_ * block_size_; }
  DType dtype() const { return dtype_; }
  // True when V has arrays of its own (KeyValue); false when V aliases K (Latent).
  bool has_v_arrays() const { return shape_.layout == KVLayout::KeyValue; }

  // Distance between consecutive slots' rows, in elements and in bytes
  // (kv_row_bytes of the elements). K rows are k_width long; V rows v_width
  // long, and for Latent they share K's stride.
  int64_t k_row_stride() const { return shape_.k_width; }
  int64_t v_row_stride() const { return has_v_arrays() ? shape_.v_width : shape_.k_width; }
  size_t k_row_nbytes() const { return k_row_nbytes_; }
  size_t v_row_nbytes() const { return v_row_nbytes_; }
  // Bytes of the whole store (Latent: the K arrays only).
  size_t nbytes() const { return static_cast<size_t>(shape_.n_layers) * layer_nbytes_; }

  // First byte of layer's K (or V) array; slot s's row starts s * k_row_nbytes()
  // (or s * v_row_nbytes()) later. Latent: v_layer(l) == k_layer(l).
  uint8_t* k_layer(int layer) { return base(layer, false); }
  uint8_t* v_layer(int layer) { return base(layer, true); }
  const uint8_t* k_layer(int layer) const { return base(layer, false); }
  const uint8_t* v_layer(int layer) const { return base(layer, true); }
  // The row of one slot (all kv heads, or the latent), bounds-checked.
  uint8_t* k_row(int layer, int64_t slot) { return k_layer(layer) + check_slot(slot) * k_row_nbytes_; }
  uint8_t* v_row(int layer, int64_t slot) { return v_layer(layer) + check_slot(slot) * v_row_nbytes_; }
  const uint8_t* k_row(int layer, int64_t slot) const { return k_layer(layer) + check_slot(slot) * k_row_nbytes_; }
  const uint8_t* v_row(int layer, int64_t slot) const { return v_layer(layer) + check_slot(slot) * v_row_nbytes_; }

  // Copies `bytes` between two places of this store (rows of whole blocks: a multiple
  // of 4 bytes when the store is in a backend's memory), in whichever memory holds it.
  void copy_bytes(uint8_t* dst, const uint8_t* src, size_t bytes);

 private:
  uint8_t* base(int layer, bool v) const;
  size_t check_slot(int64_t slot) const;

  struct FreeDeleter {
    void operator()(uint8_t* p) const;
  };
  KVCacheShape shape_;
  int64_t num_blocks_;
  int block_size_;
  DType dtype_;
  size_t k_row_nbytes_ = 0, v_row_nbytes_ = 0;  // row strides in bytes
  size_t k_array_nbytes_ = 0;                   // one layer's K array
  size_t layer_nbytes_ = 0;                     // one layer: K, then V when it has its own
  std::unique_ptr<uint8_t, FreeDeleter> data_;  // host memory, or
  ComputeBackend* memory_ = nullptr;            // the backend whose memory holds device_
  DeviceBuffer device_;
};

}  // namespace db
