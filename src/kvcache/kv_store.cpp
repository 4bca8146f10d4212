#include "kvcache/kv_store.h"

#include <cstdlib>
#include <string>

#include "util/error.h"

namespace db {

namespace {
void check_dtype(DType t) {
  if (t != DType::F16 && t != DType::F32 && t != DType::BF16)
    throw Error("KV cache dtype must be F16, F32 or BF16, got " + dtype_name(t));
}
}  // namespace

size_t KVStore::block_nbytes(int n_layers, int n_kv_heads, int head_dim, int block_size, DType dtype) {
  check_dtype(dtype);
  return 2 * static_cast<size_t>(n_layers) * static_cast<size_t>(block_size) * static_cast<size_t>(n_kv_heads) *
         static_cast<size_t>(head_dim) * block_bytes(dtype);
}

KVStore::KVStore(int n_layers, int n_kv_heads, int head_dim, int64_t num_blocks, int block_size, DType dtype)
    : n_layers_(n_layers),
      n_kv_heads_(n_kv_heads),
      head_dim_(head_dim),
      num_blocks_(num_blocks),
      block_size_(block_size),
      dtype_(dtype) {
  check_dtype(dtype);
  if (n_layers <= 0 || n_kv_heads <= 0 || head_dim <= 0 || num_blocks <= 0 || block_size <= 0)
    throw Error("KV store dimensions must be positive: layers " + std::to_string(n_layers) + ", kv heads " +
                std::to_string(n_kv_heads) + ", head dim " + std::to_string(head_dim) + ", blocks " +
                std::to_string(num_blocks) + ", block size " + std::to_string(block_size));
  row_nbytes_ = static_cast<size_t>(n_kv_heads) * static_cast<size_t>(head_dim) * block_bytes(dtype);
  layer_nbytes_ = row_nbytes_ * static_cast<size_t>(num_blocks) * static_cast<size_t>(block_size);
  const size_t total = nbytes();
  data_.reset(static_cast<uint8_t*>(std::calloc(total, 1)));
  if (!data_)
    throw Error("cannot reserve " + std::to_string(total) + " bytes for the KV cache (" + std::to_string(num_blocks) +
                " blocks of " + std::to_string(block_size) + " tokens); lower the KV cache size");
}

void KVStore::FreeDeleter::operator()(uint8_t* p) const { std::free(p); }

uint8_t* KVStore::base(int layer, int which) const {
  DB_CHECK(layer >= 0 && layer < n_layers_, "KV layer " + std::to_string(layer) + " out of range");
  return data_.get() + (2 * static_cast<size_t>(layer) + static_cast<size_t>(which)) * layer_nbytes_;
}

size_t KVStore::row_offset(int64_t slot) const {
  DB_CHECK(slot >= 0 && slot < num_slots(), "KV slot " + std::to_string(slot) + " out of range");
  return static_cast<size_t>(slot) * row_nbytes_;
}

}  // namespace db
