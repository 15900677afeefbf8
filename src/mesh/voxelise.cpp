// See voxelise.hpp.
#include "mesh/voxelise.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/error.hpp"

namespace hw::tissue {

namespace {

using P3 = std::array<double, 3>;

// Voxel index range [lo, hi] whose centres (origin + (i + ½)h) lie in [a, b]; empty when lo > hi.
void centre_range(const Grid& g, int axis, double a, double b, int& lo, int& hi) {
  const double h = g.h[axis], o = g.origin[axis];
  lo = std::max(0, static_cast<int>(std::ceil((a - o) / h - 0.5)));
  hi = std::min(g.n[axis] - 1, static_cast<int>(std::floor((b - o) / h - 0.5)));
}

double centre(const Grid& g, int axis, int i) { return g.origin[axis] + (i + 0.5) * g.h[axis]; }

// Barycentric coordinates of x in tet t: λ1..λ3 solve [b−a, c−a, d−a] λ = x − a, λ0 = 1 − Σ.
struct TetFrame {
  P3 a;
  double inv[3][3];
  bool ok = false;
};

TetFrame frame(const io::UnstructuredMesh& m, const std::array<std::int32_t, 4>& t) {
  TetFrame f;
  f.a = m.points[t[0]];
  double M[3][3];
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) M[r][c] = m.points[t[c + 1]][r] - f.a[r];
  const double det = M[0][0] * (M[1][1] * M[2][2] - M[1][2] * M[2][1]) -
                     M[0][1] * (M[1][0] * M[2][2] - M[1][2] * M[2][0]) +
                     M[0][2] * (M[1][0] * M[2][1] - M[1][1] * M[2][0]);
  if (det == 0 || !std::isfinite(det)) return f;
  const double id = 1 / det;
  f.inv[0][0] = (M[1][1] * M[2][2] - M[1][2] * M[2][1]) * id;
  f.inv[0][1] = (M[0][2] * M[2][1] - M[0][1] * M[2][2]) * id;
  f.inv[0][2] = (M[0][1] * M[1][2] - M[0][2] * M[1][1]) * id;
  f.inv[1][0] = (M[1][2] * M[2][0] - M[1][0] * M[2][2]) * id;
  f.inv[1][1] = (M[0][0] * M[2][2] - M[0][2] * M[2][0]) * id;
  f.inv[1][2] = (M[0][2] * M[1][0] - M[0][0] * M[1][2]) * id;
  f.inv[2][0] = (M[1][0] * M[2][1] - M[1][1] * M[2][0]) * id;
  f.inv[2][1] = (M[0][1] * M[2][0] - M[0][0] * M[2][1]) * id;
  f.inv[2][2] = (M[0][0] * M[1][1] - M[0][1] * M[1][0]) * id;
  f.ok = true;
  return f;
}

std::array<double, 4> barycentric(const TetFrame& f, const P3& x) {
  const double d[3] = {x[0] - f.a[0], x[1] - f.a[1], x[2] - f.a[2]};
  std::array<double, 4> l{};
  for (int r = 0; r < 3; ++r) l[r + 1] = f.inv[r][0] * d[0] + f.inv[r][1] * d[1] + f.inv[r][2] * d[2];
  l[0] = 1 - l[1] - l[2] - l[3];
  return l;
}

std::int16_t label_of(const VoxeliseOptions& o, std::int32_t tag, const std::string& source, std::size_t e) {
  if (o.tag_labels.empty()) {
    if (tag < 0 || tag > 32767)
      throw InputError(SourceLoc{source, 0, 0}, fmt::format("element {} has tag {}: region labels must be 0…32767; map it "
                                                            "with geometry.tags", e, tag));
    return static_cast<std::int16_t>(tag);
  }
  auto it = o.tag_labels.find(tag);
  if (it == o.tag_labels.end())
    throw InputError(SourceLoc{source, 0, 0}, fmt::format("element {} has tag {}, which geometry.tags does not map "
                                                          "(add \"{}\" = label, or 0 to leave it out)", e, tag, tag));
  return static_cast<std::int16_t>(it->second);
}

// Tetrahedra: rasterise each over the voxel centres of its bounding box.
void voxelise_tets(const io::UnstructuredMesh& m, const Grid& g, const VoxeliseOptions& o, MeshVoxels& v) {
  std::vector<float> depth(g.size(), -std::numeric_limits<float>::infinity());
  std::vector<std::int32_t> owner(g.size(), -1);
  constexpr double eps = 1e-9;   // a centre on a face belongs to both tets
  constexpr double deep = 1e-6;  // strictly inside: two such tets overlap
  for (std::size_t e = 0; e < m.tets.size(); ++e) {
    const auto& t = m.tets[e];
    const TetFrame f = frame(m, t);
    if (!f.ok) continue;  // check_mesh refuses flat tets; a file that skipped it is harmless here
    P3 lo = m.points[t[0]], hi = lo;
    for (int k = 1; k < 4; ++k)
      for (int a = 0; a < 3; ++a) lo[a] = std::min(lo[a], m.points[t[k]][a]), hi[a] = std::max(hi[a], m.points[t[k]][a]);
    int i0, i1, j0, j1, k0, k1;
    centre_range(g, 0, lo[0], hi[0], i0, i1);
    centre_range(g, 1, lo[1], hi[1], j0, j1);
    centre_range(g, 2, lo[2], hi[2], k0, k1);
    for (int k = k0; k <= k1; ++k)
      for (int j = j0; j <= j1; ++j)
        for (int i = i0; i <= i1; ++i) {
          const auto l = barycentric(f, {centre(g, 0, i), centre(g, 1, j), centre(g, 2, k)});
          const double mn = std::min(std::min(l[0], l[1]), std::min(l[2], l[3]));
          if (mn < -eps) continue;
          const std::size_t n = g.index(i, j, k);
          if (mn > deep && depth[n] > deep) {
            const auto& u = m.tets[owner[n]];
            throw InputError(SourceLoc{m.source, 0, 0},
                             fmt::format("tetrahedra {} (points {} {} {} {}) and {} (points {} {} {} {}) overlap near "
                                         "({:.4g}, {:.4g}, {:.4g}): a self-intersecting mesh; remesh it",
                                         owner[n], u[0], u[1], u[2], u[3], e, t[0], t[1], t[2], t[3], centre(g, 0, i),
                                         centre(g, 1, j), centre(g, 2, k)));
          }
          if (mn > depth[n]) depth[n] = static_cast<float>(mn), owner[n] = static_cast<std::int32_t>(e);
        }
  }
  const bool tags = !m.tet_tags.empty();
  v.mask = Mask(g, 0);
  if (tags) v.labels = Field<std::int16_t>(g, 0);
  const bool want_fibres = o.fibres && (!m.tet_fibres.empty() || !m.point_fibres.empty());
  FibreField ff;
  if (want_fibres)
    for (int a = 0; a < 3; ++a) ff.f[a] = Field<double>(g, 0.0);
  std::vector<TetFrame> frames;  // only for point fibres
  std::size_t zero_fibres = 0;
  for (std::size_t n = 0; n < g.size(); ++n) {
    if (owner[n] < 0) continue;
    const std::size_t e = std::size_t(owner[n]);
    if (tags) {
      const std::int16_t l = label_of(o, m.tet_tags[e], m.source, e);
      if (l == 0) continue;  // mapped out of the tissue
      v.labels[n] = l;
    }
    v.mask[n] = 1;
    ++v.tissue;
    if (!want_fibres) continue;
    P3 f{0, 0, 0};
    if (!m.tet_fibres.empty()) {
      f = m.tet_fibres[e];
    } else {
      // Barycentric mix of the nodes' fibres, each turned to agree with the first (a fibre
      // is an axis: f and −f are the same direction).
      const auto& t = m.tets[e];
      const int i = int(n % std::size_t(g.n[0])), j = int((n / std::size_t(g.n[0])) % std::size_t(g.n[1])),
                k = int(n / (std::size_t(g.n[0]) * std::size_t(g.n[1])));
      const auto l = barycentric(frame(m, t), {centre(g, 0, i), centre(g, 1, j), centre(g, 2, k)});
      const P3& ref = m.point_fibres[t[0]];
      for (int q = 0; q < 4; ++q) {
        const P3& pf = m.point_fibres[t[q]];
        const double s = (pf[0] * ref[0] + pf[1] * ref[1] + pf[2] * ref[2]) < 0 ? -1 : 1;
        for (int a = 0; a < 3; ++a) f[a] += s * std::max(0.0, l[q]) * pf[a];
      }
    }
    const double len = std::sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    if (!(len > 0)) {
      ++zero_fibres;
      continue;
    }
    for (int a = 0; a < 3; ++a) ff.f[a][n] = f[a] / len;
  }
  if (zero_fibres)
    throw InputError(SourceLoc{m.source, 0, 0},
                     fmt::format("the mesh's fibres are zero in {} tissue voxels (elements or nodes with a zero fibre "
                                 "vector)", zero_fibres));
  if (want_fibres) v.fibres = std::move(ff);
}

// Surfaces: ray parity along each axis, majority vote of the axes whose ray is consistent.
void voxelise_surface(const io::UnstructuredMesh& m, const Grid& g, MeshVoxels& v) {
  std::vector<std::uint8_t> inside(g.size(), 0), valid(g.size(), 0);
  // Off-centre nudges (fractions of a voxel) per axis: irrational, so no ray meets an edge.
  const double nudge[3] = {0.5 * (std::sqrt(5.0) - 2.0) * 1e-3, (std::sqrt(2.0) - 1.0) * 1e-3, (std::sqrt(3.0) - 1.5) * 1e-3};
  for (int a = 0; a < 3; ++a) {
    const int b = (a + 1) % 3, c = (a + 2) % 3;
    const std::size_t nb = std::size_t(g.n[b]), nc = std::size_t(g.n[c]);
    std::vector<std::vector<double>> hits(nb * nc);
    auto ray = [&](int axis, int i) { return centre(g, axis, i) + nudge[axis] * g.h[axis]; };
    for (const auto& t : m.triangles) {
      const P3 &p0 = m.points[t[0]], &p1 = m.points[t[1]], &p2 = m.points[t[2]];
      int jb0, jb1, jc0, jc1;
      centre_range(g, b, std::min({p0[b], p1[b], p2[b]}) - 0.01 * g.h[b], std::max({p0[b], p1[b], p2[b]}) + 0.01 * g.h[b], jb0, jb1);
      centre_range(g, c, std::min({p0[c], p1[c], p2[c]}) - 0.01 * g.h[c], std::max({p0[c], p1[c], p2[c]}) + 0.01 * g.h[c], jc0, jc1);
      const double area = (p1[b] - p0[b]) * (p2[c] - p0[c]) - (p2[b] - p0[b]) * (p1[c] - p0[c]);
      if (area == 0) continue;  // edge-on to the ray: no crossing
      for (int jc = jc0; jc <= jc1; ++jc)
        for (int jb = jb0; jb <= jb1; ++jb) {
          const double y = ray(b, jb), z = ray(c, jc);
          // Signed sub-areas: the ray (y, z) is inside when all three share the triangle's sign.
          const double w0 = ((p1[b] - y) * (p2[c] - z) - (p2[b] - y) * (p1[c] - z)) / area;
          const double w1 = ((p2[b] - y) * (p0[c] - z) - (p0[b] - y) * (p2[c] - z)) / area;
          const double w2 = 1 - w0 - w1;
          if (w0 < 0 || w1 < 0 || w2 < 0) continue;
          hits[std::size_t(jb) + nb * std::size_t(jc)].push_back(w0 * p0[a] + w1 * p1[a] + w2 * p2[a]);
        }
    }
    for (std::size_t jc = 0; jc < nc; ++jc)
      for (std::size_t jb = 0; jb < nb; ++jb) {
        auto& h = hits[jb + nb * jc];
        if (h.size() % 2) {
          ++v.abstained_columns;
          continue;
        }
        std::sort(h.begin(), h.end());
        std::array<int, 3> ijk{};
        ijk[b] = int(jb);
        ijk[c] = int(jc);
        std::size_t q = 0;
        for (int i = 0; i < g.n[a]; ++i) {
          ijk[a] = i;
          const double x = centre(g, a, i);
          while (q < h.size() && h[q] <= x) ++q;
          const std::size_t n = g.index(ijk[0], ijk[1], ijk[2]);
          ++valid[n];
          inside[n] += q % 2;
        }
      }
  }
  v.mask = Mask(g, 0);
  for (std::size_t n = 0; n < g.size(); ++n)
    if (valid[n] && 2 * inside[n] > valid[n]) v.mask[n] = 1, ++v.tissue;
  if (!m.triangle_tags.empty()) {
    // A surface's tags mark its faces, not the volume inside: the tissue takes label 1.
    v.labels = Field<std::int16_t>(g, 0);
    for (std::size_t n = 0; n < g.size(); ++n) v.labels[n] = v.mask[n];
  }
}

}  // namespace

