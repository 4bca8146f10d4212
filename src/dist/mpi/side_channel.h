// The conversation the ranks of a stuck collective have on a communicator of their
// own, so that a timeout names who is missing instead of only "it took too long":
//
//   rank that timed out          every other rank
//   ------------------------     ----------------------------------------------
//   QUERY -> each other rank     while waiting in a collective, answers REPLY
//   waits `grace` for REPLYs     {its call number, its collective}
//   no REPLY = did not arrive    (a stopped, dead or busy rank never answers)
//   VERDICT(text) -> answerers   prints the verdict as its own error, sends ACK
//   waits `grace` for ACKs       and gives up its collective
//
// Then every live rank throws CollectiveError, so each has written its report before
// any of them ends the job. Used only after a timeout, which is always fatal: nothing
// here is cleaned up for reuse.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace db::dist {

// Where a rank stands: the collective it waits in.
struct Presence {
  uint64_t call = 0;  // this rank's collective count, from 1 (the same call on every rank)
  int32_t op = 0;     // CollectiveOp
  int32_t rank = -1;
};

class SideChannel {
 public:
  // `comm`: a communicator used for nothing else (a duplicate of the group's).
  SideChannel(MPI_Comm comm, int rank, int size) : comm_(comm), rank_(rank), size_(size) {}

  // Answers every pending QUERY with `self`, and keeps any VERDICT that arrived.
  // Cheap when nothing is pending (one probe per tag).
  void serve(const Presence& self);
  // A verdict another rank sent, with its sender; taken once.
  std::optional<std::pair<int, std::string>> take_verdict();

  // After this rank's own timeout: asks every other rank where it stands and waits
  // up to `grace_s` for the answers (serving their queries meanwhile). Entry r is
  // rank r's answer, nullopt when none came (this rank's own entry is `self`). Stops
  // early when a verdict arrives (take_verdict()).
  std::vector<std::optional<Presence>> survey(const Presence& self, double grace_s);

  // Sends `verdict` to `ranks` and waits up to `grace_s` for each one's ACK.
  void announce(const std::string& verdict, const std::vector<int>& ranks, const Presence& self, double grace_s);
  // Tells `rank` that its verdict was read and reported.
  void acknowledge(int rank);

 private:
  void send(int to, int tag, const void* data, int bytes);
  // Receives the pending message of `tag` from `source` as bytes (size from its status).
  std::vector<char> receive(int source, int tag);

  MPI_Comm comm_;
  int rank_, size_;
  std::deque<std::vector<char>> send_buffers_;  // alive until the job ends (sends are never waited on)
  std::deque<MPI_Request> send_requests_;
  std::optional<std::pair<int, std::string>> verdict_;
};

}  // namespace db::dist
