// What the fuzz targets share: FUZZ_CHECK, a property that must hold for every input. A broken
// property prints what broke and aborts, which libFuzzer records as a crash (with the input)
// and the replay (replay_main.cc) reports as a failed test.
#pragma once

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(condition, what)                                                       \
  do {                                                                                    \
    if (!(condition)) {                                                                   \
      std::fprintf(stderr, "fuzz property broken at %s:%d: %s\n", __FILE__, __LINE__, what); \
      std::abort();                                                                       \
    }                                                                                     \
  } while (false)
