// A click in the live view on the GPU (issue 27): the rabbit ventricles of
// examples/rabbit_layers.toml on the cuda backend, quiescent (its pacing taken out), take a
// `stimulate` control at a point of the wall, as the page's Ctrl-click on the 3D view sends
// it; a few ms later V has risen there and not yet at a cell 15 mm or more away, and a
// frame made before the click reads the same V after it. The cpu's
// twin is tests/unit/test_live_session.cpp (a sheet); the browser's, tests/browser. Skips
// without a GPU or without ../shared.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "gpu_test_util.hpp"
#include "live/session.hpp"
#include "outputs/probes.hpp"
#include "run/case_file.hpp"
#include "tissue/simulation.hpp"
#include "tissue/sinks.hpp"

using namespace hw::tissue;

using hw::gpu_testing::shared_dir;
using hw::gpu_testing::test_data_dir;

namespace {

// The centre of cell n, in mm (what the page sends for a point on it).
std::array<double, 3> centre_of(const Grid& g, std::size_t n) {
  const std::size_t nx = std::size_t(g.n[0]), ny = std::size_t(g.n[1]);
  const std::size_t ijk[3] = {n % nx, (n / nx) % ny, n / (nx * ny)};
  return {(double(ijk[0]) + 0.5) * g.h[0], (double(ijk[1]) + 0.5) * g.h[1], (double(ijk[2]) + 0.5) * g.h[2]};
}

}  // namespace

TEST(CudaLive, AClickOnTheRabbitStartsAWaveThere) {
  HW_REQUIRE_GPU();
  const std::filesystem::path heart =
      std::filesystem::path(shared_dir()) / "geometry/rabbit_ventricles_ucsd_chaste/ucsd_rabbit_ventricles_0.25mm.nrrd";
  if (!std::filesystem::exists(heart)) GTEST_SKIP() << "needs " << heart.string() << " (../shared)";
  TissueCase c = hw::io::read_case_file(
      (std::filesystem::path(test_data_dir()) / "../examples/rabbit_layers.toml").string(),
      {"geometry.file=" + heart.string()});
  c.stimuli.clear();  // quiescent: only the click excites it
  hw::live::LiveOptions o;
  o.sim.backend = Backend::cuda;
  hw::live::LiveRun run(c, o);
  const Simulation& sim = run.simulation();
  const Grid& g = sim.grid();
  const std::array<double, 3> extent = {g.n[0] * g.h[0], g.n[1] * g.h[1], g.n[2] * g.h[2]};
  const std::size_t at = hw::io::nearest_tissue_cell(g, &sim.mask(), {0.7 * extent[0], extent[1] / 2, extent[2] / 2}, "click");
  const std::size_t far = hw::io::nearest_tissue_cell(g, &sim.mask(), {0.15 * extent[0], extent[1] / 2, extent[2] / 2}, "far");
  const auto p = centre_of(g, at), q = centre_of(g, far);
  ASSERT_GT(std::hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]), 15.0);
  ASSERT_TRUE(run.run_to_step(sim.steps_done() + 50));  // 1 ms at rest
  EXPECT_LT(sim.voltage_at(at), -70.0);
  // A frame sink made before the click (the page's view) is read after it: the click made
  // the engine compile its kernels again, the frame's gather kernel with them.
  const auto frame = sim.attach_frame("V", {at, far});
  EXPECT_EQ(run.submit(fmt::format(R"({{"op":"stimulate","x":{},"y":{},"z":{}}})", p[0], p[1], p[2])), "");
  ASSERT_TRUE(run.run_to_step(sim.steps_done() + 250));  // 5 ms
  EXPECT_GT(sim.voltage_at(at), 0.0) << "V at the clicked cell 5 ms after the click";
  EXPECT_LT(sim.voltage_at(far), -70.0) << "V 15 mm or more away: the wave cannot be there yet";
  std::vector<float> seen;
  frame->read(seen);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], float(sim.voltage_at(at)));
  EXPECT_EQ(seen[1], float(sim.voltage_at(far)));
}
