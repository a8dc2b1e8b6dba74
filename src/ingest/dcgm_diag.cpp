#include "ingest/dcgm_diag.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "core/record.hpp"
#include "records/health.hpp"

namespace commcert {
namespace {

// Older DCGM (up to 3.x) and newer name the object differently; the layout below is the same.
constexpr std::array<std::string_view, 2> kTopLevelKeys = {"DCGM GPU Diagnostic",
                                                           "DCGM Diagnostic"};
// DCGM's key sits at the start of its output; further in, the text is not DCGM's.
constexpr std::size_t kKeyWindow = 256;

constexpr const char* kCheck = "health.gpu";

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// "Targeted Stress", "targeted_stress" and "targeted-stress" are the same test.
std::string test_key(std::string_view name) {
  std::string out;
  for (const unsigned char c : name) {
    if (std::isalnum(c)) out.push_back(static_cast<char>(std::tolower(c)));
  }
  return out;
}

DcgmOutcome outcome_of(std::string_view status) {
  const std::string s = lower(status);
  if (s == "pass") return DcgmOutcome::kPass;
  if (s == "fail") return DcgmOutcome::kFail;
  if (s == "warn") return DcgmOutcome::kWarn;
  if (s == "skip") return DcgmOutcome::kSkip;
  return DcgmOutcome::kUnknown;
}

// Line and column (1-based) of a byte offset, for a message a user can jump to.
std::pair<std::size_t, std::size_t> line_and_column(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

std::optional<std::string> string_member(const Json& object, const char* name) {
  const auto it = object.find(name);
  if (it == object.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

// `gpu_ids` is a string ("0", or "0,1,2,3" for a test covering every GPU in one entry); some
// versions write a number. Returns false when an element is not a GPU id.
bool read_gpu_ids(const Json& result, std::vector<int>& gpus) {
  const auto it = result.find("gpu_ids");
  if (it == result.end()) return true;
  if (it->is_number_unsigned()) {
    const auto id = it->get<std::uint64_t>();
    if (id > 1024) return false;
    gpus.push_back(static_cast<int>(id));
    return true;
  }
  if (!it->is_string()) return false;
  const std::string text = it->get<std::string>();
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    std::string_view item = std::string_view(text).substr(start, comma - start);
    while (!item.empty() && item.front() == ' ')
      item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ')
      item.remove_suffix(1);
    if (!item.empty() || comma < text.size()) {
      int id = -1;
      const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), id);
      if (ec != std::errc() || end != item.data() + item.size() || id < 0 || id > 1024)
        return false;
      gpus.push_back(id);
    }
    start = comma + 1;
  }
  return true;
}

// `warnings` is an array of strings or of {message|warning, error_id, ...} objects, or one
// string; `info` a string or an array of strings.
void append_text(const Json& value, std::vector<std::string>& out) {
  if (value.is_string()) {
    if (!value.get<std::string>().empty()) out.push_back(value.get<std::string>());
  } else if (value.is_array()) {
    for (const auto& element : value)
      append_text(element, out);
  } else if (value.is_object()) {
    for (const char* name : {"message", "warning"}) {
      if (auto text = string_member(value, name); text && !text->empty()) {
        out.push_back(*text);
        break;
      }
    }
  }
}

std::string message_of(const Json& result) {
  std::vector<std::string> parts;
  for (const char* name : {"warnings", "info"}) {
    if (const auto it = result.find(name); it != result.end()) append_text(*it, parts);
  }
  std::string joined;
  for (const auto& part : parts)
    joined += (joined.empty() ? "" : "; ") + part;
  return joined;
}

void read_categories(const Json& categories, DcgmDiag& diag) {
  for (std::size_t c = 0; c < categories.size(); ++c) {
    const Json& category = categories[c];
    const std::string where_category = fmt::format("test_categories[{}]", c);
    const auto tests = category.is_object() ? category.find("tests") : category.end();
    if (!category.is_object() || tests == category.end() || !tests->is_array()) {
      diag.unreadable.push_back(where_category + ": no 'tests' array");
      continue;
    }
    const std::string category_name = string_member(category, "category").value_or("");
    for (std::size_t t = 0; t < tests->size(); ++t) {
      const Json& test = (*tests)[t];
      const std::string where_test = fmt::format("{}.tests[{}]", where_category, t);
      const auto name = test.is_object() ? string_member(test, "name") : std::nullopt;
      const auto results = test.is_object() ? test.find("results") : test.end();
      if (!name || results == test.end() || !results->is_array()) {
        diag.unreadable.push_back(where_test + ": no 'name' or no 'results' array");
        continue;
      }
      for (std::size_t r = 0; r < results->size(); ++r) {
        const Json& entry = (*results)[r];
        DcgmResult result;
        result.category = category_name;
        result.test = *name;
        result.element = fmt::format("{}.results[{}]", where_test, r);
        const auto status = entry.is_object() ? string_member(entry, "status") : std::nullopt;
        if (!status) {
          diag.unreadable.push_back(result.element + ": no 'status'");
          continue;
        }
        if (!read_gpu_ids(entry, result.gpus)) {
          diag.unreadable.push_back(result.element + ": 'gpu_ids' is not a list of GPU ids");
          continue;
        }
        result.status = *status;
        result.outcome = outcome_of(*status);
        result.message = message_of(entry);
        diag.results.push_back(std::move(result));
      }
    }
  }
}

const char* outcome_word(DcgmOutcome outcome) {
  switch (outcome) {
    case DcgmOutcome::kPass:
      return "passed";
    case DcgmOutcome::kFail:
      return "failed";
    case DcgmOutcome::kWarn:
      return "warned";
    case DcgmOutcome::kSkip:
      return "skipped";
    case DcgmOutcome::kUnknown:
      break;
  }
  return "unknown status";
}

}  // namespace

bool looks_like_dcgm_diag(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || text[first] != '{') return false;
  const std::string_view head = text.substr(first, kKeyWindow);
  return std::any_of(kTopLevelKeys.begin(), kTopLevelKeys.end(), [&](std::string_view key) {
    return head.find(fmt::format("\"{}\"", key)) != std::string_view::npos;
  });
}

