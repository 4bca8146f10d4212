// The loop of ranks 1..T-1 of a tensor-parallel job: receive each step rank 0's
// ShardedModel sends (model/sharded_model.h), apply its KV block copies and run this
// rank's shard of the forward pass (its all-reduces meet the other ranks'), until
// rank 0 sends Stop. Logits are not computed here: rank 0 samples.
#pragma once
#include "dist/communicator.h"
#include "model/kv_store.h"
#include "model/model.h"
#include "util/thread_pool.h"

namespace db {

// Returns when rank 0 sends Stop. A db::Error from the shard's forward (a batch its
// checks refuse) is reported on stderr and the loop goes on: rank 0 ran the same
// checks on the same step before any collective and failed it the same way. A
// CollectiveError (rank 0 or another rank lost) is reported and ends the job
// through Communicator::abort; an undecodable message does too.
void run_tensor_parallel_worker(Model& shard, KVStore& kv, ThreadPool& pool, dist::Communicator& group);

}  // namespace db
