// TetGen/Chaste (.node/.ele/.face) and openCARP (.pts/.elem/.lon) readers: "a count, then
// one record per line" formats, read with TextLines so every error names file:line.
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "formats/text_lines.hpp"
#include "formats/unstructured_mesh.hpp"

namespace hw::io {

namespace fs = std::filesystem;

namespace {

std::string stem_path(const std::string& path) {
  fs::path p(path);
  return (p.parent_path() / p.stem()).string();
}

// An element's node index, shifted to 0-based and checked against the node count.
std::int32_t node_index(const TextLines& t, const std::vector<std::string_view>& w, std::size_t i,
                        std::int64_t base, std::size_t nodes, std::size_t element) {
  const std::int64_t v = t.integer(w, i, "a node index");
  if (v - base < 0 || static_cast<std::size_t>(v - base) >= nodes)
    t.fail(fmt::format("element {} refers to node {}, but the nodes are numbered {}…{} (index out of range)", element,
                       v, base, std::int64_t(nodes) - 1 + base));
  return static_cast<std::int32_t>(v - base);
}

}  // namespace

UnstructuredMesh read_tetgen(const std::string& path) {
  const std::string base = stem_path(path);
  const std::string ext = fs::path(path).extension().string();
  UnstructuredMesh m;
  m.format = MeshFormat::tetgen;
  m.source = path;
  std::int64_t index_base = 0;
  {
    TextLines t(base + ".node");
    std::vector<std::string_view> w;
    t.need(w, "the header 'nodes dimension attributes markers'");
    const std::size_t n = t.count(w, 0, "the node count", 8);
    if (w.size() > 1 && t.integer(w, 1, "the dimension") != 3)
      t.fail(fmt::format("dimension {}: only 3D meshes are read", std::string(w[1])));
    m.points.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      t.need(w, fmt::format("node {} of {}", i, n));
      const std::int64_t id = t.integer(w, 0, "the node id");
      if (i == 0) {
        if (id != 0 && id != 1) t.fail(fmt::format("the first node id is {}; TetGen numbers nodes from 0 or 1", id));
        index_base = id;
      } else if (id != std::int64_t(i) + index_base) {
        t.fail(fmt::format("node id {} out of sequence (expected {})", id, std::int64_t(i) + index_base));
      }
      for (int a = 0; a < 3; ++a) m.points[i][a] = t.number(w, 1 + a, "a coordinate");
    }
  }
  const bool want_faces = ext == ".face" || (ext != ".ele" && !fs::exists(base + ".ele"));
  std::vector<std::string_view> w;
  if (!want_faces) {
    TextLines t(base + ".ele");
    t.need(w, "the header 'tetrahedra nodes-per-tet attributes'");
    const std::size_t n = t.count(w, 0, "the tetrahedron count", 10);
    const std::int64_t per = w.size() > 1 ? t.integer(w, 1, "nodes per tetrahedron") : 4;
    if (per != 4 && per != 10) t.fail(fmt::format("{} nodes per tetrahedron: TetGen writes 4 or 10", per));
    const std::int64_t attrs = w.size() > 2 ? t.integer(w, 2, "the attribute count") : 0;
    m.tets.resize(n);
    if (attrs > 0) m.tet_tags.resize(n);
    for (std::size_t e = 0; e < n; ++e) {
      t.need(w, fmt::format("tetrahedron {} of {}", e, n));
      for (int k = 0; k < 4; ++k) m.tets[e][k] = node_index(t, w, 1 + k, index_base, m.points.size(), e);
      if (attrs > 0) {
        const double tag = t.number(w, 1 + std::size_t(per), "the region attribute");
        if (tag != std::floor(tag) || std::fabs(tag) > 32767)
          t.fail(fmt::format("region attribute {} must be a whole number within ±32767", tag));
        m.tet_tags[e] = static_cast<std::int32_t>(tag);
      }
    }
  } else {
    TextLines t(base + ".face");
    t.need(w, "the header 'faces boundary-markers'");
    const std::size_t n = t.count(w, 0, "the face count", 8);
    const bool markers = w.size() > 1 && t.integer(w, 1, "the boundary-marker flag") != 0;
    m.triangles.resize(n);
    if (markers) m.triangle_tags.resize(n);
    for (std::size_t e = 0; e < n; ++e) {
      t.need(w, fmt::format("face {} of {}", e, n));
      for (int k = 0; k < 3; ++k) m.triangles[e][k] = node_index(t, w, 1 + k, index_base, m.points.size(), e);
      if (markers) m.triangle_tags[e] = static_cast<std::int32_t>(t.integer(w, 4, "the boundary marker"));
    }
  }
  check_mesh(m);
  return m;
}

