#include "kvcache/block_hash.h"

#include <xxhash.h>

#include <array>
#include <cstring>

#include "util/error.h"

namespace db {

BlockHash xxh3_block_hash(BlockHash parent, std::span<const int32_t> tokens, std::string_view extra) {
  // One contiguous message: parent hash, token count, extra length, tokens, extra bytes.
  const uint64_t header[3] = {parent.value, static_cast<uint64_t>(tokens.size()), static_cast<uint64_t>(extra.size())};
  const size_t total = sizeof(header) + tokens.size_bytes() + extra.size();
  std::array<unsigned char, 512> small;
  std::vector<unsigned char> large;
  unsigned char* buf = small.data();
  if (total > small.size()) {
    large.resize(total);
    buf = large.data();
  }
  std::memcpy(buf, header, sizeof(header));
  if (!tokens.empty()) std::memcpy(buf + sizeof(header), tokens.data(), tokens.size_bytes());
  if (!extra.empty()) std::memcpy(buf + sizeof(header) + tokens.size_bytes(), extra.data(), extra.size());
  return BlockHash{XXH3_64bits(buf, total)};
}

void extend_block_hashes(std::vector<BlockHash>& hashes, std::span<const int32_t> tokens, int32_t block_size,
                         std::string_view extra, BlockHashFn hash_fn) {
  DB_CHECK(block_size > 0, "block size must be positive");
  const size_t num_full = tokens.size() / static_cast<size_t>(block_size);
  while (hashes.size() < num_full) {
    const BlockHash parent = hashes.empty() ? kRootBlockHash : hashes.back();
    const size_t start = hashes.size() * static_cast<size_t>(block_size);
    hashes.push_back(hash_fn(parent, tokens.subspan(start, static_cast<size_t>(block_size)), extra));
  }
}

}  // namespace db
