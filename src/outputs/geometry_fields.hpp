// The geometry's own fields as one image, so that a modeller can look at the fibres and
// the ventricular coordinates in ParaView before trusting a run with them.
//
// Why a file of its own, written once: the fibres and coordinates do not change during a
// run, so writing them beside every V frame would only repeat them. output.fields names
// them beside the states ("fibres", "transmural", "apex-base"); the reader sorts them out.
#pragma once

#include <string>

#include "tissue/case.hpp"

namespace hw::io {

// Builds the case's geometry (with its ventricular coordinates when asked for) and writes
// <output.directory>/geometry.vti: CellData "fibres" (3 components, unit, 0 off the
// tissue), "transmural" (0 endo … 1 epi), "apex-base" (0 apex … 1 base) as listed in
// c.output.geometry_fields, and "tissue". Returns the path. Throws InputError at
// c.output.loc for "fibres" without fibres, and the geometry's errors.
std::string write_geometry_fields(const tissue::TissueCase& c);

}  // namespace hw::io
