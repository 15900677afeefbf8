// Writers of unstructured meshes (.vtu, legacy .vtk, openCARP, TetGen) and of openCARP's
// result files (.igb header, .dat), so a run's maps go back onto the mesh it came from.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/error.hpp"
#include "formats/base64.hpp"
#include "formats/unstructured_mesh.hpp"

namespace hw::io {

namespace {

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error(fmt::format("cannot write '{}'", path));
  out << text;
  if (!out) throw Error(fmt::format("cannot write '{}' (disk full?)", path));
}

// One VTK inline binary array: the byte count (UInt64) and the data, each base64-padded.
template <class T>
void binary_array(std::string& out, const std::vector<T>& v) {
  const std::uint64_t n = v.size() * sizeof(T);
  base64_encode(&n, sizeof n, out);
  base64_encode(v.data(), n, out);
}

template <class T>
void data_array(std::ostringstream& s, const char* type, const std::string& name, int comps, const std::vector<T>& v) {
  std::string enc;
  binary_array(enc, v);
  s << "        <DataArray type=\"" << type << "\" Name=\"" << name << "\" NumberOfComponents=\"" << comps
    << "\" format=\"binary\">\n          " << enc << "\n        </DataArray>\n";
}

std::vector<double> flat(const std::vector<std::array<double, 3>>& v) {
  std::vector<double> r;
  r.reserve(3 * v.size());
  for (const auto& p : v) r.insert(r.end(), p.begin(), p.end());
  return r;
}

}  // namespace

void write_vtu(const std::string& path, const UnstructuredMesh& m, const std::vector<PointArray>& extra) {
  const bool vol = m.has_volume();
  const std::size_t ne = vol ? m.tets.size() : m.triangles.size();
  std::vector<std::int64_t> conn, offsets;
  std::vector<std::uint8_t> types(ne, vol ? 10 : 5);
  conn.reserve(ne * (vol ? 4 : 3));
  for (std::size_t e = 0; e < ne; ++e) {
    if (vol) conn.insert(conn.end(), m.tets[e].begin(), m.tets[e].end());
    else conn.insert(conn.end(), m.triangles[e].begin(), m.triangles[e].end());
    offsets.push_back(std::int64_t(conn.size()));
  }
  std::ostringstream s;
  s << "<?xml version=\"1.0\"?>\n<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\""
    << (std::endian::native == std::endian::little ? "LittleEndian" : "BigEndian") << "\" header_type=\"UInt64\">\n"
    << "  <UnstructuredGrid>\n    <Piece NumberOfPoints=\"" << m.points.size() << "\" NumberOfCells=\"" << ne << "\">\n";
  s << "      <Points>\n";
  data_array(s, "Float64", "Points", 3, flat(m.points));
  s << "      </Points>\n      <Cells>\n";
  data_array(s, "Int64", "connectivity", 1, conn);
  data_array(s, "Int64", "offsets", 1, offsets);
  data_array(s, "UInt8", "types", 1, types);
  s << "      </Cells>\n      <CellData>\n";
  const auto& tags = vol ? m.tet_tags : m.triangle_tags;
  if (!tags.empty()) data_array(s, "Int32", "tag", 1, tags);
  if (vol && !m.tet_fibres.empty()) data_array(s, "Float64", "fibres", 3, flat(m.tet_fibres));
  s << "      </CellData>\n      <PointData>\n";
  if (!m.point_fibres.empty()) data_array(s, "Float64", "fibres", 3, flat(m.point_fibres));
  for (const auto& a : extra) data_array(s, "Float64", a.name, a.components, a.values);
  s << "      </PointData>\n    </Piece>\n  </UnstructuredGrid>\n</VTKFile>\n";
  write_text(path, s.str());
}

