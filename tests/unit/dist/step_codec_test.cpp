// The step message rank 0 sends the tensor-parallel workers: a round trip keeps
// every field, and a damaged message is refused instead of read past its end.
#include "dist/step_codec.h"

#include <gtest/gtest.h>

#include <string>

#include "error_of.h"

namespace db::dist {
namespace {

ForwardStep sample_step() {
  ForwardStep s;
  s.copies = {{3, 7}, {4, 9}};
  s.batch.token_ids = {11, 12, 13, 14};
  s.batch.positions = {0, 1, 2, 5};
  s.batch.query_start = {0, 3, 4};
  s.batch.logits_indices = {2, 3};
  s.attn.block_size = 16;
  s.attn.context_lens = {3, 6};
  s.attn.block_tables = {{1}, {2, 5}};
  s.attn.slot_mapping = {16, 17, 18, 85};
  return s;
}

TEST(StepCodec, AForwardStepRoundTrips) {
  const ForwardStep in = sample_step();
  const ForwardStep out = decode_step(encode_step(in));
  EXPECT_EQ(out.kind, StepKind::Forward);
  EXPECT_EQ(out.copies, in.copies);
  EXPECT_EQ(out.batch.token_ids, in.batch.token_ids);
  EXPECT_EQ(out.batch.positions, in.batch.positions);
  EXPECT_EQ(out.batch.query_start, in.batch.query_start);
  EXPECT_EQ(out.batch.logits_indices, in.batch.logits_indices);
  EXPECT_EQ(out.attn.block_size, 16);
  EXPECT_EQ(out.attn.context_lens, in.attn.context_lens);
  EXPECT_EQ(out.attn.block_tables, in.attn.block_tables);
  EXPECT_EQ(out.attn.slot_mapping, in.attn.slot_mapping);
}

TEST(StepCodec, HeartbeatAndStopCarryOnlyTheirKind) {
  for (StepKind k : {StepKind::Heartbeat, StepKind::Stop}) {
    ForwardStep s = sample_step();
    s.kind = k;
    const std::vector<std::byte> bytes = encode_step(s);
    EXPECT_EQ(bytes.size(), 5u);
    const ForwardStep out = decode_step(bytes);
    EXPECT_EQ(out.kind, k);
    EXPECT_TRUE(out.batch.token_ids.empty());
  }
}

std::string error_of(const std::vector<std::byte>& bytes) {
  return test::error_of([&] { decode_step(bytes); });
}

TEST(StepCodec, EveryTruncationIsRefused) {
  const std::vector<std::byte> whole = encode_step(sample_step());
  for (size_t n = 0; n < whole.size(); ++n) {
    const std::vector<std::byte> cut(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_NE(error_of(cut).find("step message"), std::string::npos) << "cut at " << n;
  }
}

TEST(StepCodec, ExtraBytesAnUnknownKindAndAnotherVersionAreRefused) {
  std::vector<std::byte> bytes = encode_step(sample_step());
  bytes.push_back(std::byte{0});
  EXPECT_NE(error_of(bytes).find("left over"), std::string::npos);
  bytes = encode_step(sample_step());
  bytes[0] = std::byte{9};
  EXPECT_NE(error_of(bytes).find("unknown kind 9"), std::string::npos);
  bytes = encode_step(sample_step());
  bytes[1] = std::byte{kStepFormatVersion + 1};
  EXPECT_NE(error_of(bytes).find("format version " + std::to_string(kStepFormatVersion + 1)), std::string::npos);
}

TEST(StepCodec, AHugeLengthIsRefusedBeforeAllocating) {
  std::vector<std::byte> bytes = encode_step(sample_step());
  // The copies' length (after kind and version) claims 2^62 elements.
  bytes[5 + 7] = std::byte{0x40};
  EXPECT_NE(error_of(bytes).find("runs past"), std::string::npos);
}

}  // namespace
}  // namespace db::dist
