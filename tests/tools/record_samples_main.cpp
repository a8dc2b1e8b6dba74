// Prints the records tests/tools/record_samples.cpp makes with today's writer functions, one JSON
// line each, for the kinds named on the command line (all when none). It wrote the measured
// burn and membw lines of tests/fixtures/records/v1, which no GPU-less machine can produce by
// running the stages (tests/fixtures/records/v1/README.md).
#include <cstdio>
#include <set>
#include <string>

#include "record_samples.hpp"

int main(int argc, char** argv) {
  const std::set<std::string> kinds(argv + 1, argv + argc);
  for (const auto& sample : commcert::test_support::record_samples("fixture-v1-writers")) {
    if (!kinds.empty() && !kinds.contains(sample.record.value("kind", ""))) continue;
    std::printf("%s\n", sample.record.dump().c_str());
  }
  return 0;
}
