// libFuzzer targets for the image readers a geometry or fibre field comes through, one per
// format (HW_FUZZ_IMAGE: 0 NRRD, 1 VTK XML image data .vti, 2 legacy VTK STRUCTURED_POINTS;
// tests/fuzz/CMakeLists.txt builds each).
//
// Any input must either read or end in hw::Error. NRRD: an input with a line "@@@" is a
// detached header (.nhdr) followed by the data file it may name as "data file: d.raw".
// An image that reads is summarised as `heartwave image inspect` does, resampled to half
// its voxels per axis (nearest, as masks are) and written back as NRRD, raw and gzip, and
// read again: what the reader accepted must survive the summary, the resampling and its
// own writer, value for value (an exception there, or other values, is a finding,
// reported by abort).
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "fuzz_files.hpp"
#include "formats/image_summary.hpp"
#include "formats/nrrd.hpp"
#include "formats/resample.hpp"
#include "formats/vtk_image_reader.hpp"

namespace {

namespace fs = std::filesystem;

const fs::path& dir() {
  static const fs::path d = hw_fuzz::scratch_dir("hw_fuzz_image");
  return d;
}

using hw_fuzz::put;

[[noreturn]] void finding(const char* what, const std::string& detail) {
  hw_fuzz::finding("fuzz_image", what, detail);
}

bool same_values(const hw::io::ImageVolume& a, const hw::io::ImageVolume& b) {
  if (a.sizes != b.sizes || a.components != b.components || a.type != b.type) return false;
  for (std::size_t i = 0; i < a.voxels(); ++i)
    for (int c = 0; c < a.components; ++c) {
      const double x = a.value(i, c), y = b.value(i, c);
      if (!(x == y) && !(std::isnan(x) && std::isnan(y))) return false;
    }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (const char* name : {"i.nrrd", "i.nhdr", "d.raw", "i.vti", "i.vtk"}) fs::remove(dir() / name);
  std::string path;
#if HW_FUZZ_IMAGE == 0
  const std::size_t cut = text.find("\n@@@\n");
  if (cut == std::string::npos) {
    path = (dir() / "i.nrrd").string();
    put(path, text);
  } else {
    path = (dir() / "i.nhdr").string();
    put(path, text.substr(0, cut + 1));
    put(dir() / "d.raw", text.substr(cut + 5));
  }
#elif HW_FUZZ_IMAGE == 1
  path = (dir() / "i.vti").string();
  put(path, text);
#else
  path = (dir() / "i.vtk").string();
  put(path, text);
#endif
  hw::io::ImageVolume img;
  try {
    img = hw::io::read_image(path);
  } catch (const hw::Error&) {
    return 0;
  }
  // The readers cap what they allocate by the bytes present, so this stays small.
  try {
    const hw::io::ImageSummary s = hw::io::summarize_image(img);
    (void)hw::io::describe_image(s);
    std::array<double, 3> coarse{};
    for (int a = 0; a < 3; ++a) coarse[a] = 2 * img.spacing[a];
    try {
      (void)hw::io::resample(img, coarse, hw::io::Resampling::nearest, 1u << 20);
    } catch (const hw::Error&) {
      // a spacing the resampler refuses (not finite, too many voxels): located, not a finding
    }
    for (const auto encoding : {hw::io::NrrdEncoding::raw, hw::io::NrrdEncoding::gzip}) {
      const std::string out = (dir() / "back.nrrd").string();
      hw::io::NrrdWriteOptions o;
      o.encoding = encoding;
      hw::io::write_nrrd(out, img, o);
      if (!same_values(img, hw::io::read_nrrd(out))) finding("the NRRD written back differs", path);
    }
  } catch (const hw::Error& e) {
    finding("an image the reader accepted failed afterwards", e.what());
  }
  return 0;
}
