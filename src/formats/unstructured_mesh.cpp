// See unstructured_mesh.hpp: units, dispatch by name, the checks every reader ends with,
// the summary, and the VTK arrays → mesh step shared by the two VTK readers.
#include "formats/unstructured_mesh.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "formats/vtk_mesh_arrays.hpp"

namespace hw::io {

namespace fs = std::filesystem;

const char* mesh_format_name(MeshFormat f) {
  switch (f) {
    case MeshFormat::tetgen: return "TetGen";
    case MeshFormat::opencarp: return "openCARP";
    case MeshFormat::vtu: return "VTK XML (.vtu)";
    case MeshFormat::legacy_vtk: return "legacy VTK";
  }
  return "?";
}

double mm_per_unit(const std::string& u) {
  if (u == "um" || u == "µm" || u == "micron" || u == "microns") return 1e-3;
  if (u == "mm") return 1;
  if (u == "cm") return 10;
  if (u == "m") return 1000;
  return 0;
}

void scale_to_mm(UnstructuredMesh& m, double factor) {
  for (auto& p : m.points)
    for (double& x : p) x *= factor;
  m.units = "mm";
}

void check_allocation(std::size_t bytes, const std::string& what, const SourceLoc& loc) {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  const double limit = pages > 0 && page > 0 ? 0.5 * double(pages) * double(page) : 8e9;
  if (double(bytes) > limit)
    throw InputError(loc, fmt::format("{} would need {:.3g} GB, more than half this machine's memory ({:.3g} GB): "
                                      "a corrupt count in the file?",
                                      what, double(bytes) / 1e9, 2 * limit / 1e9));
}

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool is_tag_name(const std::string& n) {
  const std::string l = lower(n);
  for (const char* k : {"tag", "tags", "elemtag", "elemtags", "elementtag", "region", "regions", "material",
                        "materials", "label", "labels", "cellentityids", "gmsh:physical", "medit:ref"})
    if (l == k) return true;
  return false;
}

bool is_fibre_name(const std::string& n) {
  const std::string l = lower(n);
  return l.rfind("fib", 0) == 0 || l == "lon";
}

std::int32_t whole(double v, const SourceLoc& loc, const std::string& what) {
  if (!(v == std::floor(v)) || std::fabs(v) > 2147483647.0)
    throw InputError(loc, fmt::format("{} = {} is not a whole number", what, v));
  return static_cast<std::int32_t>(v);
}

}  // namespace

