// The baseline `commcert burn` is compared with: a plain cuBLASLt GEMM loop of the same shape,
// types and layout (D = A^T B, m = n = k), written without any commcert code, timed with CUDA
// events over 1 s windows like the burn. The self-test (scripts/selftest) divides the burn's
// TFLOP/s by this program's (target >= 0.95). Not a test: it measures.
//
//   commcert_plain_gemm KERNEL SIZE SECONDS [DEVICE|all]
//
// prints one JSON line per GPU: {"device", "name", "pci_bus_id", "kernel", "size", "tflops",
// "windows"}; the PCI bus id joins it with the burn's record of the same GPU. With
// `all`, every GPU runs at once (as the burn does), so both see the same power and cooling.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cublasLt.h>
#include <string>
#include <thread>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "plain_gemm: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(3);
  }
}

void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "plain_gemm: %s: %s\n", what, cublasLtGetStatusString(s));
    std::exit(3);
  }
}

struct Config {
  cudaDataType_t ab, cd;
  cublasComputeType_t compute;
  cudaDataType_t scale;
  std::size_t ab_bytes, cd_bytes;
};

bool config_for(const std::string& kernel, Config& c) {
  if (kernel == "gemm_bf16")
    c = {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, 2, 2};
  else if (kernel == "gemm_fp16")
    c = {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F, 2, 2};
  else if (kernel == "gemm_tf32")
    c = {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F, 4, 4};
  else if (kernel == "gemm_fp8")
    c = {CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, 1, 2};
  else if (kernel == "gemm_fp64")
    c = {CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F, 8, 8};
  else
    return false;
  return true;
}

// Uniform values in [-1, 1) in the input type, from a simple generator.
std::vector<unsigned char> random_matrix(const std::string& kernel, std::size_t elements,
                                         std::size_t bytes, std::uint64_t seed) {
  std::vector<unsigned char> out(elements * bytes);
  std::uint64_t state = seed * 0x9e3779b97f4a7c15ULL + 1;
  for (std::size_t i = 0; i < elements; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const float v = static_cast<float>(static_cast<double>(state >> 40) / 8388608.0 - 1.0);
    unsigned char* p = out.data() + i * bytes;
    if (kernel == "gemm_bf16")
      *reinterpret_cast<__nv_bfloat16*>(p) = __float2bfloat16_rn(v);
    else if (kernel == "gemm_fp16")
      *reinterpret_cast<__half*>(p) = __float2half_rn(v);
    else if (kernel == "gemm_tf32")
      *reinterpret_cast<float*>(p) = v;
    else if (kernel == "gemm_fp8")
      *reinterpret_cast<__nv_fp8_e4m3*>(p) = __nv_fp8_e4m3(v);
    else
      *reinterpret_cast<double*>(p) = v;
  }
  return out;
}

struct Result {
  int device = 0;
  std::string name;
  std::string pci_bus_id;
  double tflops = 0;
  std::size_t windows = 0;
};

