#include "device/driver.hpp"
#include "device/driver_api.hpp"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"

#ifdef HW_HAVE_CUDA
#include <dlfcn.h>
#endif

namespace hw::gpu {

#ifdef HW_HAVE_CUDA

namespace detail {

namespace {

struct State {
  GpuStatus status;
  Api api{};
  std::vector<DeviceInfo> devices;  // the usable ones, by ordinal
};

// What the driver says of GPU `ordinal`.
DeviceInfo describe(const Api& a, int ordinal) {
  DeviceInfo d;
  d.ordinal = ordinal;
  CUdevice dev = 0;
  a.device_get(&dev, ordinal);
  char name[256] = {};
  a.device_name(name, sizeof name, dev);
  d.name = name;
  int v = 0;
  a.device_attribute(&d.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  a.device_attribute(&d.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  a.device_attribute(&d.multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
  a.device_attribute(&v, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev);
  d.l2_bytes = std::size_t(v);
  std::size_t total = 0;
  a.device_total_mem(&total, dev);
  d.total_bytes = total;
  a.driver_version(&d.driver_version);
  return d;
}

State& state() {
  static State s;
  static std::once_flag once;
  std::call_once(once, [] {
    GpuStatus& st = s.status;
    const char* env = std::getenv("HEARTWAVE_LIBCUDA");
    void* lib = dlopen(env && *env ? env : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      st.why = "no NVIDIA driver found (libcuda.so.1 could not be loaded); use --backend cpu, "
               "or set HEARTWAVE_LIBCUDA to the driver library's path";
      return;
    }
    using GetProc = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
    auto get_proc = reinterpret_cast<GetProc>(dlsym(lib, "cuGetProcAddress_v2"));
    if (!get_proc) {
      st.why = "the NVIDIA driver is too old for heartwave (no cuGetProcAddress_v2; CUDA 12 or "
               "newer drivers needed); update the driver or use --backend cpu";
      return;
    }
    bool missing = false;
    std::string missing_name;
    // version: the ABI asked for. The header's CUDA_VERSION matches the macro'd names
    // (cuMemAlloc is cuMemAlloc_v2), except where a newer version changed the signature of a
    // name the header leaves unversioned (CUDA 13's cuCtxSynchronize_v2 takes a context).
    auto load = [&](auto& fn, const char* name, int version = CUDA_VERSION) {
      void* p = nullptr;
      CUdriverProcAddressQueryResult q{};
      if (get_proc(name, &p, version, CU_GET_PROC_ADDRESS_DEFAULT, &q) != CUDA_SUCCESS || !p) {
        if (!missing) missing_name = name;
        missing = true;
        return;
      }
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
    };
    Api& a = s.api;
    load(a.init, "cuInit");
    load(a.driver_version, "cuDriverGetVersion");
    load(a.error_string, "cuGetErrorString");
    load(a.error_name, "cuGetErrorName");
    load(a.device_count, "cuDeviceGetCount");
    load(a.device_get, "cuDeviceGet");
    load(a.device_name, "cuDeviceGetName");
    load(a.device_attribute, "cuDeviceGetAttribute");
    load(a.device_total_mem, "cuDeviceTotalMem");
    load(a.primary_retain, "cuDevicePrimaryCtxRetain");
    load(a.primary_release, "cuDevicePrimaryCtxRelease");
    load(a.ctx_set_current, "cuCtxSetCurrent");
    load(a.stream_priority_range, "cuCtxGetStreamPriorityRange");
    load(a.mem_info, "cuMemGetInfo");
    load(a.pool_create, "cuMemPoolCreate");
    load(a.pool_destroy, "cuMemPoolDestroy");
    load(a.pool_set_attribute, "cuMemPoolSetAttribute");
    load(a.alloc_from_pool, "cuMemAllocFromPoolAsync");
    load(a.free_async, "cuMemFreeAsync");
    load(a.htod_async, "cuMemcpyHtoDAsync");
    load(a.dtoh_async, "cuMemcpyDtoHAsync");
    load(a.dtod_async, "cuMemcpyDtoDAsync");
    load(a.memset8_async, "cuMemsetD8Async");
    load(a.host_alloc, "cuMemHostAlloc");
    load(a.host_free, "cuMemFreeHost");
    load(a.stream_create, "cuStreamCreateWithPriority");
    load(a.stream_destroy, "cuStreamDestroy");
    load(a.stream_synchronize, "cuStreamSynchronize");
    load(a.stream_wait_event, "cuStreamWaitEvent");
    load(a.module_load, "cuModuleLoadData");
    load(a.module_unload, "cuModuleUnload");
    load(a.module_function, "cuModuleGetFunction");
    load(a.func_attribute, "cuFuncGetAttribute");
    load(a.launch, "cuLaunchKernel");
    load(a.event_create, "cuEventCreate");
    load(a.event_destroy, "cuEventDestroy");
    load(a.event_record, "cuEventRecord");
    load(a.event_synchronize, "cuEventSynchronize");
    load(a.event_elapsed, "cuEventElapsedTime");
    load(a.graph_create, "cuGraphCreate");
    load(a.graph_add_kernel, "cuGraphAddKernelNode");
    load(a.graph_instantiate, "cuGraphInstantiateWithFlags");
    load(a.graph_launch, "cuGraphLaunch");
    load(a.graph_exec_destroy, "cuGraphExecDestroy");
    load(a.graph_destroy, "cuGraphDestroy");
    load(a.stream_begin_capture, "cuStreamBeginCapture");
    load(a.mem_alloc, "cuMemAlloc");
    load(a.launch_cooperative, "cuLaunchCooperativeKernel");
    load(a.mem_free, "cuMemFree");
    load(a.ipc_get_handle, "cuIpcGetMemHandle");
    load(a.ipc_open_handle, "cuIpcOpenMemHandle");
    load(a.ipc_close_handle, "cuIpcCloseMemHandle");
    load(a.stream_end_capture, "cuStreamEndCapture");
    // Loops in graphs (KernelGraph::begin_loop) are used where the driver has them.
    const bool had_missing = missing;
    load(a.ctx_get_current, "cuCtxGetCurrent");
    load(a.graph_add_node, "cuGraphAddNode");
    load(a.graph_conditional_handle, "cuGraphConditionalHandleCreate");
    if (!a.ctx_get_current || !a.graph_add_node || !a.graph_conditional_handle)
      a.ctx_get_current = nullptr, a.graph_add_node = nullptr, a.graph_conditional_handle = nullptr;
    missing = had_missing;
    if (missing) {
      st.why = fmt::format("the NVIDIA driver lacks {} (too old for CUDA {}.{}); update the driver "
                           "or use --backend cpu", missing_name, CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
      return;
    }
    auto text = [&](CUresult r) {
      const char* m = nullptr;
      a.error_string(r, &m);
      return std::string(m ? m : "unknown error");
    };
    if (CUresult r = a.init(0); r != CUDA_SUCCESS) {
      st.why = fmt::format("the NVIDIA driver could not start ({}); use --backend cpu", text(r));
      return;
    }
    int n = 0;
    if (a.device_count(&n) != CUDA_SUCCESS || n == 0) {
      st.why = "the NVIDIA driver is loaded but sees no GPU; use --backend cpu";
      return;
    }
    a.driver_version(&st.device.driver_version);
    if (st.device.driver_version < 12000) {
      st.why = fmt::format("the NVIDIA driver supports CUDA {}.{}; heartwave needs 12.0 or newer "
                           "(update the driver, or use --backend cpu)",
                           st.device.driver_version / 1000, st.device.driver_version % 1000 / 10);
      return;
    }
    for (int k = 0; k < n; ++k) s.devices.push_back(describe(a, k));
    st.device = s.devices[0];
    if (st.device.cc_major < 6) {
      st.why = fmt::format("the GPU {} (compute capability {}.{}) is older than heartwave supports "
                           "(6.0); use --backend cpu", st.device.name, st.device.cc_major, st.device.cc_minor);
      return;
    }
    st.usable = true;
  });
  return s;
}

}  // namespace

const Api& api() {
  State& s = state();
  if (!s.status.usable) throw Error("GPU: " + s.status.why);
  return s.api;
}

const Api& api_unchecked() { return state().api; }

void check(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return;
  const Api& a = state().api;
  const char* name = nullptr;
  const char* msg = nullptr;
  if (a.error_name) a.error_name(r, &name);
  if (a.error_string) a.error_string(r, &msg);
  throw Error(fmt::format("GPU: {} failed: {} ({})", what, msg ? msg : "unknown error",
                          name ? name : std::to_string(int(r))));
}

}  // namespace detail

const GpuStatus& gpu_status() { return detail::state().status; }

int device_count() {
  const detail::State& s = detail::state();
  return s.status.usable ? int(s.devices.size()) : 0;
}

DeviceInfo device_info(int ordinal) {
  detail::api();  // throws the reason when no GPU is usable
  const detail::State& s = detail::state();
  if (ordinal < 0 || ordinal >= int(s.devices.size()))
    throw Error(fmt::format("GPU: there is no GPU {} (the driver sees {}: 0 to {}); choose another with "
                            "--device, or set CUDA_VISIBLE_DEVICES",
                            ordinal, s.devices.size(), s.devices.size() - 1));
  if (s.devices[std::size_t(ordinal)].cc_major < 6)
    throw Error(fmt::format("GPU {} ({}) is older than heartwave supports (compute capability 6.0)", ordinal,
                            s.devices[std::size_t(ordinal)].name));
  return s.devices[std::size_t(ordinal)];
}

#else  // built without the CUDA toolkit

const GpuStatus& gpu_status() {
  static const GpuStatus s{false, "this heartwave was built without the CUDA toolkit", {}};
  return s;
}
int device_count() { return 0; }
DeviceInfo device_info(int) {
  throw Error("GPU: this heartwave was built without the CUDA toolkit; install it "
              "(nvidia-cuda-toolkit) and rebuild, or use --backend cpu");
}

#endif

}  // namespace hw::gpu
