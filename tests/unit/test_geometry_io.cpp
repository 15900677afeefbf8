// NRRD and VTK image readers: round trips of small hand-made images (every type, raw and
// gzip, attached and detached, both byte orders), hand-written ASCII files, and clean
// located errors for malformed headers.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <cmath>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "formats/nrrd.hpp"
#include "formats/resample.hpp"
#include "formats/vtk_image_reader.hpp"

namespace fs = std::filesystem;
using namespace hw::io;

namespace {

// A per-process scratch folder, removed at the end of each test.
struct Scratch {
  fs::path dir;
  Scratch() {
    dir = fs::temp_directory_path() / ("hw_geom_io_" + std::to_string(::getpid()) + "_" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir);
  }
  ~Scratch() { std::error_code ec; fs::remove_all(dir, ec); }
  std::string path(const std::string& name) const { return (dir / name).string(); }
  std::string write(const std::string& name, const std::string& content) const {
    std::ofstream(path(name), std::ios::binary) << content;
    return path(name);
  }
};

ImageVolume sample(ScalarType t, int components) {
  ImageVolume img;
  img.sizes = {5, 4, 3};
  img.spacing = {0.5, 0.25, 2.0};
  img.origin = {-1.0, 2.0, 3.5};
  img.components = components;
  std::vector<double> v(img.voxels() * components);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const double x = double(i % 97);
    v[i] = t == ScalarType::f32 || t == ScalarType::f64 ? x * 0.37 - 5.0
           : (t == ScalarType::i8 || t == ScalarType::i16 || t == ScalarType::i32) ? x - 40 : x;
  }
  img.set_values(t, v);
  return img;
}

void expect_same(const ImageVolume& a, const ImageVolume& b) {
  EXPECT_EQ(a.sizes, b.sizes);
  EXPECT_EQ(a.components, b.components);
  EXPECT_EQ(a.type, b.type);
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(a.spacing[k], b.spacing[k], 1e-12);
    EXPECT_NEAR(a.origin[k], b.origin[k], 1e-12);
  }
  ASSERT_EQ(a.bytes.size(), b.bytes.size());
  for (std::size_t i = 0; i < a.voxels(); ++i)
    for (int c = 0; c < a.components; ++c) ASSERT_EQ(a.value(i, c), b.value(i, c)) << "voxel " << i;
}

// The first diagnostic pointing into `file` must have line `line` and mention `what`.
void expect_error(const std::string& file, int line, const std::string& what,
                  ImageVolume (*reader)(const std::string&)) {
  try {
    reader(file);
    ADD_FAILURE() << "no error for " << what;
  } catch (const hw::InputError& e) {
    ASSERT_FALSE(e.diagnostics().empty());
    const auto& d = e.diagnostics().front();
    EXPECT_EQ(d.loc.file, file);
    if (line > 0) EXPECT_EQ(d.loc.line, line) << e.what();
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << "expected '" << what << "' in: " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type for " << what << ": " << e.what();
  }
}

const std::string head = "NRRD0004\ntype: uchar\ndimension: 3\nsizes: 2 2 2\nencoding: raw\n";

}  // namespace

TEST(GeometryNrrd, RoundTripEveryTypeEncodingLayoutAndByteOrder) {
  Scratch s;
  const ScalarType types[] = {ScalarType::u8,  ScalarType::i8,  ScalarType::u16, ScalarType::i16,
                              ScalarType::u32, ScalarType::i32, ScalarType::f32, ScalarType::f64};
  int files = 0;
  for (ScalarType t : types)
    for (int comps : {1, 3})
      for (NrrdEncoding enc : {NrrdEncoding::raw, NrrdEncoding::gzip})
        for (bool detached : {false, true})
          for (bool big : {false, true}) {
            const ImageVolume img = sample(t, comps);
            const std::string p = s.path(fmt::format("img_{}_{}_{}_{}_{}.{}", scalar_name(t), comps, int(enc),
                                                     detached, big, detached ? "nhdr" : "nrrd"));
            write_nrrd(p, img, {enc, detached, big});
            SCOPED_TRACE(p);
            expect_same(img, read_nrrd(p));
            ++files;
          }
  EXPECT_EQ(files, 128);
}

TEST(GeometryNrrd, HandWrittenAsciiAndSpacings) {
  const std::string dir = std::string(HW_TEST_DATA_DIR) + "/data/geometry/";
  for (const char* name : {"ascii_3x2x2.nrrd", "ascii_3x2x2.vti", "ascii_3x2x2.vtk"}) {
    SCOPED_TRACE(name);
    const ImageVolume img = read_image(dir + name);
    EXPECT_EQ(img.sizes, (std::array<int, 3>{3, 2, 2}));
    EXPECT_DOUBLE_EQ(img.spacing[0], 0.5);
    EXPECT_DOUBLE_EQ(img.spacing[1], 0.25);
    EXPECT_DOUBLE_EQ(img.spacing[2], 2.0);
    for (std::size_t i = 0; i < 12; ++i) EXPECT_EQ(img.value(i), double(i));
  }
}

