// HDF5 + XDMF series read back through the HDF5 C API and libxml2.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <array>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "core/error.hpp"
#include "outputs/hdf5_writer.hpp"
#include "test_io_support.hpp"

using namespace hw;
using namespace hw::io;
using namespace hw::io::testing;
using hw::tissue::Field;
using hw::tissue::Grid;
using hw::tissue::Mask;

namespace {

std::vector<float> read_floats(hid_t f, const std::string& name, std::vector<hsize_t>* dims) {
  return read_dataset<float>(f, name, dims);
}

std::string read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST(IoHdf5, FieldsTimesAndMaskReadBack) {
  ScratchDir dir("h5");
  Grid g;
  g.n = {7, 5, 4};
  g.h = {0.1, 0.2, 0.3};
  g.origin = {-2.5, 1.25, 4};
  Mask m(g, 1);
  m[3] = 0;
  Field<float> v(g), ca(g);
  const std::string path = dir / "run.h5";
  {
    Hdf5SeriesWriter w(path, g, &m, /*compression=*/4);
    for (int s = 0; s < 3; ++s) {
      for (std::size_t c = 0; c < g.size(); ++c) v[c] = -85.f + c + 100.f * s, ca[c] = 1e-4f * c;
      w.write(0.5 * s, {{"V", &v}, {"Cai", &ca}});
    }
    EXPECT_EQ(w.steps(), 3);
    EXPECT_THROW(w.write(2.0, {{"V", &v}}), Error);  // the variable set may not change
  }
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  std::vector<hsize_t> dims;
  auto v2 = read_floats(f, "/fields/V/000002", &dims);
  ASSERT_EQ(dims, (std::vector<hsize_t>{4, 5, 7}));  // z, y, x: x fastest as in the grid
  for (std::size_t c = 0; c < g.size(); ++c) ASSERT_EQ(v2[c], -85.f + c + 200.f) << c;
  auto c0 = read_floats(f, "/fields/Cai/000000", &dims);
  EXPECT_EQ(c0[11], 1e-4f * 11);
  auto t = read_floats(f, "/time", &dims);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[2], 1.0f);
  // Per-dataset time attribute, chunked + compressed layout.
  hid_t ds = H5Dopen2(f, "/fields/V/000001", H5P_DEFAULT);
  hid_t at = H5Aopen(ds, "time", H5P_DEFAULT);
  double tv = -1;
  H5Aread(at, H5T_NATIVE_DOUBLE, &tv);
  EXPECT_EQ(tv, 0.5);
  hid_t pl = H5Dget_create_plist(ds);
  EXPECT_EQ(H5Pget_layout(pl), H5D_CHUNKED);
  if (H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0) EXPECT_GE(H5Pget_nfilters(pl), 2);
  H5Pclose(pl);
  H5Aclose(at);
  H5Dclose(ds);
  hid_t md = H5Dopen2(f, "/mask", H5P_DEFAULT);
  std::vector<unsigned char> mb(g.size());
  H5Dread(md, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, mb.data());
  EXPECT_EQ(mb[3], 0);
  EXPECT_EQ(mb[4], 1);
  H5Dclose(md);
  // The grid's place and spacing, x y z, as attributes of the file.
  for (const auto& [name, want] : {std::pair{"origin", g.origin}, std::pair{"spacing", g.h}}) {
    std::array<double, 3> got{};
    hid_t oa = H5Aopen(f, name, H5P_DEFAULT);
    ASSERT_GE(oa, 0) << name;
    H5Aread(oa, H5T_NATIVE_DOUBLE, got.data());
    H5Aclose(oa);
    EXPECT_EQ(got, want) << name;
  }
  H5Fclose(f);

  XmlDoc x(dir / "run.xdmf");
  ASSERT_NE(x.doc, nullptr);
  std::vector<xmlNodePtr> grids, items, topo, times;
  find_all(x.root(), "Grid", grids);
  ASSERT_EQ(grids.size(), 4u);  // the temporal collection + 3 steps
  EXPECT_EQ(attr(grids[0], "CollectionType"), "Temporal");
  find_all(x.root(), "Topology", topo);
  EXPECT_EQ(attr(topo[0], "TopologyType"), "3DCoRectMesh");
  EXPECT_EQ(attr(topo[0], "Dimensions"), "5 6 8");
  find_all(x.root(), "Time", times);
  EXPECT_EQ(attr(times[2], "Value"), "1");
  find_all(x.root(), "DataItem", items);
  bool found = false;
  for (auto* it : items) found |= text(it) == "run.h5:/fields/Cai/000002";
  EXPECT_TRUE(found);
  // ORIGIN_DXDYDZ: z, y, x, the origin first.
  EXPECT_EQ(text(items[0]), "4 1.25 -2.5");
}

TEST(IoHdf5, UnwritableFolderIsAnError) {
  Grid g;
  g.n = {2, 2, 1};
  EXPECT_THROW(Hdf5SeriesWriter("/proc/hw_no_such/run.h5", g), Error);
}