Result run(int device, const std::string& kernel, std::uint64_t n, double seconds) {
  check(cudaSetDevice(device), "cudaSetDevice");
  Config c{};
  config_for(kernel, c);
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  const std::size_t elements = n * n;
  void *a = nullptr, *b = nullptr, *d = nullptr, *workspace = nullptr;
  const std::size_t workspace_bytes = 64ull << 20;
  check(cudaMalloc(&a, elements * c.ab_bytes), "cudaMalloc A");
  check(cudaMalloc(&b, elements * c.ab_bytes), "cudaMalloc B");
  check(cudaMalloc(&d, elements * c.cd_bytes), "cudaMalloc D");
  check(cudaMalloc(&workspace, workspace_bytes), "cudaMalloc workspace");
  const auto ha = random_matrix(kernel, elements, c.ab_bytes, 1);
  const auto hb = random_matrix(kernel, elements, c.ab_bytes, 2);
  check(cudaMemcpy(a, ha.data(), ha.size(), cudaMemcpyHostToDevice), "copy A");
  check(cudaMemcpy(b, hb.data(), hb.size(), cudaMemcpyHostToDevice), "copy B");
  cudaStream_t stream;
  check(cudaStreamCreate(&stream), "cudaStreamCreate");

  cublasLtHandle_t lt;
  cublasLtMatmulDesc_t op;
  cublasLtMatrixLayout_t la, lb, ld;
  cublasLtMatmulPreference_t pref;
  check(cublasLtCreate(&lt), "cublasLtCreate");
  check(cublasLtMatmulDescCreate(&op, c.compute, c.scale), "desc");
  const cublasOperation_t t = CUBLAS_OP_T, nt = CUBLAS_OP_N;
  check(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t)), "transa");
  check(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &nt, sizeof(nt)), "transb");
  const auto ln = static_cast<std::int64_t>(n);
  check(cublasLtMatrixLayoutCreate(&la, c.ab, n, n, ln), "layout A");
  check(cublasLtMatrixLayoutCreate(&lb, c.ab, n, n, ln), "layout B");
  check(cublasLtMatrixLayoutCreate(&ld, c.cd, n, n, ln), "layout D");
  check(cublasLtMatmulPreferenceCreate(&pref), "preference");
  const std::uint64_t ws = workspace_bytes;
  check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                             sizeof(ws)),
        "workspace");
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  check(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, ld, ld, pref, 1, &heuristic, &found),
        "heuristic");
  if (found == 0) {
    std::fprintf(stderr, "plain_gemm: no cuBLASLt algorithm for %s\n", kernel.c_str());
    std::exit(3);
  }
  const float alpha_f = 1, beta_f = 0;
  const double alpha_d = 1, beta_d = 0;
  const bool f64 = c.scale == CUDA_R_64F;
  const auto gemm = [&] {
    check(cublasLtMatmul(lt, op, f64 ? static_cast<const void*>(&alpha_d) : &alpha_f, a, la, b, lb,
                         f64 ? static_cast<const void*>(&beta_d) : &beta_f, d, ld, d, ld,
                         &heuristic.algo, workspace, workspace_bytes, stream),
          "cublasLtMatmul");
  };

  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  for (int i = 0; i < 3; ++i)
    gemm();
  check(cudaEventRecord(start, stream), "record");
  for (int i = 0; i < 3; ++i)
    gemm();
  check(cudaEventRecord(stop, stream), "record");
  check(cudaEventSynchronize(stop), "sync");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
  const int per_window = std::max(1, static_cast<int>(1000.0 / (ms / 3)));
  const double flops =
      2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  std::vector<double> windows;
  const auto begin = std::chrono::steady_clock::now();
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count() <
         seconds) {
    check(cudaEventRecord(start, stream), "record");
    for (int i = 0; i < per_window; ++i)
      gemm();
    check(cudaEventRecord(stop, stream), "record");
    check(cudaEventSynchronize(stop), "sync");
    check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
    windows.push_back(flops * per_window / (ms / 1000.0) / 1e12);
  }
  std::sort(windows.begin(), windows.end());
  Result r;
  r.device = device;
  r.name = prop.name;
  char bus_id[32] = {};
  check(cudaDeviceGetPCIBusId(bus_id, static_cast<int>(sizeof bus_id), device),
        "cudaDeviceGetPCIBusId");
  r.pci_bus_id = bus_id;
  r.windows = windows.size();
  const std::size_t mid = windows.size() / 2;
  r.tflops = windows.size() % 2 ? windows[mid] : (windows[mid - 1] + windows[mid]) / 2;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  Config unused{};
  if (argc < 4 || !config_for(argv[1], unused)) {
    std::fprintf(
        stderr,
        "usage: %s gemm_bf16|gemm_fp16|gemm_tf32|gemm_fp8|gemm_fp64 SIZE SECONDS [DEVICE|all]\n",
        argv[0]);
    return 2;
  }
  const std::string kernel = argv[1];
  const std::uint64_t n = std::strtoull(argv[2], nullptr, 10);
  const double seconds = std::atof(argv[3]);
  const std::string which = argc > 4 ? argv[4] : "0";
  int count = 0;
  check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  std::vector<int> devices;
  if (which == "all") {
    for (int i = 0; i < count; ++i)
      devices.push_back(i);
  } else {
    devices.push_back(std::atoi(which.c_str()));
  }
  std::vector<Result> results(devices.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    threads.emplace_back([&, i] { results[i] = run(devices[i], kernel, n, seconds); });
  }
  for (auto& thread : threads)
    thread.join();
  for (const auto& r : results) {
    std::printf(
        "{\"device\": %d, \"name\": \"%s\", \"pci_bus_id\": \"%s\", \"kernel\": \"%s\", "
        "\"size\": %llu, \"tflops\": %.3f, \"windows\": %zu}\n",
        r.device, r.name.c_str(), r.pci_bus_id.c_str(), kernel.c_str(),
        static_cast<unsigned long long>(n), r.tflops, r.windows);
  }
  return 0;
}
