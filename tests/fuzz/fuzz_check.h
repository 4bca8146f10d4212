// FUZZ_CHECK(cond, what): an invariant of the code under test. When it fails the fuzzer
// prints what broke and aborts, so libFuzzer records the input as a crash.
#pragma once
#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond, what)                                                                  \
  do {                                                                                          \
    if (!(cond)) {                                                                              \
      std::fprintf(stderr, "FUZZ_CHECK failed: %s (%s) at %s:%d\n", #cond, (what), __FILE__, __LINE__); \
      std::abort();                                                                             \
    }                                                                                           \
  } while (0)
