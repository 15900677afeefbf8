// Streaming maps on synthetic data with known answers: activation times of a moving front,
// APD90 of triangular action potentials, conduction velocity of a planar front, and the
// sign and shape of the pseudo-ECG of a travelling dipole.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>

#include "core/error.hpp"
#include "outputs/checkpoint.hpp"
#include "outputs/maps.hpp"
#include "outputs/probes.hpp"
#include "tissue/diffusion.hpp"
#include "test_io_support.hpp"

using namespace hw;
using namespace hw::io;
using hw::tissue::Field;
using hw::tissue::Grid;
using hw::tissue::Mask;

namespace {

// A synthetic action potential: rest −85 mV; upstroke linear over 1 ms from t0 to 40 mV;
// linear repolarisation back to rest over `d` ms.
float ap(double t, double t0, double d) {
  if (t <= t0) return -85.f;
  if (t <= t0 + 1) return float(-85 + 125 * (t - t0));
  if (t <= t0 + 1 + d) return float(40 - 125 * (t - t0 - 1) / d);
  return -85.f;
}

}  // namespace

TEST(IoMaps, ActivationOfAMovingFrontIsInterpolatedInTime) {
  Grid g;
  g.n = {30, 4, 1};
  g.h = {0.25, 0.25, 1};
  Mask m(g, 1);
  m[g.index(3, 2, 0)] = 0;
  const double c = 0.5;  // mm/ms
  ActivationTracker tr(g, &m, -20, /*with_apd=*/false);
  Field<float> v(g);
  // Samples every 0.3 ms: the threshold crossing falls between samples, so the answer
  // needs the interpolation.
  for (double t = 0; t <= 20; t += 0.3) {
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 30; ++i) v[g.index(i, j, 0)] = ap(t, g.centre(0, i) / c, 300);
    tr.update(t, v);
  }
  // T = x/c + 65/125 ms (−85 → −20 mV on a 125 mV/ms ramp).
  double worst = 0;
  for (int i = 0; i < 30; ++i) {
    const double want = g.centre(0, i) / c + 0.52;
    const std::size_t n = g.index(i, 1, 0);
    ASSERT_FALSE(std::isnan(tr.activation()[n])) << i;
    worst = std::max(worst, std::abs(tr.activation()[n] - want));
  }
  EXPECT_LT(worst, 1e-4);
  EXPECT_TRUE(std::isnan(tr.activation()[g.index(3, 2, 0)]));  // non-tissue
  EXPECT_EQ(tr.activated_cells(), g.size() - 1);
}

TEST(IoMaps, Apd90OfSyntheticActionPotentials) {
  Grid g;
  g.n = {12, 1, 1};
  g.h = {0.1, 1, 1};
  ActivationTracker tr(g, nullptr, -20, true);
  Field<float> v(g);
  auto dur = [](int i) { return 100.0 + 20.0 * i; };
  for (double t = 0; t <= 400; t += 0.1) {
    for (int i = 0; i < 12; ++i) v[i] = ap(t, 2.0 + 0.5 * i, dur(i));
    tr.update(t, v);
  }
  // Level −85 + 0.1·125 = −72.5 mV is crossed at t0 + 1 + 0.9 d; activation at t0 + 0.52.
  for (int i = 0; i < 12; ++i) {
    const double want = 1 + 0.9 * dur(i) - 0.52;
    EXPECT_NEAR(tr.apd90()[i], want, 2e-3) << i;
  }
  const MapStats s = map_stats(tr.apd90());
  EXPECT_EQ(s.count, 12u);
  EXPECT_NEAR(s.min, 1 + 0.9 * 100 - 0.52, 2e-3);
}

