#include "dist/mpi/side_channel.h"

#include <chrono>
#include <cstring>
#include <thread>

namespace db::dist {

namespace {

enum Tag : int { kQuery = 1, kReply = 2, kVerdict = 3, kAck = 4 };

using Clock = std::chrono::steady_clock;

Clock::time_point after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// The source of a pending message of `tag`, or -1.
int pending(MPI_Comm comm, int tag) {
  int flag = 0;
  MPI_Status st;
  if (MPI_Iprobe(MPI_ANY_SOURCE, tag, comm, &flag, &st) != MPI_SUCCESS || !flag) return -1;
  return st.MPI_SOURCE;
}

void pause_briefly() { std::this_thread::sleep_for(std::chrono::microseconds(200)); }

}  // namespace

void SideChannel::send(int to, int tag, const void* data, int bytes) {
  auto& buf = send_buffers_.emplace_back(static_cast<const char*>(data), static_cast<const char*>(data) + bytes);
  MPI_Request& req = send_requests_.emplace_back(MPI_REQUEST_NULL);
  // A failed send (a peer gone from the transport) is an answer that never comes:
  // the survey reports that rank as missing.
  MPI_Isend(buf.data(), bytes, MPI_CHAR, to, tag, comm_, &req);
}

std::vector<char> SideChannel::receive(int source, int tag) {
  MPI_Status st;
  MPI_Probe(source, tag, comm_, &st);
  int bytes = 0;
  MPI_Get_count(&st, MPI_CHAR, &bytes);
  std::vector<char> buf(static_cast<size_t>(bytes));
  MPI_Recv(buf.data(), bytes, MPI_CHAR, source, tag, comm_, MPI_STATUS_IGNORE);
  return buf;
}

void SideChannel::serve(const Presence& self) {
  for (int from; (from = pending(comm_, kQuery)) >= 0;) {
    receive(from, kQuery);
    Presence me = self;
    me.rank = rank_;
    send(from, kReply, &me, sizeof me);
  }
  if (!verdict_) {
    if (const int from = pending(comm_, kVerdict); from >= 0) {
      const std::vector<char> text = receive(from, kVerdict);
      verdict_.emplace(from, std::string(text.begin(), text.end()));
    }
  }
}

std::optional<std::pair<int, std::string>> SideChannel::take_verdict() {
  auto v = std::move(verdict_);
  verdict_.reset();
  return v;
}

std::vector<std::optional<Presence>> SideChannel::survey(const Presence& self, double grace_s) {
  Presence me = self;
  me.rank = rank_;
  std::vector<std::optional<Presence>> answers(static_cast<size_t>(size_));
  answers[static_cast<size_t>(rank_)] = me;
  for (int r = 0; r < size_; ++r)
    if (r != rank_) send(r, kQuery, &me, sizeof me);
  int answered = 1;
  const auto deadline = after(grace_s);
  while (answered < size_ && Clock::now() < deadline) {
    serve(me);
    if (verdict_) break;
    const int from = pending(comm_, kReply);
    if (from < 0) {
      pause_briefly();
      continue;
    }
    const std::vector<char> bytes = receive(from, kReply);
    if (bytes.size() != sizeof(Presence) || answers[static_cast<size_t>(from)]) continue;
    Presence p;
    std::memcpy(&p, bytes.data(), sizeof p);
    answers[static_cast<size_t>(from)] = p;
    ++answered;
  }
  return answers;
}

void SideChannel::announce(const std::string& verdict, const std::vector<int>& ranks, const Presence& self,
                           double grace_s) {
  for (int r : ranks) send(r, kVerdict, verdict.data(), static_cast<int>(verdict.size()));
  const auto deadline = after(grace_s);
  size_t acked = 0;
  while (acked < ranks.size() && Clock::now() < deadline) {
    serve(self);
    // A rank that timed out at the same moment announces to us too: acknowledge it,
    // so that neither waits out the other's grace.
    if (auto v = take_verdict()) acknowledge(v->first);
    if (const int from = pending(comm_, kAck); from >= 0) {
      receive(from, kAck);
      ++acked;
    } else {
      pause_briefly();
    }
  }
}

void SideChannel::acknowledge(int rank) {
  const char ok = 1;
  send(rank, kAck, &ok, 1);
}

}  // namespace db::dist
