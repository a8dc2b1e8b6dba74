#pragma once

#include <optional>
#include <string>

#include "core/errors.hpp"
#include "core/json.hpp"

namespace commcert {

// Where a library call is written: the expression as written and its file:line. Made by the
// COMMCERT_CHECK_* macros, so no call name is ever typed by hand.
struct CallSite {
  const char* expression = "";
  const char* file = "";
  int line = 0;
};

#define COMMCERT_CALL_SITE(expression) (::commcert::CallSite{#expression, __FILE__, __LINE__})

// One failed call to CUDA, NCCL, MPI, NVML or cuBLASLt, with what an error record needs to say
// where and why, as fields rather than only as text.
struct ApiError {
  std::string api;        // "CUDA", "NCCL", "MPI", "NVML", "cuBLASLt"
  std::string call;       // the call as written in the source
  std::string where;      // "src/comm/nccl_communicator.cpp:212"
  long long code = 0;     // the library's own result code
  std::string code_name;  // e.g. "cudaErrorIllegalAddress" (the code as a number when unnamed)
  std::string text;       // the library's description, and any detail it keeps
  std::string context;    // what the call was for, where the call alone does not say
  std::string host;
  std::optional<int> rank;    // in the job, where the failing layer knows it
  std::optional<int> device;  // CUDA ordinal, where there is one
};

// The source path from its last "src/", "kernels/" or "tests/" on: the same text on every
// machine, whatever the build directory.
[[nodiscard]] std::string source_location(const CallSite& site);

// "CUDA failure on node7 rank 3 device 1: cudaMemcpy(...) returned cudaErrorIllegalAddress
// (an illegal memory access was encountered) at src/bench/gpu/membw_engine_cuda.cpp:88", and
// ", while CONTEXT" when there is one.
[[nodiscard]] std::string describe(const ApiError& error);

// The record's "api_error" object (docs/records.md): api, call, where, code, code_name, context,
// host, rank and device (null when not known).
[[nodiscard]] Json to_json(const ApiError& error);

// A failed library call: exit 3 and an error record that carries the fields.
class ApiFailure : public RuntimeFailure {
 public:
  explicit ApiFailure(ApiError error);
  [[nodiscard]] const ApiError& error() const { return error_; }

 private:
  ApiError error_;
};

}  // namespace commcert
