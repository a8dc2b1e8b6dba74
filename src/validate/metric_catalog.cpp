#include "validate/metric_catalog.hpp"

#include <fmt/format.h>

#include "validate/checks.hpp"

namespace commcert {
namespace {

constexpr std::string_view kBurnKernels[] = {"gemm_bf16", "gemm_fp16", "gemm_tf32",
                                             "gemm_fp8",  "gemm_fp64", "power_fma"};
constexpr std::string_view kScopes[] = {"node", "cluster"};
constexpr double kGiga = 1e-9;

MetricInfo simple(std::string id, std::string check, std::string yaml, std::string label,
                  std::string unit, double scale, Direction direction, MetricSubject subject) {
  std::string group = id;
  return {std::move(id), std::move(check), std::move(yaml), std::move(label), std::move(unit),
          scale,         direction,        subject,         std::move(group)};
}

}  // namespace

std::vector<MetricInfo> static_metrics() {
  using enum Direction;
  using enum MetricSubject;
  return {
      simple("membw.copy", "membw", "copy_gb_per_s", "memory copy bandwidth", "GB/s", kGiga,
             kHigherIsBetter, kGpu),
      simple("membw.read", "membw", "read_gb_per_s", "memory read bandwidth", "GB/s", kGiga,
             kHigherIsBetter, kGpu),
      simple("membw.write", "membw", "write_gb_per_s", "memory write bandwidth", "GB/s", kGiga,
             kHigherIsBetter, kGpu),
      simple("membw.memcpy_d2d", "membw", "memcpy_d2d_gb_per_s", "device-to-device memcpy", "GB/s",
             kGiga, kHigherIsBetter, kGpu),
      simple("membw.h2d", "membw", "h2d_gb_per_s", "host-to-device bandwidth", "GB/s", kGiga,
             kHigherIsBetter, kGpu),
      simple("membw.d2h", "membw", "d2h_gb_per_s", "device-to-host bandwidth", "GB/s", kGiga,
             kHigherIsBetter, kGpu),
      simple("health.gpu.temperature", "health.gpu", "temperature_c", "temperature", "C", 1.0,
             kLowerIsBetter, kGpu),
      simple("health.ib.rate", "health.ib", "rate_gbit_per_s", "port rate", "Gb/s", 1.0,
             kHigherIsBetter, kIbPort),
  };
}

MetricInfo busbw_metric(std::string_view collective, std::string_view scope) {
  return {fmt::format("collective.{}.busbw.{}", collective, scope),
          fmt::format("collective.{}", collective),
          fmt::format("busbw_gb_per_s.{}", scope),
          fmt::format("{} busbw ({} scope)", collective, scope),
          "GB/s",
          kGiga,
          Direction::kHigherIsBetter,
          MetricSubject::kNode,
          fmt::format("collective.{}.busbw", collective)};
}

MetricInfo tflops_metric(std::string_view kernel) {
  return {fmt::format("burn.tflops.{}", kernel),
          "burn",
          fmt::format("tflops.{}", kernel),
          fmt::format("burn {}", kernel),
          "TFLOP/s",
          1.0,
          Direction::kHigherIsBetter,
          MetricSubject::kGpu,
          "burn.tflops"};
}

std::span<const std::string_view> burn_kernels() {
  return kBurnKernels;
}

std::optional<MetricInfo> metric_info(std::string_view id) {
  for (auto& info : static_metrics()) {
    if (info.id == id) return info;
  }
  for (const auto& check : all_checks()) {
    if (check.kind != CheckKind::kCollective) continue;
    for (const auto scope : kScopes) {
      if (auto info = busbw_metric(check.collective, scope); info.id == id) return info;
    }
  }
  for (const auto kernel : kBurnKernels) {
    if (auto info = tflops_metric(kernel); info.id == id) return info;
  }
  return std::nullopt;
}

std::optional<MetricInfo> metric_at(std::string_view check, std::string_view yaml_path) {
  for (auto& info : static_metrics()) {
    if (info.check == check && info.yaml_path == yaml_path) return info;
  }
  const CheckInfo* found = find_check(check);
  if (found && found->kind == CheckKind::kCollective) {
    for (const auto scope : kScopes) {
      if (auto info = busbw_metric(found->collective, scope); info.yaml_path == yaml_path) {
        return info;
      }
    }
  }
  if (check == "burn") {
    for (const auto kernel : kBurnKernels) {
      if (auto info = tflops_metric(kernel); info.yaml_path == yaml_path) return info;
    }
  }
  return std::nullopt;
}

std::vector<std::string> metric_keys(std::string_view check) {
  std::vector<std::string> keys;
  for (const auto& info : static_metrics()) {
    if (info.check == check) keys.push_back(info.yaml_path);
  }
  const CheckInfo* found = find_check(check);
  if (found && found->kind == CheckKind::kCollective) {
    for (const auto scope : kScopes)
      keys.push_back(busbw_metric(found->collective, scope).yaml_path);
  }
  if (check == "burn") {
    for (const auto kernel : kBurnKernels)
      keys.push_back(tflops_metric(kernel).yaml_path);
  }
  return keys;
}

}  // namespace commcert
