#include "validate/detail/record_parser.hpp"

#include <fmt/format.h>

#include "validate/detail/ondemand.hpp"

namespace commcert::detail {

void record_error(std::string_view field, std::string_view problem) {
  throw RecordError(fmt::format("{}: {}", field, problem));
}

std::size_t parser_padding() {
  return simdjson::SIMDJSON_PADDING;
}

std::string sniff_string_field(std::string_view line, std::string_view key) {
  const std::string needle = fmt::format("\"{}\":\"", key);
  const auto start = line.find(needle);
  if (start == std::string_view::npos) return {};
  const auto begin = start + needle.size();
  const auto end = line.find('"', begin);
  if (end == std::string_view::npos) return {};
  return std::string(line.substr(begin, end - begin));
}

namespace {

RecordStatus parse_status(std::string_view text) {
  if (text == "ok") return RecordStatus::kOk;
  if (text == "fail") return RecordStatus::kFail;
  if (text == "error") return RecordStatus::kError;
  if (text == "timeout") return RecordStatus::kTimeout;
  if (text == "skipped") return RecordStatus::kSkipped;
  record_error("status", fmt::format("unknown status '{}'", text));
}

CollectiveScope parse_scope(std::string_view text) {
  if (text == "cluster") return CollectiveScope::kCluster;
  if (text == "node") return CollectiveScope::kNode;
  if (text == "pairs") return CollectiveScope::kPairs;
  return CollectiveScope::kOther;
}

int small_int(od::value& value, std::string_view field) {
  const std::int64_t v = integer(value, field);
  if (v < -1 || v > 1'000'000'000) record_error(field, fmt::format("out of range ({})", v));
  return static_cast<int>(v);
}

std::optional<int> optional_small_int(od::value& value, std::string_view field) {
  if (is_null(value, field)) return std::nullopt;
  return small_int(value, field);
}

// The fields every record carries (docs/records.md).
struct Common {
  std::optional<std::int64_t> schema;
  std::optional<std::string_view> run_id;
  std::optional<RecordStatus> status;
  std::optional<std::string_view> host;
  int gpu_index = -1;
  std::string_view gpu_uuid;
  std::string_view reason;

  // Returns false for a field that is not common.
  bool field(std::string_view key, od::value& value) {
    switch (key_id(key)) {
      case key_id("schema"):
        if (key != "schema") return false;
        schema = integer(value, key);
        return true;
      case key_id("run_id"):
        if (key != "run_id") return false;
        run_id = string(value, key);
        return true;
      case key_id("status"):
        if (key != "status") return false;
        status = parse_status(string(value, key));
        return true;
      case key_id("host"):
        if (key != "host") return false;
        host = string(value, key);
        return true;
      case key_id("gpu"):
        if (key != "gpu") return false;
        if (is_null(value, key)) return true;
        for_each_field(object(value, key), "gpu", [&](std::string_view k, od::value& v) {
          if (k == "index") {
            gpu_index = small_int(v, "gpu.index");
          } else if (k == "uuid") {
            gpu_uuid = optional_string(v, "gpu.uuid").value_or("");
          }
        });
        return true;
      case key_id("reason"):
        if (key != "reason") return false;
        reason = string(value, key);
        return true;
      case key_id("kind"):
        return key == "kind";
      case key_id("time"):
        return key == "time";
      case key_id("rank"):
        return key == "rank";
      case key_id("local_rank"):
        return key == "local_rank";
      default:
        return false;
    }
  }

  void require() const {
    if (!schema) record_error("schema", "missing");
    if (*schema > kRecordSchemaVersion) {
      throw UnsupportedSchema(
          fmt::format("{} (this validator reads up to {})", *schema, kRecordSchemaVersion));
    }
    if (*schema < 1) record_error("schema", fmt::format("invalid version {}", *schema));
    if (!run_id || run_id->empty()) record_error("run_id", "missing");
    if (!status) record_error("status", "missing");
    if (!host || host->empty()) record_error("host", "missing");
  }
};

std::vector<XidEvidence> read_xids(od::value& value, std::string_view field, StringPool& strings) {
  std::vector<XidEvidence> xids;
  if (is_null(value, field)) return xids;
  for_each_element(array(value, field), field, [&](od::value& element) {
    XidEvidence xid;
    for_each_field(object(element, field), field, [&](std::string_view k, od::value& v) {
      if (k == "xid") {
        xid.xid = small_int(v, "xid");
      } else if (k == "time") {
        xid.time = strings.intern(optional_string(v, "xid.time").value_or(""));
      }
    });
    xids.push_back(xid);
  });
  return xids;
}

}  // namespace

struct RecordParser::Impl {
  explicit Impl(Evidence& e) : evidence(e) {}

