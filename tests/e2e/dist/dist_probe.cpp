// dist_probe: one collective called many times by every rank of an mpirun job, each
// result checked, and the mean time of the collective alone printed by rank 0. With
// --fault, one rank misbehaves before a given call (exits, stops itself with SIGSTOP,
// or sleeps), so a test can see how the others report it.
//
//   mpirun -np N dist_probe --op all_reduce_sum|all_gather|all_to_all_v|broadcast
//          [--calls 200] [--elements 576] [--timeout 300]
//          [--fault none|exit|stop|sleep --victim R --at-call K [--sleep S]]
//
// Lines for the test to read (t= is CLOCK_MONOTONIC seconds, shared by the processes
// of one machine):
//   probe: rank R pid P exits|stops|sleeps before call K t=T (the victim)
//   probe: rank R caught the collective error t=T           (then the job is aborted)
//   probe: rank 0: C calls of OP, E elements, S ranks: U us per call
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "dist/world.h"

namespace {

using db::dist::Communicator;

struct Args {
  std::string op = "all_reduce_sum";
  long calls = 200;
  long elements = 576;  // floats for all_reduce_sum, bytes per rank for the others
  double timeout = 300;
  std::string fault = "none";
  int victim = 1;
  long at_call = 5;
  double sleep_s = 1.0;  // --fault sleep: how long the victim sleeps
};

double monotonic_s() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr, "dist_probe: %s\n", why);
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (i + 1 >= argc) usage(("missing the value of " + k).c_str());
    const char* v = argv[++i];
    if (k == "--op") a.op = v;
    else if (k == "--calls") a.calls = std::atol(v);
    else if (k == "--elements") a.elements = std::atol(v);
    else if (k == "--timeout") a.timeout = std::atof(v);
    else if (k == "--fault") a.fault = v;
    else if (k == "--victim") a.victim = std::atoi(v);
    else if (k == "--at-call") a.at_call = std::atol(v);
    else if (k == "--sleep") a.sleep_s = std::atof(v);
    else usage(("unknown option " + k).c_str());
  }
  if (a.op != "all_reduce_sum" && a.op != "all_gather" && a.op != "all_to_all_v" && a.op != "broadcast")
    usage("--op must be all_reduce_sum, all_gather, all_to_all_v or broadcast");
  if (a.fault != "none" && a.fault != "exit" && a.fault != "stop" && a.fault != "sleep")
    usage("--fault must be none, exit, stop or sleep");
  if (a.calls < 1 || a.elements < 0) usage("--calls must be positive and --elements not negative");
  return a;
}

std::byte b(long v) { return static_cast<std::byte>(v & 0xff); }

// Seconds the collective itself takes (its inputs are filled and its results checked
// outside the clock).
class Stopwatch {
 public:
  template <class F>
  void time(F&& f) {
    const double t0 = monotonic_s();
    f();
    seconds += monotonic_s() - t0;
  }
  double seconds = 0;
};

// One call of the collective, timed on `clock`; returns false when its result is wrong.
bool call_once(Communicator& w, const Args& a, long call, Stopwatch& clock) {
  const long n = w.size(), r = w.rank();
  const auto e = static_cast<size_t>(a.elements);
  if (a.op == "all_reduce_sum") {
    std::vector<float> v(e);
    for (size_t i = 0; i < e; ++i) v[i] = static_cast<float>(r + static_cast<long>(i % 7) + call % 100);
    clock.time([&] { w.all_reduce_sum(v); });
    for (size_t i = 0; i < e; ++i)
      if (v[i] != static_cast<float>(n * (static_cast<long>(i % 7) + call % 100) + n * (n - 1) / 2)) return false;
  } else if (a.op == "all_gather") {
    std::vector<std::byte> send(e, b(r + call)), recv(e * static_cast<size_t>(n));
    clock.time([&] { w.all_gather(send, recv); });
    for (size_t i = 0; i < recv.size(); ++i)
      if (recv[i] != b(static_cast<long>(i / std::max<size_t>(e, 1)) + call)) return false;
  } else if (a.op == "all_to_all_v") {
    std::vector<size_t> counts(static_cast<size_t>(n), e);
    std::vector<std::byte> send, recv(e * static_cast<size_t>(n));
    for (long d = 0; d < n; ++d) send.insert(send.end(), e, b(16 * r + d + call));
    clock.time([&] { w.all_to_all_v(send, counts, recv, counts); });
    for (long s = 0; s < n; ++s)
      for (size_t i = 0; i < e; ++i)
        if (recv[static_cast<size_t>(s) * e + i] != b(16 * s + r + call)) return false;
  } else {
    const int root = static_cast<int>(call % n);
    std::vector<std::byte> bytes(r == root ? e : 0, b(root + call));
    clock.time([&] { w.broadcast(bytes, root); });
    if (bytes != std::vector<std::byte>(e, b(root + call))) return false;
  }
  return true;
}

void misbehave(const Args& a, int rank, long call) {
  if (a.fault == "none" || rank != a.victim || call != a.at_call) return;
  std::printf("probe: rank %d pid %d %s before call %ld t=%.6f\n", rank, static_cast<int>(getpid()),
              a.fault == "exit" ? "exits" : a.fault == "stop" ? "stops" : "sleeps", call, monotonic_s());
  std::fflush(stdout);
  if (a.fault == "exit") _exit(3);
  if (a.fault == "stop") raise(SIGSTOP);
  if (a.fault == "sleep") std::this_thread::sleep_for(std::chrono::duration<double>(a.sleep_s));
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  db::dist::WorldOptions options;
  options.collective_timeout_s = a.timeout;
  std::unique_ptr<Communicator> world;
  try {
    world = db::dist::open_world(options);
  } catch (const db::Error& e) {
    std::fprintf(stderr, "dist_probe: %s\n", e.what());
    return 1;
  }
  const long warmup = std::min<long>(10, a.calls / 10);
  Stopwatch clock;
  for (long call = 1; call <= a.calls; ++call) {
    if (call == warmup + 1) clock.seconds = 0;
    misbehave(a, world->rank(), call);
    try {
      if (!call_once(*world, a, call, clock)) {
        std::fprintf(stderr, "probe: rank %d: wrong result of %s call %ld\n", world->rank(), a.op.c_str(), call);
        world->abort(2);
      }
    } catch (const db::dist::CollectiveError&) {  // the communicator has written the report
      std::printf("probe: rank %d caught the collective error t=%.6f\n", world->rank(), monotonic_s());
      std::fflush(stdout);
      world->abort(1);
    }
  }
  const double per_call = clock.seconds / static_cast<double>(a.calls - warmup);
  if (world->rank() == 0)
    std::printf("probe: rank 0: %ld calls of %s, %ld elements, %d ranks: %.1f us per call\n", a.calls - warmup,
                a.op.c_str(), a.elements, world->size(), per_call * 1e6);
  return 0;
}