TEST(IoMaps, TrackerSavedMidBeatAndLoadedGivesTheSameMapsBitForBit) {
  // Arrange: 12 cells, one tracker fed the whole run; another saved at t = 60 ms (every
  // cell activated, none repolarised) and a fresh tracker loaded from those bytes.
  Grid g;
  g.n = {12, 1, 1};
  g.h = {0.1, 1, 1};
  ActivationTracker whole(g, nullptr, -20, true), first(g, nullptr, -20, true),
      second(g, nullptr, -20, true);
  Field<float> v(g);
  auto feed = [&](ActivationTracker& tr, double t) {
    for (int i = 0; i < 12; ++i) v[i] = ap(t, 2.0 + 0.5 * i, 100.0 + 20.0 * i);
    tr.update(t, v);
  };
  std::vector<unsigned char> bytes;
  int k = 0;
  for (; k * 0.1 <= 60; ++k) feed(whole, k * 0.1), feed(first, k * 0.1);
  {
    StateWriter w;
    first.save(w);
    bytes = w.take();
  }

  // Act
  StateReader r(bytes);
  second.load(r);
  for (; k * 0.1 <= 400; ++k) feed(whole, k * 0.1), feed(second, k * 0.1);

  // Assert
  EXPECT_TRUE(r.at_end());
  ASSERT_EQ(map_stats(whole.apd90()).count, 12u);
  for (int i = 0; i < 12; ++i) {
    EXPECT_EQ(std::memcmp(&whole.activation()[i], &second.activation()[i], 4), 0) << i;
    EXPECT_EQ(std::memcmp(&whole.apd90()[i], &second.apd90()[i], 4), 0) << i;
  }
  // Bytes of a tracker with another threshold are refused.
  ActivationTracker other(g, nullptr, -30, true);
  StateReader r2(bytes);
  EXPECT_THROW(other.load(r2), Error);
}

TEST(IoMaps, ApdIsNanUntilTheCellRepolarises) {
  Grid g;
  g.n = {2, 1, 1};
  ActivationTracker tr(g, nullptr, -20, true);
  Field<float> v(g);
  for (double t = 0; t <= 50; t += 0.1) {
    v[0] = ap(t, 1, 30);
    v[1] = ap(t, 1, 300);
    tr.update(t, v);
  }
  EXPECT_NEAR(tr.apd90()[0], 1 + 27 - 0.52, 2e-3);
  EXPECT_TRUE(std::isnan(tr.apd90()[1]));
  EXPECT_THROW(tr.update(10, v), Error);  // time must increase
}

TEST(IoMaps, ConductionVelocityOfAPlanarFrontWithinOnePercent) {
  Grid g;
  g.n = {40, 30, 1};
  g.h = {0.25, 0.2, 1};
  const double c = 0.62, th = 30 * M_PI / 180;  // mm/ms = m/s, front at 30°
  Field<float> act(g);
  for (int j = 0; j < 30; ++j)
    for (int i = 0; i < 40; ++i)
      act[g.index(i, j, 0)] =
          float((g.centre(0, i) * std::cos(th) + g.centre(1, j) * std::sin(th)) / c);
  const ConductionVelocity cv = conduction_velocity(g, nullptr, act);
  EXPECT_EQ(cv.cells, 38u * 28u);  // interior cells: both neighbours on each axis
  EXPECT_NEAR(cv.median, c, 0.01 * c);
  EXPECT_NEAR(cv.mean, c, 0.01 * c);
  EXPECT_TRUE(std::isnan(cv.per_cell[g.index(0, 5, 0)]));
}

TEST(IoMaps, ConductionVelocityFromTheTrackerOnAFrontInA3dSlab) {
  Grid g;
  g.n = {24, 5, 4};
  g.h = {0.2, 0.2, 0.2};
  Mask m(g, 1);
  m[g.index(10, 2, 2)] = 0;  // a hole: its neighbours lose their estimate, nothing else
  const double c = 0.45;
  ActivationTracker tr(g, &m, -20, false);
  Field<float> v(g);
  for (double t = 0; t <= 12; t += 0.05) {
    for (int k = 0; k < 4; ++k)
      for (int j = 0; j < 5; ++j)
        for (int i = 0; i < 24; ++i) v[g.index(i, j, k)] = ap(t, g.centre(0, i) / c, 100);
    tr.update(t, v);
  }
  const ConductionVelocity cv = conduction_velocity(g, &m, tr.activation());
  EXPECT_EQ(cv.cells, 22u * 3u * 2u - 6u);
  EXPECT_NEAR(cv.median, c, 0.01 * c);
}

