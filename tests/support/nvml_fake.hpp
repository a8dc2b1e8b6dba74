#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

// Where the fake libnvidia-ml.so.1 variants and their scripts are (tests/fake_nvml).
namespace commcert::testing {

inline std::string fake_nvml(const std::string& variant) {
  return std::string(COMMCERT_FAKE_NVML_DIR) + "/" + variant + "/libnvidia-ml.so.1";
}

inline std::filesystem::path fixture(const std::string& relative) {
  return std::filesystem::path(COMMCERT_SOURCE_DIR) / "tests/fixtures" / relative;
}

// The fake reads its script at nvmlInit_v2.
inline void use_nvml_script(const std::string& name) {
  ::setenv("COMMCERT_FAKE_NVML_SCRIPT", fixture("nvml/" + name).c_str(), 1);
}

}  // namespace commcert::testing
