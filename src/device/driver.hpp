// The CUDA driver, loaded at run time: whether it is there, and what GPUs it sees.
//
// Why the driver API through dlopen rather than the runtime linked in: one heartwave binary
// then starts on every machine, with or without an NVIDIA driver (CI, laptops), and says in
// one line why there is no GPU instead of failing to load; and kernels compiled by NVRTC at
// run time are loaded as modules, which is the driver API's business anyway. Every call is
// checked: a failure is an hw::Error naming the call and the driver's own words.
//
// What runs on a GPU runs on a Device (device/device.hpp): its context, streams and memory.
// Built without the CUDA toolkit (HW_HAVE_CUDA undefined) everything here still links:
// gpu_status() says so and the rest throws.
#pragma once

#include <cstddef>
#include <string>

namespace hw::gpu {

// What one GPU looks like.
struct DeviceInfo {
  int ordinal = 0;  // as the driver counts them (after CUDA_VISIBLE_DEVICES)
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int multiprocessors = 0;
  std::size_t total_bytes = 0;
  std::size_t l2_bytes = 0;
  int driver_version = 0;  // e.g. 13000 for CUDA 13.0
  std::string arch() const { return "sm_" + std::to_string(cc_major * 10 + cc_minor); }
};

// Whether a GPU can be used, and if not, why (one line a user can act on); `device` is the
// first GPU's description.
struct GpuStatus {
  bool usable = false;
  std::string why;  // empty when usable
  DeviceInfo device;
};
// Loads the driver and looks for devices, once; never throws.
const GpuStatus& gpu_status();

// The GPUs the driver sees (0 when none is usable).
int device_count();

// GPU `ordinal`'s description; hw::Error when there is no such usable GPU.
DeviceInfo device_info(int ordinal);

}  // namespace hw::gpu
