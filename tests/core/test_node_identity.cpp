#include <array>
#include <cstdlib>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

#include "cli/run_setup.hpp"
#include "core/errors.hpp"
#include "core/node_identity.hpp"
#include "health/pci_address.hpp"
#include "scripted_communicator.hpp"

namespace commcert {
namespace {

// Saves and restores the variables the resolution reads, so tests can set them freely.
class NodeIdentityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : kVariables) {
      const char* value = std::getenv(name);
      saved_.push_back(value ? std::optional<std::string>(value) : std::nullopt);
      ::unsetenv(name);
    }
  }
  void TearDown() override {
    for (std::size_t i = 0; i < std::size(kVariables); ++i) {
      if (saved_[i]) {
        ::setenv(kVariables[i], saved_[i]->c_str(), 1);
      } else {
        ::unsetenv(kVariables[i]);
      }
    }
  }
  static constexpr const char* kVariables[] = {"COMMCERT_NODE_NAME", "SLURMD_NODENAME"};
  std::vector<std::optional<std::string>> saved_;
};

std::string short_hostname() {
  std::array<char, 256> buffer{};
  EXPECT_EQ(::gethostname(buffer.data(), buffer.size() - 1), 0);
  const std::string full = buffer.data();
  return full.substr(0, full.find('.'));
}

TEST_F(NodeIdentityTest, FlagWinsOverEverything) {
  ::setenv("COMMCERT_NODE_NAME", "from-env", 1);
  ::setenv("SLURMD_NODENAME", "from-slurm", 1);
  const NodeIdentity id = resolve_node_identity(std::string("from-flag"), 0);
  EXPECT_EQ(id.node, "from-flag");
  EXPECT_EQ(id.source, "flag");
}

TEST_F(NodeIdentityTest, EnvironmentVariableWinsOverSlurm) {
  ::setenv("COMMCERT_NODE_NAME", "from-env", 1);
  ::setenv("SLURMD_NODENAME", "from-slurm", 1);
  const NodeIdentity id = resolve_node_identity(std::nullopt, 0);
  EXPECT_EQ(id.node, "from-env");
  EXPECT_EQ(id.source, "COMMCERT_NODE_NAME");
}

TEST_F(NodeIdentityTest, SlurmWinsOverTheHostname) {
  ::setenv("SLURMD_NODENAME", "gpu-node-017", 1);
  const NodeIdentity id = resolve_node_identity(std::nullopt, 3);
  EXPECT_EQ(id.node, "gpu-node-017");
  EXPECT_EQ(id.source, "SLURMD_NODENAME");
}

TEST_F(NodeIdentityTest, ShortHostnameLast) {
  const NodeIdentity id = resolve_node_identity(std::nullopt, 0);
  EXPECT_EQ(id.source, "hostname");
  EXPECT_EQ(id.node, short_hostname());
  EXPECT_EQ(id.node.find('.'), std::string::npos);
}

TEST_F(NodeIdentityTest, EmptyValuesFallThrough) {
  ::setenv("COMMCERT_NODE_NAME", "", 1);
  ::setenv("SLURMD_NODENAME", "", 1);
  const NodeIdentity id = resolve_node_identity(std::string(""), 0);
  EXPECT_EQ(id.source, "hostname");
  ::setenv("SLURMD_NODENAME", "n1", 1);
  EXPECT_EQ(resolve_node_identity(std::string(""), 0).node, "n1");
}

TEST_F(NodeIdentityTest, HostnameIsAlwaysTheMachinesHostname) {
  ::setenv("COMMCERT_NODE_NAME", "pretend", 1);
  const NodeIdentity id = resolve_node_identity(std::nullopt, 0);
  EXPECT_EQ(id.hostname, local_hostname());
  EXPECT_EQ(short_hostname(), local_hostname().substr(0, local_hostname().find('.')));
}

TEST_F(NodeIdentityTest, RankPlaceholderExpandsInFlagAndEnvironment) {
  EXPECT_EQ(resolve_node_identity(std::string("node{rank}"), 3).node, "node3");
  EXPECT_EQ(resolve_node_identity(std::string("node{rank}"), 12).node, "node12");
  EXPECT_EQ(resolve_node_identity(std::string("r{rank}-of-{rank}"), 5).node, "r5-of-5");
  EXPECT_EQ(resolve_node_identity(std::string("fixed"), 5).node, "fixed");
  ::setenv("COMMCERT_NODE_NAME", "env{rank}", 1);
  EXPECT_EQ(resolve_node_identity(std::nullopt, 7).node, "env7");
}

