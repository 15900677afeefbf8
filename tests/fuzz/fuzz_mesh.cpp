// libFuzzer targets for the unstructured mesh readers, one per format (HW_FUZZ_MESH: 0
// TetGen, 1 openCARP, 2 .vtu, 3 legacy .vtk; tests/fuzz/CMakeLists.txt builds each).
//
// Any input must either read or end in hw::Error. Multi-file formats take one input cut
// at lines "@@@" (TetGen: .node, then .ele, or .face when the part begins with a line "face"; openCARP: .pts,
// .elem, .lon). A mesh that reads is voxelised on a grid of at most 18 voxels per axis and
// written back as .vtu and read again: what the reader accepted must voxelise and survive
// its own writer (an exception there is a finding, reported by abort).
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "fuzz_files.hpp"
#include "formats/unstructured_mesh.hpp"
#include "mesh/voxelise.hpp"

namespace {

namespace fs = std::filesystem;

const fs::path& dir() {
  static const fs::path d = hw_fuzz::scratch_dir("hw_fuzz_mesh");
  return d;
}

using hw_fuzz::put;

std::vector<std::string> parts(const std::string& s) {
  std::vector<std::string> r;
  std::size_t a = 0;
  while (true) {
    const std::size_t b = s.find("\n@@@\n", a);
    r.push_back(s.substr(a, b == std::string::npos ? std::string::npos : b - a));
    if (b == std::string::npos) return r;
    a = b + 5;
  }
}

[[noreturn]] void finding(const char* what, const std::string& detail) {
  hw_fuzz::finding("fuzz_mesh", what, detail);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const fs::path base = dir() / "m";
  for (const char* ext : {".node", ".ele", ".face", ".pts", ".elem", ".lon", ".vtu", ".vtk"})
    fs::remove(base.string() + ext);
  std::string path;
  const auto p = parts(text);
#if HW_FUZZ_MESH == 0
  put(base.string() + ".node", p[0]);
  // A second part starting with a line "face" is the .face, else the .ele.
  if (p.size() > 1 && p[1].rfind("face\n", 0) == 0) put(base.string() + ".face", p[1].substr(5));
  else if (p.size() > 1) put(base.string() + ".ele", p[1]);
  path = base.string() + ".node";
#elif HW_FUZZ_MESH == 1
  put(base.string() + ".pts", p[0]);
  put(base.string() + ".elem", p.size() > 1 ? p[1] : "");
  if (p.size() > 2) put(base.string() + ".lon", p[2]);
  path = base.string() + ".pts";
#elif HW_FUZZ_MESH == 2
  put(base.string() + ".vtu", text);
  path = base.string() + ".vtu";
#else
  put(base.string() + ".vtk", text);
  path = base.string() + ".vtk";
#endif
  hw::io::UnstructuredMesh m;
  try {
    m = hw::io::read_mesh(path);
  } catch (const hw::Error&) {
    return 0;
  }
  try {
    const hw::io::MeshSummary s = hw::io::summarize_mesh(m);
    double extent = 0;
    for (int a = 0; a < 3; ++a) extent = std::max(extent, s.hi[a] - s.lo[a]);
    if (!(extent > 0) || !std::isfinite(extent)) return 0;
    const double h = extent / 16;
    const hw::tissue::Grid g = hw::tissue::grid_around(m, {h, h, h}, 1);
    hw::tissue::VoxeliseOptions o;
    o.fibres = true;
    try {
      hw::tissue::voxelise(m, g, o);
    } catch (const hw::InputError&) {
      // overlapping tets, zero fibres, tags out of range: located errors, not findings
    }
    const std::string out = (dir() / "back.vtu").string();
    hw::io::write_vtu(out, m);
    const hw::io::UnstructuredMesh back = hw::io::read_vtu(out);
    if (back.points.size() != m.points.size() || back.tets != m.tets || back.triangles != m.triangles)
      finding("the .vtu written back differs", path);
  } catch (const hw::Error& e) {
    finding("a mesh the reader accepted failed afterwards", e.what());
  }
  return 0;
}
