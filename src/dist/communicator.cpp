#include "dist/communicator.h"

namespace db::dist {

const char* collective_name(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::AllReduceSum: return "all_reduce_sum";
    case CollectiveOp::AllGather: return "all_gather";
    case CollectiveOp::AllToAllV: return "all_to_all_v";
    case CollectiveOp::Broadcast: return "broadcast";
  }
  return "unknown collective";
}

std::unique_ptr<Communicator> Communicator::split(int, int) {
  throw Error("this group of " + std::to_string(size()) + " ranks cannot be split into smaller ones");
}

}  // namespace db::dist
