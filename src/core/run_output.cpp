#include "core/run_output.hpp"

#include <fstream>
#include <sstream>

namespace commcert {

RunOutput::RunOutput(std::filesystem::path directory, std::string run_id, bool owns_meta)
    : directory_(std::move(directory)), run_id_(std::move(run_id)), owns_meta_(owns_meta) {
  if (owns_meta_) keep_earlier_meta();
}

void RunOutput::keep_earlier_meta() {
  std::error_code error;
  if (!std::filesystem::exists(meta_path(), error)) return;
  std::ifstream file(meta_path());
  std::ostringstream text;
  text << file.rdbuf();
  Json earlier = Json::parse(text.str(), nullptr, false);
  if (!earlier.is_object()) {
    // Not ours to judge, and not to be lost: set aside beside the new one.
    std::filesystem::rename(meta_path(), directory_ / "meta.json.unreadable", error);
    return;
  }
  Json stages = Json::array();
  if (auto found = earlier.find("earlier"); found != earlier.end() && found->is_array()) {
    stages = std::move(*found);
    earlier.erase("earlier");
  }
  stages.push_back(std::move(earlier));
  earlier_ = std::move(stages);
}

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
  if (!earlier_.is_null()) {
    meta_.erase("earlier");  // re-added last: the latest command's fields come first
    meta_["earlier"] = earlier_;
  }
  write_json_file_atomically(meta_path(), meta_);
}

}  // namespace commcert
