#pragma once

#include <string_view>
#include <vector>

#include "kernels/collective_types.hpp"

namespace commcert {

// Names as nccl-tests spells them (-d float, -o sum), so scripts carry over.
[[nodiscard]] std::string_view name_of(DataType type);
[[nodiscard]] std::string_view name_of(ReduceOp op);

// Parses one name or "all"; accepts common aliases (fp32, bf16, fp16, e4m3...). Throws UsageError
// naming `flag`.
[[nodiscard]] std::vector<DataType> parse_data_types(std::string_view text, std::string_view flag);
[[nodiscard]] std::vector<ReduceOp> parse_reduce_ops(std::string_view text, std::string_view flag);

[[nodiscard]] std::vector<DataType> all_data_types();

}  // namespace commcert