void write_legacy_vtk_mesh(const std::string& path, const UnstructuredMesh& m, bool binary,
                           const std::vector<PointArray>& extra) {
  const bool vol = m.has_volume();
  const std::size_t ne = vol ? m.tets.size() : m.triangles.size(), k = vol ? 4 : 3;
  std::string out;
  out += fmt::format("# vtk DataFile Version 3.0\nheartwave mesh\n{}\nDATASET UNSTRUCTURED_GRID\n",
                     binary ? "BINARY" : "ASCII");
  // Big-endian binary: each value's bytes reversed on a little-endian machine.
  auto put = [&](auto v) {
    if (binary) {
      char b[sizeof v];
      std::memcpy(b, &v, sizeof v);
      if (std::endian::native == std::endian::little) std::reverse(b, b + sizeof v);
      out.append(b, sizeof v);
    } else {
      out += fmt::format("{} ", v);
    }
  };
  auto end_block = [&] { out += "\n"; };
  out += fmt::format("POINTS {} double\n", m.points.size());
  for (const auto& p : m.points)
    for (double x : p) put(x);
  end_block();
  out += fmt::format("CELLS {} {}\n", ne, ne * (k + 1));
  for (std::size_t e = 0; e < ne; ++e) {
    put(std::int32_t(k));
    for (std::size_t j = 0; j < k; ++j) put(std::int32_t(vol ? m.tets[e][j] : m.triangles[e][j]));
  }
  end_block();
  out += fmt::format("CELL_TYPES {}\n", ne);
  for (std::size_t e = 0; e < ne; ++e) put(std::int32_t(vol ? 10 : 5));
  end_block();
  const auto& tags = vol ? m.tet_tags : m.triangle_tags;
  if (!tags.empty() || (vol && !m.tet_fibres.empty())) {
    out += fmt::format("CELL_DATA {}\n", ne);
    if (!tags.empty()) {
      out += "SCALARS tag int 1\nLOOKUP_TABLE default\n";
      for (auto t : tags) put(std::int32_t(t));
      end_block();
    }
    if (vol && !m.tet_fibres.empty()) {
      out += "VECTORS fibres double\n";
      for (const auto& f : m.tet_fibres)
        for (double x : f) put(x);
      end_block();
    }
  }
  if (!m.point_fibres.empty() || !extra.empty()) {
    out += fmt::format("POINT_DATA {}\n", m.points.size());
    if (!m.point_fibres.empty()) {
      out += "VECTORS fibres double\n";
      for (const auto& f : m.point_fibres)
        for (double x : f) put(x);
      end_block();
    }
    for (const auto& a : extra) {
      out += fmt::format("SCALARS {} double {}\nLOOKUP_TABLE default\n", a.name, a.components);
      for (double x : a.values) put(x);
      end_block();
    }
  }
  write_text(path, out);
}

void write_opencarp(const std::string& base, const UnstructuredMesh& m) {
  // openCARP works in µm.
  const double to_um = mm_per_unit(m.units) * 1e3;
  std::string pts = fmt::format("{}\n", m.points.size());
  for (const auto& p : m.points) pts += fmt::format("{} {} {}\n", p[0] * to_um, p[1] * to_um, p[2] * to_um);
  write_text(base + ".pts", pts);
  const bool vol = m.has_volume();
  const auto& tags = vol ? m.tet_tags : m.triangle_tags;
  std::string elem = fmt::format("{}\n", vol ? m.tets.size() : m.triangles.size());
  if (vol)
    for (std::size_t e = 0; e < m.tets.size(); ++e)
      elem += fmt::format("Tt {} {} {} {} {}\n", m.tets[e][0], m.tets[e][1], m.tets[e][2], m.tets[e][3],
                          tags.empty() ? 0 : tags[e]);
  else
    for (std::size_t e = 0; e < m.triangles.size(); ++e)
      elem += fmt::format("Tr {} {} {} {}\n", m.triangles[e][0], m.triangles[e][1], m.triangles[e][2],
                          tags.empty() ? 0 : tags[e]);
  write_text(base + ".elem", elem);
  if (vol && !m.tet_fibres.empty()) {
    std::string lon = "1\n";
    for (const auto& f : m.tet_fibres) lon += fmt::format("{} {} {}\n", f[0], f[1], f[2]);
    write_text(base + ".lon", lon);
  }
}