TEST(GeometryNrrd, MalformedHeadersAreLocatedInputErrors) {
  Scratch s;
  struct Case { std::string text; int line; std::string what; };
  const std::string data8(8, '\x01');
  const std::vector<Case> cases = {
      {"NRRD0009\n", 1, "magic"},
      {"P5 2 2\n255\n", 1, "magic"},
      {"", 1, "magic"},
      {"NRRD0004\ndimension: 3\nsizes: 2 2 2\nencoding: raw\n\n" + data8, 5, "'type:'"},
      {"NRRD0004\ntype: quaternion\ndimension: 3\nsizes: 2 2 2\nencoding: raw\n\n" + data8, 2, "unsupported NRRD type"},
      {"NRRD0004\ntype: uchar\ndimension: 7\nsizes: 2 2 2\nencoding: raw\n\n" + data8, 3, "dimension"},
      {"NRRD0004\ntype: uchar\ndimension: 3\nsizes: 2 2\nencoding: raw\n\n" + data8, 4, "sizes has 2 numbers"},
      {"NRRD0004\ntype: uchar\ndimension: 3\nsizes: 2 -2 2\nencoding: raw\n\n" + data8, 4, "positive integer"},
      {"NRRD0004\ntype: uchar\ndimension: 3\nsizes: 2 x 2\nencoding: raw\n\n" + data8, 4, "positive integer"},
      {"NRRD0004\ntype: uchar\ndimension: 3\nsizes: 2000000 2000000 2000000\nencoding: raw\n\n" + data8, 4, "too large"},
      {"NRRD0004\ntype: short\ndimension: 3\nsizes: 2 2 2\nencoding: raw\n\n" + data8 + data8, 6, "'endian:'"},
      {"NRRD0004\ntype: short\ndimension: 3\nsizes: 2 2 2\nendian: middle\nencoding: raw\n\n" + data8 + data8, 5, "endian"},
      {"NRRD0004\ntype: uchar\ndimension: 3\nsizes: 2 2 2\nencoding: bzip2\n\n" + data8, 5, "unsupported NRRD encoding"},
      {head + "\n" + data8.substr(0, 5), 4, "truncated"},
      {head + "\n" + data8 + data8, 4, "need only"},
      {"NRRD0004\ntype: uchar\ndimension: 3\nsizes: 2 2 2\nencoding: gzip\n\nnot gzip at all", 0, "gzip"},
      {"NRRD0004\ntype: uchar\ndimension: 4\nsizes: 2 2 2 2\nencoding: raw\n\n" + data8 + data8, 4, "3 vector"},
      {head + "space directions: (1,0.5,0) (0,1,0) (0,0,1)\n\n" + data8, 6, "axis-aligned"},
      {head + "space directions: (1,0,0) (0,1,0)\n\n" + data8, 6, "2 entries"},
      {head + "space directions: (1,0,0) (0,1,0) (0,0,zz)\n\n" + data8, 6, "(x,y,z)"},
      {head + "space directions: (1,0,0) (0,1,0) (0,0,0)\n\n" + data8, 6, "is zero"},
      {head + "spacings: 1 0 1\n\n" + data8, 6, "non-zero"},
      {head + "space origin: 1 2 3\n\n" + data8, 6, "space origin"},
      {head + "data file: does_not_exist.raw\n", 6, "cannot open"},
      {head + "data file: LIST\n", 6, "multi-file"},
      {head + "type: float\n\n" + data8, 6, "given twice"},
      {head + "this line has no colon\n\n" + data8, 6, "malformed NRRD header line"},
      {head, 5, "blank line"},
      {head + "byte skip: 100\n\n" + data8, 0, "byte skip"},
      {head + "byte skip: -7\n\n" + data8, 6, "byte skip"},
      {head + "line skip: 5\n\n" + data8, 0, "line skip"},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].what);
    const std::string p = s.write("bad" + std::to_string(i) + ".nrrd", cases[i].text);
    expect_error(p, cases[i].line, cases[i].what, &read_nrrd);
  }
  // Truncated gzip: a valid stream cut short.
  ImageVolume img = sample(ScalarType::f32, 1);
  const std::string good = s.path("good.nrrd");
  write_nrrd(good, img, {NrrdEncoding::gzip, false, false});
  std::ifstream in(good, std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string cut = s.write("cut.nrrd", all.substr(0, all.size() - 20));
  expect_error(cut, 0, "gzip", &read_nrrd);
  // Missing file and unknown format.
  expect_error(s.path("absent.nrrd"), 0, "cannot open", &read_nrrd);
  expect_error(s.write("x.png", "x"), 0, "unknown image format", &read_image);
}

