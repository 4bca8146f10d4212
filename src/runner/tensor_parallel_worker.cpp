#include "runner/tensor_parallel_worker.h"

#include <cstdio>

#include "dist/step_codec.h"
#include "runner/kv_block_copy.h"

namespace db {

namespace {

[[noreturn]] void give_up(dist::Communicator& group, const char* what, const std::exception& e) {
  std::fprintf(stderr, "deepbatch: error: rank %d of %d %s: %s\n", group.rank(), group.size(), what, e.what());
  group.abort(1);
}

}  // namespace

void run_tensor_parallel_worker(Model& shard, KVStore& kv, ThreadPool& pool, dist::Communicator& group) {
  std::vector<std::byte> bytes;
  std::vector<float> logits;
  for (;;) {
    dist::ForwardStep step;
    try {
      group.broadcast(bytes, 0);
      step = dist::decode_step(bytes);
    } catch (const dist::CollectiveError& e) {
      give_up(group, "lost rank 0 while waiting for the next step", e);
    } catch (const Error& e) {
      give_up(group, "received a step it cannot read", e);
    }
    if (step.kind == dist::StepKind::Stop) return;
    if (step.kind == dist::StepKind::Heartbeat) {
      try {
        dist::heartbeat_round(group);
      } catch (const dist::CollectiveError& e) {
        give_up(group, "lost another rank while idle", e);
      }
      continue;
    }
    step.batch.logits_indices.clear();  // rank 0 computes the logits
    try {
      copy_kv_blocks(kv, step.copies);
      shard.forward(step.batch, step.attn, kv, pool, logits);
    } catch (const dist::CollectiveError& e) {
      give_up(group, "lost another rank in a step", e);
    } catch (const Error& e) {
      std::fprintf(stderr, "deepbatch: rank %d of %d: step refused (rank 0 refuses it too): %s\n", group.rank(),
                   group.size(), e.what());
    }
  }
}

}  // namespace db
