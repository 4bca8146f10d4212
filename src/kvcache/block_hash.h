// Chained hashes that name full KV blocks for prefix caching.
//
//   hash(block i) = H(hash(block i-1), tokens of block i, extra keys)   (block -1's hash = kRootBlockHash)
//
// Equal hashes only make two blocks candidates for sharing: the block pool keeps
// each cached block's tokens, extra keys and parent block and compares them on a
// hit, so a hash collision can cost a cache miss but never a wrong reuse.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace db {

struct BlockHash {
  uint64_t value = 0;  // 64-bit chained hash
  friend bool operator==(const BlockHash&, const BlockHash&) = default;
};

// The parent hash of a sequence's first block.
inline constexpr BlockHash kRootBlockHash{0x9e3779b97f4a7c15ull};

// Bytes that must also match for two blocks to be shared: a LoRA adapter name, a
// cache salt, multimodal input ids... Serialized by the caller; empty = none.
struct BlockExtraKeys {
  std::string bytes;  // mixed into every block hash of the request and compared on a hit
  friend bool operator==(const BlockExtraKeys&, const BlockExtraKeys&) = default;
};

// H(parent, tokens, extra). Replaceable (e.g. by tests forcing collisions).
using BlockHashFn = BlockHash (*)(BlockHash parent, std::span<const int32_t> tokens, std::string_view extra);

// XXH3-64 over (parent hash, token ids, extra bytes), each part length-delimited.
BlockHash xxh3_block_hash(BlockHash parent, std::span<const int32_t> tokens, std::string_view extra);

// Appends to `hashes` the hashes of the full blocks of `tokens` (block_size tokens
// each) that it does not hold yet: blocks hashes.size() .. tokens.size()/block_size - 1.
void extend_block_hashes(std::vector<BlockHash>& hashes, std::span<const int32_t> tokens, int32_t block_size,
                         std::string_view extra, BlockHashFn hash_fn = xxh3_block_hash);

}  // namespace db
