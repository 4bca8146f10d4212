#include "model/sharded_model.h"

#include <cstdio>

#include "util/error.h"

namespace db {

ShardedModel::ShardedModel(std::unique_ptr<Model> shard, dist::Communicator& group, double heartbeat_s)
    : shard_(std::move(shard)), group_(group), heartbeat_(heartbeat_s) {
  DB_CHECK(group_.rank() == 0, "ShardedModel runs on rank 0 of its group");
  DB_CHECK(heartbeat_s > 0, "ShardedModel needs a positive heartbeat period");
  last_sent_ = std::chrono::steady_clock::now();
  heartbeat_thread_ = std::thread([this] { heartbeat_loop(); });
}

ShardedModel::~ShardedModel() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  heartbeat_thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  dist::ForwardStep stop;
  stop.kind = dist::StepKind::Stop;
  send(stop);
}

void ShardedModel::send(const dist::ForwardStep& step) {
  std::vector<std::byte> bytes = dist::encode_step(step);
  try {
    group_.broadcast(bytes, 0);
  } catch (const dist::CollectiveError& e) {
    std::fprintf(stderr, "deepbatch: error: rank 0 could not send the step to the other ranks: %s\n", e.what());
    group_.abort(1);
  }
  last_sent_ = std::chrono::steady_clock::now();
}

void ShardedModel::note_block_copies(std::span<const BlockCopy> copies) {
  std::lock_guard<std::mutex> lock(mu_);
  pending_copies_.insert(pending_copies_.end(), copies.begin(), copies.end());
}

void ShardedModel::exclusive(const std::function<void()>& fn) {
  std::lock_guard<std::mutex> lock(mu_);
  fn();
  last_sent_ = std::chrono::steady_clock::now();
}

void ShardedModel::forward(const Batch& batch, const AttentionMetadata& attn, KVStore& kv, ThreadPool& pool,
                           std::vector<float>& logits) {
  std::lock_guard<std::mutex> lock(mu_);
  dist::ForwardStep step;
  step.copies = std::move(pending_copies_);
  pending_copies_.clear();
  step.batch = batch;
  step.attn = attn;
  send(step);
  try {
    shard_->forward(batch, attn, kv, pool, logits);
  } catch (const dist::CollectiveError& e) {
    std::fprintf(stderr, "deepbatch: error: rank 0 lost the other ranks in a step: %s\n", e.what());
    group_.abort(1);
  }
}

void ShardedModel::heartbeat_loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    const auto due = last_sent_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(heartbeat_);
    if (std::chrono::steady_clock::now() >= due) {
      dist::ForwardStep beat;
      beat.kind = dist::StepKind::Heartbeat;
      send(beat);
      continue;
    }
    wake_.wait_until(lock, due);
  }
}

}  // namespace db
