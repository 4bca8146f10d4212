#include "model/sharded_model.h"

#include <cstdio>

#include "util/error.h"
#include "util/unrecoverable.h"

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
  if (failure_) group_.abort(1);  // stopped while draining: the job still failed
  dist::ForwardStep stop;
  stop.kind = dist::StepKind::Stop;
  send(stop);
}

void ShardedModel::drain_on_failure(double grace_s) {
  DB_CHECK(grace_s > 0, "a drain after a lost group needs a positive grace period");
  std::lock_guard<std::mutex> lock(mu_);
  drain_s_ = grace_s;
}

void ShardedModel::failed(const std::string& what) {
  std::fprintf(stderr, "deepbatch: error: %s\n", what.c_str());
  if (drain_s_ <= 0) group_.abort(1);
  if (failure_) return;
  failure_ = what;
  mark_unrecoverable(what);
  abort_at_ = std::chrono::steady_clock::now() +
              std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(drain_s_));
  std::fprintf(stderr, "deepbatch: answering 503 for %.1f s, then ending the job\n", drain_s_);
  wake_.notify_all();
}

void ShardedModel::throw_if_failed() const {
  if (failure_) throw Error(*failure_);
}

bool ShardedModel::send(const dist::ForwardStep& step) {
  if (failure_) return false;
  std::vector<std::byte> bytes = dist::encode_step(step);
  try {
    group_.broadcast(bytes, 0);
  } catch (const dist::CollectiveError& e) {
    failed(std::string("rank 0 could not send the step to the other ranks: ") + e.what());
    return false;
  }
  last_sent_ = std::chrono::steady_clock::now();
  return true;
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
  throw_if_failed();
  if (!send(step)) throw_if_failed();
  try {
    shard_->forward(batch, attn, kv, pool, logits);
  } catch (const dist::CollectiveError& e) {
    failed(std::string("rank 0 lost the other ranks in a step: ") + e.what());
    throw_if_failed();
  }
}

void ShardedModel::await_heartbeat_answers() {
  try {
    dist::heartbeat_round(group_);
  } catch (const dist::CollectiveError& e) {
    failed(std::string("rank 0 lost the other ranks while idle: ") + e.what());
  }
}

void ShardedModel::heartbeat_loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    if (failure_) {  // draining: end the job at the deadline
      if (std::chrono::steady_clock::now() >= abort_at_) group_.abort(1);
      wake_.wait_until(lock, abort_at_);
      continue;
    }
    const auto due = last_sent_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(heartbeat_);
    if (std::chrono::steady_clock::now() >= due) {
      dist::ForwardStep beat;
      beat.kind = dist::StepKind::Heartbeat;
      if (send(beat)) await_heartbeat_answers();
      continue;
    }
    wake_.wait_until(lock, due);
  }
}

}  // namespace db
