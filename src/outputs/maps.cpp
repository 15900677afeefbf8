// Activation, APD90, conduction velocity and pseudo-ECG; definitions in maps.hpp.
#include "outputs/maps.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <tuple>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/atomic_file.hpp"
#include "kernels/activation_k.hpp"
#include "outputs/checkpoint.hpp"
#include "kernels/diffusion_k.hpp"
#include "parallel/team.hpp"
#include "tissue/sinks.hpp"
#include "tissue/simulation.hpp"

namespace hw::io {
namespace {
constexpr float nanf_ = std::numeric_limits<float>::quiet_NaN();
}

ActivationTracker::ActivationTracker(const tissue::Grid& g, const tissue::Mask* mask,
                                     double threshold, bool with_apd)
    : grid_(g), threshold_(threshold), with_apd_(with_apd) {
  if (mask != nullptr && !mask->empty()) mask_ = *mask;
  const std::size_t n = g.size();
  v_prev_.resize(n);
  act_.resize(n, nanf_);
  if (with_apd_) {
    apd_.resize(n, nanf_);
    v_rest_.resize(n, std::numeric_limits<float>::infinity());
    v_peak_.resize(n, -std::numeric_limits<float>::infinity());
  }
}

void ActivationTracker::update(double t, const tissue::Field<float>& v) {
  const std::size_t n = grid_.size();
  if (v.size() != n)
    throw Error(fmt::format("activation map: V has {} values, the grid {} cells", v.size(), n));
  if (first_) {
    v_prev_.vec() = v.vec();
    if (with_apd_)
      for (std::size_t c = 0; c < n; ++c) v_rest_[c] = v[c];
    t_prev_ = t;
    first_ = false;
    return;
  }
  if (!(t > t_prev_)) throw Error("activation map: sample times must increase");
  const double dt = t - t_prev_;
  const float thr = static_cast<float>(threshold_);
  const tissue::Mask* m = mask_.empty() ? nullptr : &mask_;
  float dummy = 0;
  for (std::size_t c = 0; c < n; ++c) {
    if (!tissue::is_tissue(m, c)) continue;
    if (with_apd_)
      activation_update(v_prev_[c], v[c], thr, t_prev_, dt, true, act_[c], apd_[c], v_rest_[c], v_peak_[c]);
    else
      activation_update(v_prev_[c], v[c], thr, t_prev_, dt, false, act_[c], dummy, dummy, dummy);
  }
  v_prev_.vec() = v.vec();
  t_prev_ = t;
}

bool ActivationTracker::attach(const tissue::Simulation& sim) {
  if (first_) return false;  // the first sample gives V_rest its start: take it here
  tissue::ActivationMaps m;
  m.threshold = float(threshold_);
  m.with_apd = with_apd_;
  m.act = act_.vec();
  if (with_apd_) {
    m.apd = apd_.vec();
    m.v_rest = v_rest_.vec();
    m.v_peak = v_peak_.vec();
  }
  sink_ = sim.attach_activation(m);
  if (sink_) sim_ = &sim;
  return attached();
}

void ActivationTracker::sync() const {
  if (!sink_) return;
  tissue::ActivationMaps m;
  m.with_apd = with_apd_;
  sink_->read(m);
  act_.vec() = std::move(m.act);
  if (with_apd_) {
    apd_.vec() = std::move(m.apd);
    v_rest_.vec() = std::move(m.v_rest);
    v_peak_.vec() = std::move(m.v_peak);
  }
  sim_->voltage(v_prev_);  // the last sample is the current V
  t_prev_ = sim_->time();
}

std::size_t ActivationTracker::activated_cells() const {
  sync();
  std::size_t k = 0;
  for (std::size_t c = 0; c < act_.size(); ++c) k += !std::isnan(act_[c]);
  return k;
}

void ActivationTracker::save(StateWriter& w) const {
  sync();
  w.put<std::uint64_t>(grid_.size());
  w.put<double>(threshold_);
  w.put<std::uint8_t>(with_apd_);
  w.put<std::uint8_t>(first_);
  w.put<double>(t_prev_);
  w.put_floats(v_prev_.vec());
  w.put_floats(act_.vec());
  if (with_apd_) {
    w.put_floats(apd_.vec());
    w.put_floats(v_rest_.vec());
    w.put_floats(v_peak_.vec());
  }
}

void ActivationTracker::load(StateReader& r) {
  const auto n = r.get<std::uint64_t>();
  const auto thr = r.get<double>();
  const bool apd = r.get<std::uint8_t>() != 0;
  if (n != grid_.size() || thr != threshold_ || apd != with_apd_)
    throw Error(fmt::format("activation map: saved for {} cells, threshold {} mV, APD {}; this run "
                            "has {} cells, {} mV, APD {}",
                            n, thr, apd ? "on" : "off", grid_.size(), threshold_,
                            with_apd_ ? "on" : "off"));
  first_ = r.get<std::uint8_t>() != 0;
  t_prev_ = r.get<double>();
  auto field = [&](tissue::Field<float>& f) {
    std::vector<float> v = r.get_floats();
    if (v.size() != n) throw Error("activation map: saved array of the wrong size");
    f.vec() = std::move(v);
  };
  field(v_prev_);
  field(act_);
  if (with_apd_) {
    field(apd_);
    field(v_rest_);
    field(v_peak_);
  }
}

ConductionVelocity conduction_velocity(const tissue::Grid& g, const tissue::Mask* mask,
                                       const tissue::Field<float>& act) {
  if (act.size() != g.size())
    throw Error(fmt::format("conduction velocity: map has {} values, the grid {} cells",
                            act.size(), g.size()));
  ConductionVelocity cv;
  cv.per_cell.resize(g.size(), nanf_);
  std::vector<double> speeds;
  for (int k = 0; k < g.n[2]; ++k)
    for (int j = 0; j < g.n[1]; ++j)
      for (int i = 0; i < g.n[0]; ++i) {
        const std::size_t c = g.index(i, j, k);
        if (!tissue::is_tissue(mask, c) || std::isnan(act[c])) continue;
        const int ijk[3] = {i, j, k};
        // ∂T/∂x_a ≈ (T(i+1) − T(i−1)) / (2 h_a) on each active axis.
        double grad2 = 0;
        bool ok = g.dim() > 0;
        for (int a = 0; a < 3 && ok; ++a) {
          if (!g.active(a)) continue;
          const int lo = g.neighbour(a, ijk[a], -1), hi = g.neighbour(a, ijk[a], +1);
          if (lo < 0 || hi < 0) {
            ok = false;
            break;
          }
          std::size_t cl = c - ijk[a] * g.stride(a) + lo * g.stride(a);
          std::size_t ch = c - ijk[a] * g.stride(a) + hi * g.stride(a);
          if (!tissue::is_tissue(mask, cl) || !tissue::is_tissue(mask, ch) ||
              std::isnan(act[cl]) || std::isnan(act[ch])) {
            ok = false;
            break;
          }
          const double d = (double(act[ch]) - double(act[cl])) / (2 * g.h[a]);
          grad2 += d * d;
        }
        if (!ok || !(grad2 > 0)) continue;
        const double s = 1.0 / std::sqrt(grad2);
        cv.per_cell[c] = static_cast<float>(s);
        speeds.push_back(s);
      }
  cv.cells = speeds.size();
  if (speeds.empty()) {
    cv.median = cv.mean = std::numeric_limits<double>::quiet_NaN();
    return cv;
  }
  double sum = 0;
  for (double s : speeds) sum += s;
  cv.mean = sum / double(speeds.size());
  const std::size_t mid = speeds.size() / 2;
  std::nth_element(speeds.begin(), speeds.begin() + mid, speeds.end());
  cv.median = speeds[mid];
  if (speeds.size() % 2 == 0) {
    const double lower = *std::max_element(speeds.begin(), speeds.begin() + mid);
    cv.median = 0.5 * (cv.median + lower);
  }
  return cv;
}

PseudoEcg::PseudoEcg(const tissue::Grid& g, std::vector<ElectrodePoint> electrodes, double sigma_e)
    : grid_(g), electrodes_(std::move(electrodes)), sigma_e_(sigma_e),
      rmin_(0.5 * std::min({g.h[0], g.h[1], g.h[2]})) {
  if (!(sigma_e_ > 0)) throw Error("pseudo-ECG: bath conductivity must be > 0");
  for (const auto& e : electrodes_) positions_.push_back(e.position);
}

std::vector<double> PseudoEcg::compute(const tissue::Simulation& sim) {
  if (sim_ != &sim) {
    sink_ = sim.attach_ecg(positions_, rmin_);
    sim_ = &sim;
  }
  if (sink_) {
    std::vector<double> sums;
    sink_->sums(sums);
    return potentials(std::move(sums));
  }
  if (!op_) op_ = tissue::make_diffusion_operator(sim.diffusion(), tissue::Backend::cpu);
  sim.voltage(v_);
  return compute(*op_, v_);
}

std::vector<double> PseudoEcg::compute(const tissue::DiffusionOperator& op, const tissue::Field<float>& v) {
  const tissue::Grid& g = op.grid();
  const tissue::RowLayout& L = op.layout();
  const tissue::Mask* mask = op.mask();
  if (v.size() != g.size() || g.size() != grid_.size())
    throw Error(fmt::format("pseudo-ECG: V has {} values, the grid {} cells", v.size(), grid_.size()));
  // V into the operator's storage; cells off the tissue (NaN in a run's V) have no flux,
  // but 0·NaN would still leak, so they hold 0.
  lv_.resize(L.size());
  vs_.resize(L.size());
  const std::size_t nx = std::size_t(g.nx());
  for (std::size_t r = 0; r < L.rows(); ++r)
    for (std::size_t i = L.lo[r]; i < L.hi[r]; ++i) {
      const std::size_t c = r * nx + i;
      vs_[L.base[r] + i] = tissue::is_tissue(mask, c) && std::isfinite(v[c]) ? v[c] : 0.f;
    }
  op.apply(vs_, lv_);  // lv = ∇·σ∇V, µA/mm³ (mS/mm · mV/mm²)
  std::vector<double> sums(positions_.size(), 0.0);
  for (std::size_t e = 0; e < positions_.size(); ++e) {
    const auto& p = positions_[e];
    // Σ_cells (∇·σ∇V)_c / |x_c − x_e| over rows in parallel, summed in a fixed order (the
    // same bits on any team size).
    const std::ptrdiff_t rows = std::ptrdiff_t(L.rows());
    sums[e] = par::ordered_sum(rows, 16, g.size() >= std::size_t(kernels::kMinParallelCells),
                               [&](std::ptrdiff_t r0, std::ptrdiff_t r1) {
      double part = 0;
      for (std::ptrdiff_t r = r0; r < r1; ++r) {
        const int j = int(r % g.n[1]), kk = int(r / g.n[1]);
        const double dy = g.centre(1, j) - p[1], dz = g.centre(2, kk) - p[2];
        // Off the tissue L V = 0: only the row's tissue range contributes.
        for (int i = int(L.tlo[r]); i < int(L.thi[r]); ++i) {
          const double dx = g.centre(0, i) - p[0];
          const double dist = std::max(std::sqrt(dx * dx + dy * dy + dz * dz), rmin_);
          part += lv_[L.base[r] + i] / dist;
        }
      }
      return part;
    });
  }
  return potentials(std::move(sums));
}

// φ_e = |cell| / (4π σ_e) · sums[e].
std::vector<double> PseudoEcg::potentials(std::vector<double> sums) const {
  const double k = grid_.cell_volume() / (4 * std::numbers::pi * sigma_e_);
  for (double& x : sums) x *= k;
  return sums;
}

void write_summary_csv(const std::string& path,
                       const std::vector<std::tuple<std::string, double, std::string>>& rows) {
  std::string s = "name,value,unit\n";
  for (const auto& [name, value, unit] : rows) s += fmt::format("{},{:.9g},{}\n", name, value, unit);
  write_file_atomic(path, s, /*durable=*/false);
}

MapStats map_stats(const tissue::Field<float>& f) {
  std::vector<double> v;
  for (std::size_t i = 0; i < f.size(); ++i)
    if (std::isfinite(f[i])) v.push_back(f[i]);
  MapStats s;
  s.count = v.size();
  if (v.empty()) {
    s.min = s.max = s.mean = s.median = std::numeric_limits<double>::quiet_NaN();
    return s;
  }
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / double(v.size());
  s.median = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  return s;
}

}  // namespace hw::io
