// VTK image data readers: XML ImageData (.vti) and legacy STRUCTURED_POINTS (.vtk), into
// the same ImageVolume as the NRRD reader, so a geometry or fibre field can come from
// ParaView/VTK tools as well as from NRRD.
//
// Why a small reader of our own: the VTK library is huge; image data is a header plus one
// array. Supported: .vti with one <Piece>, the first PointData (or CellData) array, format
// "ascii" or "binary" (inline base64, header_type UInt32/UInt64, no compressor or
// zlib compressor); appended data is refused with a clear error. Legacy .vtk: ASCII or
// BINARY (big-endian), SCALARS (1 or 3 components) or VECTORS, point or cell data. Every
// problem is an hw::InputError naming file:line.
#pragma once

#include <string>

#include "formats/nrrd.hpp"

namespace hw::io {

ImageVolume read_vti(const std::string& path);
ImageVolume read_legacy_vtk(const std::string& path);

// By extension: .nrrd/.nhdr → read_nrrd, .vti → read_vti, .vtk → read_legacy_vtk; any
// other extension is an InputError at `path`.
ImageVolume read_image(const std::string& path);

}  // namespace hw::io