TEST_F(NodeIdentityTest, RankDivisorFromOneToAMillion) {
  // {rank/0} used to be taken as {rank/1} without a word: every rank became its own node.
  EXPECT_EQ(resolve_node_identity(std::string("n{rank/1}"), 5).node, "n5");
  EXPECT_EQ(resolve_node_identity(std::string("n{rank/2}"), 5).node, "n2");
  EXPECT_EQ(resolve_node_identity(std::string("n{rank/999999}"), 5).node, "n0");
  EXPECT_EQ(resolve_node_identity(std::string("n{rank/1000000}"), 5).node, "n0");
  for (const char* pattern : {"n{rank/0}", "n{rank/1000001}", "n{rank/99999999999}"}) {
    try {
      (void)resolve_node_identity(std::string(pattern), 0);
      ADD_FAILURE() << "accepted " << pattern;
    } catch (const UsageError& error) {
      const std::string what = error.what();
      EXPECT_NE(what.find("--node-name"), std::string::npos) << what;
      EXPECT_NE(what.find("K must be from 1 to 1000000"), std::string::npos) << what;
    }
  }
  ::setenv("COMMCERT_NODE_NAME", "env{rank/0}", 1);
  try {
    (void)resolve_node_identity(std::nullopt, 0);
    ADD_FAILURE() << "accepted env{rank/0}";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("COMMCERT_NODE_NAME"), std::string::npos);
  }
}

TEST_F(NodeIdentityTest, SlurmNamesAreTakenAsTheyAre) {
  // Slurm's name is the name drain/resume act on: no expansion; braces are invalid there.
  ::setenv("SLURMD_NODENAME", "node{rank}", 1);
  EXPECT_THROW((void)resolve_node_identity(std::nullopt, 1), UsageError);
}

TEST_F(NodeIdentityTest, InvalidNamesAreRejectedNamingTheirOrigin) {
  const struct {
    const char* flag;
    const char* env;
    const char* slurm;
    const char* origin;
  } cases[] = {{"bad name", nullptr, nullptr, "--node-name"},
               {nullptr, "a;reboot", nullptr, "COMMCERT_NODE_NAME"},
               {nullptr, nullptr, "n$(id)", "SLURMD_NODENAME"}};
  for (const auto& c : cases) {
    ::unsetenv("COMMCERT_NODE_NAME");
    ::unsetenv("SLURMD_NODENAME");
    if (c.env) ::setenv("COMMCERT_NODE_NAME", c.env, 1);
    if (c.slurm) ::setenv("SLURMD_NODENAME", c.slurm, 1);
    const std::optional<std::string> flag =
        c.flag ? std::optional<std::string>(c.flag) : std::nullopt;
    try {
      (void)resolve_node_identity(flag, 0);
      ADD_FAILURE() << "accepted a name from " << c.origin;
    } catch (const UsageError& error) {
      EXPECT_NE(std::string(error.what()).find(c.origin), std::string::npos) << error.what();
    }
  }
}

TEST(ValidateNodeName, AcceptsLettersDigitsDotUnderscoreDash) {
  for (const char* good : {"a", "node01", "gpu-node-017", "rack3.node_7", "N", "0", "_x", "a-",
                           "a.", "UPPER-lower.09_"}) {
    EXPECT_NO_THROW(validate_node_name(good, "test")) << good;
  }
  EXPECT_NO_THROW(validate_node_name(std::string(64, 'n'), "test"));
}

TEST(ValidateNodeName, RejectsEverythingElse) {
  for (const char* bad :
       {"",    "-node", ".node", "a b",  " node", "node ", "a;b", "a|b", "a&b",  "$(x)",     "`x`",
        "a'b", "a\"b",  "a/b",   "a\\b", "a*",    "a?",    "a<b", "a>b", "a\nb", "a\tb",     "a:b",
        "a,b", "a=b",   "a{b}",  "a~",   "a#",    "a%",    "a@b", "a!",  "a+b",  "n\xc3\xa9"}) {
    EXPECT_THROW(validate_node_name(bad, "test"), UsageError) << bad;
  }
  EXPECT_THROW(validate_node_name(std::string(65, 'n'), "test"), UsageError);
  EXPECT_THROW(validate_node_name(std::string("a\0b", 3), "test"), UsageError);
}

TEST(ValidateNodeName, ErrorSaysWhereTheNameCameFrom) {
  try {
    validate_node_name("x y", "SLURMD_NODENAME");
    FAIL() << "no exception";
  } catch (const UsageError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("SLURMD_NODENAME"), std::string::npos) << message;
    EXPECT_NE(message.find("x y"), std::string::npos) << message;
  }
}

TEST(RankIdentities, TheSweepSpellsAGpusPciAddressAsTheOtherStagesDo) {
  // CUDA and NVML give the domain in 8 digits and upper case; health, burn and membw records use
  // the sysfs form, and the validator joins records on it.
  GpuIdentity gpu;
  gpu.index = 0;
  gpu.uuid = "GPU-8a1c2e3f-0000-4b5c-9d6e-0123456789ab";
  gpu.name = "NVIDIA H100 80GB HBM3";
  gpu.pci_bus_id = "00000000:3B:00.0";
  test_support::ScriptedCommunicator communicator{1};
  communicator.gpus = {gpu};
  const auto slots = communicator_slots(communicator);
  ASSERT_EQ(slots.size(), 1u);
  ASSERT_TRUE(slots[0].gpu.has_value());
  EXPECT_EQ(slots[0].gpu->pci_bus_id, "0000:3b:00.0");
  EXPECT_EQ(slots[0].gpu->pci_bus_id, normalize_pci_bus_id("0000:3b:00.0"));
  EXPECT_EQ(slots[0].gpu->uuid, gpu.uuid);
}

}  // namespace
}  // namespace commcert
