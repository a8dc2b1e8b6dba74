// A failed libibverbs call as the user reads it (src/links/verbs_errors.hpp): the call as
// written under its libibverbs name, what it returned, errno's name and text, the device, and the
// structured fields of the error record. The calls are stand-ins: no RDMA device is needed.
#include <cerrno>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/api_error.hpp"
#include "links/verbs_errors.hpp"

namespace commcert {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

struct FakeObject {};

// Entry points of a loaded library, as VerbsLibrary holds them: each member is named as its
// function without "ibv_". Each fails as libibverbs documents that function failing.
struct FakeVerbs {
  FakeObject* (*alloc_pd)(FakeObject*) = [](FakeObject*) -> FakeObject* {
    errno = ENOMEM;
    return nullptr;
  };
  int (*modify_qp)(FakeObject*, int) = [](FakeObject*, int) { return EINVAL; };
  int (*query_gid)(FakeObject*, int) = [](FakeObject*, int) {
    errno = ENODEV;
    return -1;
  };
};

int fake_poll(int result) {
  errno = EIO;
  return result;
}

ApiFailure failure_of(const auto& call) {
  try {
    call();
  } catch (const ApiFailure& e) {
    return e;
  }
  ADD_FAILURE() << "the call did not throw";
  return ApiFailure(ApiError{});
}

TEST(VerbsErrors, ANullObjectNamesTheIbvCallNullAndErrnoWithTheDevice) {
  const FakeVerbs verbs;
  FakeObject context;
  const int line = __LINE__ + 2;
  const ApiFailure failure =
      failure_of([&] { (void)COMMCERT_CHECK_IBV(verbs, alloc_pd, (&context), "mlx5_0"); });
  const ApiError& error = failure.error();
  EXPECT_EQ(error.api, "libibverbs");
  EXPECT_EQ(error.call, "ibv_alloc_pd(&context)");
  EXPECT_EQ(error.where, "tests/links/test_verbs_errors.cpp:" + std::to_string(line));
  EXPECT_EQ(error.code, 0);
  EXPECT_EQ(error.code_name, "NULL");
  EXPECT_EQ(error.text, "errno 12 (ENOMEM): Cannot allocate memory");
  EXPECT_EQ(error.context, "using mlx5_0");
  EXPECT_FALSE(error.device);  // a CUDA ordinal; the RDMA device is in the context
  EXPECT_THAT(failure.what(), StartsWith("libibverbs failure on "));
  EXPECT_THAT(failure.what(),
              HasSubstr(": ibv_alloc_pd(&context) returned NULL (errno 12 (ENOMEM): Cannot "
                        "allocate memory) at tests/links/test_verbs_errors.cpp:"));
  EXPECT_THAT(failure.what(), HasSubstr(", while using mlx5_0"));
}

// ibv_modify_qp and ibv_post_send return the error number itself and need not set errno.
TEST(VerbsErrors, AnIntReturnedIsTheErrorNumberOverAStaleErrno) {
  const FakeVerbs verbs;
  FakeObject qp;
  errno = EAGAIN;
  const ApiError error =
      failure_of([&] {
        COMMCERT_CHECK_IBV(verbs, modify_qp, (&qp, 7), "mlx5_0:1", "moving the queue pair to RTR");
      }).error();
  EXPECT_EQ(error.call, "ibv_modify_qp(&qp, 7)");
  EXPECT_EQ(error.code, EINVAL);
  EXPECT_EQ(error.code_name, std::to_string(EINVAL));
  EXPECT_EQ(error.text, "errno 22 (EINVAL): Invalid argument");
  EXPECT_EQ(error.context, "moving the queue pair to RTR on mlx5_0:1");
}

// ibv_query_gid returns -1 and sets errno.
TEST(VerbsErrors, MinusOneTakesTheErrorNumberFromErrno) {
  const FakeVerbs verbs;
  FakeObject context;
  const ApiError error =
      failure_of([&] { COMMCERT_CHECK_IBV(verbs, query_gid, (&context, 3), "mlx5_1:2"); }).error();
  EXPECT_EQ(error.call, "ibv_query_gid(&context, 3)");
  EXPECT_EQ(error.code, -1);
  EXPECT_EQ(error.code_name, "-1");
  EXPECT_EQ(error.text, "errno 19 (ENODEV): No such device");
  EXPECT_EQ(verbs_error_number(-1, ENODEV), ENODEV);
  EXPECT_EQ(verbs_error_number(EINVAL, ENODEV), EINVAL);
}

TEST(VerbsErrors, ACallThatSucceedsReturnsItsResultAndThrowsNothing) {
  FakeObject made;
  const auto make = [&] { return &made; };
  EXPECT_EQ(COMMCERT_CHECK_VERBS(make(), "mlx5_0"), &made);
  const auto succeed = [] { return 0; };
  EXPECT_NO_THROW(COMMCERT_CHECK_VERBS(succeed(), "mlx5_0"));
  EXPECT_EQ(COMMCERT_CHECK_VERBS_COUNT(fake_poll(5), "mlx5_0:1"), 5);
  EXPECT_EQ(COMMCERT_CHECK_VERBS_COUNT(fake_poll(0), "mlx5_0:1"), 0);
}

// ibv_poll_cq returns how many completions it found, and a negative value when it fails.
TEST(VerbsErrors, ACountBelowZeroIsAFailureNamingTheCallAsWritten) {
  const ApiError error =
      failure_of([] { (void)COMMCERT_CHECK_VERBS_COUNT(fake_poll(-2), "mlx5_0:1"); }).error();
  EXPECT_EQ(error.call, "fake_poll(-2)");
  EXPECT_EQ(error.code, -2);
  EXPECT_EQ(error.text, "errno 5 (EIO): Input/output error");
}

TEST(VerbsErrors, AnErrnoNeverSetIsSaidSoAndTheShortFormIsTheCallAndItsResult) {
  const ApiError error = verbs_api_error({"ibv_reg_mr(pd, buffer, bytes, access)", "x.cpp", 1}, 0,
                                         "NULL", 0, "mlx5_0", "registering GPU memory");
  EXPECT_EQ(error.text, "errno not set");
  EXPECT_EQ(describe_failed_call(error),
            "ibv_reg_mr(pd, buffer, bytes, access) returned NULL (errno not set)");
  EXPECT_EQ(error.context, "registering GPU memory on mlx5_0");
}

}  // namespace
}  // namespace commcert
