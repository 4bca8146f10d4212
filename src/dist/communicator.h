// The collectives that split one model across processes: every rank of a group calls
// the same collectives in the same order with matching sizes. Each call either
// completes, or throws CollectiveError on every live rank within the communicator's
// timeout (a dead, stopped or lost peer never turns into a silent hang).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "util/error.h"

namespace db::dist {

// A collective that did not complete: timed out waiting for a peer, or failed in the
// transport. what() names the collective, its call number, this rank, and the ranks
// that did not arrive where they are known. The process must not call collectives
// again: the group is in an undefined state (Communicator::abort ends the job).
class CollectiveError : public Error {
 public:
  using Error::Error;
};

// The seconds a collective may wait for its peers by default: generous, since a
// peer may be in a long prefill step before it arrives.
inline constexpr double kDefaultCollectiveTimeoutSeconds = 300.0;

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Seconds a collective waits for its peers before it fails (a group of one never waits).
  virtual double timeout_s() const { return kDefaultCollectiveTimeoutSeconds; }

  // data[i] = the sum over ranks of data[i], on every rank (in place). Every rank
  // gets bitwise the same sums.
  virtual void all_reduce_sum(std::span<float> data) = 0;

  // recv = the concatenation of every rank's `send`, in rank order. Every rank sends
  // the same number of bytes; recv.size() == send.size() * size().
  virtual void all_gather(std::span<const std::byte> send, std::span<std::byte> recv) = 0;

  // Personalised exchange: send holds the bytes for rank 0, then rank 1, ...
  // (send_counts[r] bytes each); recv receives the bytes of rank 0, then rank 1, ...
  // (recv_counts[r] bytes each). recv_counts[r] on this rank must equal
  // send_counts[this rank] on rank r. Both count lists have size() entries.
  virtual void all_to_all_v(std::span<const std::byte> send, std::span<const size_t> send_counts,
                            std::span<std::byte> recv, std::span<const size_t> recv_counts) = 0;

  // Every rank's `bytes` becomes root's (resized on the others): any length, known
  // only to root beforehand.
  virtual void broadcast(std::vector<std::byte>& bytes, int root) = 0;

  // Ends the whole group now with `code` (all ranks, this one included). For a
  // single process: std::exit(code).
  [[noreturn]] virtual void abort(int code) = 0;

  // The group of the ranks that pass the same `color`, ranked by `key` (MPI_Comm_split):
  // called by every rank of this group, at start-up (it waits for all of them without
  // the collective timeout). The result has this group's timeout, and must be
  // destroyed before this group. Throws db::Error where a group cannot be split (the
  // default).
  virtual std::unique_ptr<Communicator> split(int color, int key);
};

// The name of a collective in messages ("all_reduce_sum", ...).
enum class CollectiveOp : uint8_t { AllReduceSum = 1, AllGather = 2, AllToAllV = 3, Broadcast = 4 };
const char* collective_name(CollectiveOp op);

// Element-typed forms over the byte collectives (T trivially copyable).
template <class T>
void all_gather_as(Communicator& c, std::span<const T> send, std::span<T> recv) {
  c.all_gather(std::as_bytes(send), std::as_writable_bytes(recv));
}

}  // namespace db::dist
