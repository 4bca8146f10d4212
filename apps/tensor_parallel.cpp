#include "tensor_parallel.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "dist/numa_placement.h"
#include "dist/parallel_groups.h"
#include "dist/world.h"
#include "engine/engine_core.h"
#include "model/sharded_model.h"
#include "runner/tensor_parallel_worker.h"
#include "util/error.h"

namespace db::cli {

namespace {

// The KV pool's block count every rank can hold: the minimum over the group of
// what each rank's budget holds for its own KV heads.
int32_t agreed_kv_blocks(const Model& model, const EngineConfig& cfg, dist::Communicator& group) {
  if (cfg.speculative.enabled())
    throw Error("--speculative " + cfg.speculative.method +
                ": speculative decoding does not run with --tensor-parallel-size above 1");
  // Without --kv-cache-memory a process takes a share of the available memory; the ranks
  // on one machine draw on the same memory, so each takes its part of that share.
  EngineConfig budget = cfg;
  if (budget.kv_cache_memory == 0) budget.kv_cache_fraction /= dist::launched_local_rank().size;
  const int32_t mine = engine_num_kv_blocks(model, budget);
  std::vector<int32_t> all(static_cast<size_t>(group.size()));
  dist::all_gather_as<int32_t>(group, std::span<const int32_t>(&mine, 1), all);
  return *std::min_element(all.begin(), all.end());
}

}  // namespace

std::unique_ptr<dist::Communicator> open_tensor_parallel(const dist::ParallelConfig& p) {
  if (p.ranks() <= 1) return nullptr;
  dist::WorldOptions w;
  w.collective_timeout_s = p.collective_timeout_s;
  return std::make_unique<dist::ParallelGroups>(dist::open_world(w), p.tensor_parallel_size, p.expert_parallel_size);
}

LoadOptions shard_load_options(const ModelOptions& model, const dist::ParallelConfig& p, dist::Communicator* group) {
  LoadOptions o = load_options(model);
  o.tensor_parallel_join = dist::shard_join_from_name(p.tensor_parallel_join);
  if (group == nullptr) return o;
  if (o.device != Device::Cpu)
    throw Error(std::string("--device ") + device_name(o.device) +
                " runs the model in one process: tensor and expert parallelism (--tp, --ep) are CPU-only");
  auto* groups = dynamic_cast<dist::ParallelGroups*>(group);
  DB_CHECK(groups != nullptr, "a split model loads with the groups of open_tensor_parallel");
  o.tensor_parallel = groups->tensor();
  o.expert_parallel = groups->expert();
  o.world = groups;
  return o;
}

void agree_kv_pool_on_rank0(Model& model, const dist::ParallelConfig& p, EngineConfig& cfg, dist::Communicator& group) {
  auto* sharded = dynamic_cast<ShardedModel*>(&model);
  DB_CHECK(sharded != nullptr, "rank 0 of a tensor-parallel job runs a ShardedModel");
  int32_t blocks = 0;
  sharded->exclusive([&] { blocks = agreed_kv_blocks(model, cfg, group); });
  cfg.kv_cache_memory = int64_t{blocks} * static_cast<int64_t>(engine_kv_cache_spec(model, cfg).bytes_per_block());
  const bool both = p.expert_parallel_size > 1 && p.tensor_parallel_size > 1;
  std::fprintf(stderr, "[deepbatch] %s parallel: %d ranks; KV pool of %d blocks on every rank\n",
               both ? "tensor and expert" : p.expert_parallel_size > 1 ? "expert" : "tensor", group.size(), blocks);
}

int run_worker_rank(const ModelOptions& model, const dist::ParallelConfig& p, const EngineConfig& cfg,
                    dist::Communicator& group) {
  std::unique_ptr<Model> shard;
  {
    ThreadPool load_pool(model.threads != 0 ? model.threads : resolve_threads(0));
    shard = load_model(model.model, &load_pool, shard_load_options(model, p, &group));
  }
  const int32_t blocks = agreed_kv_blocks(*shard, cfg, group);
  KVStore kv(shard->kv_cache_shape(), blocks, cfg.block_size, cfg.kv_dtype);
  ThreadPool pool(resolve_threads(cfg.threads));
  run_tensor_parallel_worker(*shard, kv, pool, group);
  return 0;
}

}  // namespace db::cli
