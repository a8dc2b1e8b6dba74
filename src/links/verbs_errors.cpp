#include "links/verbs_errors.hpp"

#include <cstring>
#include <string>

#include <fmt/format.h>

#include "core/node_identity.hpp"

namespace commcert {
namespace {

std::string describe_error_number(int error_number) {
  if (error_number == 0) return "errno not set";
  const char* const name = strerrorname_np(error_number);
  return fmt::format("errno {}{}: {}", error_number, name ? fmt::format(" ({})", name) : "",
                     std::strerror(error_number));
}

}  // namespace

ApiError verbs_api_error(const CallSite& site, long long returned, std::string_view returned_text,
                         int error_number, std::string_view device, std::string_view purpose) {
  ApiError error;
  error.api = "libibverbs";
  error.call = site.expression;
  error.where = source_location(site);
  error.code = returned;
  error.code_name = returned_text;
  error.text = describe_error_number(error_number);
  error.context =
      purpose.empty() ? fmt::format("using {}", device) : fmt::format("{} on {}", purpose, device);
  error.host = local_hostname();
  return error;
}

std::string describe_failed_call(const ApiError& error) {
  return fmt::format("{} returned {} ({})", error.call, error.code_name, error.text);
}

void throw_verbs_failure(const CallSite& site, long long returned, std::string_view returned_text,
                         int error_number, std::string_view device, std::string_view purpose) {
  throw ApiFailure(verbs_api_error(site, returned, returned_text, error_number, device, purpose));
}

void check_verbs(VerbsOutcome<int> outcome, const CallSite& site, std::string_view device,
                 std::string_view purpose) {
  if (outcome.result == 0) return;
  throw_verbs_failure(site, outcome.result, std::to_string(outcome.result),
                      verbs_error_number(outcome.result, outcome.error_number), device, purpose);
}

int check_verbs_count(VerbsOutcome<int> outcome, const CallSite& site, std::string_view device,
                      std::string_view purpose) {
  if (outcome.result >= 0) return outcome.result;
  throw_verbs_failure(site, outcome.result, std::to_string(outcome.result), outcome.error_number,
                      device, purpose);
}

}  // namespace commcert
