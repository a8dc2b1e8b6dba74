#include "bench/gpu/gemm_runner.hpp"

#include <cublasLt.h>

#include <fmt/format.h>

#include "core/api_error.hpp"
#include "core/node_identity.hpp"
#include "kernels/burn_kernels.hpp"

namespace commcert {
namespace {

// cuBLAS recommends 32 MiB of workspace on Hopper; Blackwell kernels may use more.
constexpr std::size_t kWorkspaceBytes = 64ULL << 20;

void check_cublaslt(cublasStatus_t status, const CallSite& site) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  ApiError error;
  error.api = "cuBLASLt";
  error.call = site.expression;
  error.where = source_location(site);
  error.code = static_cast<long long>(status);
  error.code_name = cublasLtGetStatusName(status);
  error.text = cublasLtGetStatusString(status);
  error.host = local_hostname();
  int device = -1;
  if (cudaGetDevice(&device) == cudaSuccess) error.device = device;
  throw ApiFailure(std::move(error));
}

#define COMMCERT_CHECK_CUBLASLT(expression) \
  check_cublaslt((expression), COMMCERT_CALL_SITE(expression))

struct Types {
  cudaDataType_t ab;
  cudaDataType_t cd;
  cublasComputeType_t compute;
  cudaDataType_t scale;
  BurnElement ab_element;
  unsigned ab_bytes;
  unsigned cd_bytes;
};

Types types_for(BurnKernel kernel) {
  switch (kernel) {
    case BurnKernel::kGemmBf16:
      return {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, BurnElement::kBf16, 2, 2};
    case BurnKernel::kGemmFp16:
      return {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F, BurnElement::kFp16, 2, 2};
    case BurnKernel::kGemmTf32:
      return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F, BurnElement::kFp32,
              4,          4};
    case BurnKernel::kGemmFp8:
      // e4m3 inputs, bf16 output: the combination cuBLASLt documents for fp8 without scaling.
      return {
          CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, BurnElement::kFp8E4M3, 1, 2};
    case BurnKernel::kGemmFp64:
      return {CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F, BurnElement::kFp64, 8, 8};
    case BurnKernel::kPowerFma:
      break;
  }
  throw RuntimeFailure("power_fma is not a GEMM");
}

}  // namespace

struct GemmRunner::Lt {
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t operation = nullptr;
  cublasLtMatrixLayout_t a = nullptr;
  cublasLtMatrixLayout_t b = nullptr;
  cublasLtMatrixLayout_t d = nullptr;
  cublasLtMatmulPreference_t preference = nullptr;
  cublasLtMatmulAlgo_t algo{};
  bool double_scale = false;

  ~Lt() {
    if (preference) cublasLtMatmulPreferenceDestroy(preference);
    if (d) cublasLtMatrixLayoutDestroy(d);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (operation) cublasLtMatmulDescDestroy(operation);
    if (handle) cublasLtDestroy(handle);
  }
};

GemmRunner::GemmRunner(BurnKernel kernel, std::uint64_t size, std::uint64_t seed, int sm_count,
                       cudaStream_t stream)
    : size_(size), stream_(stream), lt_(std::make_unique<Lt>()) {
  const Types t = types_for(kernel);
  d_element_bytes_ = t.cd_bytes;
  const std::uint64_t elements = size * size;
  a_ = DeviceMemory(elements * t.ab_bytes);
  b_ = DeviceMemory(elements * t.ab_bytes);
  d_ = DeviceMemory(elements * t.cd_bytes);
  workspace_ = DeviceMemory(kWorkspaceBytes);
  enqueue_fill_burn_input(a_.get(), elements, t.ab_element, seed, 0, sm_count, stream);
  enqueue_fill_burn_input(b_.get(), elements, t.ab_element, seed, 1, sm_count, stream);
  COMMCERT_CHECK_CUDA(cudaGetLastError());

  Lt& lt = *lt_;
  lt.double_scale = t.scale == CUDA_R_64F;
  const auto n = static_cast<std::uint64_t>(size);
  const auto ld = static_cast<std::int64_t>(size);
  COMMCERT_CHECK_CUBLASLT(cublasLtCreate(&lt.handle));
  COMMCERT_CHECK_CUBLASLT(cublasLtMatmulDescCreate(&lt.operation, t.compute, t.scale));
  const cublasOperation_t transpose = CUBLAS_OP_T;
  const cublasOperation_t keep = CUBLAS_OP_N;
  COMMCERT_CHECK_CUBLASLT(cublasLtMatmulDescSetAttribute(lt.operation, CUBLASLT_MATMUL_DESC_TRANSA,
                                                         &transpose, sizeof(transpose)));
  COMMCERT_CHECK_CUBLASLT(cublasLtMatmulDescSetAttribute(lt.operation, CUBLASLT_MATMUL_DESC_TRANSB,
                                                         &keep, sizeof(keep)));
  // Column-major: A is stored k x m and transposed, B is k x n, D is m x n.
  COMMCERT_CHECK_CUBLASLT(cublasLtMatrixLayoutCreate(&lt.a, t.ab, n, n, ld));
  COMMCERT_CHECK_CUBLASLT(cublasLtMatrixLayoutCreate(&lt.b, t.ab, n, n, ld));
  COMMCERT_CHECK_CUBLASLT(cublasLtMatrixLayoutCreate(&lt.d, t.cd, n, n, ld));
  COMMCERT_CHECK_CUBLASLT(cublasLtMatmulPreferenceCreate(&lt.preference));
  const std::uint64_t workspace = kWorkspaceBytes;
  COMMCERT_CHECK_CUBLASLT(cublasLtMatmulPreferenceSetAttribute(
      lt.preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace)));
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  COMMCERT_CHECK_CUBLASLT(cublasLtMatmulAlgoGetHeuristic(
      lt.handle, lt.operation, lt.a, lt.b, lt.d, lt.d, lt.preference, 1, &heuristic, &found));
  if (found == 0) {
    throw RuntimeFailure(fmt::format("cuBLASLt has no algorithm for {} at {}x{}x{} on this GPU",
                                     burn_kernel_name(kernel), size, size, size));
  }
  lt.algo = heuristic.algo;
}

GemmRunner::~GemmRunner() = default;

void GemmRunner::enqueue() {
  Lt& lt = *lt_;
  const float alpha_f = 1.0f;
  const float beta_f = 0.0f;
  const double alpha_d = 1.0;
  const double beta_d = 0.0;
  const void* alpha = lt.double_scale ? static_cast<const void*>(&alpha_d) : &alpha_f;
  const void* beta = lt.double_scale ? static_cast<const void*>(&beta_d) : &beta_f;
  COMMCERT_CHECK_CUBLASLT(cublasLtMatmul(lt.handle, lt.operation, alpha, a_.get(), lt.a, b_.get(),
                                         lt.b, beta, d_.get(), lt.d, d_.get(), lt.d, &lt.algo,
                                         workspace_.get(), kWorkspaceBytes, stream_));
}

double GemmRunner::flops_per_call() const {
  return gemm_flops(size_, size_, size_);
}

}  // namespace commcert
