#include "dist/parallel_groups.h"

#include <string>

#include "util/error.h"

namespace db::dist {

GridPosition grid_position(int rank, int tensor_size) { return {rank % tensor_size, rank / tensor_size}; }

ParallelGroups::ParallelGroups(std::unique_ptr<Communicator> world, int tensor_size, int expert_size)
    : world_(std::move(world)) {
  if (tensor_size < 1 || expert_size < 1 || tensor_size * expert_size != world_->size())
    throw Error("a job of " + std::to_string(world_->size()) + " ranks is not " + std::to_string(tensor_size) +
                " tensor-parallel x " + std::to_string(expert_size) + " expert-parallel ranks");
  if (tensor_size > 1 && expert_size > 1) {
    const GridPosition at = grid_position(world_->rank(), tensor_size);
    tensor_split_ = world_->split(at.expert_rank, at.tensor_rank);
    expert_split_ = world_->split(at.tensor_rank, at.expert_rank);
    tensor_ = tensor_split_.get();
    expert_ = expert_split_.get();
  } else if (tensor_size > 1) {
    tensor_ = world_.get();
  } else if (expert_size > 1) {
    expert_ = world_.get();
  }
}

ParallelGroups::~ParallelGroups() {
  expert_split_.reset();  // before the world they were split from
  tensor_split_.reset();
}

}  // namespace db::dist
