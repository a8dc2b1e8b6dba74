#include <stdexcept>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/api_error.hpp"
#include "records/stage.hpp"

namespace commcert {
namespace {

using ::testing::HasSubstr;

ApiError sample_error(const CallSite& site) {
  ApiError error;
  error.api = "CUDA";
  error.call = site.expression;
  error.where = source_location(site);
  error.code = 700;
  error.code_name = "cudaErrorIllegalAddress";
  error.text = "an illegal memory access was encountered";
  error.host = "node7";
  error.device = 1;
  return error;
}

// The macro only spells the expression; the checks (check_cuda and the rest) evaluate it.
TEST(ApiError, TheCallSiteIsTheCallAsWrittenAndItsLine) {
  const int line = __LINE__ + 1;
  const CallSite site = COMMCERT_CALL_SITE(failing_call(1) + failing_call(2));
  EXPECT_STREQ(site.expression, "failing_call(1) + failing_call(2)");
  EXPECT_EQ(site.line, line);
  EXPECT_EQ(source_location(site), "tests/core/test_api_error.cpp:" + std::to_string(line));
}

TEST(ApiError, SourceLocationKeepsThePathFromTheSourceTreeOn) {
  EXPECT_EQ(source_location({"x", "/work/main/src/comm/nccl_communicator.cpp", 12}),
            "src/comm/nccl_communicator.cpp:12");
  EXPECT_EQ(source_location({"x", "/home/u/mysrc/kernels/pattern.cu", 3}), "kernels/pattern.cu:3");
  EXPECT_EQ(source_location({"x", "elsewhere.cpp", 1}), "elsewhere.cpp:1");
}

TEST(ApiError, TheMessageNamesApiHostRankDeviceCallCodeAndPlace) {
  ApiError error = sample_error({"cudaMemcpy(dst, src, n)", "/b/src/bench/gpu/membw.cpp", 88});
  error.rank = 3;
  EXPECT_EQ(describe(error),
            "CUDA failure on node7 rank 3 device 1: cudaMemcpy(dst, src, n) returned "
            "cudaErrorIllegalAddress (an illegal memory access was encountered) at "
            "src/bench/gpu/membw.cpp:88");
  error.rank.reset();
  error.device.reset();
  error.context = "waiting for the copy kernel";
  EXPECT_THAT(describe(error), HasSubstr("failure on node7: cudaMemcpy"));
  EXPECT_THAT(describe(error), HasSubstr("membw.cpp:88, while waiting for the copy kernel"));
}

TEST(ApiError, TheRecordFieldsAreStructuredAndUnknownsAreNull) {
  const ApiError error = sample_error({"cudaSetDevice(slot.device)", "src/comm/x.cpp", 5});
  const Json json = to_json(error);
  EXPECT_EQ(json.at("api"), "CUDA");
  EXPECT_EQ(json.at("call"), "cudaSetDevice(slot.device)");
  EXPECT_EQ(json.at("where"), "src/comm/x.cpp:5");
  EXPECT_EQ(json.at("code"), 700);
  EXPECT_EQ(json.at("code_name"), "cudaErrorIllegalAddress");
  EXPECT_EQ(json.at("host"), "node7");
  EXPECT_EQ(json.at("device"), 1);
  EXPECT_TRUE(json.at("rank").is_null());
  EXPECT_TRUE(json.at("context").is_null());
}

TEST(ApiError, AnApiFailureCarriesItsFieldsToTheErrorRecordOtherErrorsDoNot) {
  const ApiFailure failure(sample_error({"ncclGroupEnd()", "src/comm/y.cpp", 9}));
  EXPECT_THAT(failure.what(), HasSubstr("ncclGroupEnd() returned cudaErrorIllegalAddress"));
  RecordOrigin origin;
  origin.run_id = "r1";
  origin.host = "node7";
  origin.rank = 5;
  const Json api = to_json(stage_error_record(origin, "collective", failure));
  EXPECT_EQ(api.at("status"), "error");
  EXPECT_EQ(api.at("reason"), failure.what());
  EXPECT_EQ(api.at("api_error").at("call"), "ncclGroupEnd()");
  EXPECT_EQ(api.at("api_error").at("where"), "src/comm/y.cpp:9");
  const Json plain =
      to_json(stage_error_record(origin, "collective", std::runtime_error("disk full")));
  EXPECT_EQ(plain.at("reason"), "disk full");
  EXPECT_FALSE(plain.contains("api_error"));
  // Caught as what it derives from, it is still an exit-3 runtime failure.
  EXPECT_THROW(throw ApiFailure(sample_error({"a()", "b", 1})), RuntimeFailure);
}

}  // namespace
}  // namespace commcert
