// Launching a command's model across the ranks of a tensor-parallel mpirun job:
// rank 0 runs the command (its model is a ShardedModel, model/sharded_model.h), the
// other ranks load their shard and run the worker loop (runner/tensor_parallel_worker.h).
#pragma once
#include <memory>

#include "cli_options.h"
#include "dist/communicator.h"
#include "dist/parallel_config.h"
#include "engine/engine.h"
#include "model/model.h"

namespace db::cli {

// The job's group when it has several ranks (sizes already checked by
// check_parallel_options), with its tensor and expert groups (dist::ParallelGroups);
// null for one process. It must outlive every model loaded with it.
std::unique_ptr<dist::Communicator> open_tensor_parallel(const dist::ParallelConfig& p);

// The load options of `model` that load this rank's shard (joined as p says) when
// `group` (open_tensor_parallel's) is not null.
LoadOptions shard_load_options(const ModelOptions& model, const dist::ParallelConfig& p, dist::Communicator* group);

// Rank 0, once its model is loaded: agrees with the workers on the KV pool's block
// count, the smallest any rank's KV budget holds (each rank takes cfg's budget for
// its own KV heads), and fixes cfg.kv_cache_memory to that many of rank 0's blocks.
// Throws db::Error for speculative decoding, which a split model does not run.
// Logs the split (tensor or expert parallel, as p says) and the pool.
void agree_kv_pool_on_rank0(Model& model, const dist::ParallelConfig& p, EngineConfig& cfg, dist::Communicator& group);

// Ranks above 0: loads the shard, agrees on the KV pool as rank 0 does, and runs the
// worker loop until rank 0 stops it. Returns the exit code.
int run_worker_rank(const ModelOptions& model, const dist::ParallelConfig& p, const EngineConfig& cfg,
                    dist::Communicator& group);

}  // namespace db::cli
