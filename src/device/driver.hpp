// The CUDA driver, loaded at run time, and small owners of what it hands out.
//
// Why the driver API through dlopen rather than the runtime linked in: one heartwave binary
// then starts on every machine, with or without an NVIDIA driver (CI, laptops), and says in
// one line why there is no GPU instead of failing to load; and kernels compiled by NVRTC at
// run time are loaded as modules, which is the driver API's business anyway. Every call is
// checked: a failure is an hw::Error naming the call and the driver's own words.
//
// Built without the CUDA toolkit (HW_HAVE_CUDA undefined) everything here still links:
// gpu_status() says so and the rest throws.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hw::gpu {

// What the first device looks like (the one every engine uses).
struct DeviceInfo {
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int multiprocessors = 0;
  std::size_t total_bytes = 0;
  std::size_t l2_bytes = 0;
  int driver_version = 0;  // e.g. 13000 for CUDA 13.0
  std::string arch() const { return "sm_" + std::to_string(cc_major * 10 + cc_minor); }
};

// Whether a GPU can be used, and if not, why (one line a user can act on).
struct GpuStatus {
  bool usable = false;
  std::string why;  // empty when usable
  DeviceInfo device;
};
// Loads the driver and looks for a device, once; never throws.
const GpuStatus& gpu_status();

// The primary context of device 0, made current on the calling thread. Throws hw::Error
// with gpu_status().why when there is no usable GPU.
void make_current();

using DevicePtr = std::uint64_t;  // CUdeviceptr

// Owns a device allocation. Out of memory names the bytes asked and the bytes free.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(std::size_t bytes, const char* what);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  DevicePtr ptr() const { return p_; }
  std::size_t bytes() const { return bytes_; }
  bool empty() const { return bytes_ == 0; }
  void upload(const void* src, std::size_t bytes, std::size_t offset = 0);
  void download(void* dst, std::size_t bytes, std::size_t offset = 0) const;
  void fill_zero() const;  // the contents, not the handle: const

  template <class T>
  static DeviceBuffer from(const std::vector<T>& v, const char* what) {
    DeviceBuffer b(v.size() * sizeof(T), what);
    if (!v.empty()) b.upload(v.data(), v.size() * sizeof(T));
    return b;
  }

 private:
  DevicePtr p_ = 0;
  std::size_t bytes_ = 0;
};

void copy_device(DevicePtr dst, DevicePtr src, std::size_t bytes);

// A copy of device memory to the host that runs beside the work queued after it: start()
// copies into a device buffer of its own on the default stream, in order after the kernels
// queued before (a device-to-device copy, microseconds), then into pinned host memory on a
// stream of its own, which does not wait for the kernels queued after. wait() blocks until
// the bytes have landed. Why: a field snapshot of a large case is tens of MB; the steps
// after it then go on while the bytes cross PCIe and while a host thread writes the file.
class HostCopy {
 public:
  HostCopy(std::size_t bytes, const char* what);
  ~HostCopy();
  HostCopy(const HostCopy&) = delete;
  HostCopy& operator=(const HostCopy&) = delete;
  std::size_t capacity() const { return capacity_; }
  void start(DevicePtr src, std::size_t bytes);
  const void* wait();  // any thread

 private:
  DeviceBuffer stage_;
  void* host_ = nullptr;
  void* stream_ = nullptr;
  void* staged_ = nullptr;  // event on the default stream: stage_ holds the bytes
  void* landed_ = nullptr;  // event on stream_: host_ holds them
  std::size_t capacity_ = 0;
};

// Free and total device memory in bytes.
std::pair<std::size_t, std::size_t> memory_info();

// A loaded module (a cubin from NVRTC) and its kernels.
class Module {
 public:
  Module() = default;
  explicit Module(const std::string& image);
  ~Module();
  Module(Module&& o) noexcept;
  Module& operator=(Module&& o) noexcept;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  void* function(const std::string& name) const;  // CUfunction; throws if absent

 private:
  void* m_ = nullptr;
};

// Launches kernel f on the default stream; args as for cuLaunchKernel.
using Dim3 = std::array<unsigned, 3>;
void launch(void* f, Dim3 grid, Dim3 block, void** args, unsigned shared_bytes = 0);
inline void launch(void* f, unsigned grid_x, unsigned grid_y, unsigned block_x, void** args,
                   unsigned shared_bytes = 0) {
  launch(f, {grid_x, grid_y, 1}, {block_x, 1, 1}, args, shared_bytes);
}
void synchronize();

// A fixed sequence of kernel launches, each after the one before, built once and launched
// many times with one call (a CUDA graph). Why: a small grid's step lasts a few µs, about
// what the host needs to queue one launch, so a busy host leaves the GPU idle between steps;
// one graph launch queues a whole batch of steps. The arguments are copied when a kernel
// is added, so every launch of the graph runs with the same ones.
class KernelGraph {
 public:
  KernelGraph() = default;
  ~KernelGraph();
  KernelGraph(const KernelGraph&) = delete;
  KernelGraph& operator=(const KernelGraph&) = delete;
  void add(void* f, Dim3 grid, Dim3 block, void** args);
  void launch();  // on the default stream; instantiated at the first launch
  int kernels() const { return nodes_; }

 private:
  void* g_ = nullptr;
  void* exec_ = nullptr;
  void* last_ = nullptr;
  int nodes_ = 0;
};
// Registers per thread and local (spill) bytes of a kernel, for describe() and tuning.
struct KernelResources {
  int registers = 0, local_bytes = 0, max_threads = 0;
};
KernelResources kernel_resources(void* f);

// Milliseconds of device time between two events recorded around a region.
class Timer {
 public:
  Timer();
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;
  void start();
  double stop_ms();  // synchronises

 private:
  void* a_ = nullptr;
  void* b_ = nullptr;
};

// Device-to-device copy rate in bytes/s (read + written), the memory roof the benchmarks
// compare against: a copy of `bytes` bytes repeated, the median of the repeats.
double measure_copy_roof(std::size_t bytes = std::size_t(1) << 30, int repeats = 20);

}  // namespace hw::gpu
