// Slabs of a split run (mesh/decomposition.hpp) and the one-rank communicator
// (comm/communicator.hpp): cuts balanced by tissue, the stencil's minimum thickness, the
// neighbours on a periodic axis, and the errors a user meets.
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "core/error.hpp"
#include "mesh/decomposition.hpp"

using namespace hw::tissue;

namespace {

Grid grid(int nx, int ny, int nz) {
  Grid g;
  g.n = {nx, ny, nz};
  return g;
}

std::size_t planes(const Decomposition& d, int r) {
  const Slab& s = d.slabs[std::size_t(r)];
  return (s.row_end - s.row_begin) / d.rows_per_plane;
}

}  // namespace

TEST(Decomposition, BoxIsCutIntoEqualSlabsAlongZ) {
  const Decomposition d = decompose(grid(4, 3, 12), {}, 3, 1);
  ASSERT_EQ(d.ranks(), 3);
  EXPECT_EQ(d.axis, 2);
  EXPECT_EQ(d.rows_per_plane, 3u);
  EXPECT_EQ(d.ghost_rows, 3u);
  for (int r = 0; r < 3; ++r) EXPECT_EQ(planes(d, r), 4u) << r;
  EXPECT_EQ(d.slabs.front().row_begin, 0u);
  EXPECT_EQ(d.slabs.back().row_end, 36u);
  EXPECT_EQ(d.slabs[1].tissue, 4u * 3 * 4);
}

TEST(Decomposition, TwoDimensionalGridIsCutAlongY) {
  const Decomposition d = decompose(grid(8, 10, 1), {}, 2, 1);
  EXPECT_EQ(d.axis, 1);
  EXPECT_EQ(d.rows_per_plane, 1u);
  EXPECT_EQ(planes(d, 0), 5u);
  EXPECT_EQ(d.owner(8 * 4 + 7, 8), 0);
  EXPECT_EQ(d.owner(8 * 5, 8), 1);
}

TEST(Decomposition, CutsFollowTheTissueNotTheDepth) {
  // Tissue only in the lower quarter of the planes, densely: the cuts crowd there.
  const Grid g = grid(4, 4, 16);
  Mask m(g, 0);
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 4; ++i) m[g.index(i, j, k)] = 1;
  m[g.index(0, 0, 15)] = 1;  // and one cell at the top
  const Decomposition d = decompose(g, m, 2, 1);
  EXPECT_EQ(planes(d, 0), 2u);
  EXPECT_EQ(d.slabs[0].tissue, 32u);
  EXPECT_EQ(d.slabs[1].tissue, 33u);
}

TEST(Decomposition, SlabsAreAtLeastTheStencilsReach) {
  // All tissue in one plane: balance would give one slab everything; each still gets 2 planes.
  const Grid g = grid(3, 3, 8);
  Mask m(g, 0);
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 3; ++i) m[g.index(i, j, 0)] = 1;
  const Decomposition d = decompose(g, m, 4, 2);
  for (int r = 0; r < 4; ++r) EXPECT_GE(planes(d, r), 2u) << r;
  EXPECT_EQ(d.ghost_rows, 6u);
}

TEST(Decomposition, PeriodicAxisJoinsTheEnds) {
  Grid g = grid(4, 4, 6);
  g.bc[2] = Boundary::periodic;
  const Decomposition d = decompose(g, {}, 3, 1);
  EXPECT_EQ(d.previous(0), 2);
  EXPECT_EQ(d.next(2), 0);
  const Decomposition open = decompose(grid(4, 4, 6), {}, 3, 1);
  EXPECT_EQ(open.previous(0), -1);
  EXPECT_EQ(open.next(2), -1);
}

TEST(Decomposition, TooManyRanksOrACableIsAClearError) {
  try {
    decompose(grid(10, 2, 1), {}, 3, 1);
    FAIL() << "no error";
  } catch (const hw::Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot split the grid into 3 slabs: it has 2 planes along y"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("at most 2 ranks"), std::string::npos) << e.what();
  }
  EXPECT_THROW(decompose(grid(100, 1, 1), {}, 2, 1), hw::Error);
  EXPECT_NO_THROW(decompose(grid(100, 1, 1), {}, 1, 1));
}

TEST(LocalCommunicator, IsOneRankWhoseHaloIsItself) {
  hw::comm::LocalCommunicator c;
  EXPECT_EQ(c.rank(), 0);
  EXPECT_EQ(c.size(), 1);
  std::vector<double> a{1, 2, 3, 4}, b(4, 0);
  c.start_exchange({{0, 5, a.data(), sizeof(double) * 4}}, {{0, 5, b.data(), sizeof(double) * 4}});
  c.finish_exchange();
  EXPECT_EQ(a, b);
  double x[2] = {1.5, -2};
  c.allreduce(x, 2, hw::comm::Reduce::sum);
  EXPECT_EQ(x[0], 1.5);
}
