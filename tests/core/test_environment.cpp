#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "core/environment.hpp"

namespace commcert {
namespace {

TEST(RecordedEnvironment, AdmitsSettingsThatChangeWhatIsMeasured) {
  for (const char* name :
       {"NCCL_DEBUG", "NCCL_ALGO", "NCCL_IB_HCA", "NCCL_SOCKET_IFNAME", "UCX_TLS",
        "UCX_NET_DEVICES", "OMPI_MCA_btl", "OMPI_MCA_pml", "OMPI_MCA_btl_tcp_if_include",
        "COMMCERT_FAULT", "COMMCERT_NODE_NAME", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER",
        "SLURM_JOB_ID", "SLURM_STEP_ID", "SLURM_JOB_NODELIST", "SLURMD_NODENAME",
        "OMP_NUM_THREADS"}) {
    EXPECT_TRUE(is_recorded_environment_variable(name)) << name;
  }
}

TEST(RecordedEnvironment, LeavesOutLauncherInternals) {
  // mpirun sets these for its own processes; orte_precondition_transports is a transport key.
  for (const char* name :
       {"OMPI_MCA_orte_precondition_transports", "OMPI_MCA_orte_hnp_uri", "OMPI_MCA_orte_jobfam",
        "OMPI_MCA_ess_base_jobid", "OMPI_MCA_ess_base_vpid", "OMPI_MCA_pmix",
        "OMPI_MCA_pmix_server_uri", "OMPI_MCA_initial_wdir", "OMPI_MCA_shmem_RUNTIME_QUERY_hint"}) {
    EXPECT_FALSE(is_recorded_environment_variable(name)) << name;
  }
}

TEST(RecordedEnvironment, LeavesOutEverythingElse) {
  for (const char* name : {"AWS_SECRET_ACCESS_KEY",
                           "AWS_ACCESS_KEY_ID",
                           "MY_TOKEN",
                           "GITHUB_TOKEN",
                           "PASSWORD",
                           "HOME",
                           "PATH",
                           "LD_LIBRARY_PATH",
                           "USER",
                           "SSH_AUTH_SOCK",
                           "SLURM_JOB_ACCOUNT",
                           "CUDA_HOME",
                           "NCCL",
                           "nccl_debug",
                           "ncclDebug",
                           "XNCCL_DEBUG",
                           "CUDA_VISIBLE_DEVICES_X",
                           "OMPI_COMM_WORLD_RANK",
                           "PMIX_SECURITY_MODE",
                           "",
                           "COMMCERT"}) {
    EXPECT_FALSE(is_recorded_environment_variable(name)) << name;
  }
}

class EnvironmentSnapshot : public ::testing::Test {
 protected:
  void set(const char* name, const char* value) {
    const char* old = std::getenv(name);
    saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    ::setenv(name, value, 1);
  }
  void TearDown() override {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) {
        ::setenv(it->first.c_str(), it->second->c_str(), 1);
      } else {
        ::unsetenv(it->first.c_str());
      }
    }
  }
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST_F(EnvironmentSnapshot, SecretsNeverReachTheRecord) {
  set("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI-secret-value");
  set("MY_TOKEN", "tok-0123456789-secret");
  set("OMPI_MCA_orte_precondition_transports", "deadbeef00-transport-key");
  set("NCCL_DEBUG", "WARN");
  set("COMMCERT_UNIT_TEST_MARKER", "present");
  const Json env = recorded_environment();
  ASSERT_TRUE(env.is_object());
  EXPECT_EQ(env.value("NCCL_DEBUG", ""), "WARN");
  EXPECT_EQ(env.value("COMMCERT_UNIT_TEST_MARKER", ""), "present");
  EXPECT_FALSE(env.contains("AWS_SECRET_ACCESS_KEY"));
  EXPECT_FALSE(env.contains("MY_TOKEN"));
  EXPECT_FALSE(env.contains("OMPI_MCA_orte_precondition_transports"));
  // Not under another name either: the values appear nowhere in what would be written.
  const std::string text = env.dump();
  for (const char* secret :
       {"wJalrXUtnFEMI-secret-value", "tok-0123456789-secret", "deadbeef00-transport-key"}) {
    EXPECT_EQ(text.find(secret), std::string::npos) << secret;
  }
}

TEST_F(EnvironmentSnapshot, OnlyWhitelistedNamesAndSortedByName) {
  set("NCCL_ZZZ_LAST", "1");
  set("CUDA_VISIBLE_DEVICES", "0,1");
  set("COMMCERT_AAA_FIRST", "2");
  const Json env = recorded_environment();
  std::vector<std::string> names;
  for (const auto& [name, value] : env.items()) {
    EXPECT_TRUE(is_recorded_environment_variable(name)) << name;
    EXPECT_TRUE(value.is_string()) << name;
    names.push_back(name);
  }
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(env.value("CUDA_VISIBLE_DEVICES", ""), "0,1");
}

TEST_F(EnvironmentSnapshot, ValuesAreKeptVerbatim) {
  set("NCCL_IB_HCA", "=mlx5_0:1,mlx5_1:1");  // a value containing '=' and ':'
  set("UCX_TLS", "");
  const Json env = recorded_environment();
  EXPECT_EQ(env.value("NCCL_IB_HCA", "?"), "=mlx5_0:1,mlx5_1:1");
  EXPECT_EQ(env.value("UCX_TLS", "?"), "");
}

}  // namespace
}  // namespace commcert
