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

// Whether cell (i,j,k) belongs to r (ignores the mask). Box: centre inside [lo, hi];
// sphere: centre within radius; face: the outer layer(s) of cells of that face, depth mm
// (0 = one layer); label: labels[n] == r.label.
bool region_contains(const Region& r, const Grid& g, int i, int j, int k,
                     const Field<std::int16_t>& labels);

// Tissue cells of r, grid indices ascending. Throws InputError at r.loc for a face name
// that does not exist, a label region without a label field, or a negative size.
std::vector<std::uint32_t> region_cells(const Region& r, const Grid& g, const Mask& mask,
                                        const Field<std::int16_t>& labels);

// Checks the region's numbers (hi > lo, radius > 0, face name). `what` names the table.
void validate_region(const Region& r, const Grid& g, bool have_labels, const std::string& what);

// Position s ∈ (0,1) of cell index i's centre along axis a (0 = lo face, 1 = hi face): the
// coordinate of parameter gradients.
inline double axis_fraction(const Grid& g, int a, int i) {
  return g.centre(a, i) / (g.n[a] * g.h[a]);
}

}  // namespace hw::tissue
