#include "kvcache/block_hash.h"

#include <gtest/gtest.h>

#include <cstring>

#include "kv_test_util.h"

namespace db {
namespace {

using kvtest::seq;

TEST(BlockHash, DeterministicAndSensitiveToEveryPart) {
  const auto t = seq(10, 16);
  const BlockHash base = xxh3_block_hash(kRootBlockHash, t, "");
  EXPECT_EQ(base, xxh3_block_hash(kRootBlockHash, t, ""));
  EXPECT_NE(base, xxh3_block_hash(BlockHash{1}, t, ""));
  auto t2 = t;
  t2.back() += 1;
  EXPECT_NE(base, xxh3_block_hash(kRootBlockHash, t2, ""));
  EXPECT_NE(base, xxh3_block_hash(kRootBlockHash, t, "lora-a"));
  EXPECT_NE(xxh3_block_hash(kRootBlockHash, t, "lora-a"), xxh3_block_hash(kRootBlockHash, t, "lora-b"));
}

TEST(BlockHash, PartsAreLengthDelimited) {
  // Token 7 as bytes in `extra` must not hash like token 7 among the tokens.
  const int32_t seven = 7;
  std::string bytes(sizeof(seven), '\0');
  std::memcpy(bytes.data(), &seven, sizeof(seven));
  const std::vector<int32_t> one{7};
  EXPECT_NE(xxh3_block_hash(kRootBlockHash, one, ""), xxh3_block_hash(kRootBlockHash, {}, bytes));
}

TEST(BlockHash, LargeBlocksHashEveryToken) {
  auto t = seq(0, 256);  // past the on-stack buffer
  const BlockHash a = xxh3_block_hash(kRootBlockHash, t, "salt");
  EXPECT_EQ(a, xxh3_block_hash(kRootBlockHash, t, "salt"));
  t[255] = -1;
  EXPECT_NE(a, xxh3_block_hash(kRootBlockHash, t, "salt"));
}

TEST(BlockHash, ExtendChainsFullBlocksOnly) {
  const auto t = seq(0, 10);
  std::vector<BlockHash> hashes;
  extend_block_hashes(hashes, t, 4, "x");
  ASSERT_EQ(hashes.size(), 2u);  // tokens 8, 9 make a partial block
  const BlockHash h0 = xxh3_block_hash(kRootBlockHash, std::span(t).subspan(0, 4), "x");
  EXPECT_EQ(hashes[0], h0);
  EXPECT_EQ(hashes[1], xxh3_block_hash(h0, std::span(t).subspan(4, 4), "x"));

  // Extending block by block gives the same chain as all at once.
  std::vector<BlockHash> incremental;
  extend_block_hashes(incremental, std::span(t).first(4), 4, "x");
  extend_block_hashes(incremental, std::span(t).first(7), 4, "x");
  EXPECT_EQ(incremental.size(), 1u);
  extend_block_hashes(incremental, t, 4, "x");
  EXPECT_EQ(incremental, hashes);
}

TEST(BlockHash, SameTokensUnderDifferentParentsDiffer) {
  const auto a = kvtest::concat(seq(0, 4), seq(100, 4));
  const auto b = kvtest::concat(seq(50, 4), seq(100, 4));
  std::vector<BlockHash> ha, hb;
  extend_block_hashes(ha, a, 4, "");
  extend_block_hashes(hb, b, 4, "");
  EXPECT_NE(ha[1], hb[1]);
}

}  // namespace
}  // namespace db
