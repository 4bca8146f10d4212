#include "model/kv_store.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "backend/compute_backend.h"
#include "tensor/kv_row_bytes.h"
#include "util/error.h"

namespace db {

KVStore::KVStore(const KVCacheShape& shape, int64_t num_blocks, int block_size, DType dtype, ComputeBackend* memory)
    : shape_(shape), num_blocks_(num_blocks), block_size_(block_size), dtype_(dtype), memory_(memory) {
  check_kv_dtype(dtype);
  shape.validate();
  if (num_blocks <= 0 || block_size <= 0)
    throw Error("KV store dimensions must be positive: blocks " + std::to_string(num_blocks) + ", block size " +
                std::to_string(block_size));
  const size_t slots = static_cast<size_t>(num_slots());
  k_row_nbytes_ = kv_row_bytes(dtype, k_row_stride());
  v_row_nbytes_ = kv_row_bytes(dtype, v_row_stride());
  k_array_nbytes_ = k_row_nbytes_ * slots;
  layer_nbytes_ = k_array_nbytes_ + (has_v_arrays() ? v_row_nbytes_ * slots : 0);
  const size_t total = nbytes();
  if (memory_ != nullptr) {
    memory_->grow(device_, static_cast<int64_t>((total + sizeof(float) - 1) / sizeof(float)));
    return;
  }
  data_.reset(static_cast<uint8_t*>(std::calloc(total, 1)));
  if (!data_)
    throw Error("cannot reserve " + std::to_string(total) + " bytes for the KV cache (" + shape.describe() + ", " +
                std::to_string(num_blocks) + " blocks of " + std::to_string(block_size) +
                " tokens); lower the KV cache size");
}

void KVStore::FreeDeleter::operator()(uint8_t* p) const { std::free(p); }

void KVStore::copy_bytes(uint8_t* dst, const uint8_t* src, size_t bytes) {
  if (memory_ == nullptr) {
    std::memcpy(dst, src, bytes);
    return;
  }
  DB_CHECK(bytes % sizeof(float) == 0 && (dst - src) % sizeof(float) == 0,
           "a KV copy in backend memory must move whole 4-byte words");
  const auto n = static_cast<int64_t>(bytes / sizeof(float));
  memory_->copy_rows(reinterpret_cast<const float*>(src), n, reinterpret_cast<float*>(dst), n, 1, n);
}

uint8_t* KVStore::base(int layer, bool v) const {
  DB_CHECK(layer >= 0 && layer < shape_.n_layers, "KV layer " + std::to_string(layer) + " out of range");
  uint8_t* const start = memory_ != nullptr ? reinterpret_cast<uint8_t*>(device_.data()) : data_.get();
  uint8_t* k = start + static_cast<size_t>(layer) * layer_nbytes_;
  return v && has_v_arrays() ? k + k_array_nbytes_ : k;
}

size_t KVStore::check_slot(int64_t slot) const {
  DB_CHECK(slot >= 0 && slot < num_slots(), "KV slot " + std::to_string(slot) + " out of range");
  return static_cast<size_t>(slot);
}

}  // namespace db
