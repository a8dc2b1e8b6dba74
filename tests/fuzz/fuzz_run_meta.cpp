// libFuzzer target: any bytes as a run directory's meta.json, read by run_meta_from_json and by
// read_run_meta from a file (scripts/fuzz). Bytes that are no JSON object end in RunMetaError
// (read_run_meta) or are not handed on (run_meta_from_json); a JSON object that is no meta.json
// must end in RunMetaError. What is read must write back as it reads: to_json of the result
// reads back to the same to_json, and the file and the in-memory reader agree. A crash, a hang,
// a sanitizer report, any other exception or a broken promise (a trap) is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <unistd.h>

#include "core/json.hpp"
#include "records/run_meta.hpp"

namespace {

void require(bool promise) {
  if (!promise) __builtin_trap();
}

// One directory per process (libFuzzer's -jobs/-fork run processes apart), removed at exit.
class ScratchDirectory {
 public:
  ScratchDirectory()
      : path_(std::filesystem::temp_directory_path() /
              ("commcert-fuzz-run-meta-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path_);
  }
  ~ScratchDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The file each input is written to, rewritten for every input.
const std::filesystem::path& meta_file() {
  static const ScratchDirectory directory;
  static const std::filesystem::path path = directory.path() / commcert::RunMeta::kFileName;
  return path;
}

std::optional<commcert::Json> read_file(const std::uint8_t* data, std::size_t size) {
  const auto& path = meta_file();
  std::FILE* file = std::fopen(path.c_str(), "wb");
  require(file != nullptr);
  require(size == 0 || std::fwrite(data, 1, size, file) == size);
  require(std::fclose(file) == 0);
  try {
    return commcert::to_json(commcert::read_run_meta(path));
  } catch (const commcert::RunMetaError&) {
    return std::nullopt;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::optional<commcert::Json> from_file = read_file(data, size);
  const commcert::Json json = commcert::Json::parse(data, data + size, nullptr, false);
  if (json.is_discarded()) {
    require(!from_file);
    return 0;
  }
  std::optional<commcert::Json> written;
  try {
    const commcert::RunMeta meta = commcert::run_meta_from_json(json);
    (void)meta.first_start_time();
    (void)meta.last_end_time();
    (void)meta.statuses();
    (void)meta.fault_plan();
    written = commcert::to_json(meta);
  } catch (const commcert::RunMetaError&) {
    // refused with a message naming the field: what the reader must do with a wrong meta.json
  }
  // read_run_meta refuses what is no object before run_meta_from_json sees it; else they agree.
  if (json.is_object()) require(from_file == written);
  if (!written) return 0;
  require(written->is_object());
  // Read back, what was written reads as it was written: nothing lost or changed a second time.
  const commcert::RunMeta again = commcert::run_meta_from_json(*written);
  require(commcert::to_json(again) == *written);
  return 0;
}
