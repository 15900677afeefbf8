// The block shapes the CUDA engine tunes over for a box (gpu/block_tuner): plain host
// arithmetic, so it is tested without a GPU.
#include <gtest/gtest.h>

#include "gpu/block_tuner.hpp"

using hw::gpu::box_block_shapes;
using hw::gpu::Dim3;

TEST(BlockShapes, WholeWarpsAlongXTheRestInY) {
  const auto s = box_block_shapes(256, 256, 256);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0], (Dim3{256, 1, 1}));
  EXPECT_EQ(s[1], (Dim3{128, 2, 1}));
  EXPECT_EQ(s[2], (Dim3{64, 4, 1}));
  EXPECT_EQ(s[3], (Dim3{32, 8, 1}));
  // A row shorter than the block: no block longer than the row rounded up to a warp.
  EXPECT_EQ(box_block_shapes(40, 30, 256).front(), (Dim3{64, 4, 1}));
}

TEST(BlockShapes, SmallerBlocksForLargeKernelsAndFlatBoxes) {
  for (const Dim3& d : box_block_shapes(100, 35, 64)) EXPECT_LE(d[0] * d[1], 64u);
  // A single row: no block is more than one row tall.
  const auto row = box_block_shapes(1000, 1, 256);
  ASSERT_EQ(row.size(), 1u);
  EXPECT_EQ(row[0], (Dim3{256, 1, 1}));
}
