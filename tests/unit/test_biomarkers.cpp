// Biomarkers on a synthetic action potential with APDs known in closed form.
#include <gtest/gtest.h>

#include <cmath>

#include "cell/biomarkers.hpp"
#include "cell/json_writer.hpp"

using namespace hw::cell;

namespace {
// Rest -80 mV until t = 10, a one-sample upstroke to +20 mV at 10.01, then a linear fall
// to -80 mV over 300 ms. Calcium: 0.1 → 1.1 linearly over 10..20, back to 0.1 by 220.
double v_of(double t) {
  if (t <= 10.0 + 1e-12) return -80.0;
  if (t <= 10.01 + 1e-12) return 20.0;
  return std::max(-80.0, 20.0 - (t - 10.01) / 300.0 * 100.0);
}
double ca_of(double t) {
  if (t <= 10) return 0.1;
  if (t <= 20) return 0.1 + (t - 10) / 10.0;
  return std::max(0.1, 1.1 - (t - 20) / 200.0);
}
}  // namespace

TEST(Biomarkers, SyntheticTraceHasKnownApds) {
  BeatTracker tr;
  const double dt = 0.01;
  tr.begin(1, 0.0, v_of(0), ca_of(0));
  for (long n = 1; n <= 100000; ++n) tr.sample(n * dt, v_of(n * dt), ca_of(n * dt));
  const BeatBiomarkers b = tr.finish();
  EXPECT_EQ(b.beat, 1);
  EXPECT_NEAR(b.t_activation, 10.005, 1e-9);
  EXPECT_NEAR(b.v_rest, -80.0, 1e-12);
  EXPECT_NEAR(b.v_peak, 20.0, 1e-12);
  EXPECT_NEAR(b.dvdt_max, 10000.0, 1e-6);
  EXPECT_NEAR(b.apd30, 90.005, 1e-6);
  EXPECT_NEAR(b.apd50, 150.005, 1e-6);
  EXPECT_NEAR(b.apd90, 270.005, 1e-6);
  EXPECT_NEAR(b.cat_amplitude, 1.0, 1e-9);
  EXPECT_NEAR(b.catd90, 200.0 - 10.005, 1e-6);
}

TEST(Biomarkers, NoRepolarisationGivesNaN) {
  BeatTracker tr;
  tr.begin(1, 0.0, -80.0);
  tr.sample(1.0, 20.0);
  tr.sample(2.0, -20.0);  // passes the APD30 level (-10), not APD50 (-30) or APD90
  const auto b = tr.finish();
  EXPECT_TRUE(std::isfinite(b.apd30));
  EXPECT_TRUE(std::isnan(b.apd90));
  EXPECT_TRUE(std::isnan(b.cat_amplitude));  // no calcium given
}

TEST(Biomarkers, JsonWriterWritesNullForNaN) {
  JsonWriter j;
  j.begin_object().key("a").value(1.5).key("b").value(std::nan("")).key("s").value("x\"y");
  j.key("l").begin_array().value(1).value(2).end_array().end_object();
  EXPECT_EQ(j.str(), R"({"a":1.5,"b":null,"s":"x\"y","l":[1,2]})");
}
