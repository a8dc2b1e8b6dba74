#include "core/run_output.hpp"

namespace commcert {

RunOutput::RunOutput(std::filesystem::path directory, std::string run_id, bool owns_meta)
    : directory_(std::move(directory)), run_id_(std::move(run_id)), owns_meta_(owns_meta) {}

void RunOutput::append_record(const Json& record) {
  std::lock_guard lock(mutex_);
  if (!records_) records_ = std::make_unique<RecordsFile>(records_path());
  records_->append(record);
}

void RunOutput::update_meta(const Json& fields) {
  if (!owns_meta_) return;
  std::lock_guard lock(mutex_);
  for (const auto& [key, value] : fields.items())
    meta_[key] = value;
  write_json_file_atomically(meta_path(), meta_);
}

}  // namespace commcert
