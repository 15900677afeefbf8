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
#include "outputs/font.hpp"

extern char** environ;

namespace hw::io {
namespace {


// libpng reports errors through a callback that must not return: keep the message for
// our exception and jump back, instead of libpng's default print to stderr.
thread_local std::string png_message;
void png_error_fn(png_structp png, png_const_charp msg) {
  png_message = msg ? msg : "unknown error";
  png_longjmp(png, 1);
}
void png_warning_fn(png_structp, png_const_charp) {}

}  // namespace

namespace {
constexpr int margin = 10;

int layer_of(const tissue::Grid& g, const SliceSpec& slice) {
  const int w = slice.axis;
  return slice.position < 0 ? g.n[w] / 2
                            : std::clamp(static_cast<int>(std::floor(slice.position / g.h[w])), 0, g.n[w] - 1);
}
}  // namespace

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
  const int title_h = text_height() + 8;
  L.x0 = margin;
  L.y0 = margin + title_h;
  if (opt.colour_bar) {
    L.bar_x0 = L.x0 + L.nu * L.cell_w + 16;
    L.bar_w = 16;
    L.bar_y0 = L.y0;
    L.bar_h = std::max(L.nv * L.cell_h, 120);
  }
  if (opt.scale_bar) {
    L.scale = ScaleBar{L.cell_w / g.h[u], std::max(20, L.nu * L.cell_w / 4)};
    L.scale_x0 = L.x0;
    L.scale_y0 = L.y0 + L.nv * L.cell_h + 8;
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
  const SliceView view{&g, &f, mask, slice.axis, layer_of(g, slice), opt.vmin, opt.vmax, L.cell_w, L.cell_h};
  const ColourBar bar{opt.vmin, opt.vmax, opt.label, L.bar_w, L.bar_h};
  int width = L.x0 + view.width() + margin;
  int height = L.y0 + view.height() + margin;
  if (opt.colour_bar) {
    width = std::max(width, L.bar_x0 + bar.width() + margin);
    height = std::max(height, L.bar_y0 + L.bar_h + text_height() / 2 + margin);
  }
  if (opt.scale_bar) {
    width = std::max(width, L.scale_x0 + L.scale.width() + margin);
    height = std::max(height, L.scale_y0 + ScaleBar::height() + margin);
  }
  width = std::max(width, L.x0 + text_width(opt.title) + margin);
  Image img(width, height);
  draw_text(img, L.x0, margin, opt.title);
  draw_slice(img, L.x0, L.y0, view);
  if (opt.colour_bar) draw_colour_bar(img, L.bar_x0, L.bar_y0, bar);
  if (opt.scale_bar) draw_scale_bar(img, L.scale_x0, L.scale_y0, L.scale);
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
