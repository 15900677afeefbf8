// PNG snapshots read back through libpng: size, colours of known cells, colour bar.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "core/error.hpp"
#include "outputs/font.hpp"
#include "outputs/map_picture.hpp"
#include "outputs/png_writer.hpp"
#include "outputs/trace_plot.hpp"
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

TEST(IoPng, SnapshotHasAScaleBarOfARoundLengthInMm) {
  Grid g;
  g.n = {40, 20, 1};
  g.h = {0.25, 0.25, 1};  // 10 × 5 mm
  Field<float> v(g, -90.f);
  const SnapshotOptions opt;
  const Image img = render_snapshot(g, v, nullptr, {}, opt);
  const SnapshotLayout L = snapshot_layout(g, {}, opt);
  // A quarter of the width at most, of 1, 2 or 5 × 10^k mm: 2 mm of a 10 mm sheet.
  EXPECT_DOUBLE_EQ(L.scale.mm(), 2.0);
  EXPECT_EQ(L.scale.length_px(), 2 * L.nu * L.cell_w / 10);
  // The bar is black over its length, white just past it.
  const int mid = L.scale_y0 + text_height() / 2;
  for (int x = L.scale_x0; x < L.scale_x0 + L.scale.length_px(); ++x) ASSERT_EQ(img.at(x, mid), ink) << x;
  EXPECT_EQ(img.at(L.scale_x0 + L.scale.length_px() + 2, mid), (Rgb{255, 255, 255}));
  EXPECT_GE(img.height, L.scale_y0 + text_height());
}

TEST(IoPng, TracePlotDrawsEachTraceWhereItsValuesAreWithALegend) {
  ScratchDir dir("plot");
  TracePlot p;
  p.title = "probes";
  for (int i = 0; i <= 100; ++i) p.t.push_back(i * 0.5);  // 0 … 50 ms
  TracePanel panel{"V (mV)", {{"flat", {}}, {"ramp", {}}}};
  for (double t : p.t) {
    panel.traces[0].y.push_back(-80);
    panel.traces[1].y.push_back(-80 + 2 * t);  // −80 … 20 mV
  }
  p.panels.push_back(panel);
  write_png(dir / "p.png", render_trace_plot(p));
  const Image img = read_png(dir / "p.png");
  const auto frames = trace_plot_frames(p);
  ASSERT_EQ(frames.size(), 1u);
  const PanelFrame& f = frames[0];
  EXPECT_EQ(img.width, p.width);
  EXPECT_LT(f.v0, -80);  // the range holds every value, with room
  EXPECT_GT(f.v1, 20);
  // The flat line at −80 mV and the ramp at t = 30 ms (−20 mV) in their colours.
  EXPECT_EQ(img.at(int(f.px(10)), int(f.py(-80))), trace_colour(0));
  EXPECT_EQ(img.at(int(f.px(30)), int(f.py(-20))), trace_colour(1));
  // Nothing of the ramp's colour far from it (above the line at the start).
  EXPECT_NE(img.at(int(f.px(2)), int(f.py(10))), trace_colour(1));
  // A legend right of the panel: a swatch of each colour.
  int swatches = 0;
  for (int x = f.x0 + f.w + 1; x < img.width; ++x)
    for (int y = f.y0; y < f.y0 + 3 * text_height(); ++y) swatches += img.at(x, y) == trace_colour(1);
  EXPECT_GT(swatches, 18);
  // Tick labels and the axis names were drawn left of and below the panel (dark pixels:
  // the text is anti-aliased).
  const auto dark = [&](int x, int y) { const Rgb c = img.at(x, y); return c.r < 100 && c.g < 100 && c.b < 100; };
  int ink_left = 0, ink_below = 0;
  for (int y = f.y0; y < f.y0 + f.h; ++y)
    for (int x = 0; x < f.x0 - 5; ++x) ink_left += dark(x, y);
  for (int y = f.y0 + f.h + 3; y < img.height; ++y)
    for (int x = f.x0; x < f.x0 + f.w; ++x) ink_below += dark(x, y);
  EXPECT_GT(ink_left, 100);
  EXPECT_GT(ink_below, 100);
  // A trace of the wrong length is an error, as is no panel.
  p.panels[0].traces[0].y.pop_back();
  EXPECT_THROW(render_trace_plot(p), Error);
  EXPECT_THROW(render_trace_plot(TracePlot{}), Error);
  if (const char* keep = std::getenv("HW_KEEP_PNG_DIR"))
    std::filesystem::copy_file(dir / "p.png", std::string(keep) + "/trace_plot.png",
                               std::filesystem::copy_options::overwrite_existing);
}