  Evidence& evidence;
  od::parser parser;
  std::vector<WrongRank> wrong;     // reused between records
  std::vector<NodeId> group_nodes;  // reused between records
  std::vector<NodeId> last_group_nodes;
  std::uint32_t last_group = kNoString;

  GpuKey gpu_key(const Common& c) {
    GpuKey key;
    key.index = c.gpu_index;
    if (!c.gpu_uuid.empty()) key.uuid = evidence.strings.intern(c.gpu_uuid);
    return key;
  }

  template <typename Handler>
  Common read(od::object& object, Handler&& handler) {
    Common common;
    for_each_field(object, "record", [&](std::string_view key, od::value& value) {
      if (!common.field(key, value)) handler(key, value);
    });
    common.require();
    return common;
  }

  void parse_run(od::object& object, EvidenceRef ref) {
    std::vector<std::pair<int, std::string_view>> ranks;
    const Common c = read(object, [&](std::string_view key, od::value& value) {
      if (key != "ranks") return;
      for_each_element(array(value, key), key, [&](od::value& element) {
        int rank = -1;
        std::string_view node;
        for_each_field(object_of(element), "ranks[]", [&](std::string_view k, od::value& v) {
          if (k == "rank") {
            rank = small_int(v, "ranks[].rank");
          } else if (k == "node") {
            node = string(v, "ranks[].node");
          }
        });
        if (rank < 0 || node.empty()) record_error("ranks[]", "entry without rank or node");
        ranks.emplace_back(rank, node);
      });
    });
    auto& run = evidence.runs[evidence.run_index(*c.run_id)];
    run.has_rank_map = true;
    run.ref = ref;
    run.rank_nodes.assign(ranks.size(), kNoString);
    for (const auto& [rank, node] : ranks) {
      if (static_cast<std::size_t>(rank) >= ranks.size()) record_error("ranks[].rank", "gap");
      run.rank_nodes[static_cast<std::size_t>(rank)] = evidence.nodes.intern(node);
    }
  }

  static od::object object_of(od::value& value) { return object(value, "element"); }

  void read_wrong_ranks(od::value& value) {
    for_each_element(array(value, "wrong_ranks"), "wrong_ranks", [&](od::value& element) {
      WrongRank w;
      for_each_field(object_of(element), "wrong_ranks", [&](std::string_view k, od::value& v) {
        if (k == "rank") {
          w.rank = small_int(v, "wrong_ranks[].rank");
        } else if (k == "host") {
          w.node = evidence.nodes.intern(string(v, "wrong_ranks[].host"));
        } else if (k == "wrong_elements") {
          w.elements = integer(v, "wrong_ranks[].wrong_elements");
        } else if (k == "wrong_iterations") {
          w.iterations = integer(v, "wrong_ranks[].wrong_iterations");
        }
      });
      if (w.node == kNoString) record_error("wrong_ranks[].host", "missing");
      wrong.push_back(w);
    });
  }

  void read_not_arrived(od::value& value, TimeoutEvidence& timeout) {
    for_each_element(array(value, "not_arrived"), "not_arrived", [&](od::value& element) {
      int rank = -1;
      NodeId node = kNoString;
      for_each_field(object_of(element), "not_arrived", [&](std::string_view k, od::value& v) {
        if (k == "rank") {
          rank = small_int(v, "not_arrived[].rank");
        } else if (k == "host") {
          node = evidence.nodes.intern(string(v, "not_arrived[].host"));
        }
      });
      if (node == kNoString) record_error("not_arrived[].host", "missing");
      timeout.not_arrived.emplace_back(rank, node);
    });
  }

