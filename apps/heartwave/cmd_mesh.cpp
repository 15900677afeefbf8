// `heartwave mesh inspect FILE`: what is in an unstructured heart mesh (TetGen, openCARP,
// VTK), so a user can write the [geometry] of a case against it: sizes, bounds, tags with
// their counts, fibre coverage, and how many voxels it makes at a spacing.
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "common.hpp"
#include "core/error.hpp"
#include "formats/unstructured_mesh.hpp"
#include "mesh/mesh_shapes.hpp"
#include "mesh/voxelise.hpp"

namespace hw::cli {

namespace {

constexpr const char* kExamples =
    "Examples:\n"
    "  heartwave mesh ellipsoid lv.vtu\n"
    "  heartwave mesh inspect examples/meshes/ellipsoid_lv.pts\n"
    "  heartwave mesh inspect examples/meshes/ellipsoid_lv.pts --spacing 0.5\n"
    "  heartwave mesh inspect ../shared/geometry/rabbit_ventricles_ucsd_chaste/UCSD_heart.face --units cm --spacing 0.5";

int inspect(const std::string& file, const std::string& units_opt, double spacing) {
  io::UnstructuredMesh m = io::read_mesh(file);
  const io::MeshSummary s = io::summarize_mesh(m);
  const std::string units = units_opt.empty() ? m.units : units_opt;
  const double to_mm = io::mm_per_unit(units);
  if (!(to_mm > 0)) throw InputError(SourceLoc{}, fmt::format("--units {}: not a length unit (um, mm, cm, m)", units));
  std::cout << fmt::format("{}: {} mesh\n", file, io::mesh_format_name(m.format));
  std::cout << fmt::format("  points      {}\n", s.points);
  if (s.tets) std::cout << fmt::format("  tetrahedra  {}\n", s.tets);
  if (s.triangles)
    std::cout << fmt::format("  triangles   {} (a surface: voxelised by ray-parity voting; {} open edges)\n", s.triangles,
                             s.open_edges);
  std::cout << fmt::format("  units       {} ({}; ×{:g} to mm)\n", units,
                           units_opt.empty() ? "the format's default" : "from --units", to_mm);
  std::cout << fmt::format("  bounds      x {:g}…{:g}  y {:g}…{:g}  z {:g}…{:g} {}\n", s.lo[0], s.hi[0], s.lo[1], s.hi[1],
                           s.lo[2], s.hi[2], units);
  std::cout << fmt::format("  extent      {:.4g} × {:.4g} × {:.4g} mm, volume {:.5g} mm³\n", (s.hi[0] - s.lo[0]) * to_mm,
                           (s.hi[1] - s.lo[1]) * to_mm, (s.hi[2] - s.lo[2]) * to_mm,
                           s.volume * to_mm * to_mm * to_mm);
  if (s.tags.empty()) {
    std::cout << "  tags        none\n";
  } else {
    std::cout << "  tags        tag   elements\n";
    for (const auto& [tag, n] : s.tags) std::cout << fmt::format("              {:>5} {:>10}\n", tag, n);
  }
  if (s.tets) {
    if (!m.tet_fibres.empty())
      std::cout << fmt::format("  fibres      per element: {} of {} non-zero ({:.1f}%)\n", s.fibre_elements, s.tets,
                               100.0 * double(s.fibre_elements) / double(s.tets));
    else if (!m.point_fibres.empty())
      std::cout << fmt::format("  fibres      per point: {} of {} non-zero ({:.1f}%)\n", s.fibre_points, s.points,
                               100.0 * double(s.fibre_points) / double(s.points));
    else
      std::cout << "  fibres      none\n";
  }
  if (spacing > 0) {
    io::scale_to_mm(m, to_mm);
    const tissue::Grid g = tissue::grid_around(m, {spacing, spacing, spacing}, 1);
    const tissue::MeshVoxels v = tissue::voxelise(m, g);
    std::cout << fmt::format("  voxels      at {:g} mm: grid {} × {} × {} = {}, {} tissue ({:.1f}% of the box), {:.5g} mm³\n",
                             spacing, g.n[0], g.n[1], g.n[2], g.size(), v.tissue,
                             100.0 * double(v.tissue) / double(g.size()), double(v.tissue) * g.cell_volume());
    if (v.abstained_columns)
      std::cout << fmt::format("              {} rays crossed the surface an odd number of times and abstained\n",
                               v.abstained_columns);
  }
  return 0;
}

}  // namespace

void add_mesh_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("mesh", "Unstructured meshes (TetGen, openCARP, VTK): inspect what a case would read");
  cmd->require_subcommand(1);
  auto* ins = cmd->add_subcommand(
      "inspect", "Points, elements, bounds, tags with counts, fibre coverage, and the voxels at a spacing");
  auto file = std::make_shared<std::string>();
  auto units = std::make_shared<std::string>();
  auto spacing = std::make_shared<double>(0);
  ins->add_option("FILE", *file, "mesh: .node/.ele/.face, .pts/.elem/.lon (or the base name), .vtu, legacy .vtk")
      ->required();
  ins->add_option("--units", *units, "length unit of the file: um, mm, cm, m (default: µm for openCARP, mm otherwise)");
  ins->add_option("--spacing", *spacing, "voxelise at this spacing (mm) and print the tissue voxel count")
      ->check(CLI::PositiveNumber);
  ins->footer(std::string("A case reads the mesh with [geometry] kind = \"mesh\" (docs/geometry.md).\n\n") + kExamples);
  ins->callback([file, units, spacing, &action] {
    action = [file, units, spacing]() { return inspect(*file, *units, *spacing); };
  });
  auto* ell = cmd->add_subcommand(
      "ellipsoid", "Write an ellipsoidal LV (tets, endo/M/epi tags 1/2/3, rule-based fibres 60° → −60°), mm");
  auto out = std::make_shared<std::string>();
  ell->add_option("OUT", *out, "file: .vtu, .vtk, .pts (openCARP, µm) or .node (TetGen)")->required();
  ell->footer("Examples:\n  heartwave mesh ellipsoid lv.vtu\n  heartwave mesh ellipsoid lv.pts");
  ell->callback([out, &action] {
    action = [out]() {
      const io::UnstructuredMesh m = tissue::ellipsoid_lv_mesh();
      const std::string ext = out->size() > 4 ? out->substr(out->find_last_of('.')) : "";
      const std::string base = out->substr(0, out->find_last_of('.'));
      if (ext == ".vtu") io::write_vtu(*out, m);
      else if (ext == ".vtk") io::write_legacy_vtk_mesh(*out, m);
      else if (ext == ".pts") io::write_opencarp(base, m);
      else if (ext == ".node") io::write_tetgen(base, m);
      else throw InputError(SourceLoc{*out, 0, 0}, "OUT must end in .vtu, .vtk, .pts or .node");
      std::cout << fmt::format("{}: {} points, {} tetrahedra\n", *out, m.points.size(), m.tets.size());
      return 0;
    };
  });
  cmd->footer(kExamples);
}

}  // namespace hw::cli