Grid grid_around(const io::UnstructuredMesh& m, const std::array<double, 3>& spacing, int pad) {
  const io::MeshSummary s = io::summarize_mesh(m);
  Grid g;
  for (int a = 0; a < 3; ++a) {
    if (!(spacing[a] > 0) || !std::isfinite(spacing[a]))
      throw Error(fmt::format("voxel spacing {} mm along axis {} must be > 0", spacing[a], a));
    g.h[a] = spacing[a];
    const double cells = std::ceil((s.hi[a] - s.lo[a]) / spacing[a]);
    if (cells + 2.0 * pad > 2e9) throw Error(fmt::format("{:.3g} voxels along axis {} is too many", cells, a));
    g.n[a] = std::max(1, static_cast<int>(cells) + 2 * pad);
    // Centre the mesh in the padded box.
    g.origin[a] = 0.5 * (s.lo[a] + s.hi[a]) - 0.5 * g.n[a] * spacing[a];
  }
  return g;
}

MeshVoxels voxelise(const io::UnstructuredMesh& m, const Grid& g, const VoxeliseOptions& o) {
  MeshVoxels v;
  if (m.has_volume()) voxelise_tets(m, g, o, v);
  else voxelise_surface(m, g, v);
  return v;
}

NodeSampler::NodeSampler(const Grid& g, const Mask& mask, const std::vector<std::array<double, 3>>& pts) {
  first_.reserve(pts.size() + 1);
  first_.push_back(0);
  for (const auto& p : pts) {
    // Cell-centre coordinates: u = (x − origin)/h − ½, the 8 centres around are ⌊u⌋ and ⌊u⌋+1.
    int base[3];
    double frac[3];
    for (int a = 0; a < 3; ++a) {
      const double u = (p[a] - g.origin[a]) / g.h[a] - 0.5;
      base[a] = static_cast<int>(std::floor(u));
      frac[a] = u - base[a];
    }
    double total = 0;
    const std::size_t start = voxel_.size();
    for (int c = 0; c < 8; ++c) {
      int ijk[3];
      double w = 1;
      bool in = true;
      for (int a = 0; a < 3; ++a) {
        const int d = (c >> a) & 1;
        ijk[a] = base[a] + d;
        w *= d ? frac[a] : 1 - frac[a];
        in = in && ijk[a] >= 0 && ijk[a] < g.n[a];
      }
      if (!in || w <= 0) continue;
      const std::size_t n = g.index(ijk[0], ijk[1], ijk[2]);
      if (!is_tissue(&mask, n)) continue;
      voxel_.push_back(n);
      weight_.push_back(w);
      total += w;
    }
    if (total > 0) {
      for (std::size_t q = start; q < voxel_.size(); ++q) weight_[q] /= total;
    } else {
      // Nearest tissue voxel centre within two voxels.
      double best = std::numeric_limits<double>::infinity();
      std::size_t best_n = 0;
      for (int dk = -2; dk <= 3; ++dk)
        for (int dj = -2; dj <= 3; ++dj)
          for (int di = -2; di <= 3; ++di) {
            const int i = base[0] + di, j = base[1] + dj, k = base[2] + dk;
            if (i < 0 || j < 0 || k < 0 || i >= g.n[0] || j >= g.n[1] || k >= g.n[2]) continue;
            const std::size_t n = g.index(i, j, k);
            if (!is_tissue(&mask, n)) continue;
            const double d2 = std::pow(centre(g, 0, i) - p[0], 2) + std::pow(centre(g, 1, j) - p[1], 2) +
                              std::pow(centre(g, 2, k) - p[2], 2);
            if (d2 < best) best = d2, best_n = n;
          }
      if (std::isfinite(best)) {
        voxel_.push_back(best_n);
        weight_.push_back(1);
      } else {
        ++unreached_;
      }
    }
    first_.push_back(voxel_.size());
  }
}

template <class T>
std::vector<double> NodeSampler::sample_any(const T* field) const {
  std::vector<double> out(nodes(), std::numeric_limits<double>::quiet_NaN());
  for (std::size_t n = 0; n < nodes(); ++n) {
    double s = 0, w = 0;
    for (std::size_t q = first_[n]; q < first_[n + 1]; ++q) {
      const double v = static_cast<double>(field[voxel_[q]]);
      if (!std::isfinite(v)) continue;
      s += weight_[q] * v;
      w += weight_[q];
    }
    if (w > 0) out[n] = s / w;
  }
  return out;
}

std::vector<double> NodeSampler::sample(const double* field) const { return sample_any(field); }
std::vector<double> NodeSampler::sample(const float* field) const { return sample_any(field); }

}  // namespace hw::tissue
