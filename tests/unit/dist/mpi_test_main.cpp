// main() of the tests that run under mpirun: every rank runs every test in the same
// order (their collectives must match). Rank 0 prints gtest's usual report, the other
// ranks only their failures; the process fails when a test failed on any rank.
#include <gtest/gtest.h>

#include <cstdio>

#include "mpi_world.h"

namespace db::dist::test {

namespace {

std::unique_ptr<Communicator> g_world;

// Prints only failed assertions, with the rank, for ranks other than 0.
class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (r.failed())
      std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_, r.file_name() ? r.file_name() : "?",
                   r.line_number(), r.summary());
  }

 private:
  int rank_;
};

}  // namespace

Communicator& world() { return *g_world; }

}  // namespace db::dist::test

int main(int argc, char** argv) {
  using namespace db::dist;
  ::testing::InitGoogleTest(&argc, argv);
  WorldOptions options;
  options.collective_timeout_s = 60;  // a failure here is a wrong result, not a hang
  test::g_world = open_world(options);
  Communicator& w = test::world();
  if (w.size() < 2) {
    std::fprintf(stderr, "these tests run under mpirun with at least 2 ranks (mpirun -np 2 %s)\n", argv[0]);
    return 1;
  }
  if (w.rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new test::FailurePrinter(w.rank()));
  }
  float failed = RUN_ALL_TESTS() != 0 ? 1.0f : 0.0f;
  w.all_reduce_sum({&failed, 1});
  if (w.rank() == 0 && failed > 0) std::fprintf(stderr, "tests failed on %g rank(s)\n", failed);
  test::g_world.reset();
  return failed > 0 ? 1 : 0;
}