TEST(GeometryVtk, BinaryVtiAndLegacyBinaryMatchNrrd) {
  Scratch s;
  // Inline base64 binary .vti: header (UInt32 byte count) and data as separate blocks, as VTK writes.
  const ImageVolume img = sample(ScalarType::i16, 3);
  auto b64 = [](const std::vector<std::uint8_t>& b) {
    static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string r;
    for (std::size_t i = 0; i < b.size(); i += 3) {
      const std::uint32_t x = (b[i] << 16) | ((i + 1 < b.size() ? b[i + 1] : 0) << 8) | (i + 2 < b.size() ? b[i + 2] : 0);
      r += t[(x >> 18) & 63];
      r += t[(x >> 12) & 63];
      r += i + 1 < b.size() ? t[(x >> 6) & 63] : '=';
      r += i + 2 < b.size() ? t[x & 63] : '=';
    }
    return r;
  };
  const std::uint32_t nbytes = static_cast<std::uint32_t>(img.bytes.size());
  std::vector<std::uint8_t> h(4);
  std::memcpy(h.data(), &nbytes, 4);
  const std::string vti = fmt::format(
      "<?xml version=\"1.0\"?>\n<VTKFile type=\"ImageData\" version=\"1.0\" byte_order=\"LittleEndian\" "
      "header_type=\"UInt32\">\n<ImageData WholeExtent=\"0 4 0 3 0 2\" Origin=\"-1 2 3.5\" Spacing=\"0.5 0.25 2\">\n"
      "<Piece Extent=\"0 4 0 3 0 2\"><PointData><DataArray type=\"Int16\" NumberOfComponents=\"3\" format=\"binary\">"
      "{}{}</DataArray></PointData></Piece></ImageData></VTKFile>\n",
      b64(h), b64(img.bytes));
  expect_same(img, read_image(s.write("a.vti", vti)));

  // Legacy BINARY: big-endian.
  std::vector<std::uint8_t> be = img.bytes;
  for (std::size_t i = 0; i + 1 < be.size(); i += 2) std::swap(be[i], be[i + 1]);
  std::string vtk = "# vtk DataFile Version 3.0\nfibres\nBINARY\nDATASET STRUCTURED_POINTS\nDIMENSIONS 5 4 3\n"
                    "ORIGIN -1 2 3.5\nSPACING 0.5 0.25 2\nPOINT_DATA 60\nVECTORS f short\n";
  vtk.append(reinterpret_cast<const char*>(be.data()), be.size());
  expect_same(img, read_image(s.write("a.vtk", vtk)));
}

TEST(GeometryVtk, MalformedFilesAreLocatedInputErrors) {
  Scratch s;
  const std::string ok_head = "<VTKFile type=\"ImageData\" byte_order=\"LittleEndian\">\n";
  expect_error(s.write("a.vti", "<VTKFile type=\"ImageData\">\n<ImageData"), 0, "malformed XML", &read_vti);
  expect_error(s.write("b.vti", "<VTKFile type=\"PolyData\"/>\n"), 1, "not ImageData", &read_vti);
  expect_error(s.write("c.vti", ok_head + "<ImageData WholeExtent=\"0 1 0 1\">\n<Piece/></ImageData></VTKFile>"), 2,
               "WholeExtent", &read_vti);
  expect_error(s.write("d.vti", ok_head + "<ImageData WholeExtent=\"0 1 0 1 0 1\">\n<Piece>\n<PointData>\n"
                                          "<DataArray type=\"Float32\" format=\"ascii\">1 2 3</DataArray>"
                                          "</PointData></Piece></ImageData></VTKFile>"),
               5, "8", &read_vti);
  expect_error(s.write("e.vti", ok_head + "<ImageData WholeExtent=\"0 1 0 1 0 1\">\n<Piece>\n<PointData>\n"
                                          "<DataArray type=\"Float32\" format=\"appended\" offset=\"0\"/>"
                                          "</PointData></Piece></ImageData></VTKFile>"),
               5, "format", &read_vti);
  expect_error(s.write("f.vti", ok_head + "<ImageData WholeExtent=\"0 1 0 1 0 1\">\n<Piece>\n<PointData>\n"
                                          "<DataArray type=\"Float32\" format=\"binary\">!!!!</DataArray>"
                                          "</PointData></Piece></ImageData></VTKFile>"),
               5, "base64", &read_vti);
  expect_error(s.write("a.vtk", "not vtk\n"), 1, "legacy VTK", &read_legacy_vtk);
  expect_error(s.write("b.vtk", "# vtk DataFile Version 3.0\nt\nASCII\nDATASET POLYDATA\n"), 4, "STRUCTURED_POINTS",
               &read_legacy_vtk);
  expect_error(s.write("c.vtk", "# vtk DataFile Version 3.0\nt\nASCII\nDATASET STRUCTURED_POINTS\nDIMENSIONS 2 2 -2\n"),
               5, "DIMENSIONS", &read_legacy_vtk);
  expect_error(s.write("d.vtk", "# vtk DataFile Version 3.0\nt\nASCII\nDATASET STRUCTURED_POINTS\nDIMENSIONS 2 2 2\n"
                                "POINT_DATA 8\nSCALARS a float\nLOOKUP_TABLE default\n1 2 3\n"),
               8, "3 values", &read_legacy_vtk);
  expect_error(s.write("e.vtk", "# vtk DataFile Version 3.0\nt\nBINARY\nDATASET STRUCTURED_POINTS\nDIMENSIONS 2 2 2\n"
                                "POINT_DATA 8\nSCALARS a double\n\x01\x02"),
               0, "bytes", &read_legacy_vtk);
  expect_error(s.write("f.vtk", "# vtk DataFile Version 3.0\nt\nASCII\nDATASET STRUCTURED_POINTS\nDIMENSIONS 2 2 2\n"
                                "POINT_DATA 9\nSCALARS a float\n"),
               7, "does not match", &read_legacy_vtk);
}

