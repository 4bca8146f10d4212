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

// One rank's part of a model split across the tensor-parallel group `tp`; on rank 0
// wrapped in the ShardedModel that sends each step to the others.
std::unique_ptr<Model> load_shard(std::unique_ptr<ModelSource> src, ThreadPool* load_pool, dist::Communicator& tp,
                                  dist::ShardJoin join) {
  const std::string& arch = src->arch().gguf_name;
  if (arch != "llama" && arch != "qwen2")
    throw Error(src->path() + ": --tensor-parallel-size " + std::to_string(tp.size()) + ": tensor parallelism splits " +
                "llama and qwen2 models; this one is " + arch);
  std::unique_ptr<Model> shard = make_llama_decoder_shard(std::move(src), load_pool, tp, join);
  if (tp.rank() != 0) return shard;
  return std::make_unique<ShardedModel>(std::move(shard), tp, tp.timeout_s() / 3);
}

// One rank's part of a deepseek2 model whose routed experts are split across `ep`;
// on rank 0 wrapped in the ShardedModel that sends each step to the others.
std::unique_ptr<Model> load_expert_shard(std::unique_ptr<ModelSource> src, ThreadPool* load_pool,
                                         dist::Communicator& ep) {
  const std::string& arch = src->arch().gguf_name;
  if (arch != "deepseek2")
    throw Error(src->path() + ": --expert-parallel-size " + std::to_string(ep.size()) +
                ": expert parallelism splits the routed experts of deepseek2 models; this one is " + arch);
  std::unique_ptr<Model> shard = make_deepseek_decoder_expert_shard(std::move(src), load_pool, ep);
  const ExpertShard& held = static_cast<const DeepseekDecoder&>(*shard).expert_shard();
  std::fprintf(stderr, "[deepbatch] expert parallel: rank %d of %d holds routed experts [%d, %d) of %d\n", ep.rank(),
               ep.size(), held.begin, held.end, shard->config().moe.n_experts);
  if (ep.rank() != 0) return shard;
  return std::make_unique<ShardedModel>(std::move(shard), ep, ep.timeout_s() / 3);
}

}  // namespace

std::unique_ptr<Model> load_model(const std::string& path, ThreadPool* load_pool, const LoadOptions& options) {
  const std::string file = options.pack ? packed_model_file(path, load_pool) : path;
  auto src = ModelSource::open(file, options);  // rejects architectures without a registry entry
  CheckpointConverter* converter = src->converter();  // owned by the source, which the model keeps
  if (converter) converter->set_pool(load_pool);
  std::unique_ptr<Model> model;
  const bool split_experts = options.expert_parallel != nullptr && options.expert_parallel->size() > 1;
  if (split_experts && options.tensor_parallel != nullptr && options.tensor_parallel->size() > 1)
    throw Error("--expert-parallel-size with --tensor-parallel-size above 1 is not available yet: use one of them");
  if (split_experts)
    model = load_expert_shard(std::move(src), load_pool, *options.expert_parallel);
  else if (options.tensor_parallel != nullptr && options.tensor_parallel->size() > 1)
    model = load_shard(std::move(src), load_pool, *options.tensor_parallel, options.tensor_parallel_join);
  else
    model = src->arch().build(std::move(src), load_pool);
  if (converter) {
    converter->set_pool(nullptr);  // the pool lives only during the load; later conversions (MTP) run inline
    std::fprintf(stderr, "%s: %s\n", path.c_str(), converter->summary().c_str());
  }
  return model;
}

}  // namespace db
