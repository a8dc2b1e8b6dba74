#pragma once

#include <nlohmann/json.hpp>

namespace commcert {

// Insertion-ordered so records and meta.json read in the order the schema documents them.
using Json = nlohmann::ordered_json;

}  // namespace commcert