// Resampling (geometry.spacing): a field linear in position is reproduced exactly inside the
// image by trilinear interpolation; halving the spacing doubles the voxels and keeps the
// extent and the corner; nearest keeps the type and only the stored values (labels).
TEST(GeometryResample, TrilinearIsExactOnLinearFieldsNearestKeepsLabels) {
  ImageVolume img;
  img.sizes = {6, 5, 4};
  img.spacing = {1.0, 0.5, 2.0};
  img.origin = {0.5, 0.25, 1.0};  // voxel corners at 0
  img.components = 2;
  std::vector<double> v;
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 5; ++j)
      for (int i = 0; i < 6; ++i) {
        const double x = (i + 0.5) * 1.0, y = (j + 0.5) * 0.5, z = (k + 0.5) * 2.0;
        v.push_back(2 * x - 3 * y + 0.5 * z);
        v.push_back(1.0);
      }
  img.set_values(ScalarType::f64, v);
  const ImageVolume fine = resample(img, {0.5, 0.25, 1.0}, Resampling::trilinear, 1u << 20);
  EXPECT_EQ(fine.sizes, (std::array<int, 3>{12, 10, 8}));
  EXPECT_EQ(fine.type, ScalarType::f32);
  EXPECT_EQ(fine.components, 2);
  for (int a = 0; a < 3; ++a) EXPECT_DOUBLE_EQ(fine.origin[a] - 0.5 * fine.spacing[a], 0.0);
  std::size_t inside = 0;
  for (int k = 0; k < 8; ++k)
    for (int j = 0; j < 10; ++j)
      for (int i = 0; i < 12; ++i) {
        const double x = (i + 0.5) * 0.5, y = (j + 0.5) * 0.25, z = (k + 0.5) * 1.0;
        // Inside the source's outermost voxel centres; beyond them the value is clamped.
        if (x < 0.5 || x > 5.5 || y < 0.25 || y > 2.25 || z < 1 || z > 7) continue;
        ++inside;
        const std::size_t n = std::size_t(i + 12 * (j + 10 * k));
        EXPECT_NEAR(fine.value(n, 0), 2 * x - 3 * y + 0.5 * z, 1e-5) << i << " " << j << " " << k;
        EXPECT_FLOAT_EQ(float(fine.value(n, 1)), 1.0f);
      }
  EXPECT_GT(inside, 400u);

  ImageVolume labels;
  labels.sizes = {4, 4, 4};
  labels.spacing = {1, 1, 1};
  std::vector<double> l(64);
  for (std::size_t n = 0; n < 64; ++n) l[n] = double(n % 5);
  labels.set_values(ScalarType::u8, l);
  const ImageVolume coarse = resample(labels, {2, 2, 2}, Resampling::nearest, 1u << 20);
  EXPECT_EQ(coarse.sizes, (std::array<int, 3>{2, 2, 2}));
  EXPECT_EQ(coarse.type, ScalarType::u8);
  for (std::size_t n = 0; n < coarse.voxels(); ++n) {
    const double x = coarse.value(n);
    EXPECT_EQ(x, std::round(x));
    EXPECT_LE(x, 4);
  }
  EXPECT_THROW(resample(labels, {0.01, 0.01, 0.01}, Resampling::nearest, 1u << 20), hw::Error);
}
