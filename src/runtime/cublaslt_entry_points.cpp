// cuBLASLt's API, defined here and forwarded to the libcublasLt that cublaslt_runtime() found,
// so the binary starts without it and `burn` says why it cannot run. Parameter lists must match
// cublasLt.h exactly: the compiler rejects any that does not.
#include <cublasLt.h>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "runtime/runtime_library.hpp"

namespace {

thread_local std::string last_loader_error;

template <typename Function>
Function* resolve(const char* name) {
  const auto& cublaslt = commcert::cublaslt_runtime();
  if (!cublaslt.loaded()) return nullptr;
  return reinterpret_cast<Function*>(cublaslt.library->symbol(name));
}

cublasStatus_t missing(const char* name) {
  const auto& cublaslt = commcert::cublaslt_runtime();
  last_loader_error = cublaslt.loaded() ? fmt::format("{} is not in the loaded cuBLASLt {} ({})",
                                                      name, cublaslt.version, cublaslt.path())
                                        : fmt::format("cuBLASLt is not loaded: {}", cublaslt.error);
  return CUBLAS_STATUS_NOT_INITIALIZED;
}

const char* describe(const char* name, cublasStatus_t status) {
  using Describe = const char*(cublasStatus_t);
  static auto* const get_name = resolve<Describe>("cublasLtGetStatusName");
  static auto* const get_string = resolve<Describe>("cublasLtGetStatusString");
  auto* target = std::string_view(name) == "name" ? get_name : get_string;
  if (!target) {
    if (last_loader_error.empty()) (void)missing("cublasLtGetStatusString");
    return last_loader_error.c_str();
  }
  if (!last_loader_error.empty()) {  // the failing call was a forward above: say why
    static thread_local std::string reported;
    reported = std::move(last_loader_error);
    last_loader_error.clear();
    return reported.c_str();
  }
  return target(status);
}

}  // namespace

#define COMMCERT_CUBLASLT_FORWARD(function, parameters, arguments)      \
  extern "C" cublasStatus_t CUBLASWINAPI function parameters {          \
    static auto* const target = resolve<decltype(function)>(#function); \
    if (!target) return missing(#function);                             \
    return target arguments;                                            \
  }

// clang-format off
COMMCERT_CUBLASLT_FORWARD(cublasLtCreate, (cublasLtHandle_t* lightHandle), (lightHandle))
COMMCERT_CUBLASLT_FORWARD(cublasLtDestroy, (cublasLtHandle_t lightHandle), (lightHandle))
COMMCERT_CUBLASLT_FORWARD(cublasLtMatmul,
    (cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc, const void* alpha,
     const void* A, cublasLtMatrixLayout_t Adesc, const void* B, cublasLtMatrixLayout_t Bdesc,
     const void* beta, const void* C, cublasLtMatrixLayout_t Cdesc, void* D,
     cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t* algo, void* workspace,
     size_t workspaceSizeInBytes, cudaStream_t stream),
    (lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, algo,
     workspace, workspaceSizeInBytes, stream))
COMMCERT_CUBLASLT_FORWARD(cublasLtMatrixLayoutCreate,
    (cublasLtMatrixLayout_t* matLayout, cudaDataType type, uint64_t rows, uint64_t cols,
     int64_t ld),
    (matLayout, type, rows, cols, ld))
COMMCERT_CUBLASLT_FORWARD(cublasLtMatrixLayoutDestroy, (cublasLtMatrixLayout_t matLayout),
    (matLayout))
COMMCERT_CUBLASLT_FORWARD(cublasLtMatmulDescCreate,
    (cublasLtMatmulDesc_t* matmulDesc, cublasComputeType_t computeType,
     cudaDataType_t scaleType),
    (matmulDesc, computeType, scaleType))
COMMCERT_CUBLASLT_FORWARD(cublasLtMatmulDescDestroy, (cublasLtMatmulDesc_t matmulDesc),
    (matmulDesc))
COMMCERT_CUBLASLT_FORWARD(cublasLtMatmulDescSetAttribute,
    (cublasLtMatmulDesc_t matmulDesc, cublasLtMatmulDescAttributes_t attr, const void* buf,
     size_t sizeInBytes),
    (matmulDesc, attr, buf, sizeInBytes))
COMMCERT_CUBLASLT_FORWARD(cublasLtMatmulPreferenceCreate, (cublasLtMatmulPreference_t* pref),
    (pref))
COMMCERT_CUBLASLT_FORWARD(cublasLtMatmulPreferenceDestroy, (cublasLtMatmulPreference_t pref),
    (pref))
COMMCERT_CUBLASLT_FORWARD(cublasLtMatmulPreferenceSetAttribute,
    (cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr,
     const void* buf, size_t sizeInBytes),
    (pref, attr, buf, sizeInBytes))
COMMCERT_CUBLASLT_FORWARD(cublasLtMatmulAlgoGetHeuristic,
    (cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc,
     cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc, cublasLtMatrixLayout_t Cdesc,
     cublasLtMatrixLayout_t Ddesc, cublasLtMatmulPreference_t preference,
     int requestedAlgoCount, cublasLtMatmulHeuristicResult_t heuristicResultsArray[],
     int* returnAlgoCount),
    (lightHandle, operationDesc, Adesc, Bdesc, Cdesc, Ddesc, preference, requestedAlgoCount,
     heuristicResultsArray, returnAlgoCount))
// clang-format on

extern "C" const char* CUBLASWINAPI cublasLtGetStatusName(cublasStatus_t status) {
  return describe("name", status);
}

extern "C" const char* CUBLASWINAPI cublasLtGetStatusString(cublasStatus_t status) {
  return describe("string", status);
}

extern "C" size_t CUBLASWINAPI cublasLtGetVersion(void) {
  static auto* const target = resolve<decltype(cublasLtGetVersion)>("cublasLtGetVersion");
  return target ? target() : 0;
}