  void parse_collective(od::object& object, EvidenceRef ref) {
    std::optional<std::string_view> collective;
    CollectiveScope scope = CollectiveScope::kCluster;
    bool in_place = false;
    bool check = false;
    bool pair_list = false;
    std::uint32_t nranks = 0;
    std::optional<std::uint64_t> bytes;
    std::optional<double> busbw;
    double median_s = 0;
    int straggler_rank = -1;
    NodeId straggler = kNoString;
    double lead_s = 0;
    TimeoutEvidence timeout;
    bool has_group = false;
    bool has_scope = false;
    bool has_wrong_elements = false;
    std::optional<std::int64_t> wrong_elements;
    wrong.clear();

    const Common c = read(object, [&](std::string_view key, od::value& value) {
      // Only the fields the rules read; the rest (times, iteration statistics) are skipped.
      switch (key_id(key)) {
        case key_id("collective"):
          if (key == "collective") collective = string(value, key);
          break;
        case key_id("scope"):
          if (key != "scope") break;
          scope = parse_scope(string(value, key));
          has_scope = true;
          break;
        case key_id("in_place"):
          if (key == "in_place") in_place = boolean(value, key);
          break;
        case key_id("check"):
          if (key == "check") check = boolean(value, key);
          break;
        case key_id("bytes"):
          if (key == "bytes") bytes = take(value.get_uint64(), key);
          break;
        case key_id("nranks"):
          if (key == "nranks")
            nranks = static_cast<std::uint32_t>(std::max(0, small_int(value, key)));
          break;
        case key_id("pair_list"):
          if (key == "pair_list") pair_list = boolean(value, key);
          break;
        case key_id("busbw_bytes_per_s"):
          if (key == "busbw_bytes_per_s") busbw = number(value, key);
          break;
        case key_id("rank_time"):
          if (key != "rank_time") break;
          for_each_field(this->object_of(value), key, [&](std::string_view k, od::value& v) {
            if (k == "median_s") median_s = number(v, "rank_time.median_s");
          });
          break;
        case key_id("straggler"):
          if (key != "straggler" || is_null(value, key)) break;
          for_each_field(this->object_of(value), key, [&](std::string_view k, od::value& v) {
            if (k == "rank") {
              straggler_rank = small_int(v, "straggler.rank");
            } else if (k == "host") {
              straggler = evidence.nodes.intern(string(v, "straggler.host"));
            } else if (k == "lead_s") {
              lead_s = number(v, "straggler.lead_s");
            }
          });
          break;
        case key_id("wrong_ranks"):
          if (key == "wrong_ranks") read_wrong_ranks(value);
          break;
        case key_id("wrong_elements"):
          if (key != "wrong_elements") break;
          has_wrong_elements = true;
          wrong_elements = optional_integer(value, key);
          if (wrong_elements && *wrong_elements < 0)
            record_error(key, fmt::format("negative ({})", *wrong_elements));
          break;
        case key_id("operation"):
          if (key == "operation") timeout.operation = string(value, key);
          break;
        case key_id("timeout_s"):
          if (key == "timeout_s") timeout.timeout_s = number(value, key);
          break;
        case key_id("attributed"):
          if (key == "attributed") timeout.attributed = boolean(value, key);
          break;
        case key_id("not_arrived"):
          if (key == "not_arrived") read_not_arrived(value, timeout);
          break;
        case key_id("group_nodes"):
          if (key != "group_nodes") break;
          group_nodes.clear();
          has_group = true;
          for_each_element(array(value, key), key, [&](od::value& element) {
            group_nodes.push_back(evidence.nodes.intern(string(element, "group_nodes[]")));
          });
          if (group_nodes.empty()) record_error("group_nodes", "empty");
          break;
        case key_id("rank_states"):
          if (key != "rank_states") break;
          for_each_element(array(value, key), key, [&](od::value& element) {
            for_each_field(this->object_of(element), key, [&](std::string_view k, od::value& v) {
              if (k == "host") timeout.members.push_back(evidence.nodes.intern(string(v, k)));
            });
          });
          break;
        default:
          break;
      }
    });

    const std::uint32_t run = evidence.run_index(*c.run_id);
    const NodeId writer = evidence.nodes.intern(*c.host);
    if (*c.status == RecordStatus::kTimeout) {
      timeout.ref = ref;
      timeout.run = run;
      timeout.writer = writer;
      timeout.scope = scope;
      timeout.reason = c.reason;
      std::sort(timeout.members.begin(), timeout.members.end());
      timeout.members.erase(std::unique(timeout.members.begin(), timeout.members.end()),
                            timeout.members.end());
      evidence.timeouts.push_back(std::move(timeout));
      return;
    }
    if (*c.status == RecordStatus::kError) {
      evidence.collective_errors.push_back(
          {ref, run, writer, std::string(c.reason), RecordStatus::kError});
      return;
    }
    if (!collective) record_error("collective", "missing");
    CollectiveEvidence record;
    record.ref = ref;
    record.run = run;
    record.writer = writer;
    record.collective = evidence.strings.intern(*collective);
    record.status = *c.status;
    record.scope = scope;
    record.in_place = in_place;
    record.pair_list = pair_list;
    record.nranks = nranks;
    record.bytes = bytes.value_or(0);
    if (record.measured()) {
      if (!bytes) record_error("bytes", "missing");
      if (!busbw) record_error("busbw_bytes_per_s", "missing");
      // Who a measurement speaks for is never guessed (docs/validator.md, "The rule"): a record
      // without its scope, or a node-scope record without the node it measured (process 0
      // writes every node's record), cannot be attributed.
      if (!has_scope) record_error("scope", "missing");
      if (scope == CollectiveScope::kNode && !has_group) record_error("group_nodes", "missing");
      // Checked outputs come with their count of wrong elements; one wrong element is a failure
      // whatever the status says.
      if (check && !wrong_elements) {
        record_error("wrong_elements", has_wrong_elements ? "null in a checked record" : "missing");
      }
      if (wrong_elements && *wrong_elements > 0 && record.status == RecordStatus::kOk) {
        record.status = RecordStatus::kFail;
        if (c.reason.empty()) {
          record.reason = evidence.strings.intern(
              fmt::format("status ok but {} wrong elements", *wrong_elements));
        }
      }
      record.checked = check;
      record.busbw_bytes_per_s = *busbw;
      record.straggler = straggler;
      record.straggler_rank = straggler_rank;
      record.straggler_lead_fraction = median_s > 0 ? static_cast<float>(lead_s / median_s) : 0.0f;
      record.wrong_begin = static_cast<std::uint32_t>(evidence.wrong_ranks.size());
      record.wrong_count = static_cast<std::uint32_t>(wrong.size());
      evidence.wrong_ranks.insert(evidence.wrong_ranks.end(), wrong.begin(), wrong.end());
    }
    if (has_group) {
      // The records of one group follow each other: skip the lookup while it repeats.
      if (group_nodes != last_group_nodes) {
        last_group_nodes = group_nodes;
        last_group = evidence.group_index(group_nodes);
      }
      record.group = last_group;
    }
    if (!c.reason.empty()) record.reason = evidence.strings.intern(c.reason);
    evidence.collectives.push_back(record);
  }

