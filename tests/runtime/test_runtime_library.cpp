// Finding and loading NCCL and cuBLASLt at run time (src/runtime/): the places a GPU node keeps
// them, in order, and what a user reads when none is there.
#include <filesystem>
#include <fstream>
#include <map>

#include <gtest/gtest.h>

#include "child_process.hpp"
#include "runtime/library_search.hpp"
#include "runtime/runtime_library.hpp"
#include "temp_directory.hpp"

namespace commcert {
namespace {

namespace fs = std::filesystem;
using test_support::run_in_child;
using test_support::TempDirectory;

EnvironmentLookup environment_of(std::map<std::string, std::string> variables) {
  return [variables = std::move(variables)](const std::string& name) -> std::optional<std::string> {
    auto found = variables.find(name);
    if (found == variables.end()) return std::nullopt;
    return found->second;
  };
}

// A library the system search cannot find by this name: the fake NVML under another soname.
constexpr const char* kProbeSoname = "libcommcert-loader-probe.so.7";
const LibrarySpec kProbeSpec{"probe", kProbeSoname, "COMMCERT_PROBE_LIBRARY", {"PROBE_HOME"}};

fs::path fake_library() {
  return fs::path(COMMCERT_FAKE_NVML_DIR) / "current" / "libnvidia-ml.so.1";
}

// `directory`/`soname` as a symbolic link to `target`, the way a stub directory is built.
fs::path link_library(const fs::path& directory, const std::string& soname,
                      const fs::path& target) {
  fs::create_directories(directory);
  fs::create_symlink(target, directory / soname);
  return directory / soname;
}

// A private copy of the fake library: other tests of this binary load the fake itself, and the
// dynamic linker hands back an already loaded file (same inode) under its first path.
fs::path copy_library(const fs::path& directory, const std::string& soname) {
  fs::create_directories(directory);
  fs::copy_file(fake_library(), directory / soname);
  return directory / soname;
}

fs::path touch(const fs::path& file) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << "";
  return file;
}

std::string origin_and_path(const RuntimeLibrary& library) {
  return library.loaded() ? library.origin + " | " + library.path() : "error: " + library.error;
}

TEST(LibraryCandidates, OverrideVariableReplacesTheWholeSearch) {
  TempDirectory home;
  touch(home.path() / "lib" / kProbeSoname);
  const auto candidates = library_candidates(
      kProbeSpec, environment_of({{"COMMCERT_PROBE_LIBRARY", "/opt/x/libprobe.so"},
                                  {"PROBE_HOME", home.path()}}));
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_EQ(candidates[0], (LibraryCandidate{"/opt/x/libprobe.so", "COMMCERT_PROBE_LIBRARY"}));
}

TEST(LibraryCandidates, HomeThenSystemThenCudaThenPythonEnvironments) {
  TempDirectory root;
  const fs::path base = root.path();
  const auto in_home = touch(base / "probe" / "lib64" / kProbeSoname);
  const auto in_cuda = touch(base / "cuda" / "lib" / kProbeSoname);
  const auto in_default_cuda =
      touch(base / "default-cuda" / "targets/x86_64-linux/lib" / kProbeSoname);
  const auto in_venv =
      touch(base / "venv/lib/python3.12/site-packages/nvidia/probe/lib" / kProbeSoname);
  const auto in_conda =
      touch(base / "conda/lib/python3.11/site-packages/nvidia/cu13/lib" / kProbeSoname);
  const auto candidates =
      library_candidates(kProbeSpec,
                         environment_of({{"PROBE_HOME", (base / "probe").string()},
                                         {"CUDA_HOME", (base / "cuda").string()},
                                         {"VIRTUAL_ENV", (base / "venv").string()},
                                         {"CONDA_PREFIX", (base / "conda").string()}}),
                         (base / "default-cuda").string());
  const std::vector<LibraryCandidate> expected{
      {in_home.string(), "PROBE_HOME"},
      {kProbeSoname, "system library path"},
      {in_cuda.string(), "CUDA_HOME"},
      {in_default_cuda.string(), (base / "default-cuda").string()},
      {in_venv.string(), "python environment " + (base / "venv").string()},
      {in_conda.string(), "python environment " + (base / "conda").string()},
  };
  ASSERT_GE(candidates.size(), expected.size());
  // /usr/local and /usr are searched last and may hold real copies on this machine.
  EXPECT_EQ(std::vector(candidates.begin(), candidates.begin() + expected.size()), expected);
}

TEST(LibraryCandidates, MissingFilesAndDanglingLinksAreNotCandidates) {
  TempDirectory root;
  fs::create_directories(root.path() / "probe" / "lib");
  fs::create_symlink(root.path() / "nowhere.so", root.path() / "probe" / "lib" / kProbeSoname);
  const auto candidates = library_candidates(
      kProbeSpec, environment_of({{"PROBE_HOME", (root.path() / "probe").string()}}),
      (root.path() / "no-cuda").string());
  ASSERT_FALSE(candidates.empty());
  EXPECT_EQ(candidates[0], (LibraryCandidate{kProbeSoname, "system library path"}));
}

TEST(PythonPrefixes, TakesThePython3OnPathWithoutFollowingItsLink) {
  TempDirectory root;
  const fs::path bin = root.path() / "torch-venv" / "bin";
  fs::create_directories(bin);
  fs::create_symlink("/usr/bin/python3", bin / "python3");  // how a venv's python3 looks
  const auto prefixes = python_prefixes(
      environment_of({{"PATH", "/nonexistent:" + bin.string()}, {"HOME", "/home/u"}}));
  ASSERT_GE(prefixes.size(), 3u);
  EXPECT_EQ(prefixes[0], (root.path() / "torch-venv").string());
  EXPECT_EQ(prefixes[1], "/home/u/.local");
  EXPECT_EQ(prefixes.back(), "/usr");
}

TEST(LoadRuntimeLibrary, LoadsFromEachPlace) {
  const std::vector<std::pair<std::string, std::string>> places{
      {"PROBE_HOME", "home/lib"},
      {"CUDA_HOME", "cuda/lib64"},
      {"VIRTUAL_ENV", "venv/lib/python3.12/site-packages/nvidia/probe/lib"},
  };
  for (const auto& [variable, folder] : places) {
    TempDirectory root;
    const std::string prefix = (root.path() / fs::path(folder).begin()->string()).string();
    const auto link = copy_library(root.path() / folder, kProbeSoname);
    const auto result = run_in_child([&] {
      const auto library = load_runtime_library(
          kProbeSpec, environment_of({{variable, prefix}}),
          [](const SharedLibrary& loaded) {
            return loaded.symbol("nvmlInit_v2") ? std::string("has nvmlInit_v2") : std::string();
          },
          (root.path() / "no-cuda").string());
      return origin_and_path(library) + " | " + library.version;
    });
    const std::string origin =
        variable == "VIRTUAL_ENV" ? "python environment " + prefix : variable;
    EXPECT_EQ(result, origin + " | " + link.string() + " | has nvmlInit_v2") << variable;
  }
}

TEST(LoadRuntimeLibrary, AFileThatFailsToLoadIsReportedAndTheSearchGoesOn) {
  TempDirectory root;
  const auto broken = touch(root.path() / "home" / "lib" / kProbeSoname);  // not an ELF file
  const auto good = copy_library(root.path() / "cuda" / "lib", kProbeSoname);
  const auto result = run_in_child([&] {
    const auto library =
        load_runtime_library(kProbeSpec,
                             environment_of({{"PROBE_HOME", (root.path() / "home").string()},
                                             {"CUDA_HOME", (root.path() / "cuda").string()}}),
                             nullptr, (root.path() / "no-cuda").string());
    return origin_and_path(library);
  });
  EXPECT_EQ(result, "CUDA_HOME | " + good.string());
}

TEST(LoadRuntimeLibrary, NothingFoundNamesTheLibraryThePlacesAndWhatToSet) {
  TempDirectory root;
  const auto broken = touch(root.path() / "home" / "lib" / kProbeSoname);
  const auto library = load_runtime_library(
      kProbeSpec, environment_of({{"PROBE_HOME", (root.path() / "home").string()}}), nullptr,
      (root.path() / "no-cuda").string());
  ASSERT_FALSE(library.loaded());
  EXPECT_NE(library.error.find(std::string(kProbeSoname) + " not found"), std::string::npos)
      << library.error;
  EXPECT_NE(library.error.find("system library path"), std::string::npos) << library.error;
  EXPECT_NE(library.error.find("set PROBE_HOME or COMMCERT_PROBE_LIBRARY"), std::string::npos)
      << library.error;
  EXPECT_NE(library.error.find(broken.string()), std::string::npos)
      << "the file that failed to load is named: " << library.error;
}

// The real libraries of the CUDA toolkit, reached through a stub directory of links.
TEST(LoadRuntimeLibrary, FindsTheToolkitsNcclThroughNcclHomeAndReadsItsVersion) {
  const fs::path real = "/usr/local/cuda/lib/libnccl.so.2";
  if (!fs::exists(real)) GTEST_SKIP() << "no CUDA toolkit with NCCL at /usr/local/cuda";
  TempDirectory root;
  const auto link = link_library(root.path() / "nccl" / "lib", "libnccl.so.2", real);
  const auto result = run_in_child([&] {
    auto environment = environment_of({{"NCCL_HOME", (root.path() / "nccl").string()}});
    const auto library =
        load_runtime_library(nccl_library_spec(), environment, [](const SharedLibrary& nccl) {
          using GetVersion = int (*)(int*);
          int code = 0;
          auto get = reinterpret_cast<GetVersion>(nccl.symbol("ncclGetVersion"));
          return get && get(&code) == 0 ? nccl_version_text(code) : std::string();
        });
    return origin_and_path(library) + " | " + library.version;
  });
  EXPECT_EQ(result.rfind("NCCL_HOME | " + link.string() + " | 2.", 0), 0u) << result;
}

TEST(LoadRuntimeLibrary, OverrideVariableLoadsExactlyThatFile) {
  const fs::path real = "/usr/local/cuda/lib/libcublasLt.so.13";
  if (!fs::exists(real)) GTEST_SKIP() << "no CUDA 13 toolkit with cuBLASLt at /usr/local/cuda";
  TempDirectory root;
  const auto link = link_library(root.path() / "any" / "where", "libcublasLt.so.13", real);
  const auto result = run_in_child([&] {
    const auto library = load_runtime_library(
        cublaslt_library_spec(13), environment_of({{"COMMCERT_CUBLASLT_LIBRARY", link.string()}}),
        nullptr);
    return origin_and_path(library);
  });
  EXPECT_EQ(result, "COMMCERT_CUBLASLT_LIBRARY | " + link.string());
}

TEST(VersionText, NcclCodesOfBothEncodings) {
  EXPECT_EQ(nccl_version_text(22809), "2.28.9");
  EXPECT_EQ(nccl_version_text(21803), "2.18.3");
  EXPECT_EQ(nccl_version_text(20900), "2.9.0");
  EXPECT_EQ(nccl_version_text(2708), "2.7.8");  // before 2.9: major*1000 + minor*100 + patch
}

TEST(VersionText, CublasCode) {
  EXPECT_EQ(cublas_version_text(130100), "13.1.0");
  EXPECT_EQ(cublas_version_text(120803), "12.8.3");
}

TEST(LibrarySpecs, SonamesFollowTheCudaMajor) {
  EXPECT_EQ(nccl_library_spec().soname, "libnccl.so.2");
  EXPECT_EQ(cublaslt_library_spec(13).soname, "libcublasLt.so.13");
  EXPECT_EQ(cublaslt_library_spec(12).soname, "libcublasLt.so.12");
}

}  // namespace
}  // namespace commcert