// A restart reopens the series: steps after the checkpoint go, new ones follow on.
TEST(IoHdf5, ContinueDropsLaterStepsAndAppends) {
  ScratchDir dir("h5_continue");
  Grid g;
  g.n = {5, 4, 3};
  const std::string path = dir / "fields.h5";
  auto field = [&](float base) {
    Field<float> f(g);
    for (std::size_t n = 0; n < f.size(); ++n) f[n] = base + float(n);
    return f;
  };
  std::vector<Field<float>> v, c;
  for (int s = 0; s < 5; ++s) v.push_back(field(100.f * s)), c.push_back(field(-100.f * s));
  {
    hw::io::Hdf5SeriesWriter w(path, g, nullptr, 1);
    for (int s = 0; s < 5; ++s) w.write(0.5 * s, {{"V", &v[s]}, {"Ca_i", &c[s]}});
  }
  {
    // The checkpoint had 3 steps; the resumed run writes steps 3 and 4 again, otherwise.
    hw::io::Hdf5SeriesWriter w(path, g, hw::io::Hdf5SeriesWriter::Continue{3}, 1);
    EXPECT_EQ(w.steps(), 3);
    const Field<float> v3 = field(7.f), c3 = field(8.f);
    w.write(1.5, {{"Ca_i", &c3}, {"V", &v3}});  // order may differ, the set may not
    const Field<float> bad = field(0.f);
    EXPECT_THROW(w.write(2.0, {{"V", &bad}}), hw::Error);
  }
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  EXPECT_EQ(read_dataset<double>(f, "/time"), (std::vector<double>{0, 0.5, 1.0, 1.5}));
  std::vector<hsize_t> dims;
  EXPECT_EQ(read_floats(f, "/fields/V/000002", &dims), v[2].vec());
  EXPECT_EQ(read_floats(f, "/fields/V/000003", &dims), field(7.f).vec());
  EXPECT_EQ(read_floats(f, "/fields/Ca_i/000003", &dims), field(8.f).vec());
  EXPECT_LE(H5Lexists(f, "/fields/V/000004", H5P_DEFAULT), 0);
  H5Fclose(f);
  XmlDoc x(dir / "fields.xdmf");
  std::vector<xmlNodePtr> grids;
  find_all(x.root(), "Grid", grids);
  EXPECT_EQ(grids.size(), 5u);  // the collection and 4 steps
  // Not a series of ours, too few steps, another grid: clear errors, the file untouched.
  EXPECT_THROW(hw::io::Hdf5SeriesWriter(dir / "missing.h5", g, hw::io::Hdf5SeriesWriter::Continue{1}), hw::Error);
  EXPECT_THROW(hw::io::Hdf5SeriesWriter(path, g, hw::io::Hdf5SeriesWriter::Continue{9}), hw::Error);
  Grid other = g;
  other.n[0] = 6;
  EXPECT_THROW(hw::io::Hdf5SeriesWriter(path, other, hw::io::Hdf5SeriesWriter::Continue{2}), hw::Error);
  hw::io::Hdf5SeriesWriter again(path, g, hw::io::Hdf5SeriesWriter::Continue{4});
  EXPECT_EQ(again.steps(), 4);
}

// Compressed frames are filtered on every core and stored as whole chunks (the library's
// pipeline, shuffle then deflate, done by the writer): read back through the library they
// are the values written, bit for bit, on a grid of several chunks whose last is short.
TEST(IoHdf5, ChunksFilteredByTheWriterReadBackExactly) {
  ScratchDir dir("h5chunks");
  Grid g;
  g.n = {300, 300, 13};  // 2 planes a chunk (~1 MB): 7 chunks, the last of one plane
  g.h = {0.1, 0.1, 0.1};
  Field<float> v(g);
  for (std::size_t c = 0; c < g.size(); ++c) v[c] = c % 7 == 0 ? 0.f : -85.f + 1e-3f * float(c % 100003);
  const std::string path = dir / "chunks.h5";
  {
    Hdf5SeriesWriter w(path, g, nullptr, 1);
    w.write(0.0, {{"V", &v}});
  }
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  std::vector<hsize_t> dims;
  const auto back = read_floats(f, "/fields/V/000000", &dims);
  ASSERT_EQ(dims, (std::vector<hsize_t>{13, 300, 300}));
  EXPECT_EQ(std::memcmp(back.data(), v.data(), g.size() * sizeof(float)), 0);
  hid_t ds = H5Dopen2(f, "/fields/V/000000", H5P_DEFAULT);
  hsize_t stored = H5Dget_storage_size(ds);
  EXPECT_GT(stored, 0u);
  EXPECT_LT(stored, g.size() * sizeof(float));  // compressed
  H5Dclose(ds);
  H5Fclose(f);
}

// The same series written twice, a second apart, gives the same bytes: no object carries the
// time it was made (HDF5's default), so a run's file is a function of its numbers, and a split
// run's can be compared with one rank's byte for byte.
TEST(IoHdf5, TheSameSeriesWrittenTwiceIsTheSameFile) {
  ScratchDir dir("h5same");
  Grid g;
  g.n = {9, 6, 3};
  g.h = {0.1, 0.1, 0.1};
  Mask m(g, 1);
  m[4] = 0;
  Field<float> v(g);
  const auto write = [&](const std::string& path) {
    Hdf5SeriesWriter w(path, g, &m, /*compression=*/1);
    for (int s = 0; s < 3; ++s) {
      for (std::size_t c = 0; c < g.size(); ++c) v[c] = -80.f + float(c) * 0.5f + float(s);
      w.write(0.25 * s, {{"V", &v}});
    }
  };
  const std::string a = dir / "a.h5", b = dir / "b.h5";
  write(a);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // object times have 1 s steps
  write(b);
  EXPECT_EQ(read_file_bytes(a), read_file_bytes(b));
}
