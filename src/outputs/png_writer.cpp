// PNG snapshots: colormap, bitmap font, layout, libpng I/O, ffmpeg movie. See png_writer.hpp.
#include "outputs/png_writer.hpp"

#include <png.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/atomic_file.hpp"

extern char** environ;

namespace hw::io {
namespace {

// viridis (van der Walt & Smith, 2015; CC0) sampled at t = 0, 1/8, …, 1: the nine
// control points published as its 9-colour palette.
constexpr std::array<Rgb, 9> viridis_stops{{{0x44, 0x01, 0x54},
                                            {0x47, 0x2D, 0x7B},
                                            {0x3B, 0x52, 0x8B},
                                            {0x2C, 0x72, 0x8E},
                                            {0x21, 0x90, 0x8C},
                                            {0x27, 0xAD, 0x81},
                                            {0x5D, 0xC8, 0x63},
                                            {0xAA, 0xDC, 0x32},
                                            {0xFD, 0xE7, 0x25}}};

// A 3×5 (m: 5×5) bitmap font: each glyph is five rows, bit (w−1−x) of a row is column x.
struct Glyph {
  char c;
  int w;
  std::array<std::uint8_t, 5> rows;
};
constexpr Glyph font[] = {
    {'0', 3, {7, 5, 5, 5, 7}}, {'1', 3, {2, 6, 2, 2, 7}}, {'2', 3, {7, 1, 7, 4, 7}},
    {'3', 3, {7, 1, 7, 1, 7}}, {'4', 3, {5, 5, 7, 1, 1}}, {'5', 3, {7, 4, 7, 1, 7}},
    {'6', 3, {7, 4, 7, 5, 7}}, {'7', 3, {7, 1, 1, 1, 1}}, {'8', 3, {7, 5, 7, 5, 7}},
    {'9', 3, {7, 5, 7, 1, 7}}, {'-', 3, {0, 0, 7, 0, 0}}, {'.', 1, {0, 0, 0, 0, 1}},
    {'+', 3, {0, 2, 7, 2, 0}}, {'=', 3, {0, 7, 0, 7, 0}}, {' ', 2, {0, 0, 0, 0, 0}},
    {'m', 5, {0, 26, 21, 21, 21}}, {'V', 3, {5, 5, 5, 5, 2}}, {'s', 3, {0, 3, 6, 1, 6}},
    {'t', 3, {2, 7, 2, 2, 3}},     {'e', 3, {0, 7, 7, 4, 7}}, {'/', 3, {1, 1, 2, 4, 4}},
};

const Glyph* glyph(char c) {
  for (const auto& g : font)
    if (g.c == c) return &g;
  return nullptr;
}

constexpr int font_scale = 2;

// libpng reports errors through a callback that must not return: keep the message for
// our exception and jump back, instead of libpng's default print to stderr.
thread_local std::string png_message;
void png_error_fn(png_structp png, png_const_charp msg) {
  png_message = msg ? msg : "unknown error";
  png_longjmp(png, 1);
}
void png_warning_fn(png_structp, png_const_charp) {}

int text_width(const std::string& s) {
  int w = 0;
  for (char c : s)
    if (const Glyph* g = glyph(c)) w += (g->w + 1) * font_scale;
  return w > 0 ? w - font_scale : 0;
}

// Draws s with its top-left at (x, y); characters without a glyph are skipped.
void draw_text(Image& img, int x, int y, const std::string& s, Rgb colour) {
  for (char c : s) {
    const Glyph* g = glyph(c);
    if (!g) continue;
    for (int r = 0; r < 5; ++r)
      for (int q = 0; q < g->w; ++q)
        if (g->rows[r] >> (g->w - 1 - q) & 1)
          for (int dy = 0; dy < font_scale; ++dy)
            for (int dx = 0; dx < font_scale; ++dx)
              img.set(x + q * font_scale + dx, y + r * font_scale + dy, colour);
    x += (g->w + 1) * font_scale;
  }
}

// Tick values at a "nice" step (1, 2 or 5 × 10^k), the one giving closest to six ticks.
std::vector<double> nice_ticks(double lo, double hi) {
  std::vector<double> t;
  const double span = hi - lo;
  if (!(span > 0)) return {lo};
  const double mag = std::pow(10.0, std::floor(std::log10(span / 6)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (std::abs(span / (m * mag) - 6) < std::abs(span / step - 6)) step = m * mag;
  for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + 1e-9 * span; v += step)
    t.push_back(std::abs(v) < 1e-12 * span ? 0.0 : v);
  return t;
}

std::string tick_label(double v) {
  std::string s = fmt::format("{:.4g}", v);
  return s;
}

// The two in-plane axes (u across, v up) for a slice normal to `axis`.
std::array<int, 2> plane_axes(int axis) {
  return axis == 2 ? std::array<int, 2>{0, 1} : axis == 1 ? std::array<int, 2>{0, 2}
                                                          : std::array<int, 2>{1, 2};
}

}  // namespace

Rgb viridis(double t) {
  if (!(t > 0)) t = 0;  // also NaN
  if (t > 1) t = 1;
  const double x = t * 8;
  const int i = std::min(7, static_cast<int>(x));
  const double f = x - i;
  const Rgb a = viridis_stops[i], b = viridis_stops[i + 1];
  auto mix = [f](int p, int q) {
    return static_cast<std::uint8_t>(std::lround(p + (q - p) * f));
  };
  return {mix(a.r, b.r), mix(a.g, b.g), mix(a.b, b.b)};
}

Image::Image(int w, int h, Rgb fill) : width(w), height(h), rgb(std::size_t(w) * h * 3) {
  for (std::size_t p = 0; p < rgb.size(); p += 3) {
    rgb[p] = fill.r;
    rgb[p + 1] = fill.g;
    rgb[p + 2] = fill.b;
  }
}

Rgb Image::at(int x, int y) const {
  if (x < 0 || y < 0 || x >= width || y >= height) return {};
  const std::size_t p = (std::size_t(y) * width + x) * 3;
  return {rgb[p], rgb[p + 1], rgb[p + 2]};
}

void Image::set(int x, int y, Rgb c) {
  if (x < 0 || y < 0 || x >= width || y >= height) return;
  const std::size_t p = (std::size_t(y) * width + x) * 3;
  rgb[p] = c.r;
  rgb[p + 1] = c.g;
  rgb[p + 2] = c.b;
}

SnapshotLayout snapshot_layout(const tissue::Grid& g, const SliceSpec& slice,
                               const SnapshotOptions& opt) {
  if (slice.axis < 0 || slice.axis > 2)
    throw Error(fmt::format("snapshot: slice axis {} must be 0, 1 or 2", slice.axis));
  const auto [u, v] = plane_axes(slice.axis);
  SnapshotLayout L;
  L.nu = g.n[u];
  L.nv = g.n[v];
  // Pixels per cell ∝ cell size in mm, scaled so the longer side reaches min_size.
  const double hmin = std::min(g.h[u], g.h[v]);
  const double ru = g.h[u] / hmin, rv = g.h[v] / hmin;
  const double longest = std::max(L.nu * ru, L.nv * rv);
  double base = std::max(1.0, std::ceil(opt.min_size / longest));
  base = std::max(1.0, std::min(base, std::floor(opt.max_size / longest)));
  L.cell_w = std::max(1, static_cast<int>(std::lround(base * ru)));
  L.cell_h = std::max(1, static_cast<int>(std::lround(base * rv)));
  const int margin = 10, title_h = 5 * font_scale + 8;
  L.x0 = margin;
  L.y0 = margin + title_h;
  if (opt.colour_bar) {
    L.bar_x0 = L.x0 + L.nu * L.cell_w + 16;
    L.bar_w = 16;
    L.bar_y0 = L.y0;
    L.bar_h = std::max(L.nv * L.cell_h, 120);
  }
  return L;
}

Image render_snapshot(const tissue::Grid& g, const tissue::Field<float>& f,
                      const tissue::Mask* mask, const SliceSpec& slice,
                      const SnapshotOptions& opt) {
  if (f.size() != g.size())
    throw Error(fmt::format("snapshot: field has {} values, the grid {} cells", f.size(),
                            g.size()));
  const SnapshotLayout L = snapshot_layout(g, slice, opt);
  const auto [u, v] = plane_axes(slice.axis);
  const int w = slice.axis;
  const int layer =
      slice.position < 0
          ? g.n[w] / 2
          : std::clamp(static_cast<int>(std::floor(slice.position / g.h[w])), 0, g.n[w] - 1);
  const int margin = 10;
  int width = L.x0 + L.nu * L.cell_w + margin;
  int height = L.y0 + L.nv * L.cell_h + margin;
  std::vector<double> ticks;
  int label_w = 0;
  if (opt.colour_bar) {
    ticks = nice_ticks(opt.vmin, opt.vmax);
    for (double t : ticks) label_w = std::max(label_w, text_width(tick_label(t)));
    width = std::max(width, L.bar_x0 + L.bar_w + 6 + label_w + margin);
    width = std::max(width, L.bar_x0 + text_width(opt.label) + margin);
    height = std::max(height, L.bar_y0 + L.bar_h + 5 * font_scale + margin);
  }
  width = std::max(width, L.x0 + text_width(opt.title) + margin);
  Image img(width, height);
  const Rgb ink{0, 0, 0};
  draw_text(img, L.x0, margin, opt.title, ink);
  const double span = opt.vmax - opt.vmin;
  // Field: cell (a, b) of the plane fills a cell_w × cell_h block; b grows upwards.
  for (int b = 0; b < L.nv; ++b)
    for (int a = 0; a < L.nu; ++a) {
      std::array<int, 3> ijk{};
      ijk[u] = a;
      ijk[v] = b;
      ijk[w] = layer;
      const std::size_t c = g.index(ijk[0], ijk[1], ijk[2]);
      Rgb col;
      if (!tissue::is_tissue(mask, c)) col = non_tissue_grey;
      else if (std::isnan(f[c])) col = nan_grey;
      else col = viridis(span > 0 ? (f[c] - opt.vmin) / span : 0.5);
      const int px = L.x0 + a * L.cell_w, py = L.y0 + (L.nv - 1 - b) * L.cell_h;
      for (int y = 0; y < L.cell_h; ++y)
        for (int x = 0; x < L.cell_w; ++x) img.set(px + x, py + y, col);
    }
  if (opt.colour_bar) {
    // Bar: vmax at the top row, vmin at the bottom.
    for (int y = 0; y < L.bar_h; ++y) {
      const Rgb col = viridis(1.0 - (y + 0.5) / L.bar_h);
      for (int x = 0; x < L.bar_w; ++x) img.set(L.bar_x0 + x, L.bar_y0 + y, col);
    }
    draw_text(img, L.bar_x0, L.bar_y0 - 5 * font_scale - 8, opt.label, ink);
    for (double t : ticks) {
      const int y = L.bar_y0 + static_cast<int>(std::lround((1.0 - (t - opt.vmin) / span) *
                                                            (L.bar_h - 1)));
      for (int x = 0; x < 4; ++x) img.set(L.bar_x0 + L.bar_w + x, y, ink);
      draw_text(img, L.bar_x0 + L.bar_w + 6, y - (5 * font_scale) / 2, tick_label(t), ink);
    }
  }
  return img;
}

void write_png(const std::string& path, const Image& img) {
  if (img.width <= 0 || img.height <= 0) throw Error("write_png: empty image");
  namespace fs = std::filesystem;
  if (fs::path(path).has_parent_path()) ensure_directory(fs::path(path).parent_path());
  // Encode to memory, then write atomically so a viewer never sees half a frame.
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, png_error_fn,
                                            png_warning_fn);
  if (!png) throw Error("libpng: cannot create a writer");
  png_infop info = png_create_info_struct(png);
  std::string buf;
  if (!info || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    throw Error(fmt::format("libpng: cannot encode {}: {}", path, png_message));
  }
  png_set_write_fn(
      png, &buf,
      [](png_structp p, png_bytep data, png_size_t n) {
        static_cast<std::string*>(png_get_io_ptr(p))->append(reinterpret_cast<char*>(data), n);
      },
      nullptr);
  png_set_IHDR(png, info, img.width, img.height, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int y = 0; y < img.height; ++y)
    png_write_row(png, const_cast<png_bytep>(img.rgb.data() + std::size_t(y) * img.width * 3));
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  write_file_atomic(path, buf, /*durable=*/false);
}

Image read_png(const std::string& path) {
  std::FILE* fp = std::fopen(path.c_str(), "rb");
  if (!fp) throw Error(fmt::format("cannot open {}", path));
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, nullptr, png_error_fn,
                                           png_warning_fn);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  Image img;
  if (!png || !info || setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    std::fclose(fp);
    throw Error(fmt::format("libpng: cannot decode {}: {}", path, png_message));
  }
  png_init_io(png, fp);
  png_read_info(png, info);
  // Normalise to 8-bit RGB whatever the file holds.
  png_set_strip_16(png);
  png_set_strip_alpha(png);
  png_set_palette_to_rgb(png);
  png_set_gray_to_rgb(png);
  png_set_expand_gray_1_2_4_to_8(png);
  png_read_update_info(png, info);
  const int w = static_cast<int>(png_get_image_width(png, info));
  const int h = static_cast<int>(png_get_image_height(png, info));
  img = Image(w, h);
  std::vector<png_bytep> rows(h);
  for (int y = 0; y < h; ++y) rows[y] = img.rgb.data() + std::size_t(y) * w * 3;
  png_read_image(png, rows.data());
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  std::fclose(fp);
  return img;
}

