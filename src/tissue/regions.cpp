// Region → cells (see regions.hpp).
#include "tissue/regions.hpp"

#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"

namespace hw::tissue {

namespace {

// Axis and side of a face name, or axis −1.
void parse_face(const std::string& f, int& axis, bool& high) {
  axis = -1;
  high = false;
  if (f.size() != 2 || (f[1] != '-' && f[1] != '+')) return;
  if (f[0] < 'x' || f[0] > 'z') return;
  axis = f[0] - 'x';
  high = f[1] == '+';
}

}  // namespace

const char* coordinate_name(Region::Kind k) {
  return k == Region::Kind::transmural ? "transmural" : k == Region::Kind::apex_base ? "apex-base" : "";
}

bool uses_ventricular_coordinates(const TissueCase& c) {
  auto uses = [](const Region& r) { return r.kind == Region::Kind::transmural || r.kind == Region::Kind::apex_base; };
  for (const auto& m : c.models) if (uses(m.where)) return true;
  for (const auto& s : c.stimuli) if (uses(s.where)) return true;
  for (const auto& i : c.initial) if (uses(i.where)) return true;
  for (const auto& gr : c.gradients) if (gr.along != ParameterGradient::Along::axis) return true;
  return false;
}

bool region_contains(const Region& r, const Grid& g, int i, int j, int k,
                     const Field<std::int16_t>& labels, const CellCoordinates& coords) {
  const int idx[3] = {i, j, k};
  switch (r.kind) {
    case Region::Kind::transmural:
    case Region::Kind::apex_base: {
      const Field<float>* f = coords.of(r.kind);
      if (!f) return false;
      // Closed at both ends, so from = 0 takes the endocardium (or the apex) and to = 1 the
      // epicardium (base); a shared bound between layers goes to the later region.
      const double x = (*f)[g.index(i, j, k)];
      return x >= r.from && x <= r.to;
    }
    case Region::Kind::all: return true;
    case Region::Kind::box:
      for (int a = 0; a < 3; ++a) {
        const double x = g.centre(a, idx[a]);
        if (x < r.lo[a] || x > r.hi[a]) return false;
      }
      return true;
    case Region::Kind::sphere: {
      double d2 = 0;
      for (int a = 0; a < 3; ++a) {
        const double d = g.centre(a, idx[a]) - r.centre[a];
        d2 += d * d;
      }
      return d2 <= r.radius * r.radius;
    }
    case Region::Kind::label:
      return !labels.empty() && labels[g.index(i, j, k)] == r.label;
    case Region::Kind::face: {
      int a;
      bool high;
      parse_face(r.face, a, high);
      if (a < 0) return false;
      const int m = idx[a];
      // Distance of the cell centre from the face; one layer at least.
      const double dist = high ? g.n[a] * g.h[a] - g.centre(a, m) : g.centre(a, m);
      const bool outer = high ? m == g.n[a] - 1 : m == 0;
      return outer || dist < r.depth;
    }
  }
  return false;
}

void validate_region(const Region& r, const Grid& g, bool have_labels, const std::string& what,
                     const CellCoordinates& coords) {
  switch (r.kind) {
    case Region::Kind::all: return;
    case Region::Kind::transmural:
    case Region::Kind::apex_base:
      if (!(r.from >= 0 && r.from < r.to && r.to <= 1))
        throw InputError(r.loc, fmt::format("{}: a {} region needs 0 <= from < to <= 1, not from = {}, to = {}", what,
                                            coordinate_name(r.kind), r.from, r.to));
      if (!coords.of(r.kind))
        throw InputError(r.loc, fmt::format("{}: a {} region needs a heart with endocardial and epicardial surface "
                                            "labels (a labelled mask file or an ellipsoid_shell geometry)", what,
                                            coordinate_name(r.kind)));
      return;
    case Region::Kind::box:
      for (int a = 0; a < 3; ++a)
        if (!(r.hi[a] >= r.lo[a]))
          throw InputError(r.loc, fmt::format("{}: box hi[{}] = {} is below lo[{}] = {}", what, a,
                                              r.hi[a], a, r.lo[a]));
      return;
    case Region::Kind::sphere:
      if (!(r.radius > 0))
        throw InputError(r.loc, fmt::format("{}: sphere radius = {} mm must be > 0", what, r.radius));
      return;
    case Region::Kind::label:
      if (!have_labels)
        throw InputError(r.loc, fmt::format("{}: label = {} but the geometry has no label field",
                                            what, r.label));
      return;
    case Region::Kind::face: {
      int a;
      bool high;
      parse_face(r.face, a, high);
      if (a < 0)
        throw InputError(r.loc, fmt::format("{}: face = \"{}\" is not one of x-, x+, y-, y+, z-, z+",
                                            what, r.face));
      if (!(r.depth >= 0))
        throw InputError(r.loc, fmt::format("{}: face depth = {} mm must be >= 0", what, r.depth));
      return;
    }
  }
}

std::vector<std::uint32_t> region_cells(const Region& r, const Grid& g, const Mask& mask,
                                        const Field<std::int16_t>& labels, const CellCoordinates& coords) {
  std::vector<std::uint32_t> out;
  for (int k = 0; k < g.nz(); ++k)
    for (int j = 0; j < g.ny(); ++j)
      for (int i = 0; i < g.nx(); ++i) {
        const std::size_t n = g.index(i, j, k);
        if (is_tissue(&mask, n) && region_contains(r, g, i, j, k, labels, coords))
          out.push_back(static_cast<std::uint32_t>(n));
      }
  return out;
}

}  // namespace hw::tissue