  void parse_burn(od::object& object, EvidenceRef ref) {
    BurnEvidence record;
    const Common c = read(object, [&](std::string_view key, od::value& value) {
      if (key == "kernel") {
        record.kernel = evidence.strings.intern(string(value, key));
      } else if (key == "tflops") {
        record.tflops = optional_number(value, key);
      } else if (key == "miscompares") {
        record.miscompares = optional_integer(value, key).value_or(0);
      } else if (key == "peer_mismatch") {
        record.peer_mismatch = optional_boolean(value, key);
      } else if (key == "peer_gpus") {
        record.peer_gpus = optional_small_int(value, key).value_or(0);
      } else if (key == "telemetry") {
        if (is_null(value, key)) return;
        for_each_field(this->object_of(value), key, [&](std::string_view k, od::value& v) {
          if (k == "throttle") {
            if (is_null(v, "telemetry.throttle")) return;
            for_each_element(array(v, "telemetry.throttle"), k, [&](od::value& element) {
              ThrottleEvidence t;
              for_each_field(this->object_of(element), k, [&](std::string_view tk, od::value& tv) {
                if (tk == "reason") {
                  t.reason = evidence.strings.intern(string(tv, "throttle[].reason"));
                } else if (tk == "seconds") {
                  t.seconds = optional_number(tv, "throttle[].seconds").value_or(0);
                }
              });
              record.throttle.push_back(t);
            });
          } else if (k == "xid_events") {
            record.xids = read_xids(v, "telemetry.xid_events", evidence.strings);
          }
        });
      }
    });
    fill_gpu_record(record, c, ref);
    evidence.burns.push_back(std::move(record));
  }

