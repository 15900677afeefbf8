#include "mesh/cavities.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "mesh/fibres_rule_based.hpp"
#include "mesh/shapes.hpp"

namespace hw::tissue {

namespace {

constexpr char kAxisName[3] = {'x', 'y', 'z'};

std::array<int, 3> ijk_of(const Grid& g, std::size_t n) {
  const auto nx = static_cast<std::size_t>(g.n[0]), ny = static_cast<std::size_t>(g.n[1]);
  return {static_cast<int>(n % nx), static_cast<int>((n / nx) % ny), static_cast<int>(n / (nx * ny))};
}

// Non-tissue cells of the slices across `axis` that a 4-connected flood from each slice's
// border cannot reach: holes ringed by tissue. 1 = hole.
Field<std::uint8_t> enclosed_in_slices(const Grid& g, const Mask& mask, int axis) {
  const int u = (axis + 1) % 3, v = (axis + 2) % 3;
  Field<std::uint8_t> hole(g, 0);
  std::vector<std::uint8_t> reached;
  std::vector<std::array<int, 2>> stack;
  for (int s = 0; s < g.n[axis]; ++s) {
    auto at = [&](int a, int b) {
      std::array<int, 3> q{};
      q[axis] = s, q[u] = a, q[v] = b;
      return g.index(q[0], q[1], q[2]);
    };
    const int nu = g.n[u], nv = g.n[v];
    reached.assign(static_cast<std::size_t>(nu) * nv, 0);
    auto push = [&](int a, int b) {
      std::uint8_t& r = reached[static_cast<std::size_t>(b) * nu + a];
      if (r || mask[at(a, b)]) return;
      r = 1;
      stack.push_back({a, b});
    };
    for (int a = 0; a < nu; ++a) push(a, 0), push(a, nv - 1);
    for (int b = 0; b < nv; ++b) push(0, b), push(nu - 1, b);
    while (!stack.empty()) {
      const auto [a, b] = stack.back();
      stack.pop_back();
      if (a > 0) push(a - 1, b);
      if (a + 1 < nu) push(a + 1, b);
      if (b > 0) push(a, b - 1);
      if (b + 1 < nv) push(a, b + 1);
    }
    for (int b = 0; b < nv; ++b)
      for (int a = 0; a < nu; ++a)
        if (!reached[static_cast<std::size_t>(b) * nu + a] && !mask[at(a, b)]) hole[at(a, b)] = 1;
  }
  return hole;
}

// 6-connected components of the cells with in[n] != 0: component number (1, 2, …) per
// cell, 0 elsewhere; sizes[c − 1] is the size of component c.
Field<std::int32_t> components(const Grid& g, const Field<std::uint8_t>& in, std::vector<std::size_t>& sizes) {
  Field<std::int32_t> comp(g, 0);
  std::vector<std::size_t> stack;
  sizes.clear();
  for (std::size_t start = 0; start < g.size(); ++start) {
    if (!in[start] || comp[start]) continue;
    const auto id = static_cast<std::int32_t>(sizes.size() + 1);
    std::size_t count = 0;
    comp[start] = id;
    stack.push_back(start);
    while (!stack.empty()) {
      const std::size_t n = stack.back();
      stack.pop_back();
      ++count;
      const auto ijk = ijk_of(g, n);
      for (int a = 0; a < 3; ++a)
        for (int d : {-1, 1}) {
          std::array<int, 3> q = ijk;
          q[a] += d;
          if (q[a] < 0 || q[a] >= g.n[a]) continue;
          const std::size_t m = g.index(q[0], q[1], q[2]);
          if (in[m] && !comp[m]) comp[m] = id, stack.push_back(m);
        }
    }
    sizes.push_back(count);
  }
  return comp;
}

// Least-squares line through the centroids (mm) of the slices of component `id` across
// `axis`, each weighted by its cells: the direction (slope along the other two axes, 1
// along `axis`), unit, pointing to `side` (±1) along the axis.
std::array<double, 3> centre_line(const Grid& g, const Field<std::int32_t>& comp, std::int32_t id, int axis,
                                  int side) {
  const int u = (axis + 1) % 3, v = (axis + 2) % 3;
  std::vector<double> cells(g.n[axis], 0), su(g.n[axis], 0), sv(g.n[axis], 0);
  for (std::size_t n = 0; n < g.size(); ++n) {
    if (comp[n] != id) continue;
    const auto q = ijk_of(g, n);
    cells[q[axis]] += 1, su[q[axis]] += g.centre(u, q[u]), sv[q[axis]] += g.centre(v, q[v]);
  }
  // Weighted regression of (cu, cv) on s over the slices, by sums.
  double w = 0, ms = 0, mu = 0, mv = 0;
  for (int k = 0; k < g.n[axis]; ++k)
    if (cells[k] > 0) w += cells[k], ms += cells[k] * g.centre(axis, k), mu += su[k], mv += sv[k];
  ms /= w, mu /= w, mv /= w;
  double sss = 0, ssu = 0, ssv = 0;
  for (int k = 0; k < g.n[axis]; ++k) {
    if (cells[k] <= 0) continue;
    const double ds = g.centre(axis, k) - ms;
    sss += cells[k] * ds * ds;
    ssu += cells[k] * ds * (su[k] / cells[k] - mu);
    ssv += cells[k] * ds * (sv[k] / cells[k] - mv);
  }
  std::array<double, 3> d{0, 0, 0};
  d[axis] = 1;
  if (sss > 0) d[u] = ssu / sss, d[v] = ssv / sss;
  const double len = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
  for (double& c : d) c *= side / len;
  return d;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

}  // namespace

std::array<double, 3> FoundSurfaces::base_towards() const {
  std::array<double, 3> d{0, 0, 0};
  d[slice_axis] = base_side;
  return d;
}

std::string FoundSurfaces::base_reason() const {
  return fmt::format("at the end away from where the LV cavity opens ({} of its end cells look out at {} {}, {} at "
                     "the other end)",
                     open_cells[base_side > 0 ? 1 : 0], base_side > 0 ? "high" : "low", kAxisName[slice_axis],
                     open_cells[base_side > 0 ? 0 : 1]);
}

std::string FoundSurfaces::describe() const {
  std::string s = fmt::format("surfaces found from the shape (slices across {}): LV cavity {} cells, wall {:.1f} mm",
                              kAxisName[slice_axis], cavity_cells[0], wall_mm[0]);
  if (cavity_cells[1]) s += fmt::format("; RV cavity {} cells, wall {:.1f} mm", cavity_cells[1], wall_mm[1]);
  return s + fmt::format("; endo {} + {} cells, epi {} cells", endo_cells[0], endo_cells[1], epi_cells);
}

FoundSurfaces find_surfaces(const Grid& g, const Mask& mask) {
  FoundSurfaces f;
  // The axis across the ventricles: the one whose slices enclose the most.
  Field<std::uint8_t> hole;
  std::size_t best = 0;
  for (int axis = 0; axis < 3; ++axis) {
    if (!g.active((axis + 1) % 3) || !g.active((axis + 2) % 3)) continue;
    Field<std::uint8_t> h = enclosed_in_slices(g, mask, axis);
    const auto n = static_cast<std::size_t>(std::count(h.vec().begin(), h.vec().end(), std::uint8_t{1}));
    if (n > best) best = n, hole = std::move(h), f.slice_axis = axis;
  }
  if (best == 0)
    throw Error("no slice of the tissue (across x, y or z) encloses a cavity, so the endocardium cannot be found: "
                "use a mask file with surface labels (2 = epi, 3/4 = endo) or fibres of another kind");

  std::vector<std::size_t> sizes;
  const Field<std::int32_t> comp = components(g, hole, sizes);
  std::vector<std::int32_t> order(sizes.size());
  for (std::size_t c = 0; c < sizes.size(); ++c) order[c] = static_cast<std::int32_t>(c + 1);
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return sizes[a - 1] > sizes[b - 1]; });
  std::int32_t cavity[2] = {order[0], 0};
  if (order.size() > 1 && sizes[order[1] - 1] * 10 >= sizes[order[0] - 1]) cavity[1] = order[1];

