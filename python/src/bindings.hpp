// Shared pieces of the extension module heartwave._core: numpy conversions and the binders
// of each part of the library (one file per concern, as the library's folders).
#pragma once

#include <cstddef>
#include <initializer_list>
#include <utility>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include "model/analysis/roles.hpp"

namespace hw::py {

namespace nb = nanobind;

// A numpy array that owns `values` (no copy), of the given shape (C order).
template <class T>
nb::ndarray<nb::numpy, T> to_numpy(std::vector<T>&& values, std::initializer_list<std::size_t> shape) {
  auto* heap = new std::vector<T>(std::move(values));
  nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return nb::ndarray<nb::numpy, T>(heap->data(), shape, owner);
}

// A read-only flat view of float64 values (the Python layer hands contiguous float64).
using DoubleArray = nb::ndarray<const double, nb::c_contig, nb::device::cpu>;
std::vector<double> to_vector(const DoubleArray& a);

// Role overrides (model/analysis/roles.hpp) from a dict of role name → variable name.
model::RoleOverrides role_overrides(const nb::dict& roles);

void bind_errors(nb::module_& m);
void bind_model(nb::module_& m);
void bind_cell(nb::module_& m);
void bind_tissue(nb::module_& m);

}  // namespace hw::py