  void parse_membw(od::object& object, EvidenceRef ref) {
    MembwEvidence record;
    const Common c = read(object, [&](std::string_view key, od::value& value) {
      if (key == "bandwidth") {
        if (is_null(value, key)) return;
        for_each_field(this->object_of(value), key, [&](std::string_view k, od::value& v) {
          if (k == "read_bytes_per_s") {
            record.read = optional_number(v, "bandwidth.read_bytes_per_s");
          } else if (k == "write_bytes_per_s") {
            record.write = optional_number(v, "bandwidth.write_bytes_per_s");
          } else if (k == "copy_bytes_per_s") {
            record.copy = optional_number(v, "bandwidth.copy_bytes_per_s");
          } else if (k == "memcpy_d2d_bytes_per_s") {
            record.memcpy_d2d = optional_number(v, "bandwidth.memcpy_d2d_bytes_per_s");
          }
        });
      } else if (key == "host_transfer") {
        if (is_null(value, key)) return;
        for_each_field(this->object_of(value), key, [&](std::string_view k, od::value& v) {
          if (k == "h2d_bytes_per_s") {
            record.h2d = optional_number(v, "host_transfer.h2d_bytes_per_s");
          } else if (k == "d2h_bytes_per_s") {
            record.d2h = optional_number(v, "host_transfer.d2h_bytes_per_s");
          }
        });
      } else if (key == "integrity") {
        if (is_null(value, key)) return;
        for_each_field(this->object_of(value), key, [&](std::string_view k, od::value& v) {
          if (k == "errors") {
            record.integrity_errors = optional_integer(v, "integrity.errors");
          } else if (k == "bytes_tested") {
            record.bytes_tested = optional_integer(v, "integrity.bytes_tested");
          } else if (k == "first_errors") {
            for_each_element(array(v, "integrity.first_errors"), k, [&](od::value& element) {
              if (!record.first_error.empty()) return;
              std::int64_t offset = -1;
              std::string_view pattern;
              for_each_field(this->object_of(element), k, [&](std::string_view ek, od::value& ev) {
                if (ek == "offset") {
                  offset = integer(ev, "first_errors[].offset");
                } else if (ek == "pattern") {
                  pattern = string(ev, "first_errors[].pattern");
                }
              });
              record.first_error = fmt::format("offset {:#x}{}{}", offset,
                                               pattern.empty() ? "" : ", pattern ", pattern);
            });
          }
        });
      }
    });
    fill_gpu_record(record, c, ref);
    evidence.membws.push_back(std::move(record));
  }

