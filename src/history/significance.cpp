#include "history/significance.hpp"

#include <cmath>
#include <limits>

#include "core/stats.hpp"

namespace commcert {

bool WelchResult::significant() const {
  return std::abs(t) > critical_t;
}

std::optional<WelchResult> welch_t_test(const SampleMoments& a, const SampleMoments& b) {
  if (a.count < 2 || b.count < 2) return std::nullopt;
  const double na = static_cast<double>(a.count);
  const double nb = static_cast<double>(b.count);
  const double va = a.stddev * a.stddev / na;
  const double vb = b.stddev * b.stddev / nb;
  WelchResult result;
  const double difference = b.mean - a.mean;
  if (va + vb == 0) {
    result.t =
        difference == 0 ? 0.0 : std::copysign(std::numeric_limits<double>::infinity(), difference);
    result.degrees_of_freedom = na + nb - 2;
  } else {
    result.t = difference / std::sqrt(va + vb);
    result.degrees_of_freedom = (va + vb) * (va + vb) / (va * va / (na - 1) + vb * vb / (nb - 1));
  }
  const double floored = std::max(1.0, std::floor(result.degrees_of_freedom));
  result.critical_t = student_t95(static_cast<std::size_t>(floored));
  return result;
}

}  // namespace commcert
