// The collectives over MPI. Each one is started non-blocking (MPI_Iallreduce, ...)
// and polled with MPI_Test against a deadline of `timeout` seconds from this rank's
// entry. A collective that does not complete in time, or that the transport fails,
// throws CollectiveError on every live rank after each has written its report to
// stderr (see side_channel.h for how the missing ranks are named). Calls must come
// from one thread at a time (MPI_THREAD_SERIALIZED), not necessarily the thread that
// opened the world.
#pragma once
#include <mpi.h>

#include <memory>

#include "dist/communicator.h"
#include "dist/mpi/side_channel.h"

namespace db::dist {

class MpiCommunicator final : public Communicator {
 public:
  // Initialises MPI (MPI_THREAD_SERIALIZED) and opens its world. Throws db::Error when
  // MPI is already initialised or cannot give that thread level.
  static std::unique_ptr<MpiCommunicator> open_world(double timeout_s);
  // Frees the communicators and, for the world, finalises MPI; after a failed collective it skips
  // MPI_Finalize, which would wait for the missing ranks (the job must be aborted).
  ~MpiCommunicator() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  double timeout_s() const override { return timeout_s_; }
  void all_reduce_sum(std::span<float> data) override;
  void all_gather(std::span<const std::byte> send, std::span<std::byte> recv) override;
  void all_to_all_v(std::span<const std::byte> send, std::span<const size_t> send_counts, std::span<std::byte> recv,
                    std::span<const size_t> recv_counts) override;
  void broadcast(std::vector<std::byte>& bytes, int root) override;
  [[noreturn]] void abort(int code) override;
  // MPI_Comm_split of the collectives' and the side channel's communicators.
  std::unique_ptr<Communicator> split(int color, int key) override;

 private:
  MpiCommunicator(MPI_Comm comm, MPI_Comm side, int rank, int size, double timeout_s, bool world);

  // Opens collective call `op`: fails at once when the group already failed or a
  // verdict from another rank is pending. `what` describes the data ("2304 floats").
  void begin(CollectiveOp op, std::string what);
  // Waits for `req` (started by the current call) until the deadline; throws
  // CollectiveError on a timeout, a transport error or another rank's verdict.
  void wait(MPI_Request& req, int started_rc);
  [[noreturn]] void fail_timeout(double waited_s);
  [[noreturn]] void fail_verdict(int from, const std::string& verdict);
  [[noreturn]] void fail(const std::string& message);
  std::string call_text() const;  // "all_reduce_sum #57 (2304 floats)"

  MPI_Comm comm_;  // the collectives
  MPI_Comm side_;  // the side channel only
  int rank_ = 0, size_ = 1;
  double timeout_s_;
  SideChannel channel_;
  Presence current_;    // the call in progress (call 0: none yet)
  std::string what_;    // its data, for messages
  double started_ = 0;  // steady seconds at its entry
  bool broken_ = false;  // a collective failed: no more calls, no finalize
  bool world_;           // the world finalises MPI when destroyed; a split group does not
};

}  // namespace db::dist
