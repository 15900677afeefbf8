// Shared by the GPU tests: skip, with the reason, where no GPU and driver are usable (CI).
#pragma once

#include <gtest/gtest.h>

#include "device/device.hpp"

#define HW_REQUIRE_GPU()                                                    \
  do {                                                                      \
    if (!hw::gpu::gpu_status().usable)                                      \
      GTEST_SKIP() << "no usable GPU: " << hw::gpu::gpu_status().why;       \
  } while (0)