void write_tetgen(const std::string& base, const UnstructuredMesh& m) {
  std::string node = fmt::format("{} 3 0 0\n", m.points.size());
  for (std::size_t i = 0; i < m.points.size(); ++i)
    node += fmt::format("{} {} {} {}\n", i, m.points[i][0], m.points[i][1], m.points[i][2]);
  write_text(base + ".node", node);
  if (m.has_volume()) {
    const bool tags = !m.tet_tags.empty();
    std::string ele = fmt::format("{} 4 {}\n", m.tets.size(), tags ? 1 : 0);
    for (std::size_t e = 0; e < m.tets.size(); ++e) {
      ele += fmt::format("{} {} {} {} {}", e, m.tets[e][0], m.tets[e][1], m.tets[e][2], m.tets[e][3]);
      ele += tags ? fmt::format(" {}\n", m.tet_tags[e]) : "\n";
    }
    write_text(base + ".ele", ele);
  } else {
    const bool tags = !m.triangle_tags.empty();
    std::string face = fmt::format("{} {}\n", m.triangles.size(), tags ? 1 : 0);
    for (std::size_t e = 0; e < m.triangles.size(); ++e) {
      face += fmt::format("{} {} {} {}", e, m.triangles[e][0], m.triangles[e][1], m.triangles[e][2]);
      face += tags ? fmt::format(" {}\n", m.triangle_tags[e]) : "\n";
    }
    write_text(base + ".face", face);
  }
}

std::string igb_header_text(const IgbHeader& h) {
  // Lines of key:value words ending in \r\n, padded with spaces to 1024 bytes and closed by
  // a form feed, as openCARP's tools write and read them.
  std::string s = fmt::format("x:{} y:1 z:1 t:{} type:float systeme:little_endian\r\n", h.nodes, h.frames);
  s += fmt::format("org_t:{} dim_t:{} inc_t:{} unites_t:ms unites:{}\r\n", h.t0,
                   h.frames > 1 ? double(h.frames - 1) * h.dt : h.dt, h.dt, h.unit);
  if (s.size() > 1023) throw Error("igb header longer than 1024 bytes");
  s.resize(1023, ' ');
  s += '\f';
  return s;
}

void write_dat(const std::string& path, const std::vector<double>& values) {
  std::string s;
  s.reserve(values.size() * 10);
  // openCARP marks a node that never activated with -1.
  for (double v : values) s += std::isfinite(v) ? fmt::format("{:.6g}\n", v) : std::string("-1\n");
  write_text(path, s);
}

IgbHeader read_igb_header(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(SourceLoc{path, 0, 0}, "cannot open the file");
  std::string head(1024, '\0');
  in.read(head.data(), 1024);
  if (in.gcount() != 1024) throw InputError(SourceLoc{path, 0, 0}, "shorter than the 1024-byte igb header");
  head.resize(head.find('\f') == std::string::npos ? head.size() : head.find('\f'));
  IgbHeader h;
  std::istringstream words(head);
  std::string w;
  const auto number = [&](const std::string& k, const std::string& v) {
    char* end = nullptr;
    const double d = std::strtod(v.c_str(), &end);
    if (v.empty() || *end || !std::isfinite(d))
      throw InputError(SourceLoc{path, 0, 0}, fmt::format("igb header: {}:{} is not a number", k, v));
    return d;
  };
  const auto count = [&](const std::string& k, const std::string& v) {
    const double d = number(k, v);
    if (d < 0 || d != std::floor(d) || d > 1e15)
      throw InputError(SourceLoc{path, 0, 0}, fmt::format("igb header: {}:{} is not a count", k, v));
    return static_cast<std::size_t>(d);
  };
  while (words >> w) {
    const auto c = w.find(':');
    if (c == std::string::npos) continue;
    const std::string k = w.substr(0, c), v = w.substr(c + 1);
    if (k == "x") h.nodes = count(k, v);
    else if (k == "t") h.frames = count(k, v);
    else if (k == "inc_t") h.dt = number(k, v);
    else if (k == "org_t") h.t0 = number(k, v);
    else if (k == "unites") h.unit = v;
    else if (k == "type" && v != "float") throw InputError(SourceLoc{path, 0, 0}, "igb type '" + v + "' is not float");
  }
  return h;
}

IgbHeader read_igb(const std::string& path, std::vector<float>& data) {
  const IgbHeader h = read_igb_header(path);
  std::ifstream in(path, std::ios::binary);
  in.seekg(1024);
  const std::size_t n = h.nodes * h.frames;
  data.resize(n);
  in.read(reinterpret_cast<char*>(data.data()), std::streamsize(n * sizeof(float)));
  if (static_cast<std::size_t>(in.gcount()) != n * sizeof(float))
    throw InputError(SourceLoc{path, 0, 0}, fmt::format("igb data holds {} bytes, the header needs {}", in.gcount(),
                                                        n * sizeof(float)));
  return h;
}

}  // namespace hw::io
