#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/command.hpp"

namespace commcert {

// `commcert baseline --from RESULTS... --out FILE`: derives a baseline from a known-good fleet
// run (docs/validator.md "Deriving a baseline").
class BaselineCommand final : public Command {
 public:
  [[nodiscard]] std::string_view name() const override { return "baseline"; }
  [[nodiscard]] std::string_view summary() const override {
    return "Derive a baseline from a known-good fleet run (outliers dropped iteratively)";
  }
  void configure(CLI::App& app) override;
  int run(Invocation& invocation) override;

 private:
  struct Flags {
    std::vector<std::string> inputs;
    std::string out;
    std::optional<std::string> template_path;
    std::string sku;
    double floor_margin_pct = 10.0;
    double outlier_pct = 5.0;
    double warn_band_pct = 5.0;
    std::optional<double> max_regression_pct;
    std::optional<std::string> min_bytes;
    bool force = false;
  };
  Flags flags_;
};

}  // namespace commcert
