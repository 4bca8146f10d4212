#include "dist/mpi/mpi_communicator.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>

namespace db::dist {

namespace {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

std::string mpi_error_text(int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) return "MPI error " + std::to_string(rc);
  return std::string(text, static_cast<size_t>(len));
}

// MPI counts are ints: larger transfers are refused with a message, not truncated.
int mpi_count(size_t n, const char* what) {
  if (n > static_cast<size_t>(INT_MAX))
    throw Error(std::string(what) + ": " + std::to_string(n) + " elements exceed MPI's count limit of 2^31-1");
  return static_cast<int>(n);
}

// How long the survey and the announcement wait for answers: a reply takes at most
// a poll interval from a rank that is waiting, so this is long only on a loaded machine.
double grace_seconds(double timeout_s) { return std::clamp(timeout_s * 0.25, 0.5, 2.0); }

std::string rank_list(const std::vector<int>& ranks) {
  std::string s = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
  return s;
}

}  // namespace

std::unique_ptr<MpiCommunicator> MpiCommunicator::open_world(double timeout_s) {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (initialised) throw Error("MPI is already initialised in this process: the world is opened once");
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
    throw Error("MPI_Init_thread failed: is this process started by mpirun?");
  if (provided < MPI_THREAD_SERIALIZED) {
    MPI_Finalize();
    throw Error("this MPI library does not support MPI_THREAD_SERIALIZED (the engine thread runs the collectives)");
  }
  // Errors come back as return codes, so that a lost peer becomes a CollectiveError.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm comm = MPI_COMM_NULL, side = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_dup(MPI_COMM_WORLD, &side);
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  return std::unique_ptr<MpiCommunicator>(new MpiCommunicator(comm, side, rank, size, timeout_s, true));
}

MpiCommunicator::MpiCommunicator(MPI_Comm comm, MPI_Comm side, int rank, int size, double timeout_s, bool world)
    : comm_(comm), side_(side), rank_(rank), size_(size), timeout_s_(timeout_s), channel_(side, rank, size),
      world_(world) {
  current_.rank = rank_;
}

MpiCommunicator::~MpiCommunicator() {
  if (broken_) return;
  MPI_Comm_free(&side_);
  MPI_Comm_free(&comm_);
  if (world_) MPI_Finalize();
}

std::unique_ptr<Communicator> MpiCommunicator::split(int color, int key) {
  MPI_Comm comm = MPI_COMM_NULL, side = MPI_COMM_NULL;
  if (MPI_Comm_split(comm_, color, key, &comm) != MPI_SUCCESS || MPI_Comm_split(side_, color, key, &side) != MPI_SUCCESS)
    throw Error("MPI_Comm_split failed: the ranks could not form their groups");
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(side, MPI_ERRORS_RETURN);
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  return std::unique_ptr<MpiCommunicator>(new MpiCommunicator(comm, side, rank, size, timeout_s_, false));
}

void MpiCommunicator::abort(int code) {
  std::fflush(nullptr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // MPI_Abort does not return; should it, the process still ends
}

std::string MpiCommunicator::call_text() const {
  return std::string(collective_name(static_cast<CollectiveOp>(current_.op))) + " #" +
         std::to_string(current_.call) + " (" + what_ + ")";
}

void MpiCommunicator::begin(CollectiveOp op, std::string what) {
  if (broken_) throw CollectiveError("a collective of this group already failed on rank " + std::to_string(rank_));
  ++current_.call;
  current_.op = static_cast<int32_t>(op);
  what_ = std::move(what);
  started_ = now_s();
  // A rank that was busy elsewhere when another gave up learns it here.
  channel_.serve(current_);
  if (auto v = channel_.take_verdict()) fail_verdict(v->first, v->second);
}

void MpiCommunicator::wait(MPI_Request& req, int started_rc) {
  if (started_rc != MPI_SUCCESS)
    fail(call_text() + " could not start on rank " + std::to_string(rank_) + ": " + mpi_error_text(started_rc));
  double next_serve = started_;
  for (long polls = 0;; ++polls) {
    int done = 0;
    const int rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
      fail(call_text() + " failed on rank " + std::to_string(rank_) + " of " + std::to_string(size_) + ": " +
           mpi_error_text(rc));
    if (done) return;
    const double t = now_s();
    if (t >= next_serve) {  // answer other ranks' questions about a millisecond apart
      channel_.serve(current_);
      if (auto v = channel_.take_verdict()) fail_verdict(v->first, v->second);
      next_serve = t + 1e-3;
    }
    const double waited = t - started_;
    if (waited >= timeout_s_) fail_timeout(waited);
    // Spin first (a step's collectives are short), then give the core away: ranks
    // may share cores, and a rank waiting for a long step must not burn one.
    if (polls < 256) continue;
    if (waited < 0.02)
      sched_yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(waited < 1.0 ? 100 : 1000));
  }
}