UnstructuredMesh mesh_from_vtk_arrays(const VtkCells& c, const SourceLoc& loc) {
  UnstructuredMesh m;
  const std::size_t np = c.points.values.size() / 3, nc = c.types.values.size();
  m.points.resize(np);
  for (std::size_t i = 0; i < np; ++i)
    for (int a = 0; a < 3; ++a) m.points[i][a] = c.points.values[3 * i + a];
  std::vector<std::int64_t> cell_slot(nc, -1);  // index into tets (≥ 0) or triangles (−2 − i)
  double start = 0;
  for (std::size_t e = 0; e < nc; ++e) {
    const double end = c.offsets.values[e];
    if (!(end >= start) || end > double(c.connectivity.values.size()))
      throw InputError(loc, fmt::format("cell {}: offset {} is out of order or past the {} connectivity entries", e,
                                        end, c.connectivity.values.size()));
    const std::size_t k = static_cast<std::size_t>(end - start), s0 = static_cast<std::size_t>(start);
    start = end;
    const std::int32_t type = whole(c.types.values[e], loc, fmt::format("the type of cell {}", e));
    auto node = [&](std::size_t j) {
      const double v = c.connectivity.values[s0 + j];
      if (!(v >= 0) || v >= double(np) || v != std::floor(v))
        throw InputError(loc, fmt::format("cell {} refers to point {}, but there are {} points (index out of range)", e,
                                          v, np));
      return static_cast<std::int32_t>(v);
    };
    if (type == 10 || type == 24) {
      if (k < 4 || (type == 10 && k != 4) || (type == 24 && k != 10))
        throw InputError(loc, fmt::format("cell {} is a tetrahedron (type {}) with {} points", e, type, k));
      cell_slot[e] = std::int64_t(m.tets.size());
      m.tets.push_back({node(0), node(1), node(2), node(3)});
    } else if (type == 5) {
      if (k != 3) throw InputError(loc, fmt::format("cell {} is a triangle with {} points", e, k));
      cell_slot[e] = -2 - std::int64_t(m.triangles.size());
      m.triangles.push_back({node(0), node(1), node(2)});
    } else if (type < 1 || type > 4) {
      throw InputError(loc, fmt::format("cell {} has VTK type {}: only tetrahedra (10, 24) and triangles (5) are read; "
                                        "tetrahedralise the mesh first (ParaView: Tetrahedralize)",
                                        e, type));
    }
  }
  // A volume mesh's triangles are its surfaces, not tissue: only the tets are kept.
  const bool volume = !m.tets.empty();
  if (volume) m.triangles.clear();
  auto keeps = [&](std::size_t e, std::size_t& slot) {
    if (cell_slot[e] == -1) return false;
    if (volume != (cell_slot[e] >= 0)) return false;
    slot = volume ? std::size_t(cell_slot[e]) : std::size_t(-2 - cell_slot[e]);
    return true;
  };
  std::vector<std::int32_t>& tags = volume ? m.tet_tags : m.triangle_tags;
  const std::size_t ne = volume ? m.tets.size() : m.triangles.size();
  // Every data array holds one tuple per cell or point (a legacy file may declare
  // POINT_DATA 0 before its POINTS: found by fuzz_mesh_vtk).
  const auto check_length = [&](const VtkArray& a, std::size_t tuples, const char* per) {
    if (a.components < 1 || a.values.size() != tuples * std::size_t(a.components))
      throw InputError(loc, fmt::format("{} data '{}' has {} values; {} {}s × {} components need {}", per, a.name,
                                        a.values.size(), tuples, per, a.components,
                                        tuples * std::size_t(std::max(a.components, 1))));
  };
  for (const VtkArray& a : c.cell_data) check_length(a, nc, "cell");
  for (const VtkArray& a : c.point_data) check_length(a, np, "point");
  for (const VtkArray& a : c.cell_data) {
    if (is_tag_name(a.name) && a.components == 1 && tags.empty()) {
      tags.assign(ne, 0);
      std::size_t slot = 0;
      for (std::size_t e = 0; e < nc; ++e)
        if (keeps(e, slot)) tags[slot] = whole(a.values[e], loc, fmt::format("tag '{}' of cell {}", a.name, e));
    } else if (is_fibre_name(a.name) && a.components >= 3 && volume && m.tet_fibres.empty()) {
      m.tet_fibres.assign(ne, {0, 0, 0});
      std::size_t slot = 0;
      for (std::size_t e = 0; e < nc; ++e)
        if (keeps(e, slot))
          for (int k = 0; k < 3; ++k) m.tet_fibres[slot][k] = a.values[e * a.components + k];
    }
  }
  for (const VtkArray& a : c.point_data) {
    if (is_tag_name(a.name) && a.components == 1 && tags.empty()) {
      // An element takes the tag most of its nodes carry (ties: the smallest).
      tags.assign(ne, 0);
      for (std::size_t e = 0; e < ne; ++e) {
        std::map<std::int32_t, int> votes;
        if (volume)
          for (auto n : m.tets[e]) ++votes[whole(a.values[n], loc, fmt::format("tag '{}' of point {}", a.name, n))];
        else
          for (auto n : m.triangles[e]) ++votes[whole(a.values[n], loc, fmt::format("tag '{}' of point {}", a.name, n))];
        tags[e] = std::max_element(votes.begin(), votes.end(), [](auto& x, auto& y) { return x.second < y.second; })->first;
      }
    } else if (is_fibre_name(a.name) && a.components >= 3 && m.point_fibres.empty()) {
      m.point_fibres.resize(np);
      for (std::size_t i = 0; i < np; ++i)
        for (int k = 0; k < 3; ++k) m.point_fibres[i][k] = a.values[i * a.components + k];
    }
  }
  return m;
}

UnstructuredMesh read_mesh(const std::string& path) {
  const std::string ext = lower(fs::path(path).extension().string());
  if (ext == ".node" || ext == ".ele" || ext == ".face") return read_tetgen(path);
  if (ext == ".pts" || ext == ".elem" || ext == ".lon") return read_opencarp(path);
  if (ext == ".vtu") return read_vtu(path);
  if (ext == ".vtk") return read_legacy_vtk_mesh(path);
  if (ext.empty() && fs::exists(path + ".pts")) return read_opencarp(path);
  if (ext.empty() && fs::exists(path + ".node")) return read_tetgen(path);
  throw InputError(SourceLoc{path, 0, 0},
                   fmt::format("'{}' is not a mesh this reader knows by its name: TetGen .node/.ele/.face, openCARP "
                               ".pts/.elem/.lon (or their base name), VTK .vtu or legacy .vtk",
                               ext));
}

bool is_mesh_file(const std::string& path) {
  const std::string ext = lower(fs::path(path).extension().string());
  if (ext == ".node" || ext == ".ele" || ext == ".face" || ext == ".pts" || ext == ".elem" || ext == ".lon" ||
      ext == ".vtu")
    return true;
  if (ext == ".vtk") {
    std::ifstream in(path, std::ios::binary);
    std::string head(512, '\0');
    in.read(head.data(), 512);
    head.resize(static_cast<std::size_t>(in.gcount()));
    return head.find("UNSTRUCTURED_GRID") != std::string::npos;
  }
  return ext.empty() && (fs::exists(path + ".pts") || fs::exists(path + ".node"));
}