DcgmDiag parse_dcgm_diag(std::string_view text) {
  DcgmDiag diag;
  Json root;
  try {
    root = Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    // e.byte is 1-based: the byte at which the parser gave up.
    std::tie(diag.error_line, diag.error_column) =
        line_and_column(text, e.byte > 0 ? e.byte - 1 : 0);
    diag.error =
        fmt::format("not whole JSON at byte {} (a cut-off or damaged dcgmi diag -j file?)", e.byte);
    return diag;
  } catch (const Json::out_of_range& e) {
    // A number beyond a double (1e99999) is nlohmann's out_of_range, not a parse_error: it
    // escaped as an unexpected error (found by the fuzzer). nlohmann names the number, not where.
    diag.error = fmt::format("not readable JSON: {} (a damaged dcgmi diag -j file?)", e.what());
    return diag;
  }
  const Json* body = nullptr;
  if (root.is_object()) {
    for (const auto key : kTopLevelKeys) {
      if (const auto it = root.find(std::string(key)); it != root.end() && it->is_object()) {
        body = &*it;
        break;
      }
    }
  }
  if (!body) {
    diag.error = "no 'DCGM GPU Diagnostic' or 'DCGM Diagnostic' object";
    return diag;
  }
  diag.driver_version = string_member(*body, "Driver Version Detected");
  diag.dcgm_version = string_member(*body, "DCGM Version");
  const auto categories = body->find("test_categories");
  if (categories == body->end() || !categories->is_array()) {
    diag.error = "no 'test_categories' array";
    return diag;
  }
  read_categories(*categories, diag);
  return diag;
}

std::optional<std::string> dcgm_check_of(const DcgmResult& result) {
  // Deployment (software) tests look at the driver, libraries, permissions and page retirement
  // of each GPU; the others exercise the GPU itself. Every one of them is a verdict of DCGM's on
  // the GPU's health, so each is evidence for health.gpu. DCGM's figures (bandwidth, GFLOP/s)
  // are not in its JSON, so no test stands in for commcert's burn or membw measurements.
  static const std::set<std::string> kHardwareTests = {
      "software",      "memory",          "diagnostic", "pcie",      "smstress", "targetedstress",
      "targetedpower", "memorybandwidth", "memtest",    "pulsetest", "eud",      "contextcreate"};
  if (test_key(result.category) == "deployment" || kHardwareTests.count(test_key(result.test)))
    return std::string(kCheck);
  return std::nullopt;
}