TEST(IoPng, TraceCsvParsesTheColumnsWeWrite) {
  std::vector<std::string> names;
  std::vector<double> t;
  std::vector<std::vector<double>> cols;
  parse_trace_csv("t_ms,a_mV,b_mV\n0,1,2\n0.5,nan,4\n", names, t, cols);
  EXPECT_EQ(names, (std::vector<std::string>{"a_mV", "b_mV"}));
  EXPECT_EQ(t, (std::vector<double>{0, 0.5}));
  EXPECT_TRUE(std::isnan(cols[0][1]));
  EXPECT_EQ(cols[1][1], 4);
  EXPECT_THROW(parse_trace_csv("t_ms,a\n0,x\n", names, t, cols), Error);
  EXPECT_THROW(parse_trace_csv("t_ms,a\n0,1,2\n", names, t, cols), Error);
}

TEST(IoPng, ActivationMapIn3dIsThreeSlicesThroughTheEarliestCell) {
  ScratchDir dir("map3d");
  Grid g;
  g.n = {12, 10, 8};
  g.h = {0.5, 0.5, 0.5};
  g.origin = {-3, 2, 10};
  Mask m(g, 1);
  m[g.index(0, 0, 0)] = 0;
  // Activation spreading from cell (3, 6, 2) at 1 mm/ms.
  Field<float> act(g);
  for (int k = 0; k < 8; ++k)
    for (int j = 0; j < 10; ++j)
      for (int i = 0; i < 12; ++i)
        act[g.index(i, j, k)] = float(0.5 * std::sqrt((i - 3) * (i - 3) + (j - 6) * (j - 6) + (k - 2) * (k - 2)));
  MapPictureOptions o;
  o.vmax = 6;
  write_png(dir / "a.png", render_map_picture(g, act, &m, o));
  const Image img = read_png(dir / "a.png");
  const MapLayout L = map_layout(g, act, &m, o);
  EXPECT_EQ(img.width, L.width);
  EXPECT_EQ(img.height, L.height);
  EXPECT_EQ(L.through, (std::array<int, 3>{3, 6, 2}));
  ASSERT_EQ(L.panels.size(), 3u);
  // Each panel shows the earliest cell in viridis(0) where the slices cross.
  const std::array<std::array<int, 2>, 3> at{{{3, 6}, {3, 2}, {6, 2}}};  // (u, v) in x-y, x-z, y-z
  for (std::size_t p = 0; p < 3; ++p) {
    const MapPanel& P = L.panels[p];
    EXPECT_EQ(P.layer, L.through[P.axis]);
    const int x = P.x0 + at[p][0] * P.cell_w + P.cell_w / 2, y = P.y0 + (P.nv - 1 - at[p][1]) * P.cell_h + P.cell_h / 2;
    EXPECT_EQ(img.at(x, y), viridis(0.0)) << p;
  }
  // Panels side by side without overlap, sized by the grid (y-z: 10 × 8 cells).
  EXPECT_GT(L.panels[1].x0, L.panels[0].x0 + L.panels[0].nu * L.panels[0].cell_w);
  EXPECT_EQ(L.panels[2].nu, 10);
  EXPECT_EQ(L.panels[2].nv, 8);
  // The scale bar: black along its length.
  const ScaleBar sb{L.px_per_mm, std::max(20, L.panels[0].nu * L.panels[0].cell_w / 4)};
  for (int x = L.scale_x0; x < L.scale_x0 + sb.length_px(); ++x)
    ASSERT_EQ(img.at(x, L.scale_y0 + text_height() / 2), ink) << x;
  // A 2D map is one panel with the same parts.
  Grid g2 = g;
  g2.n[2] = 1;
  Field<float> a2(g2, 1.f);
  EXPECT_EQ(map_layout(g2, a2, nullptr, o).panels.size(), 1u);
  if (const char* keep = std::getenv("HW_KEEP_PNG_DIR"))
    std::filesystem::copy_file(dir / "a.png", std::string(keep) + "/activation3d.png",
                               std::filesystem::copy_options::overwrite_existing);
}
