// Compiled, not run, by ctest: once with a code from the catalog (it must compile) and once
// with a code that is not (the compiler must refuse it), so a rule that names a code the
// catalog lacks can never be built.
#include "validate/reasons.hpp"

constexpr commcert::ReasonCode kCode = COMMCERT_TEST_REASON_CODE;

int main() {
  return kCode.view().empty() ? 1 : 0;
}
