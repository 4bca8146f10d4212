// --numa replicate: a copy of the weights the matmuls read on each node of the
// NUMA node layout (util/numa_nodes.h), so that every pool thread streams its
// own node's memory. Slot 0 reads the original bytes (moved to slot 0's node
// where the kernel can move them); slot k > 0 reads copy k, allocated with node
// k's memory preferred, so the copy's first touch places it there.
//
// The contract: matmul() and its kin (kernels/matmul.h: grouped, stacked, the
// fused gate, so the MoE experts' products too) translate each product's
// weight pointer with local_weights() once per chunk of work, on the thread
// that runs the chunk. A product not wholly inside one replicated range reads
// the original. Copies are made once, never written, and hold the original's
// bytes, so a product's result does not depend on which thread computed which
// rows. A WeightReplicas registers its ranges when built and withdraws them
// when destroyed; both happen while no product runs (at load and unload).
// Not replicated: the token embedding's row lookups (one row per token) and
// small f32 vectors (norms, the MoE router); the KV cache, whose rows each
// sequence writes once, stays where it is first touched.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace db::kernels {

struct WeightRange {
  const uint8_t* data = nullptr;
  size_t bytes = 0;
};

class WeightReplicas {
 public:
  WeightReplicas();  // none
  // Copies of `ranges` (merged where they overlap or touch) for slots 1.. of
  // `memory_nodes` (the node of each slot, slot 0's first), each range's copy at
  // the same offset within a page as the original. Nothing for fewer than two
  // slots. Throws db::Error when the kernel refuses a copy's memory policy, and
  // std::bad_alloc when the memory is not there.
  WeightReplicas(std::vector<WeightRange> ranges, const std::vector<int>& memory_nodes);
  ~WeightReplicas();
  WeightReplicas(WeightReplicas&&) noexcept;
  WeightReplicas& operator=(WeightReplicas&&) noexcept;

  int slots() const;                // copies plus the original; 0 when none
  size_t bytes_per_copy() const;    // the replicated bytes (merged ranges)
  size_t ranges() const;            // merged ranges
  size_t originals_not_moved() const;  // ranges the kernel would not move to slot 0's node

  struct Table;  // the merged ranges and the copies (weight_replicas.cpp)

 private:
  std::unique_ptr<Table> table_;
};

// The calling thread's copy of the `bytes` weight bytes at p: p itself on slot 0
// (util/numa_nodes.h) or when [p, p + bytes) is not wholly inside one replicated range.
const uint8_t* local_weights(const uint8_t* p, size_t bytes);
// The same for `slot`, whichever thread asks.
const uint8_t* weights_of_slot(const uint8_t* p, size_t bytes, int slot);

// Every replicated range with its copy for slot `slot` (>= 1), over the live
// WeightReplicas: for checks.
struct ReplicatedRange {
  const uint8_t* original;
  const uint8_t* copy;
  size_t bytes;
};
std::vector<ReplicatedRange> replicated_ranges(int slot);

}  // namespace db::kernels
