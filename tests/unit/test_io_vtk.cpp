// VTK outputs read back: the .vti is well-formed XML (libxml2), its arrays decode to the
// values written, and the .pvd lists every step with its time.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>

#include "core/error.hpp"
#include "formats/base64.hpp"
#include "outputs/vtk_writer.hpp"
#include "test_io_support.hpp"

using namespace hw;
using namespace hw::io;
using namespace hw::io::testing;
using hw::tissue::Field;
using hw::tissue::Grid;
using hw::tissue::Mask;

TEST(IoBase64, RoundTripsEveryPaddingLength) {
  for (std::size_t n = 0; n < 12; ++n) {
    std::vector<unsigned char> in(n);
    for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<unsigned char>(37 * i + 250);
    std::string enc;
    base64_encode(in.data(), n, enc);
    EXPECT_EQ(enc.size(), base64_block_length(n));
    EXPECT_EQ(base64_decode(enc), in) << n;
  }
  // Large enough to be encoded by the whole team, with a tail of two bytes, appended to text
  // already there.
  std::vector<unsigned char> big(3 * (1u << 19) + 3 * 4097 + 2);
  std::mt19937 rng(7);
  for (auto& b : big) b = static_cast<unsigned char>(rng());
  std::string enc = "head";
  base64_encode(big.data(), big.size(), enc);
  ASSERT_EQ(enc.size(), 4 + base64_block_length(big.size()));
  EXPECT_EQ(enc.substr(0, 4), "head");
  EXPECT_EQ(base64_decode(std::string_view(enc).substr(4)), big);
  std::string known;
  base64_encode("Man", 3, known);
  EXPECT_EQ(known, "TWFu");
  EXPECT_THROW(base64_decode("TW*u"), Error);
}

TEST(IoVtk, VtiIsWellFormedAndDecodesToTheFieldsAndMask) {
  ScratchDir dir("vti");
  Grid g;
  g.n = {5, 4, 3};
  g.h = {0.25, 0.5, 0.1};
  Field<float> v(g), w(g);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-90.f, 40.f);
  for (std::size_t c = 0; c < g.size(); ++c) v[c] = u(rng), w[c] = float(c) * 0.5f;
  Mask m(g, 1);
  m[7] = 0;
  const std::string path = dir / "f.vti";
  write_vti(path, g, {{"V", &v}, {"h<&>", &w}}, &m);

  XmlDoc doc(path);
  ASSERT_NE(doc.doc, nullptr) << "not well-formed XML";
  xmlNodePtr root = doc.root();
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(root->name)), "VTKFile");
  EXPECT_EQ(attr(root, "type"), "ImageData");
  EXPECT_EQ(attr(root, "header_type"), "UInt64");
  std::vector<xmlNodePtr> img, arrays;
  find_all(root, "ImageData", img);
  ASSERT_EQ(img.size(), 1u);
  EXPECT_EQ(attr(img[0], "WholeExtent"), "0 5 0 4 0 3");
  EXPECT_EQ(attr(img[0], "Spacing"), "0.25 0.5 0.10000000000000001");
  EXPECT_EQ(attr(img[0], "Origin"), "0 0 0");
  // A grid placed by its geometry keeps its place: the Origin is the grid's corner.
  g.origin = {-13.4, -10.8, -15.8};
  write_vti(dir / "placed.vti", g, {{"V", &v}}, &m);
  XmlDoc placed(dir / "placed.vti");
  std::vector<xmlNodePtr> pimg;
  find_all(placed.root(), "ImageData", pimg);
  ASSERT_EQ(pimg.size(), 1u);
  EXPECT_EQ(attr(pimg[0], "Origin"), "-13.4 -10.800000000000001 -15.800000000000001");
  find_all(root, "DataArray", arrays);
  ASSERT_EQ(arrays.size(), 3u);
  EXPECT_EQ(attr(arrays[1], "Name"), "h<&>");  // escaped on write, unescaped by the parser
  for (int a = 0; a < 2; ++a) {
    EXPECT_EQ(attr(arrays[a], "type"), "Float32");
    std::uint64_t announced = 0;
    auto bytes = decode_vtk_array(text(arrays[a]), &announced);
    ASSERT_EQ(announced, g.size() * 4);
    ASSERT_EQ(bytes.size(), g.size() * 4);
    const Field<float>& want = a == 0 ? v : w;
    EXPECT_EQ(std::memcmp(bytes.data(), want.data(), bytes.size()), 0);
  }
  EXPECT_EQ(attr(arrays[2], "Name"), "tissue");
  EXPECT_EQ(attr(arrays[2], "type"), "UInt8");
  std::uint64_t announced = 0;
  auto mb = decode_vtk_array(text(arrays[2]), &announced);
  ASSERT_EQ(mb.size(), g.size());
  EXPECT_EQ(mb[7], 0);
  EXPECT_EQ(mb[8], 1);
}

TEST(IoVtk, SizeMismatchIsAnError) {
  ScratchDir dir("vti_bad");
  Grid g;
  g.n = {4, 4, 1};
  Field<float> v(10);
  EXPECT_THROW(write_vti(dir / "x.vti", g, {{"V", &v}}), Error);
}

TEST(IoVtk, PvdListsEveryStepRelativeToItsFolder) {
  ScratchDir dir("pvd");
  Grid g;
  g.n = {6, 3, 1};
  g.h = {0.2, 0.2, 0.2};
  Field<float> v(g);
  std::filesystem::create_directories(dir.path / "fields");
  PvdWriter pvd(dir / "fields/V.pvd");
  for (int s = 0; s < 3; ++s) {
    v.fill(float(s));
    const std::string vti = dir / ("fields/V_" + std::to_string(s) + ".vti");
    write_vti(vti, g, {{"V", &v}});
    pvd.add(2.5 * s, vti);
  }
  XmlDoc doc(pvd.path());
  ASSERT_NE(doc.doc, nullptr);
  EXPECT_EQ(attr(doc.root(), "type"), "Collection");
  std::vector<xmlNodePtr> ds;
  find_all(doc.root(), "DataSet", ds);
  ASSERT_EQ(ds.size(), 3u);
  for (int s = 0; s < 3; ++s) {
    EXPECT_DOUBLE_EQ(std::stod(attr(ds[s], "timestep")), 2.5 * s);
    const std::string file = attr(ds[s], "file");
    EXPECT_EQ(file.find('/'), std::string::npos) << file;
    const std::string full = dir / ("fields/" + file);
    ASSERT_TRUE(std::filesystem::exists(full)) << full;
    XmlDoc vti(full);
    std::vector<xmlNodePtr> arrays;
    find_all(vti.root(), "DataArray", arrays);
    ASSERT_EQ(arrays.size(), 1u);
    std::uint64_t n = 0;
    auto bytes = decode_vtk_array(text(arrays[0]), &n);
    float first;
    std::memcpy(&first, bytes.data(), 4);
    EXPECT_EQ(first, float(s));
  }
  // No temporary files are left behind by the atomic rewrites.
  for (const auto& e : std::filesystem::directory_iterator(dir.path / "fields"))
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos);
}
