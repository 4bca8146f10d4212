// What rank 0 of a tensor-parallel group sends the other ranks for each model step:
// the flat Batch and AttentionMetadata the runner built, and the copy-on-write KV
// block copies to apply first. Sampling, stop conditions and sequence state stay on
// rank 0; the other ranks need nothing else to run their shard of the forward pass.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "dist/communicator.h"
#include "kvcache/block_copy.h"
#include "model/batch.h"

namespace db::dist {

enum class StepKind : uint8_t {
  Forward = 1,    // apply `copies`, then run the forward pass of `batch` / `attn`
  Heartbeat = 2,  // rank 0 is idle and alive: every rank answers with heartbeat_round
  Stop = 3,       // the job is over: leave the loop
};

struct ForwardStep {
  StepKind kind = StepKind::Forward;
  std::vector<BlockCopy> copies;
  Batch batch;
  AttentionMetadata attn;
};

// Format version written in every message; a message of another version is refused.
// 2: every rank answers a Heartbeat.
inline constexpr uint32_t kStepFormatVersion = 2;

// The message of `step`: kind, version, then each array as a length and its elements.
std::vector<std::byte> encode_step(const ForwardStep& step);
// The step of a message encode_step wrote. Throws db::Error for an unknown kind,
// another format version, or a length that runs past the message or leaves bytes
// over (every length is checked before it is read).
ForwardStep decode_step(const std::vector<std::byte>& bytes);

// Every rank's answer to a Heartbeat step, on rank 0 and the workers alike: a
// one-byte all_gather. The broadcast of a Heartbeat alone may complete on rank 0
// without a worker; this round cannot, so a rank dead, stopped or lost while the
// engine is idle fails it with CollectiveError (naming the rank) on every live rank
// within the collective timeout.
void heartbeat_round(Communicator& group);

}  // namespace db::dist