TEST(IoMaps, PseudoEcgOfATravellingFront) {
  // A 1D cable, depolarised (V = 20) behind a smooth front at s, resting (−85) ahead.
  Grid g;
  g.n = {200, 1, 1};
  g.h = {0.1, 1, 1};
  tissue::DiffusionSetup setup;
  setup.grid = g;
  setup.sigma = tissue::Conductivity::isotropic(0.1);
  auto op = tissue::make_diffusion_operator(setup, tissue::Backend::reference);
  PseudoEcg ecg(g, {{"ahead", {40, 0, 0}}, {"behind", {-20, 0, 0}}, {"side", {10, 5, 0}}});
  Field<float> v(g);
  auto phi_at = [&](double s) {
    for (int i = 0; i < 200; ++i)
      v[i] = float(-85 + 105 / (1 + std::exp((g.centre(0, i) - s) / 0.4)));
    return ecg.compute(*op, v);
  };
  // Uniform V: no source, no signal.
  v.fill(-85.f);
  for (double p : ecg.compute(*op, v)) EXPECT_NEAR(p, 0, 1e-9);
  const auto near = phi_at(14), mid = phi_at(10), far = phi_at(6);
  // Moving towards an electrode → positive; away → negative (ECG convention).
  EXPECT_GT(mid[0], 0);
  EXPECT_LT(mid[1], 0);
  // Closer front, larger deflection: a dipole's 1/r² falls with distance.
  EXPECT_GT(near[0], mid[0]);
  EXPECT_GT(mid[0], far[0]);
  EXPECT_LT(far[1], mid[1]);  // behind: stronger (more negative) when the front is nearer
  // The side electrode sees the front approach (+), pass beneath (≈ 0), then leave (−).
  EXPECT_GT(far[2], 0);
  EXPECT_NEAR(mid[2], 0, 0.05 * std::abs(far[2]));
  EXPECT_LT(near[2], 0);
  // Dipole far field: φ ≈ p/(4πσ_e r²), so doubling the distance quarters φ.
  PseudoEcg two(g, {{"r", {10 + 30, 0, 0}}, {"2r", {10 + 60, 0, 0}}});
  const auto pr = (void(phi_at(10)), two.compute(*op, v));
  EXPECT_NEAR(pr[0] / pr[1], 4.0, 0.05);
}

TEST(IoMaps, ProbesSampleTheNearestTissueCell) {
  hw::io::testing::ScratchDir dir("probes");
  Grid g;
  g.n = {10, 5, 1};
  g.h = {0.5, 0.5, 1};
  Mask m(g, 1);
  m[g.index(0, 0, 0)] = 0;
  Field<float> v(g), ca(g);
  for (std::size_t c = 0; c < g.size(); ++c) v[c] = float(c), ca[c] = 0.001f * c;
  {
    ProbeWriter p(dir / "p.csv", g, &m, {{"mid", {2.6, 1.2, 0}}, {"corner", {0.1, 0.1, 0}}},
                  {"V"});
    EXPECT_EQ(p.cell_of(0), g.index(5, 2, 0));
    EXPECT_TRUE(p.cell_of(1) == g.index(1, 0, 0) || p.cell_of(1) == g.index(0, 1, 0));
    const auto from_v = [&](std::size_t, std::size_t c) { return double(v[c]); };
    p.sample(0.0, from_v);
    p.sample(1.5, from_v);
  }
  std::ifstream in(dir / "p.csv");
  std::string header, row1;
  std::getline(in, header);
  std::getline(in, row1);
  EXPECT_EQ(header, "t_ms,mid,corner");  // no units given: no suffix
  EXPECT_EQ(row1.substr(0, 5), "0,25,");
  {
    ProbeWriter p(dir / "q.csv", g, nullptr, {{"a", {1, 1, 7}}}, {"V", "Cai"}, {}, "", {"mV", "mM"});
    p.sample(0.5, [&](std::size_t var, std::size_t c) { return double(var == 0 ? v[c] : ca[c]); });
  }
  std::ifstream q(dir / "q.csv");
  std::getline(q, header);
  std::getline(q, row1);
  EXPECT_EQ(header, "t_ms,a.V_mV,a.Cai_mM");
  EXPECT_EQ(row1, "0.5,22,0.0220000017");  // (1, 1) mm → cell (2, 2)
  EXPECT_THROW(ProbeWriter(dir / "r.csv", g, nullptr, {{"out", {9, 1, 0}}}), InputError);
  EXPECT_THROW(ProbeWriter(dir / "s.csv", g, nullptr, {{"a", {1, 1, 0}}, {"a", {2, 1, 0}}}),
               InputError);
}
