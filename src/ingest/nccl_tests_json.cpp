#include "ingest/nccl_tests_json.hpp"

#include <cmath>
#include <map>
#include <string>
#include <tuple>

#include <fmt/format.h>

#include "core/json.hpp"

namespace commcert {
namespace {

// A number written as a number or as a numeric string ("20", "    -1"); nullopt otherwise
// ("nan", null, a word).
std::optional<double> number_of(const Json& object, const char* name) {
  if (!object.is_object()) return std::nullopt;
  const auto it = object.find(name);
  if (it == object.end()) return std::nullopt;
  if (it->is_number()) {
    const double value = it->get<double>();
    return std::isfinite(value) ? std::optional(value) : std::nullopt;
  }
  if (!it->is_string()) return std::nullopt;
  const std::string text = it->get<std::string>();
  std::size_t used = 0;
  try {
    const double value = std::stod(text, &used);
    while (used < text.size() && text[used] == ' ')
      ++used;
    if (used != text.size() || !std::isfinite(value)) return std::nullopt;
    return value;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string text_of(const Json& object, const char* name) {
  if (!object.is_object()) return {};
  const auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string{};
}

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(' ');
  const auto last = text.find_last_not_of(' ');
  return first == std::string::npos ? std::string{} : text.substr(first, last - first + 1);
}

// Returns why the placement cannot be read, empty when it was.
std::string read_placement(const Json& result, const char* name, NcclTestsPlacement& placement) {
  const auto it = result.find(name);
  if (it == result.end() || !it->is_object()) return fmt::format("no '{}' object", name);
  const Json& p = *it;
  auto time = number_of(p, "time");
  if (!time) time = number_of(p, "cpu_time");
  const auto algbw = number_of(p, "alg_bw");
  const auto busbw = number_of(p, "bus_bw");
  if (!time || !algbw || !busbw || *time <= 0 || *algbw < 0 || *busbw < 0)
    return fmt::format("'{}' lacks a positive time and bandwidths", name);
  placement.time_us = *time;
  placement.algbw_gb_s = *algbw;
  placement.busbw_gb_s = *busbw;
  if (const auto wrong = number_of(p, "nwrong")) {
    if (*wrong < 0) return fmt::format("'{}' nwrong is negative", name);
    placement.wrong_elements = std::round(*wrong);
  }
  const auto per_iter = result.find(std::string(name) + "_per_iter");
  if (per_iter != result.end() && per_iter->is_object()) {
    placement.iteration_min_us = number_of(*per_iter, "min_us");
    placement.iteration_max_us = number_of(*per_iter, "max_us");
    placement.iteration_p50_us = number_of(*per_iter, "p50_us");
    placement.iteration_p99_us = number_of(*per_iter, "p99_us");
    placement.iteration_mean_us = number_of(*per_iter, "avg_us");
    placement.iteration_cv_pct = number_of(*per_iter, "cv_pct");
    const auto times = per_iter->find("times_us");
    if (times != per_iter->end() && times->is_array() && !times->empty())
      placement.iteration_count = times->size();
  }
  return {};
}

// An entry that cannot be read is named and counted: the test's ranks are then not all known.
void read_devices(const Json& config, NcclTestsRun& run, NcclTestsLog& log) {
  const auto devices = config.find("devices");
  if (devices == config.end() || !devices->is_array()) return;
  for (std::size_t i = 0; i < devices->size(); ++i) {
    const Json& entry = (*devices)[i];
    const auto rank = number_of(entry, "rank");
    const auto device = number_of(entry, "device");
    const auto whole = [](const std::optional<double>& value) {
      return value && *value >= 0 && *value <= 2147483647.0 && std::floor(*value) == *value;
    };
    const auto hostname = entry.is_object() ? entry.find("hostname") : entry.end();
    const bool named = entry.is_object() && hostname != entry.end();
    std::string why;
    if (!whole(rank) || !whole(device)) {
      why = "no rank or device that is a whole number";
    } else if (named && !hostname->is_string()) {
      why = "hostname is not a string";
    }
    if (!why.empty()) {
      log.unreadable.push_back({0, fmt::format("config.devices[{}]: {}", i, why)});
      ++run.unreadable_devices;
      continue;
    }
    NcclTestsDevice d;
    d.rank = static_cast<int>(*rank);
    const auto pid = number_of(entry, "pid");
    d.pid = whole(pid) ? static_cast<int>(*pid) : 0;
    d.host = named ? hostname->get<std::string>() : std::string();  // none: --node names it
    d.device = static_cast<int>(*device);
    d.pci_bus_id = text_of(entry, "device_hex");
    d.name = text_of(entry, "device_info");
    run.devices.push_back(std::move(d));
  }
}

}  // namespace

bool looks_like_json(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && text[first] == '{';
}

NcclTestsLog parse_nccl_tests_json(std::string_view text) {
  NcclTestsLog log;
  const Json root = Json::parse(text.begin(), text.end(), nullptr, false);
  if (!root.is_object()) {
    log.unreadable.push_back({0, "not a JSON object (a cut-off or damaged -J file?)"});
    return log;
  }
  NcclTestsRun run;
  run.first_line = 1;
  if (const auto args = root.find("args");
      args != root.end() && args->is_array() && !args->empty() && args->front().is_string()) {
    const std::string program = args->front().get<std::string>();
    run.program = program.substr(program.find_last_of('/') + 1);
  }
  if (const auto config = root.find("config"); config != root.end() && config->is_object()) {
    if (const auto iterations = number_of(*config, "iterations"))
      run.iterations = static_cast<int>(*iterations);
    if (const auto warmup = number_of(*config, "warmup_iters"))
      run.warmup_iterations = static_cast<int>(*warmup);
    if (const auto validation = number_of(*config, "validation"))
      run.validation = static_cast<int>(*validation);
    read_devices(*config, run, log);
  }
  std::map<std::tuple<std::uint64_t, std::string, std::string, std::optional<int>>, int> seen;
  const auto results = root.find("results");
  if (results != root.end() && results->is_array()) {
    for (std::size_t i = 0; i < results->size(); ++i) {
      const Json& result = (*results)[i];
      const auto size = number_of(result, "size");
      const auto count = number_of(result, "count");
      if (!size || !count || *size < 0 || *count < 0) {
        log.unreadable.push_back({0, fmt::format("results[{}]: no size or count", i)});
        continue;
      }
      NcclTestsRow row;
      row.line = 0;
      row.size_bytes = static_cast<std::uint64_t>(*size);
      row.count = static_cast<std::uint64_t>(*count);
      row.type = trimmed(text_of(result, "type"));
      row.redop = trimmed(text_of(result, "redop"));
      if (row.redop == "none") row.redop.clear();
      if (const auto root_rank = number_of(result, "root"); root_rank && *root_rank >= 0)
        row.root = static_cast<int>(*root_rank);
      NcclTestsPlacement out_of_place, in_place;
      std::string why = read_placement(result, "out_of_place", out_of_place);
      if (why.empty()) why = read_placement(result, "in_place", in_place);
      if (!why.empty()) {
        log.unreadable.push_back({0, fmt::format("results[{}]: {}", i, why)});
        continue;
      }
      row.out_of_place = out_of_place;
      row.in_place = in_place;
      row.cycle = seen[std::make_tuple(row.size_bytes, row.type, row.redop, row.root)]++;
      run.rows.push_back(std::move(row));
    }
  }
  if (const auto bounds = root.find("out_of_bounds"); bounds != root.end()) {
    if (const auto value = number_of(*bounds, "count"))
      run.out_of_bounds = static_cast<std::int64_t>(*value);
  }
  if (const auto average = root.find("average_bus_bandwidth"); average != root.end())
    run.avg_busbw_gb_s = number_of(*average, "bandwidth");
  if (const auto errors = root.find("errors"); errors != root.end() && errors->is_array()) {
    for (const auto& error : *errors) {
      if (error.is_string() && !error.get<std::string>().empty())
        run.errors.push_back({0, error.get<std::string>()});
    }
  }
  // nccl-tests writes end_time as it finishes: without it the run did not.
  run.concluded = root.contains("end_time");
  log.runs.push_back(std::move(run));
  return log;
}

}  // namespace commcert
