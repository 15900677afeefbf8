// PNG snapshots of a 2D field or a slice of a 3D one, and a movie of them with ffmpeg.
//
// Why built in: a quick look at a run must need no ParaView. Pictures use viridis (a
// perceptually uniform colormap; the table is linear interpolation between its nine
// published control points), a fixed value range (−90..40 mV by default, so frames of a
// movie compare), non-tissue cells in light grey and NaN (e.g. never activated) in dark
// grey, cells upscaled to square-ish pixels in proportion to their size in mm, y up, and
// a colour bar with tick labels (outputs/font.hpp: a built-in font, no font library) and a
// scale bar in mm under the field.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mesh/grid.hpp"
#include "outputs/image.hpp"
#include "outputs/picture_parts.hpp"

namespace hw::io {

struct SnapshotOptions {
  double vmin = -90, vmax = 40;  // colour range; values outside are clamped
  std::string label = "V (mV)";  // above the colour bar: the variable and its units
  std::string title;             // top-left, e.g. "t=12.5 ms"
  int min_size = 384;            // the longer side of the field picture reaches at least this
  int max_size = 2048;           // … and at most this (unless one pixel per cell exceeds it)
  bool colour_bar = true;
  bool scale_bar = true;         // a bar of a round length in mm under the field
};

// Which cells a picture shows: the plane normal to `axis` through `position` mm (< 0: the
// middle). A 2D grid (nz = 1) is shown whole with axis 2.
struct SliceSpec {
  int axis = 2;
  double position = -1;
};

// Renders the slice. Throws hw::Error on a size mismatch or a bad axis.
Image render_snapshot(const tissue::Grid& g, const tissue::Field<float>& f,
                      const tissue::Mask* mask, const SliceSpec& slice,
                      const SnapshotOptions& opt = {});

// Geometry of what render_snapshot drew, so tests can find a cell's pixel.
struct SnapshotLayout {
  int x0 = 0, y0 = 0;        // top-left of the field picture
  int cell_w = 1, cell_h = 1;  // pixels per cell
  int nu = 1, nv = 1;        // cells across and up
  int bar_x0 = 0, bar_y0 = 0, bar_w = 0, bar_h = 0;
  int scale_x0 = 0, scale_y0 = 0;  // top-left of the scale bar (when drawn)
  ScaleBar scale;                  // its length
};
SnapshotLayout snapshot_layout(const tissue::Grid& g, const SliceSpec& slice,
                               const SnapshotOptions& opt = {});

void write_png(const std::string& path, const Image& img);  // throws hw::Error
Image read_png(const std::string& path);                    // 8-bit RGB(A)/grey; throws

// Frames `dir`/`stem`_NNNNN.png; movie() runs ffmpeg on them when it is on the PATH.
class PngSeriesWriter {
 public:
  // first_frame: the number of the next frame (a restarted run continues the numbering).
  PngSeriesWriter(std::string dir, std::string stem, tissue::Grid g, const tissue::Mask* mask,
                  SliceSpec slice, SnapshotOptions opt, int first_frame = 0);
  // Writes the next frame; returns its path. title: drawn top-left (e.g. "t=12.5 ms").
  std::string write(const tissue::Field<float>& f, const std::string& title = "");
  int frames() const { return count_; }
  // The options of the following frames (e.g. the colour range, fixed after the first one).
  SnapshotOptions& options() { return opt_; }
  // Encodes the frames as `dir`/`stem`.mp4 at `fps` frames per second. Returns false and
  // sets *message (ffmpeg absent, failed, or no frames) without throwing.
  bool movie(double fps, std::string* message) const;

 private:
  std::string dir_, stem_;
  tissue::Grid grid_;
  const tissue::Mask* mask_;
  SliceSpec slice_;
  SnapshotOptions opt_;
  int count_ = 0;
};

// True when an executable named `name` is on the PATH.
bool on_path(const std::string& name);

}  // namespace hw::io
