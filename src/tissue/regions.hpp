// Regions of a tissue case as lists of grid cells, and the values regions assign.
//
// Why: model regions, stimuli and initial conditions all name "a set of cells" the same
// way (case.hpp Region). Turning a Region into an ascending list of tissue-cell grid
// indices in one place keeps the stepper's storage compact (only tissue cells) and makes
// every use agree on which cells a box or a face selects.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tissue/case.hpp"
#include "mesh/grid.hpp"

namespace hw::tissue {

// The ventricular coordinates of a heart's cells (Geometry::transmural, ::apex_base), when
// the set-up built them; null or empty = none. Not owning.
struct CellCoordinates {
  const Field<float>* transmural = nullptr;
  const Field<float>* apex_base = nullptr;
  const Field<float>* of(Region::Kind k) const {
    const Field<float>* f = k == Region::Kind::transmural ? transmural : k == Region::Kind::apex_base ? apex_base : nullptr;
    return f && !f->empty() ? f : nullptr;
  }
};

// Whether cell (i,j,k) belongs to r (ignores the mask). Box: centre inside [lo, hi];
// sphere: centre within radius; face: the outer layer(s) of cells of that face, depth mm
// (0 = one layer); label: labels[n] == r.label; transmural / apex_base: the cell's
// coordinate in [from, to] (never, without coordinates).
bool region_contains(const Region& r, const Grid& g, int i, int j, int k,
                     const Field<std::int16_t>& labels, const CellCoordinates& coords = {});

// Tissue cells of r, grid indices ascending. Throws InputError at r.loc for a face name
// that does not exist, a label region without a label field, or a negative size.
std::vector<std::uint32_t> region_cells(const Region& r, const Grid& g, const Mask& mask,
                                        const Field<std::int16_t>& labels,
                                        const CellCoordinates& coords = {});

// Checks the region's numbers (hi > lo, radius > 0, face name, 0 ≤ from < to ≤ 1 and the
// coordinates there for a transmural or apex-base region). `what` names the table.
void validate_region(const Region& r, const Grid& g, bool have_labels, const std::string& what,
                     const CellCoordinates& coords = {});

// Whether any region or gradient of the case uses the ventricular coordinates.
bool uses_ventricular_coordinates(const TissueCase& c);

// The name of a region kind or a gradient's coordinate as the case file spells it.
const char* coordinate_name(Region::Kind k);

// Position s ∈ (0,1) of cell index i's centre along axis a (0 = lo face, 1 = hi face): the
// coordinate of parameter gradients.
inline double axis_fraction(const Grid& g, int a, int i) {
  return g.centre(a, i) / (g.n[a] * g.h[a]);
}

}  // namespace hw::tissue