namespace {

using Face = std::array<std::int32_t, 3>;

double signed_volume6(const UnstructuredMesh& m, const std::array<std::int32_t, 4>& t) {
  const auto& a = m.points[t[0]];
  double u[3], v[3], w[3];
  for (int k = 0; k < 3; ++k) {
    u[k] = m.points[t[1]][k] - a[k];
    v[k] = m.points[t[2]][k] - a[k];
    w[k] = m.points[t[3]][k] - a[k];
  }
  return u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) + u[2] * (v[0] * w[1] - v[1] * w[0]);
}

double longest_edge(const UnstructuredMesh& m, const std::array<std::int32_t, 4>& t) {
  double l = 0;
  for (int i = 0; i < 4; ++i)
    for (int j = i + 1; j < 4; ++j) {
      double d2 = 0;
      for (int k = 0; k < 3; ++k) d2 += std::pow(m.points[t[i]][k] - m.points[t[j]][k], 2);
      l = std::max(l, std::sqrt(d2));
    }
  return l;
}

// Sorted keys with the element they came from; runs of equal keys are shared faces/edges.
template <std::size_t N>
std::vector<std::pair<std::array<std::int32_t, N>, std::size_t>> sorted_keys(
    std::size_t elements, std::size_t per, const std::function<std::array<std::int32_t, N>(std::size_t, std::size_t)>& key) {
  std::vector<std::pair<std::array<std::int32_t, N>, std::size_t>> k;
  k.reserve(elements * per);
  for (std::size_t e = 0; e < elements; ++e)
    for (std::size_t j = 0; j < per; ++j) {
      auto x = key(e, j);
      std::sort(x.begin(), x.end());
      k.push_back({x, e});
    }
  std::sort(k.begin(), k.end());
  return k;
}

std::vector<std::pair<std::array<std::int32_t, 2>, std::size_t>> surface_edges(const UnstructuredMesh& m) {
  return sorted_keys<2>(m.triangles.size(), 3, [&](std::size_t e, std::size_t j) {
    return std::array<std::int32_t, 2>{m.triangles[e][j], m.triangles[e][(j + 1) % 3]};
  });
}

}  // namespace

