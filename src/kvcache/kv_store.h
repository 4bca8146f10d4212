// Preallocated storage for the paged KV cache: per layer one K and one V array
// laid out [num_blocks][block_size][n_kv_heads][head_dim] in `dtype`. A slot is
// block_id * block_size + row; a slot's row holds all kv heads of one position.
// Which blocks belong to which sequence is decided elsewhere (block pool); this
// class only owns the memory and finds rows.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

#include "tensor/dtype.h"

namespace db {

class KVStore {
 public:
  // dtype: F16 (default), F32 or BF16; anything else throws db::Error. Memory is
  // reserved zeroed and committed by the OS as it is touched; throws db::Error
  // when it cannot be reserved.
  KVStore(int n_layers, int n_kv_heads, int head_dim, int64_t num_blocks, int block_size, DType dtype = DType::F16);
  KVStore(const KVStore&) = delete;
  KVStore& operator=(const KVStore&) = delete;

  // Bytes one block takes over all layers, K and V together (for sizing a pool from a budget).
  static size_t block_nbytes(int n_layers, int n_kv_heads, int head_dim, int block_size, DType dtype);

  int n_layers() const { return n_layers_; }
  int n_kv_heads() const { return n_kv_heads_; }
  int head_dim() const { return head_dim_; }
  int64_t num_blocks() const { return num_blocks_; }
  int block_size() const { return block_size_; }
  int64_t num_slots() const { return num_blocks_ * block_size_; }
  DType dtype() const { return dtype_; }
  // Bytes of one slot's row (n_kv_heads * head_dim elements).
  size_t row_nbytes() const { return row_nbytes_; }
  // Bytes of the whole store.
  size_t nbytes() const { return 2 * static_cast<size_t>(n_layers_) * layer_nbytes_; }

  // First byte of layer's K (or V) array; slot s's row starts s * row_nbytes() later.
  uint8_t* k_layer(int layer) { return base(layer, 0); }
  uint8_t* v_layer(int layer) { return base(layer, 1); }
  const uint8_t* k_layer(int layer) const { return base(layer, 0); }
  const uint8_t* v_layer(int layer) const { return base(layer, 1); }
  // The row of one slot (all kv heads), bounds-checked.
  uint8_t* k_row(int layer, int64_t slot) { return k_layer(layer) + row_offset(slot); }
  uint8_t* v_row(int layer, int64_t slot) { return v_layer(layer) + row_offset(slot); }
  const uint8_t* k_row(int layer, int64_t slot) const { return k_layer(layer) + row_offset(slot); }
  const uint8_t* v_row(int layer, int64_t slot) const { return v_layer(layer) + row_offset(slot); }

 private:
  uint8_t* base(int layer, int which) const;
  size_t row_offset(int64_t slot) const;

  struct FreeDeleter {
    void operator()(uint8_t* p) const;
  };
  int n_layers_, n_kv_heads_, head_dim_;
  int64_t num_blocks_;
  int block_size_;
  DType dtype_;
  size_t row_nbytes_ = 0;    // one slot, all kv heads
  size_t layer_nbytes_ = 0;  // one layer's K (or V)
  std::unique_ptr<uint8_t, FreeDeleter> data_;
};

}  // namespace db
