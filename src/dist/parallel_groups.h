// The groups of a job of T x E ranks (--tensor-parallel-size T, --expert-parallel-size
// E). World rank r = e * T + t is rank t of tensor group e (the consecutive ranks
// e * T .. e * T + T - 1: they meet in every block, so mpirun's in-order placement
// keeps them on one machine when it can) and rank e of expert group t (ranks t,
// T + t, ...: they meet once per MoE layer). Rank 0 drives the job over the world.
#pragma once
#include <cstdlib>
#include <memory>

#include "dist/communicator.h"

namespace db::dist {

// Where world rank `rank` sits in a grid of tensor groups of `tensor_size` ranks.
struct GridPosition {
  int tensor_rank, expert_rank;
};
GridPosition grid_position(int rank, int tensor_size);

// The world (its collectives are the world's) and the groups split from it, which
// live as long as it does.
class ParallelGroups final : public Communicator {
 public:
  // Splits `world` (of tensor_size x expert_size ranks; a collective of all of them)
  // into its groups. Throws db::Error when the sizes do not multiply to its size.
  ParallelGroups(std::unique_ptr<Communicator> world, int tensor_size, int expert_size);
  ~ParallelGroups() override;

  // This rank's tensor / expert group; null when that size is 1. With one size above
  // 1 only, its group is the world itself.
  Communicator* tensor() { return tensor_; }
  Communicator* expert() { return expert_; }

  int rank() const override { return world_->rank(); }
  int size() const override { return world_->size(); }
  double timeout_s() const override { return world_->timeout_s(); }
  void all_reduce_sum(std::span<float> data) override { world_->all_reduce_sum(data); }
  void all_gather(std::span<const std::byte> send, std::span<std::byte> recv) override {
    world_->all_gather(send, recv);
  }
  void all_to_all_v(std::span<const std::byte> send, std::span<const size_t> send_counts, std::span<std::byte> recv,
                    std::span<const size_t> recv_counts) override {
    world_->all_to_all_v(send, send_counts, recv, recv_counts);
  }
  void broadcast(std::vector<std::byte>& bytes, int root) override { world_->broadcast(bytes, root); }
  [[noreturn]] void abort(int code) override {
    world_->abort(code);
    std::_Exit(code);  // not reached: the world's abort does not return
  }
  std::unique_ptr<Communicator> split(int color, int key) override { return world_->split(color, key); }

 private:
  std::unique_ptr<Communicator> world_;  // declared first: destroyed after its splits
  std::unique_ptr<Communicator> tensor_split_, expert_split_;
  Communicator* tensor_ = nullptr;
  Communicator* expert_ = nullptr;
};

}  // namespace db::dist
