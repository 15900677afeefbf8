// See steady_state.hpp.
#include "cell/steady_state.hpp"

#include <algorithm>
#include <cmath>

namespace hw::cell {

double relative_state_change(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const double scale = std::max(std::fabs(a[i]), std::fabs(b[i]));
    if (scale == 0) continue;
    worst = std::max(worst, std::fabs(b[i] - a[i]) / scale);
  }
  return worst;
}

bool SteadyStateTest::boundary(const double* y, std::size_t n) {
  std::vector<double> now(y, y + n);
  bool first_steady = false;
  if (have_last_) {
    const double d = relative_state_change(last_, now);
    changes_.push_back(d);
    if (steady_beat_ == 0 && tolerance_ > 0 && d < tolerance_) {
      steady_beat_ = int(changes_.size());
      first_steady = true;
    }
  }
  last_ = std::move(now);
  have_last_ = true;
  return first_steady;
}

}  // namespace hw::cell
