// The block shapes the CUDA engine tunes over for a box (gpu/block_tuner): plain host
// arithmetic, so it is tested without a GPU.
#include <gtest/gtest.h>

#include "gpu/block_tuner.hpp"

using hw::gpu::box_block_shapes;
using hw::gpu::Dim3;
using hw::gpu::launch_overhang;

TEST(BlockShapes, PowersOfTwoTileWithoutExtraCandidates) {
  const auto s = box_block_shapes(256, 256, 256);
  ASSERT_EQ(s.size(), 4u);  // 256x1, 128x2, 64x4, 32x8
  EXPECT_EQ(s.front(), (Dim3{256, 1, 1}));
  for (const Dim3& d : s) EXPECT_DOUBLE_EQ(launch_overhang(256, 256, d), 1.0);
}

TEST(BlockShapes, NVersionSlabAtFiftyMicronsGetsAnExactTile) {
  // 20 x 7 mm at 0.05 mm: 400 x 140 cells per layer; 32 x 8 blocks leave 7 % idle.
  const auto s = box_block_shapes(400, 140, 256);
  EXPECT_NEAR(launch_overhang(400, 140, {32, 8, 1}), 416.0 * 144 / (400.0 * 140), 1e-12);
  const Dim3 extra = s.back();
  EXPECT_DOUBLE_EQ(launch_overhang(400, 140, extra), 1.0);
  EXPECT_EQ(extra, (Dim3{16, 14, 1}));  // the largest block that tiles exactly
  for (const Dim3& d : s) {
    EXPECT_LE(d[0] * d[1], 256u);
    EXPECT_EQ(d[0] * d[1] % 32, 0u);
  }
}

TEST(BlockShapes, SmallerBlocksForLargeKernelsAndFlatBoxes) {
  for (const Dim3& d : box_block_shapes(100, 35, 64)) EXPECT_LE(d[0] * d[1], 64u);
  // A single row: no block is more than one row tall.
  for (const Dim3& d : box_block_shapes(1000, 1, 256)) EXPECT_EQ(d[1], 1u);
}
