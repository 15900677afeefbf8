// Shared by the GPU tests: skip, with the reason, where no GPU and driver are usable (CI);
// where ../shared and tests/ are (the device machine runs a copy of the checkout: the
// environment says where, gpu-check.sh).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "device/device.hpp"

#define HW_REQUIRE_GPU()                                                    \
  do {                                                                      \
    if (!hw::gpu::gpu_status().usable)                                      \
      GTEST_SKIP() << "no usable GPU: " << hw::gpu::gpu_status().why;       \
  } while (0)

namespace hw::gpu_testing {

inline std::string shared_dir() {
  if (const char* e = std::getenv("HEARTWAVE_SHARED_DIR"); e && *e) return e;
  return HW_SHARED_DIR;
}

inline std::string test_data_dir() {
  if (const char* e = std::getenv("HEARTWAVE_TEST_DATA_DIR"); e && *e) return e;
  return HW_TEST_DATA_DIR;
}

}  // namespace hw::gpu_testing
