#include "core/run_directory.hpp"

#include <cctype>
#include <chrono>
#include <ctime>
#include <random>
#include <unistd.h>

#include <fmt/format.h>

#include "core/errors.hpp"

namespace commcert {

std::string make_run_id(std::string_view command) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::random_device entropy;
  const auto salt =
      (static_cast<std::uint32_t>(entropy()) ^ static_cast<std::uint32_t>(::getpid())) & 0xffffffU;
  return fmt::format("{:04}{:02}{:02}T{:02}{:02}{:02}Z-{}-{:06x}", utc.tm_year + 1900,
                     utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, command,
                     salt);
}

void validate_run_id(std::string_view run_id) {
  const bool valid_length = !run_id.empty() && run_id.size() <= 128;
  bool valid_chars = valid_length && run_id.front() != '.' && run_id.front() != '-';
  for (char c : run_id) {
    valid_chars = valid_chars &&
                  (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-');
  }
  if (!valid_chars) {
    throw UsageError(fmt::format(
        "invalid --run-id '{}': 1-128 letters, digits, '.', '_' or '-', not starting with '.' "
        "or '-'",
        run_id));
  }
}

std::filesystem::path create_run_directory(const std::filesystem::path& results_root,
                                           std::string_view run_id) {
  validate_run_id(run_id);
  auto directory = results_root / std::string(run_id);
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error) {
    throw RuntimeFailure(
        fmt::format("cannot create results directory {}: {}", directory.string(), error.message()));
  }
  return directory;
}

}  // namespace commcert
