#include "core/api_error.hpp"

#include <string_view>

#include <fmt/format.h>

namespace commcert {

std::string source_location(const CallSite& site) {
  const std::string_view file(site.file ? site.file : "");
  std::size_t start = std::string_view::npos;
  for (const std::string_view root : {"src/", "kernels/", "tests/"}) {
    const auto at = file.rfind(root);
    if (at != std::string_view::npos && (at == 0 || file[at - 1] == '/') &&
        (start == std::string_view::npos || at > start)) {
      start = at;
    }
  }
  const std::string_view relative = start == std::string_view::npos ? file : file.substr(start);
  return fmt::format("{}:{}", relative, site.line);
}

std::string describe(const ApiError& error) {
  std::string who = error.host;
  if (error.rank) who += fmt::format(" rank {}", *error.rank);
  if (error.device) who += fmt::format(" device {}", *error.device);
  return fmt::format("{} failure on {}: {} returned {} ({}) at {}{}", error.api, who, error.call,
                     error.code_name, error.text, error.where,
                     error.context.empty() ? "" : ", while " + error.context);
}

Json to_json(const ApiError& error) {
  return {{"api", error.api},
          {"call", error.call},
          {"where", error.where},
          {"code", error.code},
          {"code_name", error.code_name},
          {"context", error.context.empty() ? Json(nullptr) : Json(error.context)},
          {"host", error.host},
          {"rank", error.rank ? Json(*error.rank) : Json(nullptr)},
          {"device", error.device ? Json(*error.device) : Json(nullptr)}};
}

ApiFailure::ApiFailure(ApiError error)
    : RuntimeFailure(describe(error)), error_(std::move(error)) {}

}  // namespace commcert
