// build_geometry(): the case's geometry and fibre specs → fields on one grid.
#include "mesh/geometry.hpp"

#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "formats/resample.hpp"
#include "formats/vtk_image_reader.hpp"
#include "mesh/cavities.hpp"
#include "mesh/fibres_rule_based.hpp"
#include "mesh/phase_field.hpp"
#include "mesh/shapes.hpp"
#include "mesh/voxelise.hpp"

namespace hw::tissue {

namespace {

// Largest grid accepted from a file or shape: 2^31 cells (int32 cell indices in kernels).
constexpr std::size_t max_cells = std::size_t(1) << 31;

std::string resolve(const MeshSpec& c, const std::string& p) {
  std::filesystem::path path(p);
  if (path.is_relative() && !c.source_file.empty())
    path = std::filesystem::path(c.source_file).parent_path() / path;
  return path.string();
}

// Reads an image; reader errors keep their file:line and gain the case key that named it.
io::ImageVolume load_image(const MeshSpec& c, const std::string& p, const SourceLoc& loc,
                           const char* key) {
  if (p.empty()) throw InputError(loc, fmt::format("{} is required", key));
  const std::string path = resolve(c, p);
  if (!std::filesystem::exists(path))
    throw InputError(loc, fmt::format("{} = '{}': file '{}' not found", key, p, path));
  try {
    return io::read_image(path);
  } catch (const InputError& e) {
    std::vector<Diagnostic> d{{Severity::error, loc, fmt::format("{} = '{}' cannot be read", key, p), {}}};
    for (const auto& x : e.diagnostics()) d.push_back(x);
    throw InputError(std::move(d));
  } catch (const Error& e) {
    throw InputError(loc, fmt::format("{} = '{}' cannot be read: {}", key, p, e.what()));
  }
}

// The image on geometry.spacing's voxels, where the case asks for them.
io::ImageVolume on_case_grid(const MeshSpec& c, io::ImageVolume img, io::Resampling how,
                             const SourceLoc& loc) {
  if (c.geometry.spacing[0] <= 0) return img;
  try {
    return io::resample(img, c.geometry.spacing, how, max_cells);
  } catch (const Error& e) {
    throw InputError(loc, fmt::format("geometry.spacing: {}", e.what()));
  }
}

// Largest value of an integer type, to map integer phase fields (e.g. φ·255) to 0…1.
double type_full_scale(io::ScalarType t) {
  switch (t) {
    case io::ScalarType::u8: return 255;
    case io::ScalarType::i8: return 127;
    case io::ScalarType::u16: return 65535;
    case io::ScalarType::i16: return 32767;
    case io::ScalarType::u32: return 4294967295.0;
    case io::ScalarType::i32: return 2147483647.0;
    default: return 1;
  }
}

std::size_t count_tissue(const Grid& g, const Mask& m) {
  if (m.empty()) return g.size();
  std::size_t n = 0;
  for (std::size_t i = 0; i < m.size(); ++i) n += m[i] != 0;
  return n;
}

void check_size(const Grid& g, const SourceLoc& loc) {
  long double cells = 1;
  for (int a = 0; a < 3; ++a) cells *= g.n[a];
  if (cells > static_cast<long double>(max_cells))
    throw InputError(loc, fmt::format("geometry: {}×{}×{} = {:.3g} cells is too large (at most {})", g.n[0],
                                      g.n[1], g.n[2], double(cells), max_cells));
}

void check_radii(const GeometrySpec& s, bool need_inner) {
  for (int a = 0; a < 3; ++a) {
    if (!(s.radii_outer[a] > 0) || !std::isfinite(s.radii_outer[a]))
      throw InputError(s.loc, fmt::format("geometry.radii_outer[{}] = {} mm must be > 0", a, s.radii_outer[a]));
    if (need_inner && (!(s.radii_inner[a] >= 0) || s.radii_inner[a] >= s.radii_outer[a]))
      throw InputError(s.loc, fmt::format("geometry.radii_inner[{}] = {} mm must be >= 0 and < radii_outer[{}] "
                                          "= {} mm", a, s.radii_inner[a], a, s.radii_outer[a]));
  }
}

// A mesh file; reader errors keep their file:line and gain the case key that named it.
io::UnstructuredMesh load_mesh(const MeshSpec& c) {
  const GeometrySpec& s = c.geometry;
  if (s.path.empty()) throw InputError(s.loc, "geometry.file is required");
  const std::string path = resolve(c, s.path);
  try {
    return io::read_mesh(path);
  } catch (const InputError& e) {
    std::vector<Diagnostic> d{{Severity::error, s.loc, fmt::format("geometry.file = '{}' cannot be read as a mesh", s.path), {}}};
    for (const auto& x : e.diagnostics()) d.push_back(x);
    throw InputError(std::move(d));
  } catch (const Error& e) {
    throw InputError(s.loc, fmt::format("geometry.file = '{}' cannot be read as a mesh: {}", s.path, e.what()));
  }
}

// kind mesh: read, scale to mm, voxelise at geometry.spacing onto a grid around it.
void build_from_mesh(const MeshSpec& c, Geometry& geo) {
  const GeometrySpec& s = c.geometry;
  auto mesh = std::make_shared<io::UnstructuredMesh>(load_mesh(c));
  const std::string units = s.units.empty() ? mesh->units : s.units;
  const double factor = io::mm_per_unit(units);
  if (!(factor > 0))
    throw InputError(s.loc, fmt::format("geometry.units = \"{}\" is not a length unit (um, mm, cm, m)", units));
  io::scale_to_mm(*mesh, factor);
  if (!(s.spacing[0] > 0))
    throw InputError(s.loc, "geometry.spacing (mm) is required for kind \"mesh\": the voxel size the mesh is "
                            "voxelised at (e.g. spacing = 0.25)");
  try {
    geo.grid = grid_around(*mesh, s.spacing, 1);
  } catch (const Error& e) {
    throw InputError(s.loc, fmt::format("geometry.spacing: {}", e.what()));
  }
  geo.grid.bc = c.grid.bc;
  check_size(geo.grid, s.loc);
  VoxeliseOptions o;
  o.tag_labels = s.tags;
  o.fibres = c.fibres.kind == FibreSpec::Kind::mesh;
  if (o.fibres && mesh->tet_fibres.empty() && mesh->point_fibres.empty())
    throw InputError(c.fibres.loc, fmt::format("fibres.kind = \"mesh\": '{}' has no fibres (a .lon file, or a cell "
                                               "or point array named fibres)", s.path));
  if (o.fibres && !mesh->has_volume())
    throw InputError(c.fibres.loc, fmt::format("fibres.kind = \"mesh\": '{}' is a surface; fibres need tetrahedra",
                                               s.path));
  MeshVoxels v;
  try {
    v = voxelise(*mesh, geo.grid, o);
  } catch (const InputError& e) {
    std::vector<Diagnostic> d{{Severity::error, s.loc, fmt::format("geometry.file = '{}' cannot be voxelised", s.path), {}}};
    for (const auto& x : e.diagnostics()) d.push_back(x);
    throw InputError(std::move(d));
  }
  geo.mask = std::move(v.mask);
  geo.labels = std::move(v.labels);
  if (v.fibres) geo.fibres = std::move(v.fibres);
  geo.mesh_note = fmt::format("{} {} of {} points, units {} (×{:g} to mm){}", mesh->has_volume() ? mesh->tets.size()
                                                                                                  : mesh->triangles.size(),
                              mesh->has_volume() ? "tetrahedra" : "surface triangles (ray-parity voted)",
                              mesh->points.size(), units, factor,
                              v.abstained_columns ? fmt::format(", {} rays with an odd crossing count abstained",
                                                                v.abstained_columns)
                                                  : std::string());
  geo.mesh = std::move(mesh);
}

// The transmural field from the endo (LV 3, RV 4) and epi (2) labels, and with it the
// long axis and the coordinates of `geo`. Errors name the key that needed them.
TransmuralField transmural_field(const MeshSpec& c, Geometry& geo) {
  const Grid& g = geo.grid;
  const bool for_fibres = c.fibres.kind == FibreSpec::Kind::rule_based;
  const SourceLoc& loc = for_fibres ? c.fibres.loc : c.geometry.loc;
  const std::string who = for_fibres ? "rule_based fibres" : "transmural and apex-base coordinates";
  if (geo.labels.empty() && geo.mask.empty())
    throw InputError(loc, who + " need endocardial and epicardial surfaces, and a box has none: use an "
                                "ellipsoid_shell geometry, a heart's mask or phase field, or a labelled mask file "
                                "(labels 2 = epi, 3/4 = endo)");
  const Mask all = geo.mask.empty() ? Mask(g, 1) : geo.mask;
  try {
    std::optional<std::array<double, 3>> base_towards, centre_line;
    std::string base_reason, line_from;
    if (geo.labels.empty()) {
      // An unlabelled heart (a phase field, a plain mask): the surfaces from its cavities.
      FoundSurfaces found = find_surfaces(g, all);
      geo.surfaces_note = found.describe();
      base_towards = found.base_towards();
      base_reason = found.base_reason();
      if (!c.fibres.long_axis) {
        centre_line = found.centre_line;
        line_from = fmt::format("centre line of the LV cavity's slices across {}", "xyz"[found.slice_axis]);
      }
      geo.labels = std::move(found.labels);
    }
    TransmuralField t = transmural_coordinate(g, all, geo.labels, label_epi, {label_lv_endo, label_rv_endo});
    geo.long_axis = find_long_axis(g, all, geo.labels, {label_lv_endo, label_rv_endo},
                                   centre_line ? centre_line : c.fibres.long_axis, base_towards, base_reason);
    if (centre_line) geo.long_axis->given = false, geo.long_axis->found_from = line_from;
    geo.transmural = Field<float>(g, 0.0f);
    for (std::size_t n = 0; n < g.size(); ++n) geo.transmural[n] = static_cast<float>(t.e[n]);
    geo.apex_base = apex_base_coordinate(g, all, *geo.long_axis);
    return t;
  } catch (const InputError&) {
    throw;
  } catch (const Error& e) {
    throw InputError(loc, who + ": " + e.what());
  }
}

void build_fibres(const MeshSpec& c, Geometry& geo) {
  const FibreSpec& f = c.fibres;
  const Grid& g = geo.grid;
  switch (f.kind) {
    case FibreSpec::Kind::none:
      return;
    case FibreSpec::Kind::mesh:
      if (c.geometry.kind != GeometrySpec::Kind::mesh)
        throw InputError(f.loc, "fibres.kind = \"mesh\" takes the fibres of a mesh file: it needs geometry.kind = \"mesh\"");
      return;  // set by build_from_mesh
    case FibreSpec::Kind::uniform: {
      const auto& d = f.direction;
      const double len = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
      if (!(len > 0) || !std::isfinite(len))
        throw InputError(f.loc, fmt::format("fibres.direction = [{}, {}, {}] must be a non-zero vector", d[0], d[1], d[2]));
      geo.fibres = FibreField::uniform(g, {d[0] / len, d[1] / len, d[2] / len});
      return;
    }
    case FibreSpec::Kind::rotating:
      if (f.axis < 0 || f.axis > 2)
        throw InputError(f.loc, fmt::format("fibres.axis = {} must be 0 (x), 1 (y) or 2 (z)", f.axis));
      geo.fibres = rotating_fibres(g, f.axis, f.angle_from, f.angle_to);
      return;
    case FibreSpec::Kind::rule_based: {
      try {
        const TransmuralField t = transmural_field(c, geo);
        const std::vector<double> angles =
            f.angles.empty() ? std::vector<double>{f.angle_from, f.angle_to} : f.angles;
        geo.fibres = rule_based_fibres(g, geo.mask.empty() ? Mask(g, 1) : geo.mask, t, angles, geo.long_axis->dir);
      } catch (const InputError&) {
        throw;
      } catch (const Error& e) {
        throw InputError(f.loc, e.what());
      }
      return;
    }
    case FibreSpec::Kind::file: {
      const io::ImageVolume img =
          on_case_grid(c, load_image(c, f.path, f.loc, "fibres.path"), io::Resampling::trilinear, f.loc);
      if (img.components != 3)
        throw InputError(f.loc, fmt::format("fibres.path = '{}' holds scalars; a fibre file needs 3 components per "
                                            "voxel", f.path));
      if (img.sizes != g.n)
        throw InputError(f.loc, fmt::format("fibres.path = '{}' is {}×{}×{}, the geometry grid {}×{}×{}", f.path,
                                            img.sizes[0], img.sizes[1], img.sizes[2], g.n[0], g.n[1], g.n[2]));
      FibreField ff;
      for (int a = 0; a < 3; ++a) ff.f[a] = Field<double>(g, 0.0);
      std::size_t zero_in_tissue = 0;
      for (std::size_t n = 0; n < g.size(); ++n) {
        double l2 = 0;
        for (int a = 0; a < 3; ++a) {
          const double v = img.value(n, a);
          ff.f[a][n] = std::isfinite(v) ? v : 0.0;
          l2 += ff.f[a][n] * ff.f[a][n];
        }
        if (!(l2 > 0) && is_tissue(&geo.mask, n)) ++zero_in_tissue;
      }
      if (zero_in_tissue)
        throw InputError(f.loc, fmt::format("fibres.path = '{}' has a zero (or non-finite) fibre vector in {} "
                                            "tissue cells", f.path, zero_in_tissue));
      geo.fibres = std::move(ff);
      return;
    }
  }
}

}  // namespace

Geometry build_geometry(const MeshSpec& c) {
  const GeometrySpec& s = c.geometry;
  Geometry geo;
  geo.grid = c.grid;
  switch (s.kind) {
    case GeometrySpec::Kind::box:
      break;
    case GeometrySpec::Kind::mask_file:
    case GeometrySpec::Kind::phase_field_file: {
      // Phase fields are smooth: interpolated; masks and labels take the nearest voxel.
      const io::ImageVolume raw = load_image(c, s.path, s.loc, "geometry.file");
      // φ's full scale is the stored type's (φ·255 in uint8), read before resampling to f32.
      const double full_scale = io::is_integer(raw.type) ? type_full_scale(raw.type) : 1.0;
      const io::ImageVolume img = on_case_grid(
          c, raw, s.kind == GeometrySpec::Kind::phase_field_file ? io::Resampling::trilinear : io::Resampling::nearest,
          s.loc);
      if (img.components != 1)
        throw InputError(s.loc, fmt::format("geometry.file = '{}' holds {}-component vectors; a geometry needs "
                                            "one value per voxel", s.path, img.components));
      geo.grid.n = img.sizes;
      geo.grid.h = img.spacing;
      for (int a = 0; a < 3; ++a) geo.grid.origin[a] = img.origin[a] - 0.5 * img.spacing[a];
      check_size(geo.grid, s.loc);
      for (int a = 0; a < 3; ++a)
        if (!(img.spacing[a] > 0) || !std::isfinite(img.spacing[a]))
          throw InputError(s.loc, fmt::format("geometry.file = '{}': spacing {} mm along axis {} must be > 0",
                                              s.path, img.spacing[a], a));
      geo.mask = Mask(geo.grid, 0);
      const std::size_t nv = img.voxels();
      if (s.kind == GeometrySpec::Kind::mask_file) {
        // tissue where value > threshold; integer files with values > 1 carry labels.
        double vmax = 0;
        for (std::size_t n = 0; n < nv; ++n) {
          const double v = img.value(n);
          geo.mask[n] = v > s.threshold;
          vmax = std::max(vmax, v);
        }
        if (io::is_integer(img.type) && vmax > 1 && vmax <= 32767) {
          geo.labels = Field<std::int16_t>(geo.grid, 0);
          for (std::size_t n = 0; n < nv; ++n)
            geo.labels[n] = static_cast<std::int16_t>(std::max(0.0, img.value(n)));
        }
      } else {
        // φ = value / full scale of an integer type (φ·255 in uint8), or as stored.
        const double scale = full_scale;
        Field<float> phi(geo.grid, 0.0f);
        for (std::size_t n = 0; n < nv; ++n) {
          double p = img.value(n) / scale;
          if (!std::isfinite(p)) p = 0;
          p = std::min(1.0, std::max(0.0, p));
          geo.mask[n] = p > s.threshold;
          phi[n] = geo.mask[n] ? static_cast<float>(p) : 0.0f;
        }
        if (s.phase_field) geo.phase = std::move(phi);
      }
      break;
    }
    case GeometrySpec::Kind::mesh:
      build_from_mesh(c, geo);
      break;
    case GeometrySpec::Kind::ellipsoid_shell: {
      check_size(geo.grid, s.loc);
      check_radii(s, true);
      ShapeVolume v = ellipsoid_shell(geo.grid, s.centre, s.radii_outer, s.radii_inner);
      geo.mask = std::move(v.mask);
      geo.labels = std::move(v.labels);
      break;
    }
    case GeometrySpec::Kind::slab_with_hole: {
      check_size(geo.grid, s.loc);
      if (!(s.hole_radius > 0) || !std::isfinite(s.hole_radius))
        throw InputError(s.loc, fmt::format("geometry.hole_radius = {} mm must be > 0", s.hole_radius));
      ShapeVolume v = slab_with_hole(geo.grid, s.centre, s.hole_radius);
      geo.mask = std::move(v.mask);
      geo.labels = std::move(v.labels);
      break;
    }
  }
  const std::size_t tissue = count_tissue(geo.grid, geo.mask);
  if (tissue == 0) {
    const bool file = s.kind == GeometrySpec::Kind::mask_file || s.kind == GeometrySpec::Kind::phase_field_file;
    if (s.kind == GeometrySpec::Kind::mesh)
      throw InputError(s.loc, fmt::format("geometry.file = '{}': no voxel centre at spacing {} mm falls inside the mesh "
                                          "(finer spacing, or check geometry.units and geometry.tags)", s.path, s.spacing[0]));
    throw InputError(s.loc, file ? fmt::format("geometry.threshold = {} leaves no tissue in '{}'", s.threshold, s.path)
                                 : std::string("geometry: the shape contains no cell centre of the grid (no tissue)"));
  }
  if (s.phase_field && geo.phase.empty()) {
    // φ from the mask: interface width ξ = half the mean active spacing (10–90% over ~3 cells).
    double hbar = 0;
    int na = 0;
    for (int a = 0; a < 3; ++a)
      if (geo.grid.active(a)) hbar += geo.grid.h[a], ++na;
    hbar = na ? hbar / na : geo.grid.h[0];
    geo.phase = phase_field_from_mask(geo.grid, geo.mask, 0.5 * hbar);
    // The mask stays authoritative: φ = 0 wherever it says "no tissue".
    for (std::size_t n = 0; n < geo.phase.size(); ++n)
      if (!is_tissue(&geo.mask, n)) geo.phase[n] = 0.0f;
  }
  build_fibres(c, geo);
  if (c.coordinates && geo.transmural.empty()) transmural_field(c, geo);
  return geo;
}

}  // namespace hw::tissue
