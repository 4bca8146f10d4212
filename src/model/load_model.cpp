#include <chrono>
#include <cstdio>
#include <filesystem>

#include "model/checkpoint_converter.h"
#include "model/deepseek_decoder.h"
#include "model/llama_decoder.h"
#include "model/model.h"
#include "model/model_source.h"
#include "model/packed_cache.h"
#include "model/registry.h"
#include "model/sharded_model.h"
#include "util/cpu_features.h"
#include "util/error.h"

namespace db {

namespace {

// The file to load for `path` under --pack: its pre-packed copy, written first if need be.
std::string packed_model_file(const std::string& path, ThreadPool* load_pool) {
  if (std::filesystem::is_directory(path))
    throw Error(path + ": --pack applies to GGUF files; a checkpoint directory is converted at every load "
                "(`deepbatch convert DIR -o OUT.gguf --pack` converts it once into a pre-packed file)");
  const auto start = std::chrono::steady_clock::now();
  const std::string copy = packed_copy(path, cpu_features().level, load_pool);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "%s: pre-packed copy %s (found or written in %.2f s)\n", path.c_str(), copy.c_str(), s);
  return copy;
}

// On rank 0 of `world`, `shard` wrapped in the ShardedModel that sends each step to
// the other ranks; elsewhere `shard` itself.
std::unique_ptr<Model> drive_from_rank0(std::unique_ptr<Model> shard, dist::Communicator& world) {
  if (world.rank() != 0) return shard;
  return std::make_unique<ShardedModel>(std::move(shard), world, world.timeout_s() / 3);
}

void require_routed_experts(const ModelSource& src, const dist::Communicator& ep) {
  const std::string& arch = src.arch().gguf_name;
  if (arch != "deepseek2")
    throw Error(src.path() + ": --expert-parallel-size " + std::to_string(ep.size()) +
                ": expert parallelism splits the routed experts of deepseek2 models; this one is " + arch);
}

void report_experts(const Model& shard, const dist::Communicator& ep) {
  const ExpertShard& held = static_cast<const DeepseekDecoder&>(shard).expert_shard();
  std::fprintf(stderr, "[deepbatch] expert parallel: rank %d of %d holds routed experts [%d, %d) of %d\n", ep.rank(),
               ep.size(), held.begin, held.end, shard.config().moe.n_experts);
}

// One rank's part of a model split across the tensor-parallel group `tp` and, for a
// deepseek2 model, its routed experts across `ep` when not null.
std::unique_ptr<Model> load_shard(std::unique_ptr<ModelSource> src, ThreadPool* load_pool, dist::Communicator& tp,
                                  dist::ShardJoin join, dist::Communicator* ep) {
  const std::string arch = src->arch().gguf_name;
  if (ep != nullptr) require_routed_experts(*src, *ep);
  if (arch != "llama" && arch != "qwen2" && arch != "deepseek2")
    throw Error(src->path() + ": --tensor-parallel-size " + std::to_string(tp.size()) + ": tensor parallelism splits " +
                "llama, qwen2 and deepseek2 models; this one is " + arch);
  if (arch != "deepseek2") return make_llama_decoder_shard(std::move(src), load_pool, tp, join);
  std::unique_ptr<Model> shard = make_deepseek_decoder_shard(std::move(src), load_pool, tp, join, ep);
  const MlaShard& held = static_cast<const DeepseekDecoder&>(*shard).tensor_shard();
  std::fprintf(stderr, "[deepbatch] tensor parallel: rank %d of %d holds attention heads [%d, %d) of %d\n", tp.rank(),
               tp.size(), held.head_begin, held.head_end, shard->config().n_heads);
  if (ep != nullptr) report_experts(*shard, *ep);
  return shard;
}

// One rank's part of a deepseek2 model whose routed experts are split across `ep`.
std::unique_ptr<Model> load_expert_shard(std::unique_ptr<ModelSource> src, ThreadPool* load_pool,
                                         dist::Communicator& ep) {
  require_routed_experts(*src, ep);
  std::unique_ptr<Model> shard = make_deepseek_decoder_expert_shard(std::move(src), load_pool, ep);
  report_experts(*shard, ep);
  return shard;
}

}  // namespace

std::unique_ptr<Model> load_model(const std::string& path, ThreadPool* load_pool, const LoadOptions& options) {
  const std::string file = options.pack ? packed_model_file(path, load_pool) : path;
  auto src = ModelSource::open(file, options);  // rejects architectures without a registry entry
  CheckpointConverter* converter = src->converter();  // owned by the source, which the model keeps
  if (converter) converter->set_pool(load_pool);
  std::unique_ptr<Model> model;
  dist::Communicator* const ep =
      options.expert_parallel != nullptr && options.expert_parallel->size() > 1 ? options.expert_parallel : nullptr;
  dist::Communicator* const tp =
      options.tensor_parallel != nullptr && options.tensor_parallel->size() > 1 ? options.tensor_parallel : nullptr;
  if (tp != nullptr)
    model = drive_from_rank0(load_shard(std::move(src), load_pool, *tp, options.tensor_parallel_join, ep),
                             options.world != nullptr ? *options.world : *tp);
  else if (ep != nullptr)
    model = drive_from_rank0(load_expert_shard(std::move(src), load_pool, *ep),
                             options.world != nullptr ? *options.world : *ep);
  else
    model = src->arch().build(std::move(src), load_pool);
  if (converter) {
    converter->set_pool(nullptr);  // the pool lives only during the load; later conversions (MTP) run inline
    std::fprintf(stderr, "%s: %s\n", path.c_str(), converter->summary().c_str());
  }
  return model;
}

}  // namespace db
