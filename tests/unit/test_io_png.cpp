// PNG snapshots read back through libpng: size, colours of known cells, colour bar.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "core/error.hpp"
#include "outputs/png_writer.hpp"
#include "test_io_support.hpp"

using namespace hw;
using namespace hw::io;
using namespace hw::io::testing;
using hw::tissue::Field;
using hw::tissue::Grid;
using hw::tissue::Mask;

TEST(IoPng, ViridisEndsAndMiddleMatchThePublishedColours) {
  EXPECT_EQ(viridis(0.0), (Rgb{0x44, 0x01, 0x54}));
  EXPECT_EQ(viridis(0.5), (Rgb{0x21, 0x90, 0x8C}));
  EXPECT_EQ(viridis(1.0), (Rgb{0xFD, 0xE7, 0x25}));
  EXPECT_EQ(viridis(-3.0), viridis(0.0));
  // Perceptual ordering: luminance rises monotonically along the map.
  double last = -1;
  for (int i = 0; i <= 64; ++i) {
    const Rgb c = viridis(i / 64.0);
    const double y = 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b;
    EXPECT_GT(y, last - 0.6) << i;
    last = y;
  }
}

TEST(IoPng, SnapshotReadsBackWithFieldColoursGreyNonTissueAndColourBar) {
  ScratchDir dir("png");
  Grid g;
  g.n = {20, 10, 1};
  g.h = {0.2, 0.2, 1};
  Field<float> v(g);
  Mask m(g, 1);
  // Left half resting (−90 mV), right half excited (40 mV), one non-tissue cell, one NaN.
  for (int j = 0; j < 10; ++j)
    for (int i = 0; i < 20; ++i) v[g.index(i, j, 0)] = i < 10 ? -90.f : 40.f;
  m[g.index(5, 5, 0)] = 0;
  v[g.index(15, 2, 0)] = std::numeric_limits<float>::quiet_NaN();
  SnapshotOptions opt;
  opt.title = "t=12.5 ms";
  const std::string path = dir / "snap.png";
  write_png(path, render_snapshot(g, v, &m, {}, opt));
  const Image img = read_png(path);
  const SnapshotLayout L = snapshot_layout(g, {}, opt);
  EXPECT_GE(L.nu * L.cell_w, opt.min_size);  // small grids are upscaled
  EXPECT_EQ(L.cell_w, L.cell_h);             // square cells stay square
  ASSERT_GT(img.width, L.bar_x0 + L.bar_w);
  ASSERT_GE(img.height, L.y0 + L.nv * L.cell_h);
  auto pixel_of = [&](int i, int j) {
    return img.at(L.x0 + i * L.cell_w + L.cell_w / 2,
                  L.y0 + (L.nv - 1 - j) * L.cell_h + L.cell_h / 2);  // y up
  };
  EXPECT_EQ(pixel_of(2, 1), viridis(0.0));
  EXPECT_EQ(pixel_of(17, 8), viridis(1.0));
  EXPECT_EQ(pixel_of(5, 5), non_tissue_grey);
  EXPECT_EQ(pixel_of(15, 2), nan_grey);
  // Colour bar: top near vmax, bottom near vmin.
  const Rgb top = img.at(L.bar_x0 + 8, L.bar_y0), bottom = img.at(L.bar_x0 + 8, L.bar_y0 + L.bar_h - 1);
  EXPECT_NEAR(top.g, viridis(1.0).g, 3);
  EXPECT_NEAR(bottom.b, viridis(0.0).b, 3);
  // Tick labels were drawn (black pixels right of the bar).
  int ink = 0;
  for (int y = L.bar_y0; y < L.bar_y0 + L.bar_h; ++y)
    for (int x = L.bar_x0 + L.bar_w; x < img.width; ++x) ink += img.at(x, y) == Rgb{0, 0, 0};
  EXPECT_GT(ink, 50);
  if (const char* keep = std::getenv("HW_KEEP_PNG")) std::filesystem::copy_file(
      path, keep, std::filesystem::copy_options::overwrite_existing);
}

TEST(IoPng, SliceOfA3dFieldAndAnisotropicCells) {
  Grid g;
  g.n = {8, 6, 5};
  g.h = {0.1, 0.1, 0.3};
  Field<float> v(g);
  // v = k (the z layer), so an x-z slice shows rows by height and an x-y slice one colour.
  for (int k = 0; k < 5; ++k)
    for (int j = 0; j < 6; ++j)
      for (int i = 0; i < 8; ++i) v[g.index(i, j, k)] = float(k);
  SnapshotOptions opt;
  opt.vmin = 0;
  opt.vmax = 4;
  opt.colour_bar = false;
  const SliceSpec xz{1, 0.25};
  const Image img = render_snapshot(g, v, nullptr, xz, opt);
  const SnapshotLayout L = snapshot_layout(g, xz, opt);
  EXPECT_EQ(L.nu, 8);
  EXPECT_EQ(L.nv, 5);
  EXPECT_EQ(L.cell_h, 3 * L.cell_w);  // 0.3 mm cells are three times as tall
  EXPECT_EQ(img.at(L.x0 + 1, L.y0 + 1), viridis(1.0));                     // top row: k = 4
  EXPECT_EQ(img.at(L.x0 + 1, L.y0 + L.nv * L.cell_h - 2), viridis(0.0));   // bottom: k = 0
  const Image xy = render_snapshot(g, v, nullptr, {2, 0.95}, opt);  // layer k = 3
  const SnapshotLayout Lxy = snapshot_layout(g, {2, 0.95}, opt);
  EXPECT_EQ(xy.at(Lxy.x0 + 2, Lxy.y0 + 2), viridis(0.75));
  EXPECT_THROW(render_snapshot(g, v, nullptr, {3, 0}, opt), Error);
}

TEST(IoPng, SeriesNumbersFramesAndMovieNeedsFfmpeg) {
  ScratchDir dir("pngs");
  Grid g;
  g.n = {4, 4, 1};
  Field<float> v(g, -80.f);
  PngSeriesWriter s(dir / "png", "V", g, nullptr, {}, {});
  s.write(v, "t=0 ms");
  s.write(v, "t=1 ms");
  EXPECT_TRUE(std::filesystem::exists(dir / "png/V_00000.png"));
  EXPECT_TRUE(std::filesystem::exists(dir / "png/V_00001.png"));
  std::string msg;
  const bool made = s.movie(10, &msg);
  if (on_path("ffmpeg")) {
    EXPECT_TRUE(made) << msg;
    EXPECT_TRUE(std::filesystem::exists(dir / "png/V.mp4"));
  } else {
    EXPECT_FALSE(made);
    EXPECT_NE(msg.find("ffmpeg"), std::string::npos) << msg;
  }
}

TEST(IoPng, ReadingANonPngIsAnError) {
  ScratchDir dir("png_bad");
  {
    std::FILE* f = std::fopen((dir / "x.png").c_str(), "w");
    std::fputs("not a png at all", f);
    std::fclose(f);
  }
  EXPECT_THROW(read_png(dir / "x.png"), Error);
}
