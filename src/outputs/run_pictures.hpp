// The pictures a run writes at its end beside its files: probes.png from probes.csv,
// ecg.png from ecg.csv, activation.png from the activation map (outputs/trace_plot.hpp,
// outputs/map_picture.hpp), labelled with the models' units.
#pragma once

#include <string>
#include <vector>

#include "mesh/grid.hpp"
#include "tissue/variable_units.hpp"

namespace hw::io {

// probes.png: one panel per variable (its name and units up), one line per probe. text:
// the probes' CSV (columns variable-major, probes in order).
void write_probes_png(const std::string& path, const std::string& csv_text, const std::vector<std::string>& probes,
                      const std::vector<tissue::VariableUnits>& variables);
// ecg.png: one line per electrode; the potential has the membrane potential's units.
void write_ecg_png(const std::string& path, const std::string& csv_text, const std::vector<std::string>& electrodes,
                   const tissue::VariableUnits& potential);
// activation.png: the map in 2D, three slices through the earliest activation in 3D;
// colour range 0 … the latest activation (at least 1 ms).
void write_activation_png(const std::string& path, const tissue::Grid& g, const tissue::Field<float>& activation,
                          const tissue::Mask* mask);

}  // namespace hw::io
