// heartwave._core: the C++ library as a Python extension. The Python package (heartwave/)
// wraps it with numpy shapes, pandas frames and progress; nothing here computes on its own.
#include "bindings.hpp"

namespace hw::py {

std::vector<double> to_vector(const DoubleArray& a) {
  return std::vector<double>(a.data(), a.data() + a.size());
}

}  // namespace hw::py

NB_MODULE(_core, m) {
  m.doc() = "Heartwave's C++ library (use the heartwave package, not this module directly).";
  hw::py::bind_errors(m);
  hw::py::bind_model(m);
  hw::py::bind_cell(m);
  hw::py::bind_tissue(m);
}
