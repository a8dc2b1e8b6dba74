#include "validate/detail/record_common.hpp"

#include "core/node_identity.hpp"
#include "core/printable.hpp"

namespace commcert::detail {

void check_node_name(std::string_view name, const Where& field) {
  const auto why = node_name_problem(name);
  if (!why) return;
  // Enough of the name to recognise it, cut at a character's first byte: a note stays short
  // and valid UTF-8 however long the name was.
  constexpr std::size_t kShown = 64;
  std::size_t shown = std::min(name.size(), kShown);
  while (shown < name.size() && (static_cast<unsigned char>(name[shown]) & 0xc0U) == 0x80)
    --shown;
  record_error(field, fmt::format("invalid node name '{}{}': {}", printable(name.substr(0, shown)),
                                  shown < name.size() ? "..." : "", *why));
}

RecordStatus CommonFields::parse_status(std::string_view text) {
  for (const auto status : {RecordStatus::kOk, RecordStatus::kFail, RecordStatus::kError,
                            RecordStatus::kTimeout, RecordStatus::kSkipped}) {
    if (text == to_string(status)) return status;
  }
  record_error(RecordFields::kStatus, fmt::format("unknown status '{}'", text));
}

void CommonFields::read_gpu(od::value& value) {
  for_each_field(
      object(value, RecordFields::kGpu), RecordFields::kGpu, [&](std::string_view k, od::value& v) {
        if (k == GpuIdentityFields::kIndex) {
          gpu_index = small_int(v, {RecordFields::kGpu, GpuIdentityFields::kIndex});
        } else if (k == GpuIdentityFields::kUuid) {
          gpu_uuid =
              optional_string(v, {RecordFields::kGpu, GpuIdentityFields::kUuid}).value_or("");
        }
      });
}

std::optional<int> lenient_rank(od::value& value) {
  od::json_type type{};
  std::int64_t number = 0;
  if (value.type().get(type) || type != od::json_type::number) return std::nullopt;
  if (value.get_int64().get(number) || number < 0 || number > 1'000'000'000) return std::nullopt;
  return static_cast<int>(number);
}

void lenient_ranks(od::value& value, std::vector<int>& out) {
  od::array ranks;
  if (value.get_array().get(ranks)) return;
  for (auto element : ranks) {
    od::value rank;
    // NOLINTNEXTLINE(performance-move-const-arg): simdjson's get() accepts only an rvalue result.
    if (std::move(element).get(rank)) return;
    if (const auto number = lenient_rank(rank)) out.push_back(*number);
  }
}

void CommonFields::read_rank(od::value& value) {
  rank = lenient_rank(value);
}

void CommonFields::require() const {
  using F = RecordFields;
  if (!schema) record_error(F::kSchema, "missing");
  if (*schema > kRecordSchemaVersion) {
    throw UnsupportedSchema(
        fmt::format("{} (this validator reads up to {})", *schema, kRecordSchemaVersion));
  }
  if (*schema < 1) record_error(F::kSchema, fmt::format("invalid version {}", *schema));
  if (!run_id || run_id->empty()) record_error(F::kRunId, "missing");
  if (!status) record_error(F::kStatus, "missing");
  if (!host || host->empty()) record_error(F::kHost, "missing");
  check_node_name(*host, F::kHost);
}

std::vector<XidEvidence> read_xids(od::value& value, const Where& where, StringPool& strings) {
  std::vector<XidEvidence> xids;
  if (is_null(value, where)) return xids;
  for_each_element(array(value, where), where, [&](od::value& element) {
    XidEvidence xid;
    for_each_field(object(element, where), where, [&](std::string_view k, od::value& v) {
      if (k == XidEvent::kXid) {
        xid.xid = small_int(v, XidEvent::kXid);
      } else if (k == XidEvent::kTime) {
        xid.time =
            strings.intern(optional_string(v, {XidEvent::kXid, XidEvent::kTime}).value_or(""));
      }
    });
    xids.push_back(xid);
  });
  return xids;
}

}  // namespace commcert::detail
