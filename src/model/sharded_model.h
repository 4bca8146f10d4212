// Rank 0's model in a tensor-parallel job: the engine, scheduler and runner run on
// rank 0 unchanged and call this model; it sends each step to the other ranks
// (dist/step_codec.h), which run their shards in the worker loop
// (runner/tensor_parallel_worker.h), then runs rank 0's own shard, whose
// all-reduces meet theirs.
//
// While the engine is idle a heartbeat thread sends a Heartbeat step every
// `heartbeat_s`, so that the workers' wait for the next step stays within the
// collective timeout; every rank answers it (dist::heartbeat_round), so that a rank
// lost while idle fails the group as a loss in a step does. A CollectiveError (a
// rank dead, stopped or lost) ends the whole job through Communicator::abort: the
// engine above would otherwise treat it as a failed step and go on with a broken
// group. With drain_on_failure(s), as
// `serve` asks, the job ends s seconds later instead: meanwhile the process is
// marked unrecoverable (util/unrecoverable.h) and every forward throws db::Error
// with the reason, so the server answers 503 and fails /health rather than hanging.
#pragma once
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "dist/communicator.h"
#include "dist/step_codec.h"
#include "model/model.h"

namespace db {

class ShardedModel : public Model {
 public:
  // `shard`: rank 0's shard of the model (LlamaDecoder with `group`); `group` must be
  // rank 0 of its group and outlive this model. heartbeat_s > 0.
  ShardedModel(std::unique_ptr<Model> shard, dist::Communicator& group, double heartbeat_s);
  // Sends Stop to the workers (they leave their loop) unless the group failed.
  ~ShardedModel() override;

  const ModelConfig& config() const override { return shard_->config(); }
  KVCacheShape kv_cache_shape() const override { return shard_->kv_cache_shape(); }
  const RouterStats* router_stats() const override { return shard_->router_stats(); }
  void forward(const Batch& batch, const AttentionMetadata& attn, KVStore& kv, ThreadPool& pool,
               std::vector<float>& logits) override;
  void note_block_copies(std::span<const BlockCopy> copies) override;

  // After a CollectiveError, end the job `grace_s` seconds later (> 0) instead of at
  // once; until then forwards fail with the reason.
  void drain_on_failure(double grace_s);

  // Runs `fn`, which makes collective calls of its own on the group (the start-up
  // agreement on the KV pool), with the heartbeat held off, so that the workers see
  // them in the same order.
  void exclusive(const std::function<void()>& fn);

 private:
  // Broadcasts `step` from rank 0; false after a CollectiveError (see failed()).
  // Caller holds mu_.
  bool send(const dist::ForwardStep& step);
  // Records a lost group: ends the job now, or marks the process unrecoverable and
  // sets the abort deadline when draining. Caller holds mu_.
  void failed(const std::string& what);
  // Throws db::Error with the failure when the group is lost. Caller holds mu_.
  void throw_if_failed() const;
  // After a Heartbeat: the round every worker answers (dist::heartbeat_round), so that
  // a rank lost while idle is noticed within the collective timeout. Caller holds mu_.
  void await_heartbeat_answers();
  void heartbeat_loop();

  std::unique_ptr<Model> shard_;
  dist::Communicator& group_;
  const std::chrono::duration<double> heartbeat_;
  std::vector<BlockCopy> pending_copies_;  // noted, sent with the next forward

  std::mutex mu_;  // one broadcast at a time (MPI_THREAD_SERIALIZED), and the fields below
  std::condition_variable wake_;
  std::chrono::steady_clock::time_point last_sent_;
  bool stopping_ = false;
  double drain_s_ = 0;                               // 0: abort at once
  std::optional<std::string> failure_;               // the lost group's error
  std::chrono::steady_clock::time_point abort_at_;  // when draining after a failure
  std::thread heartbeat_thread_;
};

}  // namespace db