int dcgm_run_level(const DcgmDiag& diag) {
  // Level 1 is the deployment (software) tests; each higher level adds the plugins below to the
  // ones before it (DCGM's run-level table; EUD is optional at level 4, so it is not required).
  static const std::vector<std::vector<std::string>> kAddedAtLevel = {
      {"pcie", "memory"},
      {"diagnostic", "targetedstress", "targetedpower", "memorybandwidth"},
      {"memtest", "pulsetest"}};
  std::set<std::string> present;
  bool deployment = false;
  for (const auto& result : diag.results) {
    present.insert(test_key(result.test));
    deployment = deployment || test_key(result.category) == "deployment" ||
                 test_key(result.test) == "software";
  }
  if (!deployment) return 0;
  int level = 1;
  for (const auto& tests : kAddedAtLevel) {
    const bool all = std::all_of(tests.begin(), tests.end(),
                                 [&](const std::string& test) { return present.count(test) > 0; });
    if (!all) break;
    ++level;
  }
  return level;
}

DcgmRecords dcgm_diag_records(const DcgmDiag& diag, const DcgmRecordsOptions& options) {
  DcgmRecords out;
  out.level = dcgm_run_level(diag);
  struct GpuState {
    std::vector<std::string> failed, doubtful, skipped;  // "TEST: message"
    Json tests = Json::object();
  };
  std::map<int, GpuState> gpus;
  for (const auto& result : diag.results) {
    if (!dcgm_check_of(result) || result.gpus.empty()) {
      out.not_judged.push_back(
          fmt::format("{}: DCGM test '{}' ({}) {}", result.element, result.test, result.status,
                      result.gpus.empty() ? "names no GPU" : "has no commcert check"));
      continue;
    }
    const std::string said =
        fmt::format("DCGM {} {} ({}){}", result.test, outcome_word(result.outcome), result.status,
                    result.message.empty() ? std::string() : ": " + result.message);
    for (const int gpu : result.gpus) {
      GpuState& state = gpus[gpu];
      state.tests[result.test] = result.status;
      switch (result.outcome) {
        case DcgmOutcome::kPass:
          break;
        case DcgmOutcome::kFail:
          state.failed.push_back(said);
          break;
        case DcgmOutcome::kWarn:
        case DcgmOutcome::kUnknown:
          state.doubtful.push_back(said);
          break;
        case DcgmOutcome::kSkip:
          state.skipped.push_back(said);
          break;
      }
    }
  }
  const auto joined = [](const std::vector<std::string>& parts) {
    std::string text;
    for (const auto& part : parts)
      text += (text.empty() ? "" : "; ") + part;
    return text;
  };
  for (auto& [index, state] : gpus) {
    HealthRecord record;
    record.origin.run_id = options.run_id;
    record.origin.host = options.node;
    record.origin.gpu = GpuIdentity{index, "", "", ""};
    record.component = HealthRecord::kComponentGpu;
    if (!state.failed.empty()) {
      record.status = RecordStatus::kFail;
      record.reason = joined(state.failed);
    } else if (!state.doubtful.empty()) {
      record.status = RecordStatus::kError;
      record.reason = "DCGM did not pass the GPU: " + joined(state.doubtful);
    } else if (!state.skipped.empty()) {
      record.status = RecordStatus::kSkipped;
      record.reason = joined(state.skipped);
    }
    // A GPU DCGM looked at carries what DCGM reports of it; one it did not pass (error,
    // skipped) names only its component, as commcert's own health stage writes such records.
    if (record.status == RecordStatus::kOk || record.status == RecordStatus::kFail) {
      GpuHealthFields fields;
      fields.driver_version = diag.driver_version;
      record.fields = std::move(fields);
    }
    Json json = to_json(record);
    json[GpuHealthFields::kSource] = GpuHealthFields::kSourceDcgm;
    json[GpuHealthFields::kDcgmLevel] = out.level;
    out.records.push_back(std::move(json));
    out.gpus[std::to_string(index)] = std::move(state.tests);
  }
  return out;
}

}  // namespace commcert