  // Outside: non-tissue that is not one of the cavities (smaller holes included).
  Field<std::uint8_t> outside(g, 0);
  for (std::size_t n = 0; n < g.size(); ++n)
    outside[n] = !mask[n] && comp[n] != cavity[0] && (cavity[1] == 0 || comp[n] != cavity[1]);
  const Field<double> to_outside = distance_transform(g, outside);

  // Label the tissue by its face neighbours; a cell touching a cavity is endocardial.
  f.labels = Field<std::int16_t>(g, label_outside);
  std::vector<double> wall[2];
  for (std::size_t n = 0; n < g.size(); ++n) {
    if (!mask[n]) continue;
    const auto ijk = ijk_of(g, n);
    int which = -1;
    bool epi = false;
    for (int a = 0; a < 3; ++a)
      for (int d : {-1, 1}) {
        std::array<int, 3> q = ijk;
        q[a] += d;
        if (q[a] < 0 || q[a] >= g.n[a]) {
          epi = epi || g.active(a);
          continue;
        }
        const std::size_t m = g.index(q[0], q[1], q[2]);
        if (mask[m]) continue;
        if (comp[m] == cavity[0]) which = 0;
        else if (cavity[1] && comp[m] == cavity[1] && which != 0) which = 1;
        else epi = true;
      }
    if (which >= 0) {
      f.labels[n] = which == 0 ? label_lv_endo : label_rv_endo;
      ++f.endo_cells[which];
      wall[which].push_back(to_outside[n]);
    } else if (epi) {
      f.labels[n] = label_epi;
      ++f.epi_cells;
    } else {
      f.labels[n] = label_myocardium;
    }
  }
  if (f.epi_cells == 0)
    throw Error("the tissue has cavities but no outer surface: no epicardium to measure the wall from");
  for (int c = 0; c < 2; ++c) {
    f.cavity_cells[c] = cavity[c] ? sizes[cavity[c] - 1] : 0;
    f.wall_mm[c] = median(wall[c]);
  }
  // The LV cavity's two end slices: at the base its cells look out onto open non-tissue,
  // at the apex onto the tissue that caps it.
  const int ax = f.slice_axis;
  int lo = g.n[ax], hi = -1;
  const std::int32_t lv = f.wall_mm[1] > f.wall_mm[0] ? cavity[1] : cavity[0];
  for (std::size_t n = 0; n < g.size(); ++n)
    if (comp[n] == lv) lo = std::min(lo, ijk_of(g, n)[ax]), hi = std::max(hi, ijk_of(g, n)[ax]);
  for (std::size_t n = 0; n < g.size(); ++n) {
    if (comp[n] != lv) continue;
    auto q = ijk_of(g, n);
    const int s = q[ax];
    if (s != lo && s != hi) continue;
    for (int end = 0; end < 2; ++end) {
      if (s != (end == 0 ? lo : hi)) continue;
      q[ax] = s + (end == 0 ? -1 : 1);
      const bool open = q[ax] < 0 || q[ax] >= g.n[ax] || outside[g.index(q[0], q[1], q[2])];
      f.open_cells[end] += open;
      q[ax] = s;
    }
  }
  f.base_side = f.open_cells[1] >= f.open_cells[0] ? +1 : -1;
  f.centre_line = centre_line(g, comp, lv, ax, f.base_side);
  // The left ventricle has the thicker wall.
  if (cavity[1] && f.wall_mm[1] > f.wall_mm[0]) {
    std::swap(f.cavity_cells[0], f.cavity_cells[1]);
    std::swap(f.wall_mm[0], f.wall_mm[1]);
    std::swap(f.endo_cells[0], f.endo_cells[1]);
    for (auto& l : f.labels.vec())
      if (l == label_lv_endo) l = label_rv_endo;
      else if (l == label_rv_endo) l = label_lv_endo;
  }
  return f;
}

}  // namespace hw::tissue
