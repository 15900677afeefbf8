// The block shapes the CUDA engine tunes over for a box (device/block_tuner): plain host
// arithmetic, so it is tested without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "device/block_tuner.hpp"

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

// The tuner times each launch (variant, shape) on the run's own steps, round-robin, keeps
// the fastest, names the variants, and finds its choice in the cache file next time.
TEST(BlockShapes, TunerPicksVariantAndShapeAndRemembers) {
  using hw::gpu::BlockTuner;
  using hw::gpu::Launch;
  const std::string cache = ::testing::TempDir() + "/tuner_variants.block";
  std::remove(cache.c_str());
  const std::vector<Launch> launches = {{0, {64, 1, 1}}, {1, {256, 1, 1}}, {0, {32, 2, 1}}, {2, {32, 8, 1}, 16},
                                        {2, {32, 8, 1}, 4}};
  const std::vector<std::string> names = {"as compiled", "capped at 128 registers", "sliding window"};
  {
    BlockTuner t(launches, names, cache, 2);
    const double ms[] = {0.3, 0.2, 0.4, 0.1, 0.15};
    for (int trial = 0; trial < 10; ++trial) {
      ASSERT_TRUE(t.tuning());
      const Launch l = t.launch();
      const auto c = std::size_t(std::find(launches.begin(), launches.end(), l) - launches.begin());
      t.record(ms[c]);
    }
    EXPECT_FALSE(t.tuning());
    EXPECT_EQ(t.launch(), launches[3]);
    EXPECT_EQ(t.describe().rfind("sliding window 32x8x1 16 deep (tuned: as compiled 64x1x1 0.3 ms, capped at 128 "
                                 "registers 256x1x1 0.2 ms", 0), 0u)
        << t.describe();
  }
  BlockTuner again(launches, names, cache, 2);
  EXPECT_FALSE(again.tuning());
  EXPECT_EQ(again.launch(), launches[3]);  // the depth too
  EXPECT_NE(again.describe().find("from the cache"), std::string::npos);
  // Other candidates (a newer build): the old choice does not count.
  BlockTuner other({{0, {64, 1, 1}}, {0, {32, 2, 1}}}, {}, cache, 1);
  EXPECT_TRUE(other.tuning());
}

// A launch that is at its speed only after a step of its own (the tower's halo slots) is
// tried twice back to back each round, and its faster trial counts.
TEST(BlockShapes, PairedLaunchesAreTriedBackToBack) {
  using hw::gpu::BlockTuner;
  using hw::gpu::Launch;
  const std::vector<Launch> launches = {{0, {64, 1, 1}}, {1, {32, 8, 1}, 8, true}};
  BlockTuner t(launches, {"as compiled", "tower"}, "", 2);
  std::vector<int> order;
  while (t.tuning()) {
    const Launch l = t.launch();
    order.push_back(l.variant);
    // The tower's first step of a pair reads V (slow), the second its slots (fast).
    const bool second = order.size() >= 2 && order[order.size() - 2] == 1 && l.variant == 1;
    t.record(l.variant == 0 ? 0.2 : second ? 0.1 : 0.3);
  }
  EXPECT_EQ(order, (std::vector<int>{0, 1, 1, 0, 1, 1}));
  EXPECT_EQ(t.launch(), launches[1]);
}