  void parse_health(od::object& object, EvidenceRef ref) {
    std::string_view component;
    GpuHealthEvidence gpu;
    IbPortEvidence port;
    NodeHealthEvidence node;
    const Common c = read(object, [&](std::string_view key, od::value& value) {
      if (key == "component") {
        component = string(value, key);
      } else if (key == "ecc") {
        if (is_null(value, key)) return;
        for_each_field(this->object_of(value), key, [&](std::string_view k, od::value& v) {
          if (k != "volatile" || is_null(v, "ecc.volatile")) return;
          for_each_field(this->object_of(v), k, [&](std::string_view vk, od::value& vv) {
            if (vk == "uncorrected") {
              gpu.ecc_volatile_uncorrected = optional_integer(vv, "ecc.volatile.uncorrected");
            } else if (vk == "corrected") {
              gpu.ecc_volatile_corrected = optional_integer(vv, "ecc.volatile.corrected");
            }
          });
        });
      } else if (key == "remapped_rows") {
        if (is_null(value, key)) return;
        for_each_field(this->object_of(value), key, [&](std::string_view k, od::value& v) {
          if (k == "correctable") {
            gpu.remap_correctable = optional_integer(v, "remapped_rows.correctable");
          } else if (k == "uncorrectable") {
            gpu.remap_uncorrectable = optional_integer(v, "remapped_rows.uncorrectable");
          } else if (k == "pending") {
            gpu.remap_pending = optional_boolean(v, "remapped_rows.pending");
          } else if (k == "failure") {
            gpu.remap_failure = optional_boolean(v, "remapped_rows.failure");
          }
        });
      } else if (key == "retired_pages") {
        if (is_null(value, key)) return;
        for_each_field(this->object_of(value), key, [&](std::string_view k, od::value& v) {
          if (k == "single_bit") {
            gpu.retired_single_bit = optional_integer(v, "retired_pages.single_bit");
          } else if (k == "double_bit") {
            gpu.retired_double_bit = optional_integer(v, "retired_pages.double_bit");
          } else if (k == "pending") {
            gpu.retired_pending = optional_boolean(v, "retired_pages.pending");
          }
        });
      } else if (key == "pcie") {
        if (is_null(value, key)) return;
        for_each_field(this->object_of(value), key, [&](std::string_view k, od::value& v) {
          if (k == "gen_current") {
            gpu.pcie_gen = optional_small_int(v, "pcie.gen_current");
          } else if (k == "gen_max") {
            gpu.pcie_gen_max = optional_small_int(v, "pcie.gen_max");
          } else if (k == "width_current") {
            gpu.pcie_width = optional_small_int(v, "pcie.width_current");
          } else if (k == "width_max") {
            gpu.pcie_width_max = optional_small_int(v, "pcie.width_max");
          } else if (k == "replay_count") {
            gpu.pcie_replays = optional_integer(v, "pcie.replay_count");
          }
        });
      } else if (key == "nvlink") {
        if (is_null(value, key)) return;
        gpu.nvlinks.emplace();
        for_each_element(array(value, key), key, [&](od::value& element) {
          NvlinkEvidence link;
          for_each_field(this->object_of(element), key, [&](std::string_view k, od::value& v) {
            if (k == "link") {
              link.link = small_int(v, "nvlink[].link");
            } else if (k == "active") {
              link.active = optional_boolean(v, "nvlink[].active");
            } else if (k == "replay_errors") {
              link.replay_errors = optional_integer(v, "nvlink[].replay_errors");
            } else if (k == "recovery_errors") {
              link.recovery_errors = optional_integer(v, "nvlink[].recovery_errors");
            } else if (k == "crc_flit_errors") {
              link.crc_flit_errors = optional_integer(v, "nvlink[].crc_flit_errors");
            } else if (k == "crc_data_errors") {
              link.crc_data_errors = optional_integer(v, "nvlink[].crc_data_errors");
            }
          });
          gpu.nvlinks->push_back(link);
        });
      } else if (key == "temperature_c") {
        gpu.temperature_c = optional_number(value, key);
      } else if (key == "clock_event_reasons") {
        if (is_null(value, key)) return;
        for_each_element(array(value, key), key, [&](od::value& element) {
          gpu.clock_events.push_back(evidence.strings.intern(string(element, key)));
        });
      } else if (key == "xid_events") {
        gpu.xids = read_xids(value, key, evidence.strings);
      } else if (key == "device") {
        port.device = evidence.strings.intern(string(value, key));
      } else if (key == "port") {
        port.port = small_int(value, key);
      } else if (key == "state") {
        port.state = evidence.strings.intern(optional_string(value, key).value_or(""));
      } else if (key == "phys_state") {
        port.phys_state = evidence.strings.intern(optional_string(value, key).value_or(""));
      } else if (key == "lost") {
        gpu.lost = optional_boolean(value, key).value_or(false);
      } else if (key == "link_layer") {
        port.link_layer = evidence.strings.intern(optional_string(value, key).value_or(""));
      } else if (key == "rate_gbps") {
        port.rate_gbps = optional_number(value, key);
      } else if (key == "counters") {
        if (is_null(value, key)) return;
        for_each_field(this->object_of(value), key, [&](std::string_view k, od::value& v) {
          if (const auto count = optional_integer(v, "counters")) {
            port.counters.emplace_back(evidence.strings.intern(k), *count);
          }
        });
      } else if (key == "gpu_count") {
        node.gpu_count = optional_small_int(value, key);
      } else if (key == "ib_port_count") {
        node.ib_port_count = optional_small_int(value, key);
      }
    });
    const NodeId host = evidence.nodes.intern(*c.host);
    if (component == "gpu") {
      fill_gpu_record(gpu, c, ref);
      evidence.gpu_health.push_back(std::move(gpu));
    } else if (component == "ib_port") {
      port.ref = ref;
      port.node = host;
      port.status = *c.status;
      port.reason = c.reason;
      evidence.ib_ports.push_back(std::move(port));
    } else if (component == "node") {
      node.ref = ref;
      node.node = host;
      node.status = *c.status;
      node.reason = c.reason;
      evidence.node_health.push_back(std::move(node));
    } else if (component.empty() && *c.status != RecordStatus::kOk) {
      // A health stage that timed out or failed before it looked at any component.
      evidence.health_failures.push_back(
          {ref, evidence.run_index(*c.run_id), host, std::string(c.reason), *c.status});
    } else {
      record_error("component", fmt::format("unknown component '{}'", component));
    }
  }

