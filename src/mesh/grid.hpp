// The Cartesian grid, structure-of-arrays fields on it, and the voxel mask.
//
// Why separate types: geometry (Grid), data (Field) and which voxels are tissue (Mask) are
// independent (STYLE.md §8), so a backend can move a Field to a device, or a later sparse
// layout can replace Field, without touching the grid or the operators' maths.
//
// Conventions (docs/tissue-numerics.md):
//   * cell-centred: cell (i,j,k) covers [i·dx,(i+1)·dx] × … ; its value lives at the centre;
//   * x is the fastest index: n = i + nx·(j + ny·k);
//   * lengths in mm; an axis with n = 1 is inactive (a 1D cable is nx × 1 × 1);
//   * no-flux boundaries put the wall on the outer cell faces (zero face flux); periodic
//     boundaries join cell n−1 to cell 0 across one face.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hw::tissue {

enum class Boundary : std::uint8_t { no_flux, periodic };

struct Grid {
  std::array<int, 3> n{1, 1, 1};            // cells per axis, each ≥ 1
  std::array<double, 3> h{1.0, 1.0, 1.0};   // cell size per axis, mm, each > 0
  std::array<Boundary, 3> bc{Boundary::no_flux, Boundary::no_flux, Boundary::no_flux};
  // Where the grid lies in the geometry's own coordinates, mm: the outer corner of cell 0
  // (an image's origin, the centre of its voxel 0, less half a voxel). Only the outputs
  // read it, so they overlay the source image; the numerics and the case's positions
  // (probes, stimuli, electrodes) work from the corner, at 0.
  std::array<double, 3> origin{0.0, 0.0, 0.0};

  int nx() const { return n[0]; }
  int ny() const { return n[1]; }
  int nz() const { return n[2]; }
  std::size_t size() const {
    return static_cast<std::size_t>(n[0]) * static_cast<std::size_t>(n[1]) *
           static_cast<std::size_t>(n[2]);
  }
  // Axis a takes part in diffusion only if it has more than one cell.
  bool active(int a) const { return n[a] > 1; }
  int dim() const { return int(active(0)) + int(active(1)) + int(active(2)); }
  std::size_t index(int i, int j, int k) const {
    return static_cast<std::size_t>(i) +
           static_cast<std::size_t>(n[0]) *
               (static_cast<std::size_t>(j) + static_cast<std::size_t>(n[1]) * k);
  }
  std::size_t stride(int a) const {
    return a == 0 ? 1 : a == 1 ? static_cast<std::size_t>(n[0])
                               : static_cast<std::size_t>(n[0]) * n[1];
  }
  double cell_volume() const { return h[0] * h[1] * h[2]; }
  // Centre of cell index i along axis a, mm (the domain starts at 0).
  double centre(int a, int i) const { return (i + 0.5) * h[a]; }

  // Neighbour index of i + d (d = ±1, ±2) along axis a: wrapped on a periodic axis,
  // −1 when it falls outside a no-flux axis.
  int neighbour(int a, int i, int d) const {
    int m = i + d;
    if (m >= 0 && m < n[a]) return m;
    if (bc[a] == Boundary::periodic) return ((m % n[a]) + n[a]) % n[a];
    return -1;
  }

  // Throws hw::Error naming the bad member ("grid: dy = -1 mm must be > 0").
  void validate() const;
  std::string str() const;  // "37×23×11 cells of 0.1×0.1×0.2 mm, bc x=no-flux …"
};

// One value per grid cell, contiguous, x fastest. Deliberately a thin owner of a vector:
// kernels take raw pointers from data().
template <class Real>
class Field {
 public:
  Field() = default;
  explicit Field(std::size_t size, Real value = Real(0)) : data_(size, value) {}
  explicit Field(const Grid& g, Real value = Real(0)) : data_(g.size(), value) {}

  std::size_t size() const { return data_.size(); }
  bool empty() const { return data_.empty(); }
  Real* data() { return data_.data(); }
  const Real* data() const { return data_.data(); }
  Real& operator[](std::size_t i) { return data_[i]; }
  const Real& operator[](std::size_t i) const { return data_[i]; }
  void fill(Real v) { data_.assign(data_.size(), v); }
  void resize(std::size_t n, Real v = Real(0)) { data_.assign(n, v); }
  std::vector<Real>& vec() { return data_; }
  const std::vector<Real>& vec() const { return data_; }

 private:
  std::vector<Real> data_;
};

// 1 = tissue, 0 = not tissue. An empty mask means "all tissue" (a box domain).
using Mask = Field<std::uint8_t>;

inline bool is_tissue(const Mask* m, std::size_t n) { return m == nullptr || m->empty() || (*m)[n] != 0; }

}  // namespace hw::tissue