PngSeriesWriter::PngSeriesWriter(std::string dir, std::string stem, tissue::Grid g,
                                 const tissue::Mask* mask, SliceSpec slice, SnapshotOptions opt,
                                 int first_frame)
    : dir_(std::move(dir)),
      stem_(std::move(stem)),
      grid_(g),
      mask_(mask),
      slice_(slice),
      opt_(std::move(opt)),
      count_(first_frame) {
  ensure_directory(dir_);
  snapshot_layout(grid_, slice_, opt_);  // validates the axis before the run
}

std::string PngSeriesWriter::write(const tissue::Field<float>& f, const std::string& title) {
  SnapshotOptions o = opt_;
  if (!title.empty()) o.title = title;
  const std::string path =
      (std::filesystem::path(dir_) / fmt::format("{}_{:05d}.png", stem_, count_)).string();
  write_png(path, render_snapshot(grid_, f, mask_, slice_, o));
  ++count_;
  return path;
}

bool on_path(const std::string& name) {
  const char* p = std::getenv("PATH");
  if (!p) return false;
  std::string path = p;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    const std::string dir = path.substr(start, end - start);
    const std::string cand = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(cand.c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

bool PngSeriesWriter::movie(double fps, std::string* message) const {
  auto say = [&](std::string m) {
    if (message) *message = std::move(m);
    return false;
  };
  if (count_ == 0) return say("movie: no frames were written");
  if (!on_path("ffmpeg")) return say("movie: skipped, ffmpeg is not on the PATH");
  namespace fs = std::filesystem;
  const std::string pattern = (fs::path(dir_) / (stem_ + "_%05d.png")).string();
  const std::string out = (fs::path(dir_) / (stem_ + ".mp4")).string();
  const std::string rate = fmt::format("{:g}", fps > 0 ? fps : 10.0);
  // argv, not a shell: folder names need no quoting. Even sizes for yuv420p.
  std::vector<std::string> args = {"ffmpeg", "-nostdin", "-y", "-loglevel", "error", "-framerate", rate,
                                   "-i", pattern, "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2",
                                   "-pix_fmt", "yuv420p", out};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid;
  if (posix_spawnp(&pid, "ffmpeg", nullptr, nullptr, argv.data(), environ) != 0)
    return say("movie: could not start ffmpeg");
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return say("movie: lost track of ffmpeg");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return say(fmt::format("movie: ffmpeg failed (status {})", status));
  if (message) *message = "movie: wrote " + out;
  return true;
}

}  // namespace hw::io
