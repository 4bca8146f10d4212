#include "dist/local_communicator.h"

#include <cstdlib>
#include <cstring>

namespace db::dist {

// Size checks shared with the MPI communicator's contract: a wrong size is a bug in
// the caller, reported the same way in one process as in many.
void LocalCommunicator::all_gather(std::span<const std::byte> send, std::span<std::byte> recv) {
  DB_CHECK(recv.size() == send.size(), "all_gather: recv must hold size() * send.size() bytes");
  if (!send.empty()) std::memcpy(recv.data(), send.data(), send.size());
}

void LocalCommunicator::all_to_all_v(std::span<const std::byte> send, std::span<const size_t> send_counts,
                                     std::span<std::byte> recv, std::span<const size_t> recv_counts) {
  DB_CHECK(send_counts.size() == 1 && recv_counts.size() == 1, "all_to_all_v: one count per rank");
  DB_CHECK(send_counts[0] == recv_counts[0], "all_to_all_v: a rank receives what it sends itself");
  DB_CHECK(send.size() >= send_counts[0] && recv.size() >= recv_counts[0], "all_to_all_v: buffers below counts");
  if (send_counts[0] != 0) std::memcpy(recv.data(), send.data(), send_counts[0]);
}

void LocalCommunicator::broadcast(std::vector<std::byte>&, int root) {
  DB_CHECK(root == 0, "broadcast: root must be a rank of the group");
}

void LocalCommunicator::abort(int code) { std::exit(code); }

std::unique_ptr<Communicator> LocalCommunicator::split(int, int) { return std::make_unique<LocalCommunicator>(); }

}  // namespace db::dist
