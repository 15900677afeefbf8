// NRRD images (teem's "nearly raw raster data"): the format the shared heart geometries
// come in, read into one in-memory image type that the VTK reader fills too.
//
// Why our own reader: NRRD is a small text header over a raw or gzip blob; teem/ITK would
// be a heavy dependency for ~400 lines. Everything a header can get wrong is an
// hw::InputError naming file:line (never a crash): unknown keys are ignored as the format
// asks, but types, sizes, encodings and the data length are all checked.
//
// Supported: NRRD0001–0005 magic, attached and detached headers ("data file:"), encodings
// raw and gzip (also "gz"), types (u)char/(u)short/(u)int/float/double under all their
// NRRD spellings, endian little/big, "byte skip" ≥ 0, "line skip", spacings or
// axis-aligned "space directions", "space origin", 3D scalar volumes and 4D volumes whose
// first (fastest) axis holds 3 vector components (the NRRD convention for fibre fields).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hw::io {

enum class ScalarType : std::uint8_t { u8, i8, u16, i16, u32, i32, f32, f64 };

std::size_t scalar_size(ScalarType t);
const char* scalar_name(ScalarType t);  // NRRD spelling: "uint8", "int16", "float", …
bool is_integer(ScalarType t);

// A 3D image of scalars or of vectors, values in native byte order, x fastest, then the
// component index innermost: value(c, i) at bytes[(i·components + c)·size].
struct ImageVolume {
  std::array<int, 3> sizes{1, 1, 1};          // voxels per axis
  std::array<double, 3> spacing{1, 1, 1};     // mm
  std::array<double, 3> origin{0, 0, 0};      // mm (centre of voxel 0, as NRRD and VTK put it)
  int components = 1;                         // 1 (scalar) or 3 (vector)
  ScalarType type = ScalarType::u8;
  std::vector<std::uint8_t> bytes;
  std::string source;                         // file it came from, for messages

  std::size_t voxels() const {
    return std::size_t(sizes[0]) * std::size_t(sizes[1]) * std::size_t(sizes[2]);
  }
  // Value of component c of voxel i (x fastest), converted to double.
  double value(std::size_t i, int c = 0) const;
  double max_value() const;
  // Replaces the data by doubles (readers of text data, writers, tests). Each value must fit
  // t (first_value_out_of_range): converting one that does not is undefined behaviour, so
  // this throws hw::Error instead; readers check first and give a located message.
  void set_values(ScalarType t, const std::vector<double>& v);
};

// Index of the first value that type t cannot hold — NaN, an infinity or a value beyond the
// range of an integer type, or a finite value beyond float's range for f32 — or v.size()
// when all fit (a fraction is truncated toward zero in an integer type, as C++ converts).
std::size_t first_value_out_of_range(ScalarType t, const std::vector<double>& v);

// Reads an attached (.nrrd) or detached (.nhdr + data file) NRRD. Throws hw::InputError
// at file:line for every problem in the header and at file for data problems.
ImageVolume read_nrrd(const std::string& path);

enum class NrrdEncoding { raw, gzip };
struct NrrdWriteOptions {
  NrrdEncoding encoding = NrrdEncoding::raw;
  bool detached = false;     // write PATH (header, .nhdr) and PATH's stem + ".raw"/".raw.gz"
  bool big_endian = false;
};
// Writes img (any type; 3D or 3-component 4D). Throws hw::Error on I/O failure.
void write_nrrd(const std::string& path, const ImageVolume& img, const NrrdWriteOptions& o = {});

// gzip/zlib decompression and gzip compression of whole buffers (NRRD and VTK use them).
// inflate throws hw::Error with `what` in the message on corrupt input.
std::vector<std::uint8_t> gzip_inflate(const std::uint8_t* data, std::size_t n,
                                       const std::string& what);
std::vector<std::uint8_t> gzip_deflate(const std::uint8_t* data, std::size_t n);

}  // namespace hw::io
