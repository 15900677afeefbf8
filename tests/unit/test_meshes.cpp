// Unstructured meshes: an ellipsoidal LV with known fibres and tags round-tripped through
// every writer and reader, the VTK variants (ascii, base64, appended raw, zlib), the
// voxeliser (tets against the same mesh's surface by ray voting, fibres from elements
// against fibres from nodes), results sampled back onto nodes, and the UCSD rabbit's
// TetGen surface against its voxel NRRD (skipped when ../shared is absent).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "formats/base64.hpp"
#include "formats/nrrd.hpp"
#include "formats/unstructured_mesh.hpp"
#include "mesh/geometry.hpp"
#include "mesh/mesh_shapes.hpp"
#include "mesh/voxelise.hpp"

namespace fs = std::filesystem;
using namespace hw;
using namespace hw::tissue;

namespace {

fs::path scratch(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / fmt::format("hw_meshes_{}_{}", name, getpid());
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write(const fs::path& p, const std::string& s) {
  std::ofstream out(p, std::ios::binary);
  out << s;
}

void expect_same_mesh(const io::UnstructuredMesh& a, const io::UnstructuredMesh& b, double coord_tol,
                      const std::string& what, bool fibres = true) {
  SCOPED_TRACE(what);
  ASSERT_EQ(a.points.size(), b.points.size());
  ASSERT_EQ(a.tets.size(), b.tets.size());
  for (std::size_t i = 0; i < a.points.size(); ++i)
    for (int k = 0; k < 3; ++k) ASSERT_NEAR(a.points[i][k], b.points[i][k], coord_tol) << "point " << i;
  EXPECT_EQ(a.tets, b.tets);
  EXPECT_EQ(a.tet_tags, b.tet_tags);
  if (!fibres) return;  // TetGen files hold no fibres
  ASSERT_EQ(a.tet_fibres.size(), b.tet_fibres.size());
  for (std::size_t e = 0; e < a.tet_fibres.size(); ++e)
    for (int k = 0; k < 3; ++k) ASSERT_NEAR(a.tet_fibres[e][k], b.tet_fibres[e][k], 1e-12) << "fibre " << e;
}

double angle_deg(const std::array<double, 3>& a, const std::array<double, 3>& b) {
  const double d = std::fabs(a[0] * b[0] + a[1] * b[1] + a[2] * b[2]) /
                   std::sqrt((a[0] * a[0] + a[1] * a[1] + a[2] * a[2]) * (b[0] * b[0] + b[1] * b[1] + b[2] * b[2]));
  return std::acos(std::min(1.0, d)) * 180 / std::acos(-1.0);
}

// The boundary triangles of a tet mesh (faces with one tet), outward or not: ray voting
// does not need an orientation.
io::UnstructuredMesh boundary_surface(const io::UnstructuredMesh& m) {
  std::map<std::array<std::int32_t, 3>, std::pair<int, std::array<std::int32_t, 3>>> faces;
  for (const auto& t : m.tets)
    for (int j = 0; j < 4; ++j) {
      std::array<std::int32_t, 3> f{t[j], t[(j + 1) % 4], t[(j + 2) % 4]}, key = f;
      std::sort(key.begin(), key.end());
      auto& e = faces[key];
      ++e.first;
      e.second = f;
    }
  io::UnstructuredMesh s;
  s.points = m.points;
  s.source = "boundary";
  for (const auto& [k, v] : faces)
    if (v.first == 1) s.triangles.push_back(v.second);
  return s;
}

std::size_t agreement(const Mask& a, const Mask& b, std::size_t* tissue_union = nullptr) {
  std::size_t same = 0, uni = 0;
  for (std::size_t n = 0; n < a.size(); ++n) {
    same += (a[n] != 0) == (b[n] != 0);
    uni += (a[n] != 0) || (b[n] != 0);
  }
  if (tissue_union) *tissue_union = uni;
  return same;
}

}  // namespace

TEST(MeshIo, EllipsoidRoundTripsThroughEveryWriterAndReader) {
  const io::UnstructuredMesh m = ellipsoid_lv_mesh();
  ASSERT_NO_THROW(io::check_mesh(m));  // conforming, one orientation, no shared-by-3 face
  const fs::path d = scratch("roundtrip");
  io::write_vtu((d / "lv.vtu").string(), m);
  expect_same_mesh(m, io::read_mesh((d / "lv.vtu").string()), 0, "vtu");
  io::write_legacy_vtk_mesh((d / "lv_ascii.vtk").string(), m, false);
  expect_same_mesh(m, io::read_mesh((d / "lv_ascii.vtk").string()), 0, "legacy ascii");
  io::write_legacy_vtk_mesh((d / "lv_bin.vtk").string(), m, true);
  expect_same_mesh(m, io::read_mesh((d / "lv_bin.vtk").string()), 0, "legacy binary");
  io::write_tetgen((d / "lv").string(), m);
  expect_same_mesh(m, io::read_mesh((d / "lv.ele").string()), 0, "tetgen", false);
  io::write_opencarp((d / "lv").string(), m);
  io::UnstructuredMesh carp = io::read_mesh((d / "lv.pts").string());
  EXPECT_EQ(carp.units, "um");
  io::scale_to_mm(carp, io::mm_per_unit(carp.units));
  expect_same_mesh(m, carp, 1e-12, "openCARP (µm → mm)");
  // Point fibres travel in the VTK files.
  const io::UnstructuredMesh back = io::read_mesh((d / "lv.vtu").string());
  ASSERT_EQ(back.point_fibres.size(), m.points.size());
  EXPECT_EQ(back.point_fibres[17], m.point_fibres[17]);
  const io::MeshSummary s = io::summarize_mesh(m);
  EXPECT_EQ(s.tags.size(), 3u);
  EXPECT_EQ(s.fibre_elements, m.tets.size());
  fs::remove_all(d);
}

TEST(MeshIo, VtuAsciiAppendedRawAndCompressed) {
  // One tet, with a tag and a fibre, written three ways by hand.
  const std::string head =
      "<?xml version=\"1.0\"?>\n<VTKFile type=\"UnstructuredGrid\" byte_order=\"LittleEndian\" header_type=\"UInt32\"{}>\n"
      "<UnstructuredGrid><Piece NumberOfPoints=\"4\" NumberOfCells=\"1\">\n";
  const fs::path d = scratch("vtu");
  write(d / "ascii.vtu",
        fmt::format(fmt::runtime(head), "") +
            "<Points><DataArray type=\"Float32\" NumberOfComponents=\"3\" format=\"ascii\">0 0 0 1 0 0 0 1 0 0 0 1"
            "</DataArray></Points>\n<Cells><DataArray type=\"Int32\" Name=\"connectivity\" format=\"ascii\">0 1 2 3"
            "</DataArray><DataArray type=\"Int32\" Name=\"offsets\" format=\"ascii\">4</DataArray>"
            "<DataArray type=\"UInt8\" Name=\"types\" format=\"ascii\">10</DataArray></Cells>\n"
            "<PointData><DataArray type=\"Int32\" Name=\"elemTag\" format=\"ascii\">7 7 7 2</DataArray></PointData>\n"
            "<CellData><DataArray type=\"Float64\" Name=\"fiber\" NumberOfComponents=\"3\" format=\"ascii\">0 1 0"
            "</DataArray></CellData>\n</Piece></UnstructuredGrid></VTKFile>\n");
  const io::UnstructuredMesh a = io::read_vtu((d / "ascii.vtu").string());
  ASSERT_EQ(a.tets.size(), 1u);
  EXPECT_EQ(a.tet_tags, std::vector<std::int32_t>{7});  // the tag most of its nodes carry
  EXPECT_EQ(a.tet_fibres[0][1], 1.0);
  // Appended raw: [UInt32 bytes][data] per array; zlib: [1 block, size, last, csize][zlib].
  auto raw_block = [](const void* p, std::uint32_t n) {
    std::string s(reinterpret_cast<const char*>(&n), 4);
    s.append(static_cast<const char*>(p), n);
    return s;
  };
  auto zlib_block = [](const void* p, std::uint32_t n) {
    const auto z = io::gzip_deflate(static_cast<const std::uint8_t*>(p), n);
    const std::uint32_t h[4] = {1, n, n, std::uint32_t(z.size())};
    std::string s(reinterpret_cast<const char*>(h), 16);
    s.append(reinterpret_cast<const char*>(z.data()), z.size());
    return s;
  };
  const float pts[12] = {0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2};
  const std::int64_t conn[4] = {0, 1, 2, 3}, off[1] = {4};
  const std::uint8_t types[1] = {10};
  for (const bool compressed : {false, true}) {
    auto block = compressed ? std::function<std::string(const void*, std::uint32_t)>(zlib_block)
                            : std::function<std::string(const void*, std::uint32_t)>(raw_block);
    std::string data;
    std::vector<std::size_t> o;
    for (auto [p, n] : std::vector<std::pair<const void*, std::uint32_t>>{{pts, 48}, {conn, 32}, {off, 8}, {types, 1}}) {
      o.push_back(data.size());
      data += block(p, n);
    }
    const std::string xml =
        fmt::format(fmt::runtime(head), compressed ? " compressor=\"vtkZLibDataCompressor\"" : "") +
        fmt::format("<Points><DataArray type=\"Float32\" NumberOfComponents=\"3\" format=\"appended\" offset=\"{}\"/>"
                    "</Points><Cells><DataArray type=\"Int64\" Name=\"connectivity\" format=\"appended\" offset=\"{}\"/>"
                    "<DataArray type=\"Int64\" Name=\"offsets\" format=\"appended\" offset=\"{}\"/>"
                    "<DataArray type=\"UInt8\" Name=\"types\" format=\"appended\" offset=\"{}\"/></Cells>"
                    "</Piece></UnstructuredGrid>\n<AppendedData encoding=\"raw\">_",
                    o[0], o[1], o[2], o[3]) +
        data + "\n</AppendedData></VTKFile>\n";
    write(d / "appended.vtu", xml);
    const io::UnstructuredMesh b = io::read_vtu((d / "appended.vtu").string());
    ASSERT_EQ(b.tets.size(), 1u) << compressed;
    EXPECT_EQ(b.points[3][2], 2.0) << compressed;
  }
  fs::remove_all(d);
}

TEST(MeshVoxelise, TetsAgreeWithTheirSurfaceByRayVoting) {
  // Two inside tests that share nothing: point-in-tet over the volume, ray parity over its
  // boundary triangles.
  const io::UnstructuredMesh m = ellipsoid_lv_mesh();
  const Grid g = grid_around(m, {0.5, 0.5, 0.5}, 1);
  const MeshVoxels tets = voxelise(m, g);
  const MeshVoxels surf = voxelise(boundary_surface(m), g);
  EXPECT_EQ(surf.abstained_columns, 0u);
  std::size_t uni = 0;
  const std::size_t same = agreement(tets.mask, surf.mask, &uni);
  const std::size_t differ = g.size() - same;
  std::printf("[measured] ellipsoid LV at 0.5 mm: %zu tissue voxels by tets, %zu by surface voting, %zu differ (%.3f%% of "
              "the tissue)\n",
              tets.tissue, surf.tissue, differ, 100.0 * double(differ) / double(uni));
  EXPECT_LT(double(differ), 0.005 * double(uni));
  // Volume: voxels against the tets' exact volume (a faceted shell, 0.5 mm voxels).
  const double vol = io::summarize_mesh(m).volume;
  EXPECT_NEAR(double(tets.tissue) * g.cell_volume(), vol, 0.03 * vol);
}

TEST(MeshVoxelise, TagsAndFibresOfTheEllipsoid) {
  io::UnstructuredMesh m = ellipsoid_lv_mesh();
  const Grid g = grid_around(m, {0.4, 0.4, 0.4}, 1);
  VoxeliseOptions o;
  o.fibres = true;
  const MeshVoxels from_elements = voxelise(m, g, o);
  ASSERT_TRUE(from_elements.fibres);
  std::map<int, std::size_t> per_label;
  for (std::size_t n = 0; n < g.size(); ++n)
    if (from_elements.mask[n]) ++per_label[from_elements.labels[n]];
  ASSERT_EQ(per_label.size(), 3u);
  // Layers of equal thickness; the outer ones hold more volume.
  EXPECT_LT(per_label[1], per_label[2]);
  EXPECT_LT(per_label[2], per_label[3]);
  // Fibres from the nodes (barycentric) against fibres of the elements (nearest element).
  io::UnstructuredMesh nodes_only = m;
  nodes_only.tet_fibres.clear();
  const MeshVoxels from_nodes = voxelise(nodes_only, g, o);
  double sum = 0;
  std::size_t cnt = 0;
  for (std::size_t n = 0; n < g.size(); ++n) {
    if (!from_elements.mask[n]) continue;
    const auto& a = *from_elements.fibres;
    const auto& b = *from_nodes.fibres;
    const double ang = angle_deg({a.f[0][n], a.f[1][n], a.f[2][n]}, {b.f[0][n], b.f[1][n], b.f[2][n]});
    sum += ang;
    ++cnt;
  }
  std::printf("[measured] ellipsoid LV fibres, element vs node interpolation: mean %.2f° over %zu voxels\n", sum / cnt, cnt);
  // The helix turns 120° over 3 elements: 40° per element, so an element's one fibre is up
  // to 20° from the linear mix of its nodes (10° on average through the wall), plus the
  // 22.5° sectors around; measured 12.1°.
  EXPECT_LT(sum / cnt, 15.0);
  // Mapping tags: 2 → label 0 takes the M layer out of the tissue.
  o.tag_labels = {{1, 1}, {2, 0}, {3, 3}};
  o.fibres = false;
  const MeshVoxels without_m = voxelise(m, g, o);
  EXPECT_EQ(without_m.tissue, per_label[1] + per_label[3]);
  o.tag_labels = {{1, 1}};
  EXPECT_THROW(voxelise(m, g, o), InputError);
}

TEST(MeshVoxelise, NodeSamplerIsExactForLinearFields) {
  const io::UnstructuredMesh m = ellipsoid_lv_mesh();
  const Grid g = grid_around(m, {0.5, 0.5, 0.5}, 1);
  const MeshVoxels v = voxelise(m, g);
  Field<double> f(g, std::nan(""));
  for (int k = 0; k < g.n[2]; ++k)
    for (int j = 0; j < g.n[1]; ++j)
      for (int i = 0; i < g.n[0]; ++i) {
        const std::size_t n = g.index(i, j, k);
        if (v.mask[n])
          f[n] = 2 * (g.origin[0] + (i + 0.5) * g.h[0]) - (g.origin[2] + (k + 0.5) * g.h[2]);
      }
  const NodeSampler s(g, v.mask, m.points);
  const std::vector<double> on_nodes = s.sample(f.data());
  EXPECT_EQ(s.unreached(), 0u);
  std::size_t exact = 0;
  for (std::size_t p = 0; p < m.points.size(); ++p) {
    ASSERT_TRUE(std::isfinite(on_nodes[p])) << p;
    const double want = 2 * m.points[p][0] - m.points[p][2];
    // Nodes with all 8 voxels in tissue are exact; the others use fewer voxels (≤ 1 voxel off).
    if (std::fabs(on_nodes[p] - want) < 1e-9) ++exact;
    EXPECT_NEAR(on_nodes[p], want, 3 * 0.5 * 2.3) << p;
  }
  EXPECT_GT(exact, m.points.size() / 10);
}

TEST(MeshIo, IgbHeaderAndDat) {
  io::IgbHeader h;
  h.nodes = 3;
  h.frames = 2;
  h.dt = 0.5;
  const std::string text = io::igb_header_text(h);
  ASSERT_EQ(text.size(), 1024u);
  const fs::path d = scratch("igb");
  const float data[6] = {1, 2, 3, 4, 5, 6};
  std::ofstream((d / "v.igb").string(), std::ios::binary).write(text.data(), 1024).write(
      reinterpret_cast<const char*>(data), sizeof data);
  std::vector<float> back;
  const io::IgbHeader r = io::read_igb((d / "v.igb").string(), back);
  EXPECT_EQ(r.nodes, 3u);
  EXPECT_EQ(r.frames, 2u);
  EXPECT_EQ(r.dt, 0.5);
  EXPECT_EQ(back, std::vector<float>(data, data + 6));
  io::write_dat((d / "a.dat").string(), {1.5, std::nan("")});
  std::ifstream in(d / "a.dat");
  std::string l1, l2;
  in >> l1 >> l2;
  EXPECT_EQ(l1, "1.5");
  EXPECT_EQ(l2, "-1");
  fs::remove_all(d);
}

TEST(GeometryShared, UcsdRabbitSurfaceMeshMatchesItsNrrd) {
  const std::string dir = std::string(HW_SHARED_DIR) + "/geometry/rabbit_ventricles_ucsd_chaste/";
  if (!fs::exists(dir + "UCSD_heart.face")) GTEST_SKIP() << "shared geometry not found: " << dir;
  io::UnstructuredMesh m = io::read_mesh(dir + "UCSD_heart.face");
  EXPECT_EQ(m.triangles.size(), 41812u);
  io::scale_to_mm(m, io::mm_per_unit("cm"));
  const io::ImageVolume img = io::read_nrrd(dir + "ucsd_rabbit_ventricles_0.25mm.nrrd");
  Grid g;
  g.n = img.sizes;
  g.h = img.spacing;
  for (int a = 0; a < 3; ++a) g.origin[a] = img.origin[a] - 0.5 * img.spacing[a];
  const MeshVoxels v = voxelise(m, g);
  Mask ref(g, 0);
  for (std::size_t n = 0; n < g.size(); ++n) ref[n] = img.value(n) > 0;
  std::size_t uni = 0;
  const std::size_t same = agreement(v.mask, ref, &uni);
  const double all = 100.0 * double(same) / double(g.size()), tissue = 100.0 * (1.0 - double(g.size() - same) / double(uni));
  std::printf("[measured] UCSD rabbit .face voxelised at 0.25 mm on the NRRD's grid: %zu tissue voxels (NRRD %zu); "
              "agreement %.3f%% of the box, %.3f%% of the tissue (union); %zu rays abstained\n",
              v.tissue, std::size_t(std::count_if(ref.vec().begin(), ref.vec().end(), [](auto x) { return x != 0; })),
              all, tissue, v.abstained_columns);
  EXPECT_GE(tissue, 99.0);
  // A real, not perfectly closed surface: drop 40 triangles; the vote keeps the volume.
  io::UnstructuredMesh holed = m;
  for (int k = 0; k < 40; ++k) holed.triangles.erase(holed.triangles.begin() + 1000 * k);
  const MeshVoxels h = voxelise(holed, g);
  const std::size_t same_h = agreement(h.mask, ref, &uni);
  const double tissue_h = 100.0 * (1.0 - double(g.size() - same_h) / double(uni));
  std::printf("[measured] the same with 40 triangles removed: %.3f%% of the tissue, %zu rays abstained\n", tissue_h,
              h.abstained_columns);
  EXPECT_GT(h.abstained_columns, 0u);
  EXPECT_GE(tissue_h, 99.0);
}