  template <typename Record>
  void fill_gpu_record(Record& record, const Common& c, EvidenceRef ref) {
    record.ref = ref;
    record.node = evidence.nodes.intern(*c.host);
    record.gpu = gpu_key(c);
    record.status = *c.status;
    record.reason = c.reason;
  }
};

RecordParser::RecordParser(Evidence& evidence) : impl_(std::make_unique<Impl>(evidence)) {}
RecordParser::~RecordParser() = default;

LineOutcome RecordParser::parse(const char* line, std::size_t length, std::size_t capacity,
                                EvidenceRef ref) {
  od::document document;
  if (const auto error = impl_->parser.iterate(line, length, capacity).get(document)) {
    throw SyntaxError(simdjson::error_message(error));
  }
  od::object object;
  if (const auto error = document.get_object().get(object)) {
    throw SyntaxError(fmt::format("not a JSON object ({})", simdjson::error_message(error)));
  }
  std::string_view kind;
  if (const auto error = object.find_field_unordered("kind").get_string().get(kind)) {
    if (error == simdjson::NO_SUCH_FIELD) record_error("kind", "missing");
    throw SyntaxError(simdjson::error_message(error));
  }
  const std::string kind_text(kind);  // the parser's string buffer is reused below
  if (const auto error = object.reset().error()) throw SyntaxError(simdjson::error_message(error));

  try {
    if (kind_text == "collective") {
      impl_->parse_collective(object, ref);
    } else if (kind_text == "burn") {
      impl_->parse_burn(object, ref);
    } else if (kind_text == "membw") {
      impl_->parse_membw(object, ref);
    } else if (kind_text == "health") {
      impl_->parse_health(object, ref);
    } else if (kind_text == "run") {
      impl_->parse_run(object, ref);
    } else {
      return LineOutcome::kUnknownKind;
    }
  } catch (const RecordError& error) {
    // On-Demand finds broken JSON only when it walks there: tell syntax from content apart.
    if (std::string_view(error.what()).find("TAPE_ERROR") != std::string_view::npos ||
        std::string_view(error.what()).find("INCOMPLETE") != std::string_view::npos ||
        std::string_view(error.what()).find("UNCLOSED") != std::string_view::npos) {
      throw SyntaxError(error.what());
    }
    throw;
  }
  if (document.current_location().error() != simdjson::OUT_OF_BOUNDS) {
    throw SyntaxError("trailing content after the record");
  }
  return LineOutcome::kStored;
}

}  // namespace commcert::detail