UnstructuredMesh read_opencarp(const std::string& path) {
  const std::string ext = fs::path(path).extension().string();
  const std::string base = (ext == ".pts" || ext == ".elem" || ext == ".lon") ? stem_path(path) : path;
  UnstructuredMesh m;
  m.format = MeshFormat::opencarp;
  m.units = "um";
  m.source = path;
  std::vector<std::string_view> w;
  {
    TextLines t(base + ".pts");
    t.need(w, "the point count");
    const std::size_t n = t.count(w, 0, "the point count", 6);
    m.points.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      t.need(w, fmt::format("point {} of {}", i, n));
      for (int a = 0; a < 3; ++a) m.points[i][a] = t.number(w, a, "a coordinate");
    }
  }
  std::vector<bool> is_tet;  // element order of .elem, to place the .lon rows
  {
    TextLines t(base + ".elem");
    t.need(w, "the element count");
    const std::size_t n = t.count(w, 0, "the element count", 10);
    is_tet.reserve(n);
    for (std::size_t e = 0; e < n; ++e) {
      t.need(w, fmt::format("element {} of {}", e, n));
      const std::string type(w[0]);
      if (type == "Tt") {
        std::array<std::int32_t, 4> v{};
        for (int k = 0; k < 4; ++k) v[k] = node_index(t, w, 1 + k, 0, m.points.size(), e);
        m.tets.push_back(v);
        m.tet_tags.push_back(w.size() > 5 ? static_cast<std::int32_t>(t.integer(w, 5, "the element tag")) : 0);
        is_tet.push_back(true);
      } else if (type == "Tr") {
        std::array<std::int32_t, 3> v{};
        for (int k = 0; k < 3; ++k) v[k] = node_index(t, w, 1 + k, 0, m.points.size(), e);
        m.triangles.push_back(v);
        m.triangle_tags.push_back(w.size() > 4 ? static_cast<std::int32_t>(t.integer(w, 4, "the element tag")) : 0);
        is_tet.push_back(false);
      } else {
        t.fail(fmt::format("element type '{}' is not read: only tetrahedra (Tt) and triangles (Tr); convert "
                           "hexahedra, prisms and pyramids to tetrahedra first (e.g. meshtool convert)",
                           type));
      }
    }
    if (!m.tets.empty() && !m.triangles.empty()) {
      // A volume mesh: its triangles are openCARP surfaces of the same nodes, not tissue.
      m.triangles.clear();
      m.triangle_tags.clear();
    }
  }
  if (fs::exists(base + ".lon")) {
    TextLines t(base + ".lon");
    if (!t.next(w)) t.fail("the file is empty: expected the number of fibre directions (1 or 2), then fibres");
    int per = 3;
    bool header = w.size() == 1;
    if (header) {
      const std::int64_t k = t.integer(w, 0, "the number of fibre directions");
      if (k != 1 && k != 2) t.fail(fmt::format("{} fibre directions per element: openCARP writes 1 or 2", k));
      per = int(3 * k);
    }
    const std::size_t n = is_tet.size();
    std::vector<std::array<double, 3>> f;
    f.reserve(n);
    for (std::size_t e = 0; e < n; ++e) {
      if (e > 0 || header) t.need(w, fmt::format("the fibre of element {} of {} (one line per element of the .elem)", e, n));
      if (w.size() < std::size_t(per))
        t.fail(fmt::format("element {}'s fibre line has {} values, expected {}", e, w.size(), per));
      f.push_back({t.number(w, 0, "a fibre component"), t.number(w, 1, "a fibre component"),
                   t.number(w, 2, "a fibre component")});
    }
    if (t.next(w))
      t.fail(fmt::format("more fibre lines than the {} elements of {}.elem (fibre array of the wrong length)", n,
                         base));
    for (std::size_t e = 0; e < n; ++e)
      if (is_tet[e]) m.tet_fibres.push_back(f[e]);  // a surface's fibres are not used
  }
  check_mesh(m);
  return m;
}

}  // namespace hw::io