void MpiCommunicator::fail_timeout(double waited_s) {
  const double grace = grace_seconds(timeout_s_);
  const std::vector<std::optional<Presence>> answers = channel_.survey(current_, grace);
  if (auto v = channel_.take_verdict()) fail_verdict(v->first, v->second);
  std::vector<int> missing, waiting, answered;
  std::string elsewhere;
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    const auto& a = answers[static_cast<size_t>(r)];
    if (a) answered.push_back(r);
    if (!a) {
      missing.push_back(r);
    } else if (a->call == current_.call && a->op == current_.op) {
      waiting.push_back(r);
    } else {
      elsewhere += "; rank " + std::to_string(r) + " is in " + collective_name(static_cast<CollectiveOp>(a->op)) +
                   " #" + std::to_string(a->call) + " instead (the ranks called different collectives)";
    }
  }
  char waited[32];
  std::snprintf(waited, sizeof waited, "%.1f s", waited_s);
  std::string msg = call_text() + " timed out after " + waited + " (--collective-timeout) on rank " +
                    std::to_string(rank_) + " of " + std::to_string(size_) + ": ";
  char grace_text[32];
  std::snprintf(grace_text, sizeof grace_text, "%.1f s", grace);
  if (!missing.empty())
    msg += rank_list(missing) + " did not arrive (no answer within " + grace_text +
           ": stopped, dead, or busy outside the collectives)";
  else if (elsewhere.empty())
    msg += "every rank is in it, but the transport did not complete it";
  else
    msg += "no rank is missing";
  msg += elsewhere;
  if (!waiting.empty()) msg += "; " + rank_list(waiting) + " waited in it too";
  std::fprintf(stderr, "deepbatch: error: %s\n", msg.c_str());
  std::fflush(stderr);
  channel_.announce(msg, answered, current_, grace);
  broken_ = true;
  throw CollectiveError(msg);
}

void MpiCommunicator::fail_verdict(int from, const std::string& verdict) {
  const std::string msg = call_text() + " given up on rank " + std::to_string(rank_) + " of " +
                          std::to_string(size_) + " (rank " + std::to_string(from) + " reports: " + verdict + ")";
  std::fprintf(stderr, "deepbatch: error: %s\n", msg.c_str());
  std::fflush(stderr);
  channel_.acknowledge(from);
  broken_ = true;
  throw CollectiveError(msg);
}

void MpiCommunicator::fail(const std::string& message) {
  std::fprintf(stderr, "deepbatch: error: %s\n", message.c_str());
  std::fflush(stderr);
  broken_ = true;
  throw CollectiveError(message);
}

void MpiCommunicator::all_reduce_sum(std::span<float> data) {
  const int n = mpi_count(data.size(), "all_reduce_sum");
  begin(CollectiveOp::AllReduceSum, std::to_string(n) + " floats");
  MPI_Request req = MPI_REQUEST_NULL;
  const int rc = MPI_Iallreduce(MPI_IN_PLACE, data.data(), n, MPI_FLOAT, MPI_SUM, comm_, &req);
  wait(req, rc);
}

void MpiCommunicator::all_gather(std::span<const std::byte> send, std::span<std::byte> recv) {
  DB_CHECK(recv.size() == send.size() * static_cast<size_t>(size_),
           "all_gather: recv must hold size() * send.size() bytes");
  const int n = mpi_count(send.size(), "all_gather");
  mpi_count(recv.size(), "all_gather");
  begin(CollectiveOp::AllGather, std::to_string(n) + " bytes per rank");
  MPI_Request req = MPI_REQUEST_NULL;
  const int rc = MPI_Iallgather(send.data(), n, MPI_BYTE, recv.data(), n, MPI_BYTE, comm_, &req);
  wait(req, rc);
}

void MpiCommunicator::all_to_all_v(std::span<const std::byte> send, std::span<const size_t> send_counts,
                                   std::span<std::byte> recv, std::span<const size_t> recv_counts) {
  const auto ranks = static_cast<size_t>(size_);
  DB_CHECK(send_counts.size() == ranks && recv_counts.size() == ranks, "all_to_all_v: one count per rank");
  std::vector<int> send_n(ranks), send_at(ranks), recv_n(ranks), recv_at(ranks);
  size_t send_total = 0, recv_total = 0;
  for (size_t r = 0; r < ranks; ++r) {
    send_at[r] = mpi_count(send_total, "all_to_all_v");
    recv_at[r] = mpi_count(recv_total, "all_to_all_v");
    send_n[r] = mpi_count(send_counts[r], "all_to_all_v");
    recv_n[r] = mpi_count(recv_counts[r], "all_to_all_v");
    send_total += send_counts[r];
    recv_total += recv_counts[r];
  }
  DB_CHECK(send.size() >= send_total && recv.size() >= recv_total, "all_to_all_v: buffers smaller than the counts");
  begin(CollectiveOp::AllToAllV, std::to_string(send_total) + " bytes out, " + std::to_string(recv_total) + " in");
  MPI_Request req = MPI_REQUEST_NULL;
  const int rc = MPI_Ialltoallv(send.data(), send_n.data(), send_at.data(), MPI_BYTE, recv.data(), recv_n.data(),
                                recv_at.data(), MPI_BYTE, comm_, &req);
  wait(req, rc);
}

void MpiCommunicator::broadcast(std::vector<std::byte>& bytes, int root) {
  DB_CHECK(root >= 0 && root < size_, "broadcast: root must be a rank of the group");
  // Two steps under one call number: the length, then the bytes.
  uint64_t length = rank_ == root ? bytes.size() : 0;
  begin(CollectiveOp::Broadcast, "from rank " + std::to_string(root));
  MPI_Request req = MPI_REQUEST_NULL;
  wait(req, MPI_Ibcast(&length, 1, MPI_UINT64_T, root, comm_, &req));
  if (rank_ != root) bytes.resize(length);
  what_ = std::to_string(length) + " bytes from rank " + std::to_string(root);
  wait(req, MPI_Ibcast(bytes.data(), mpi_count(length, "broadcast"), MPI_BYTE, root, comm_, &req));
}

}  // namespace db::dist
