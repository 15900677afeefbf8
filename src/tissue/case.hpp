// A tissue case in memory: everything a run needs, independent of how it was written.
//
// Why a plain struct: the TOML reader (run/case_file) fills it, the CLI's --set edits go
// through the reader, the stepper (tissue/simulation) runs it, and tests build it directly
// in C++ — so the case file format and the numerics never depend on each other.
//
// Units throughout: time ms, length mm, potential mV, conductivity mS/mm (= S/m),
// surface-to-volume ratio χ in 1/mm, capacitance Cm in µF/mm², volumetric stimulus current
// in µA/mm³ (the case file may give µA/cm³ and µF/cm², converted by the reader).
// SourceLoc fields point into the case file so errors found late still name file:line.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cell/saved_state.hpp"
#include "core/error.hpp"
#include "tissue/diffusion.hpp"
#include "mesh/geometry_spec.hpp"
#include "mesh/grid.hpp"
#include "model/emit/cell_maths.hpp"

namespace hw::tissue {

// A set of grid cells, by shape (mm, domain from 0 to n·h per axis).
struct Region {
  enum class Kind { all, box, sphere, label, face, transmural, apex_base };
  Kind kind = Kind::all;
  std::array<double, 3> lo{0, 0, 0}, hi{0, 0, 0};  // box: cells whose centre lies inside
  std::array<double, 3> centre{0, 0, 0};           // sphere
  double radius = 0;
  int label = 0;        // label: cells whose geometry label equals this
  std::string face;     // face: "x-", "x+", "y-", "y+", "z-", "z+" (one layer of cells)
  double depth = 0;     // face: thickness in mm (0 = one cell)
  // transmural (0 endo … 1 epi) / apex_base (0 apex … 1 base): cells whose coordinate is
  // in [from, to] (mesh/ventricular_coordinates.hpp)
  double from = 0, to = 1;
  SourceLoc loc;
};

// One cell model on part of the tissue; later entries override earlier ones where they
// overlap. Parameters: fixed values and multiplicative scalings.
struct ModelRegion {
  std::string model;  // path (relative to the case file's folder) or built-in name
  Region where;
  std::map<std::string, double> params;   // NAME = value
  std::map<std::string, double> scales;   // NAME *= factor
  // initial_state = "FILE": every state of the model from a saved cell state (read by the
  // case reader; checked against the model at set-up). [[initial]] entries override it.
  std::optional<cell::SavedState> initial_state;
  SourceLoc loc;
};

// A parameter that varies in space: value(x) = from + (to − from)·s, with s the position
// along `axis` from 0 (lo face) to 1 (hi face), or the transmural or apex-base coordinate
// of a heart, e.g. a transmural G_Ks scaling.
struct ParameterGradient {
  // What s is: the position along a grid axis, or a ventricular coordinate (0 endo … 1
  // epi; 0 apex … 1 base).
  enum class Along { axis, transmural, apex_base };
  std::string param;
  Along along = Along::axis;
  int axis = 2;
  double from = 1, to = 1;
  bool scale = true;  // true: multiply the model's value; false: set it
  SourceLoc loc;
};

// A current injected into a region: dV/dt += amplitude/(χ·Cm) while on.
struct Stimulus {
  Region where;
  double amplitude = 0;  // µA/mm³ (volumetric)
  double start = 0, duration = 1, period = 0;  // ms; period 0 = once
  int count = 1;
  SourceLoc loc;
};

// Sets a state variable in a region at t = 0 (initial-condition stimuli, S1-S2 by
// cross-field: e.g. V = 20 mV in one half, a gate = 1 in the other).
struct InitialCondition {
  Region where;
  std::string variable;  // a state of the model there; "V" means the voltage state
  double value = 0;      // mV for the voltage, else the model's units
  SourceLoc loc;
};

struct Conductivities {
  double sigma_l = 0.1334;  // mS/mm along fibres (= S/m)
  double sigma_t = 0.0176;  // mS/mm across
  std::optional<double> sigma_n;
  double chi = 140;         // 1/mm (1400 1/cm)
  double cm = 0.01;         // µF/mm² (1 µF/cm²)
  StencilOrder order = StencilOrder::second;
};

enum class Splitting { godunov, strang };
enum class Precision { f32, f64 };

struct TimeSpec {
  double dt = 0.02;        // PDE step, ms
  double t_end = 100;      // ms
  int ode_substeps = 1;    // reaction sub-steps per PDE step
  std::string integrator = "auto";  // auto|fe|rk2|rk4|rl1|rl2|sbe|grl1|grl2
  Splitting splitting = Splitting::godunov;
  DiffusionScheme diffusion = DiffusionScheme::forward_euler;
  Precision precision = Precision::f32;
  // time.cell_maths: "tables" (functions of V from lookup tables, model/passes/tabulate.hpp),
  // "fast" (float: the GPU's fast intrinsics) or both, within the error bounds
  // docs/verification.md shows; "exact" (default): the model's maths (model/emit/cell_maths.hpp).
  model::CellMaths cell_maths;
  double cg_tolerance = 1e-8;
  int cg_max_iterations = 1000;  // a solve that needs more stops the run (a numerical error)
  SourceLoc loc;
};

struct Probe {
  std::string name;
  std::array<double, 3> position{0, 0, 0};  // mm
};

struct Electrode {
  std::string name;
  std::array<double, 3> position{0, 0, 0};  // mm, may lie outside the tissue
};

struct OutputSpec {
  std::string directory = "out";
  std::vector<std::string> variables{"V"};  // fields to write (states by name, V in mV)
  // Fields of the geometry, written once to geometry.vti: "fibres", "transmural", "apex-base"
  // (given in output.fields beside the states).
  std::vector<std::string> geometry_fields;
  double field_interval = 0;                // ms; 0 = no field output
  enum class Format { vtk, hdf5 } format = Format::vtk;
  std::vector<Probe> probes;
  double probe_interval = 1;                // ms
  bool activation_map = false;
  double activation_threshold = -20;        // mV, first upward crossing
  bool apd_map = false;
  bool conduction_velocity = false;
  std::vector<Electrode> electrodes;        // pseudo-ECG
  double png_interval = 0;                  // ms; 0 = none
  std::string png_variable = "V";
  int png_slice_axis = 2;                   // 3D: the slice normal
  double png_slice_position = -1;           // mm; < 0 = middle
  bool movie = false;                       // with ffmpeg, when present
  double checkpoint_interval = 0;           // ms; 0 = only on SIGINT/SIGTERM
  // geometry kind mesh: the maps also onto the mesh's nodes (maps_mesh.vtu, activation.dat,
  // apd90.dat) and V at every field interval as V_mesh.igb (outputs/mesh_outputs.hpp).
  bool on_mesh = true;
  SourceLoc loc;
};

// The whole case. Its mesh part (source file, box grid, geometry, fibres: MeshSpec) is what
// the mesh floor reads to build the geometry; the rest is the tissue floor's.
struct TissueCase : MeshSpec {
  std::string name;
  Conductivities conductivity;
  std::vector<ModelRegion> models;
  std::vector<ParameterGradient> gradients;
  std::vector<Stimulus> stimuli;
  std::vector<InitialCondition> initial;
  TimeSpec time;
  OutputSpec output;
};

}  // namespace hw::tissue
