// The live view's frame on the GPU (tissue/cuda/sinks.hpp DeviceFrame, the hw_frame gather
// kernel) against the engine's own full-field reads: the same floats at every sample, for V
// and for a state, on a box and on compressed rows (a shell with two model regions, so the
// state comes from two parts and some samples are off the tissue). Skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "gpu_test_util.hpp"
#include "live/view.hpp"
#include "test_tissue_util.hpp"
#include "tissue/sinks.hpp"
#include "tissue/simulation.hpp"

using namespace hw::tissue;
using namespace hw::tissue::testing;

namespace {

void expect_frame_is_field(const Simulation& sim, const std::string& variable) {
  const hw::live::ViewLayout l = hw::live::make_layout(sim.grid());
  const auto frame = sim.attach_frame(variable, l.cells);
  std::vector<float> got;
  frame->read(got);
  Field<float> f;
  ASSERT_TRUE(sim.field(variable, f));
  ASSERT_EQ(got.size(), l.cells.size());
  std::size_t tissue = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const float want = f[l.cells[i]];
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got[i])) << variable << " sample " << i;
      continue;
    }
    ++tissue;
    ASSERT_EQ(std::memcmp(&got[i], &want, sizeof(float)), 0) << variable << " sample " << i << ": " << got[i] << " vs " << want;
  }
  EXPECT_GT(tissue, 0u);
}

}  // namespace

TEST(CudaLiveFrame, BoxMatchesTheFieldReads) {
  HW_REQUIRE_GPU();
  TissueCase c = sheet(37, 29, 11, 0.25, "aliev_panfilov_1996");
  c.stimuli.push_back(box_stimulus({0, 0, 0}, {1, 7, 2.75}, 1.0, 2));
  Simulation sim(c, {Backend::cuda});
  sim.run_until(3);
  expect_frame_is_field(sim, "V");
  expect_frame_is_field(sim, "v");
}

TEST(CudaLiveFrame, ShellOfTwoModelsMatchesTheFieldReads) {
  HW_REQUIRE_GPU();
  TissueCase c = sheet(24, 20, 16, 0.25, "tentusscher_2006_epi");
  ellipsoid_shell(c);
  add_box_region(c, "tentusscher_2006_endo", {0, 0, 0}, {3, 5, 4});
  c.stimuli.push_back(box_stimulus({0, 0, 0}, {2, 5, 4}));
  Simulation sim(c, {Backend::cuda});
  sim.run_until(2);
  expect_frame_is_field(sim, "V");
  expect_frame_is_field(sim, "Ca_i");
}
