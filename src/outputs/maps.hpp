// Maps computed while a run streams: activation time, APD90, conduction velocity, and the
// pseudo-ECG.
//
// Why streaming: a run keeps no history of V. Each map is updated from the current V after
// every step (or every sampling step) with O(cells) memory, and a sample interval coarser
// than dt only loses accuracy through the linear interpolation in time.
//
// Definitions (docs/outputs.md):
//  * activation time T: the first upward crossing of `threshold` (mV), linearly
//    interpolated between the two samples around it; NaN where it never happens.
//  * APD90 (first beat): from T to the first later downward crossing of
//    V_peak − 0.9·(V_peak − V_rest), linearly interpolated; V_rest is the lowest V seen
//    before activation, V_peak the highest V since activation. NaN where the cell never
//    activated or has not yet repolarised.
//  * conduction velocity: per cell 1/|∇T| (mm/ms = m/s) with ∇T by central differences
//    over the active axes, only where the cell and both neighbours on every active axis
//    are tissue and activated; the estimate is the median over those cells.
//  * pseudo-ECG: φ(x_e) = 1/(4π σ_e) ∫ (∇·σ∇V)(x) / |x − x_e| dV, i.e. the extracellular
//    potential of the monodomain's volume current source in an unbounded bath of
//    conductivity σ_e (mV when σ in mS/mm, lengths in mm, σ_e in mS/mm). With no-flux
//    walls this equals the classical form 1/(4πσ_e) ∫ −σ∇V·∇(1/r) dV (integration by
//    parts), so a front moving towards the electrode gives a positive deflection.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tissue/diffusion.hpp"
#include "mesh/grid.hpp"
#include "tissue/simulation.hpp"

namespace hw::io {

class StateWriter;
class StateReader;

class ActivationTracker {
 public:
  // threshold: mV, first upward crossing. with_apd: also track APD90 (4 more floats/cell).
  ActivationTracker(const tissue::Grid& g, const tissue::Mask* mask, double threshold = -20,
                    bool with_apd = true);
  // Feeds one sample of V at time t (ms); times must increase.
  void update(double t, const tissue::Field<float>& v);
  // Hands the maps to a sink where sim's V lives (tissue/sinks.hpp: the GPU's step kernel,
  // the cpu engine's step): from then on it follows them after every step of sim, and
  // update() is not to be called. Call it right after a sample at sim's current time.
  // Returns whether sim took them (the reference engine does not).
  bool attach(const tissue::Simulation& sim);
  bool attached() const { return sink_ != nullptr; }
  // T per cell (ms), NaN where not activated or not tissue.
  const tissue::Field<float>& activation() const { sync(); return act_; }
  // APD90 per cell (ms), NaN where unavailable. Empty if with_apd was false.
  const tissue::Field<float>& apd90() const { sync(); return apd_; }
  std::size_t activated_cells() const;
  double threshold() const { return threshold_; }
  // Everything the maps depend on so far (last sample, T, APD90, V_rest, V_peak), so a
  // restarted run continues the maps exactly. load() throws hw::Error when the bytes come
  // from a tracker of another grid, threshold or APD setting.
  void save(StateWriter& w) const;
  void load(StateReader& r);

 private:
  // Pulls the maps from the sink they are attached to (no-op otherwise).
  void sync() const;

  tissue::Grid grid_;
  tissue::Mask mask_;
  double threshold_;
  bool with_apd_;
  const tissue::Simulation* sim_ = nullptr;  // attached: the simulation and the sink
  std::shared_ptr<tissue::ActivationSink> sink_;
  // Mutable: an attached tracker's state lives in the sink and is copied in on reading.
  mutable bool first_ = true;
  mutable double t_prev_ = 0;
  mutable tissue::Field<float> v_prev_, act_, apd_, v_rest_, v_peak_;
};

struct ConductionVelocity {
  double median = 0;            // mm/ms (= m/s); NaN if no valid cell
  double mean = 0;              // mm/ms, of the same cells
  std::size_t cells = 0;        // cells with a valid estimate
  tissue::Field<float> per_cell;  // 1/|∇T| (mm/ms), NaN where not valid
};

// From an activation map (NaN = not activated).
ConductionVelocity conduction_velocity(const tissue::Grid& g, const tissue::Mask* mask,
                                       const tissue::Field<float>& activation);

struct ElectrodePoint {
  std::string name;
  std::array<double, 3> position{0, 0, 0};  // mm; may be outside the tissue
};

class PseudoEcg {
 public:
  // g: the run's grid. sigma_e: bath conductivity, mS/mm. The distance to a cell centre
  // closer than half the smallest cell size is clamped to that (an electrode inside the
  // tissue stays finite).
  PseudoEcg(const tissue::Grid& g, std::vector<ElectrodePoint> electrodes, double sigma_e = 1.0);
  // φ at every electrode (mV) for the simulation's current V: summed by a sink where V lives
  // when the simulation offers one (the GPU: a few doubles cross to the host), else from a
  // copy of V through the run's operator, built on first use.
  std::vector<double> compute(const tissue::Simulation& sim);
  // φ at every electrode for v through op (L v ≈ ∇·σ∇v, mS/mm · mV/mm², on this grid).
  std::vector<double> compute(const tissue::DiffusionOperator& op, const tissue::Field<float>& v);
  const std::vector<ElectrodePoint>& electrodes() const { return electrodes_; }

 private:
  std::vector<double> potentials(std::vector<double> sums) const;

  tissue::Grid grid_;
  std::vector<ElectrodePoint> electrodes_;
  std::vector<std::array<double, 3>> positions_;
  double sigma_e_, rmin_;
  tissue::Field<float> lv_, vs_, v_;
  std::unique_ptr<tissue::DiffusionOperator> op_;  // the host path's operator
  const tissue::Simulation* sim_ = nullptr;        // the simulation sink_ sums on
  std::shared_ptr<tissue::EcgSink> sink_;
};

// Writes `path` as CSV: header `name,value,unit` then rows (maps' summaries).
void write_summary_csv(const std::string& path,
                       const std::vector<std::tuple<std::string, double, std::string>>& rows);

// Summary statistics of a map over its finite values: count, min, max, mean, median.
struct MapStats {
  std::size_t count = 0;
  double min = 0, max = 0, mean = 0, median = 0;
};
MapStats map_stats(const tissue::Field<float>& f);

}  // namespace hw::io