void check_mesh(const UnstructuredMesh& m) {
  const SourceLoc at{m.source, 0, 0};
  if (m.tets.empty() && m.triangles.empty())
    throw InputError(at, "the mesh has no tetrahedra and no triangles: nothing to voxelise");
  for (std::size_t i = 0; i < m.points.size(); ++i)
    for (int a = 0; a < 3; ++a)
      if (!std::isfinite(m.points[i][a]))
        throw InputError(at, fmt::format("point {} has a non-finite coordinate ({}, {}, {})", i, m.points[i][0],
                                         m.points[i][1], m.points[i][2]));
  auto in_range = [&](std::int32_t n, std::size_t e, const char* kind) {
    if (n < 0 || std::size_t(n) >= m.points.size())
      throw InputError(at, fmt::format("{} {} refers to point {}, but there are {} points (index out of range)", kind, e,
                                       n, m.points.size()));
  };
  if (!m.tet_tags.empty() && m.tet_tags.size() != m.tets.size())
    throw InputError(at, fmt::format("{} tetrahedron tags for {} tetrahedra", m.tet_tags.size(), m.tets.size()));
  if (!m.triangle_tags.empty() && m.triangle_tags.size() != m.triangles.size())
    throw InputError(at, fmt::format("{} triangle tags for {} triangles", m.triangle_tags.size(), m.triangles.size()));
  if (!m.tet_fibres.empty() && m.tet_fibres.size() != m.tets.size())
    throw InputError(at, fmt::format("{} element fibres for {} tetrahedra (fibre array of the wrong length)",
                                     m.tet_fibres.size(), m.tets.size()));
  if (!m.point_fibres.empty() && m.point_fibres.size() != m.points.size())
    throw InputError(at, fmt::format("{} point fibres for {} points (fibre array of the wrong length)",
                                     m.point_fibres.size(), m.points.size()));
  for (const auto* f : {&m.tet_fibres, &m.point_fibres})
    for (std::size_t i = 0; i < f->size(); ++i)
      for (double x : (*f)[i])
        if (!std::isfinite(x)) throw InputError(at, fmt::format("fibre {} has a non-finite component", i));
  // Tetrahedra: in range, not flat, one orientation, each face shared by at most two.
  std::size_t pos = 0, neg = 0, first_pos = 0, first_neg = 0;
  for (std::size_t e = 0; e < m.tets.size(); ++e) {
    const auto& t = m.tets[e];
    for (auto n : t) in_range(n, e, "tetrahedron");
    for (int i = 0; i < 4; ++i)
      for (int j = i + 1; j < 4; ++j)
        if (t[i] == t[j])
          throw InputError(at, fmt::format("tetrahedron {} repeats point {} (a degenerate element)", e, t[i]));
    const double v = signed_volume6(m, t), l = longest_edge(m, t);
    if (!(std::fabs(v) > 1e-9 * l * l * l))
      throw InputError(at, fmt::format("tetrahedron {} (points {} {} {} {}) is flat: zero volume", e, t[0], t[1], t[2],
                                       t[3]));
    if (v > 0) {
      if (!pos++) first_pos = e;
    } else if (!neg++) {
      first_neg = e;
    }
  }
  if (pos && neg) {
    const bool few_neg = neg <= pos;
    const std::size_t e = few_neg ? first_neg : first_pos;
    const auto& t = m.tets[e];
    throw InputError(at, fmt::format("tetrahedron {} (points {} {} {} {}) is inverted: {} of the {} tetrahedra have "
                                     "the other orientation; swap two of its points",
                                     e, t[0], t[1], t[2], t[3], few_neg ? pos : neg, m.tets.size()));
  }
  if (!m.tets.empty()) {
    const auto faces = sorted_keys<3>(m.tets.size(), 4, [&](std::size_t e, std::size_t j) {
      const auto& t = m.tets[e];
      return Face{t[j], t[(j + 1) % 4], t[(j + 2) % 4]};
    });
    for (std::size_t i = 0; i + 2 < faces.size(); ++i)
      if (faces[i].first == faces[i + 2].first)
        throw InputError(at, fmt::format("non-manifold: the face of points {} {} {} is shared by tetrahedra {}, {} and "
                                         "{} (at most two may share a face)",
                                         faces[i].first[0], faces[i].first[1], faces[i].first[2], faces[i].second,
                                         faces[i + 1].second, faces[i + 2].second));
  }
  for (std::size_t e = 0; e < m.triangles.size(); ++e) {
    const auto& t = m.triangles[e];
    for (auto n : t) in_range(n, e, "triangle");
    if (t[0] == t[1] || t[1] == t[2] || t[0] == t[2])
      throw InputError(at, fmt::format("triangle {} repeats a point (a degenerate element)", e));
  }
  if (m.tets.empty()) {
    const auto edges = surface_edges(m);
    for (std::size_t i = 0; i + 2 < edges.size(); ++i)
      if (edges[i].first == edges[i + 2].first)
        throw InputError(at, fmt::format("non-manifold surface: the edge of points {} {} is shared by triangles {}, {} "
                                         "and {} (a closed surface has two per edge)",
                                         edges[i].first[0], edges[i].first[1], edges[i].second, edges[i + 1].second,
                                         edges[i + 2].second));
  }
}

MeshSummary summarize_mesh(const UnstructuredMesh& m) {
  MeshSummary s;
  s.points = m.points.size();
  s.tets = m.tets.size();
  s.triangles = m.triangles.size();
  for (int a = 0; a < 3; ++a) {
    s.lo[a] = m.points.empty() ? 0 : m.points[0][a];
    s.hi[a] = s.lo[a];
  }
  for (const auto& p : m.points)
    for (int a = 0; a < 3; ++a) s.lo[a] = std::min(s.lo[a], p[a]), s.hi[a] = std::max(s.hi[a], p[a]);
  std::map<std::int32_t, std::size_t> tags;
  for (auto t : m.tets.empty() ? m.triangle_tags : m.tet_tags) ++tags[t];
  s.tags.assign(tags.begin(), tags.end());
  auto nonzero = [](const std::array<double, 3>& f) { return f[0] != 0 || f[1] != 0 || f[2] != 0; };
  for (const auto& f : m.tet_fibres) s.fibre_elements += nonzero(f);
  for (const auto& f : m.point_fibres) s.fibre_points += nonzero(f);
  if (!m.tets.empty()) {
    for (const auto& t : m.tets) s.volume += std::fabs(signed_volume6(m, t)) / 6;
  } else {
    // Divergence theorem: Σ p0 · (p1 × p2) / 6, signed by the triangles' orientation.
    double v = 0;
    for (const auto& t : m.triangles) {
      const auto &a = m.points[t[0]], &b = m.points[t[1]], &c = m.points[t[2]];
      v += a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) + a[2] * (b[0] * c[1] - b[1] * c[0]);
    }
    s.volume = std::fabs(v) / 6;
    const auto edges = surface_edges(m);
    for (std::size_t i = 0; i < edges.size();) {
      std::size_t j = i;
      while (j < edges.size() && edges[j].first == edges[i].first) ++j;
      s.open_edges += (j - i) == 1;
      i = j;
    }
  }
  return s;
}

}  // namespace hw::io
