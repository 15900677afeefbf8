#include "device/driver.hpp"

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include <fmt/format.h>

#include "core/error.hpp"

#ifdef HW_HAVE_CUDA
#include <cuda.h>
#include <dlfcn.h>
#endif

namespace hw::gpu {

#ifdef HW_HAVE_CUDA

namespace {

// The driver entry points heartwave uses, resolved by cuGetProcAddress at the ABI of the
// CUDA version we compile against (so cuMemAlloc is the _v2 one, and so on).
struct Api {
  decltype(&::cuInit) init;
  decltype(&::cuDriverGetVersion) driver_version;
  decltype(&::cuGetErrorString) error_string;
  decltype(&::cuGetErrorName) error_name;
  decltype(&::cuDeviceGetCount) device_count;
  decltype(&::cuDeviceGet) device_get;
  decltype(&::cuDeviceGetName) device_name;
  decltype(&::cuDeviceGetAttribute) device_attribute;
  decltype(&::cuDeviceTotalMem) device_total_mem;
  decltype(&::cuDevicePrimaryCtxRetain) primary_retain;
  decltype(&::cuCtxSetCurrent) ctx_set_current;
  decltype(&::cuCtxSynchronize) ctx_synchronize;
  decltype(&::cuMemAlloc) mem_alloc;
  decltype(&::cuMemFree) mem_free;
  decltype(&::cuMemGetInfo) mem_info;
  decltype(&::cuMemcpyHtoD) htod;
  decltype(&::cuMemcpyDtoH) dtoh;
  decltype(&::cuMemcpyDtoD) dtod;
  decltype(&::cuMemcpyDtoDAsync) dtod_async;
  decltype(&::cuMemcpyDtoHAsync) dtoh_async;
  decltype(&::cuMemHostAlloc) host_alloc;
  decltype(&::cuMemFreeHost) host_free;
  decltype(&::cuStreamCreate) stream_create;
  decltype(&::cuStreamDestroy) stream_destroy;
  decltype(&::cuStreamWaitEvent) stream_wait_event;
  decltype(&::cuMemsetD8) memset8;
  decltype(&::cuModuleLoadData) module_load;
  decltype(&::cuModuleUnload) module_unload;
  decltype(&::cuModuleGetFunction) module_function;
  decltype(&::cuFuncGetAttribute) func_attribute;
  decltype(&::cuLaunchKernel) launch;
  decltype(&::cuEventCreate) event_create;
  decltype(&::cuEventDestroy) event_destroy;
  decltype(&::cuEventRecord) event_record;
  decltype(&::cuEventSynchronize) event_synchronize;
  decltype(&::cuEventElapsedTime) event_elapsed;
  decltype(&::cuGraphCreate) graph_create;
  decltype(&::cuGraphAddKernelNode) graph_add_kernel;
  decltype(&::cuGraphInstantiateWithFlags) graph_instantiate;
  decltype(&::cuGraphLaunch) graph_launch;
  decltype(&::cuGraphExecDestroy) graph_exec_destroy;
  decltype(&::cuGraphDestroy) graph_destroy;
};

struct State {
  GpuStatus status;
  Api api{};
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
};

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
    load(a.ctx_set_current, "cuCtxSetCurrent");
    load(a.ctx_synchronize, "cuCtxSynchronize", 12000);
    load(a.mem_alloc, "cuMemAlloc");
    load(a.mem_free, "cuMemFree");
    load(a.mem_info, "cuMemGetInfo");
    load(a.htod, "cuMemcpyHtoD");
    load(a.dtoh, "cuMemcpyDtoH");
    load(a.dtod, "cuMemcpyDtoD");
    load(a.dtod_async, "cuMemcpyDtoDAsync");
    load(a.dtoh_async, "cuMemcpyDtoHAsync");
    load(a.host_alloc, "cuMemHostAlloc");
    load(a.host_free, "cuMemFreeHost");
    load(a.stream_create, "cuStreamCreate");
    load(a.stream_destroy, "cuStreamDestroy");
    load(a.stream_wait_event, "cuStreamWaitEvent");
    load(a.memset8, "cuMemsetD8");
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
    a.device_get(&s.dev, 0);
    char name[256] = {};
    a.device_name(name, sizeof name, s.dev);
    st.device.name = name;
    int v = 0;
    a.device_attribute(&st.device.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, s.dev);
    a.device_attribute(&st.device.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, s.dev);
    a.device_attribute(&st.device.multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, s.dev);
    a.device_attribute(&v, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, s.dev);
    st.device.l2_bytes = std::size_t(v);
    std::size_t total = 0;
    a.device_total_mem(&total, s.dev);
    st.device.total_bytes = total;
    if (st.device.cc_major < 6) {
      st.why = fmt::format("the GPU {} (compute capability {}.{}) is older than heartwave supports "
                           "(6.0); use --backend cpu", st.device.name, st.device.cc_major, st.device.cc_minor);
      return;
    }
    if (CUresult r = a.primary_retain(&s.ctx, s.dev); r != CUDA_SUCCESS) {
      st.why = fmt::format("could not open a context on {} ({}); use --backend cpu", st.device.name, text(r));
      return;
    }
    st.usable = true;
  });
  return s;
}

const Api& api() {
  State& s = state();
  if (!s.status.usable) throw Error("GPU: " + s.status.why);
  return s.api;
}

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

}  // namespace

const GpuStatus& gpu_status() { return state().status; }

void make_current() {
  const Api& a = api();
  check(a.ctx_set_current(state().ctx), "cuCtxSetCurrent");
}

DeviceBuffer::DeviceBuffer(std::size_t bytes, const char* what) : bytes_(bytes) {
  if (bytes == 0) return;
  make_current();
  CUdeviceptr p = 0;
  const CUresult r = api().mem_alloc(&p, bytes);
  if (r == CUDA_ERROR_OUT_OF_MEMORY) {
    const auto [free, total] = memory_info();
    throw Error(fmt::format("GPU out of memory: {} needs {:.1f} MiB, {:.1f} MiB of {:.1f} MiB are "
                            "free; run in float (time.precision = \"float\"), on a smaller case, "
                            "or with --backend cpu",
                            what, bytes / 1048576.0, free / 1048576.0, total / 1048576.0));
  }
  check(r, what);
  p_ = p;
}

DeviceBuffer::~DeviceBuffer() {
  if (p_) api().mem_free(CUdeviceptr(p_));
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept : p_(o.p_), bytes_(o.bytes_) {
  o.p_ = 0;
  o.bytes_ = 0;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (p_) api().mem_free(CUdeviceptr(p_));
    p_ = o.p_;
    bytes_ = o.bytes_;
    o.p_ = 0;
    o.bytes_ = 0;
  }
  return *this;
}

void DeviceBuffer::upload(const void* src, std::size_t bytes, std::size_t offset) {
  if (bytes == 0) return;
  if (offset + bytes > bytes_) throw Error("GPU: upload past the end of a buffer");
  check(api().htod(CUdeviceptr(p_ + offset), src, bytes), "cuMemcpyHtoD");
}

void DeviceBuffer::download(void* dst, std::size_t bytes, std::size_t offset) const {
  if (bytes == 0) return;
  if (offset + bytes > bytes_) throw Error("GPU: download past the end of a buffer");
  check(api().dtoh(dst, CUdeviceptr(p_ + offset), bytes), "cuMemcpyDtoH");
}

void DeviceBuffer::fill_zero() const {
  if (bytes_) check(api().memset8(CUdeviceptr(p_), 0, bytes_), "cuMemsetD8");
}

void copy_device(DevicePtr dst, DevicePtr src, std::size_t bytes) {
  if (bytes) check(api().dtod(CUdeviceptr(dst), CUdeviceptr(src), bytes), "cuMemcpyDtoD");
}

HostCopy::HostCopy(std::size_t bytes, const char* what) : stage_(bytes, what), capacity_(bytes) {
  make_current();
  const Api& a = api();
  if (bytes) {
    const CUresult r = a.host_alloc(&host_, bytes, 0);
    if (r == CUDA_ERROR_OUT_OF_MEMORY)
      throw Error(fmt::format("out of pinned host memory: {} needs {:.1f} MiB; write fewer "
                              "variables per output, or run on a smaller case",
                              what, bytes / 1048576.0));
    check(r, "cuMemHostAlloc");
  }
  CUstream st = nullptr;
  // Non-blocking: a stream created plainly would wait for the default stream's kernels.
  check(a.stream_create(&st, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  stream_ = st;
  CUevent e1 = nullptr, e2 = nullptr;
  check(a.event_create(&e1, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  staged_ = e1;
  check(a.event_create(&e2, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  landed_ = e2;
}

HostCopy::~HostCopy() {
  const Api& a = state().api;
  if (landed_) {
    a.event_synchronize(static_cast<CUevent>(landed_));  // nothing may land in freed memory
    a.event_destroy(static_cast<CUevent>(landed_));
  }
  if (staged_) a.event_destroy(static_cast<CUevent>(staged_));
  if (stream_) a.stream_destroy(static_cast<CUstream>(stream_));
  if (host_) a.host_free(host_);
}

void HostCopy::start(DevicePtr src, std::size_t bytes) {
  if (bytes > capacity_) throw Error("GPU: a host copy larger than its buffer (internal error)");
  const Api& a = api();
  make_current();
  auto* st = static_cast<CUstream>(stream_);
  // A copy dropped unread may still be reading stage_ on stream_ (an event never recorded
  // is complete: the first start() waits for nothing).
  check(a.stream_wait_event(nullptr, static_cast<CUevent>(landed_), 0), "cuStreamWaitEvent");
  check(a.dtod_async(CUdeviceptr(stage_.ptr()), CUdeviceptr(src), bytes, nullptr), "cuMemcpyDtoDAsync");
  check(a.event_record(static_cast<CUevent>(staged_), nullptr), "cuEventRecord");
  check(a.stream_wait_event(st, static_cast<CUevent>(staged_), 0), "cuStreamWaitEvent");
  check(a.dtoh_async(host_, CUdeviceptr(stage_.ptr()), bytes, st), "cuMemcpyDtoHAsync");
  check(a.event_record(static_cast<CUevent>(landed_), st), "cuEventRecord");
}

const void* HostCopy::wait() {
  make_current();
  check(api().event_synchronize(static_cast<CUevent>(landed_)), "cuEventSynchronize (a field copy)");
  return host_;
}

std::pair<std::size_t, std::size_t> memory_info() {
  make_current();
  std::size_t free = 0, total = 0;
  check(api().mem_info(&free, &total), "cuMemGetInfo");
  return {free, total};
}

Module::Module(const std::string& image) {
  make_current();
  CUmodule m = nullptr;
  check(api().module_load(&m, image.data()), "cuModuleLoadData (loading the compiled kernels)");
  m_ = m;
}

Module::~Module() {
  if (m_) api().module_unload(static_cast<CUmodule>(m_));
}

Module::Module(Module&& o) noexcept : m_(o.m_) { o.m_ = nullptr; }

Module& Module::operator=(Module&& o) noexcept {
  if (this != &o) {
    if (m_) api().module_unload(static_cast<CUmodule>(m_));
    m_ = o.m_;
    o.m_ = nullptr;
  }
  return *this;
}

void* Module::function(const std::string& name) const {
  CUfunction f = nullptr;
  check(api().module_function(&f, static_cast<CUmodule>(m_), name.c_str()),
        ("cuModuleGetFunction " + name).c_str());
  return f;
}

void launch(void* f, Dim3 grid, Dim3 block, void** args, unsigned shared_bytes) {
  if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0) return;
  check(api().launch(static_cast<CUfunction>(f), grid[0], grid[1], grid[2], block[0], block[1],
                     block[2], shared_bytes, nullptr, args, nullptr),
        "cuLaunchKernel");
}

void synchronize() { check(api().ctx_synchronize(), "cuCtxSynchronize (a kernel failed)"); }

KernelGraph::~KernelGraph() {
  if (exec_) api().graph_exec_destroy(static_cast<CUgraphExec>(exec_));
  if (g_) api().graph_destroy(static_cast<CUgraph>(g_));
}

void KernelGraph::add(void* f, Dim3 grid, Dim3 block, void** args) {
  if (exec_) throw Error("KernelGraph::add after launch (internal error)");
  if (!g_) {
    CUgraph g = nullptr;
    check(api().graph_create(&g, 0), "cuGraphCreate");
    g_ = g;
  }
  if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0) return;
  CUDA_KERNEL_NODE_PARAMS k{};
  k.func = static_cast<CUfunction>(f);
  k.gridDimX = grid[0];
  k.gridDimY = grid[1];
  k.gridDimZ = grid[2];
  k.blockDimX = block[0];
  k.blockDimY = block[1];
  k.blockDimZ = block[2];
  k.kernelParams = args;
  CUgraphNode node = nullptr, last = static_cast<CUgraphNode>(last_);
  check(api().graph_add_kernel(&node, static_cast<CUgraph>(g_), last ? &last : nullptr, last ? 1 : 0, &k),
        "cuGraphAddKernelNode");
  last_ = node;
  ++nodes_;
}

void KernelGraph::launch() {
  if (!g_) return;
  if (!exec_) {
    CUgraphExec e = nullptr;
    check(api().graph_instantiate(&e, static_cast<CUgraph>(g_), 0), "cuGraphInstantiateWithFlags");
    exec_ = e;
  }
  check(api().graph_launch(static_cast<CUgraphExec>(exec_), nullptr), "cuGraphLaunch");
}

KernelResources kernel_resources(void* f) {
  KernelResources r;
  auto fn = static_cast<CUfunction>(f);
  check(api().func_attribute(&r.registers, CU_FUNC_ATTRIBUTE_NUM_REGS, fn), "cuFuncGetAttribute");
  check(api().func_attribute(&r.local_bytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, fn), "cuFuncGetAttribute");
  check(api().func_attribute(&r.max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn),
        "cuFuncGetAttribute");
  return r;
}

Timer::Timer() {
  make_current();
  CUevent a = nullptr, b = nullptr;
  check(api().event_create(&a, CU_EVENT_DEFAULT), "cuEventCreate");
  check(api().event_create(&b, CU_EVENT_DEFAULT), "cuEventCreate");
  a_ = a;
  b_ = b;
}

Timer::~Timer() {
  if (a_) api().event_destroy(static_cast<CUevent>(a_));
  if (b_) api().event_destroy(static_cast<CUevent>(b_));
}

void Timer::start() { check(api().event_record(static_cast<CUevent>(a_), nullptr), "cuEventRecord"); }

double Timer::stop_ms() {
  check(api().event_record(static_cast<CUevent>(b_), nullptr), "cuEventRecord");
  check(api().event_synchronize(static_cast<CUevent>(b_)), "cuEventSynchronize");
  float ms = 0;
  check(api().event_elapsed(&ms, static_cast<CUevent>(a_), static_cast<CUevent>(b_)),
        "cuEventElapsedTime");
  return ms;
}

double measure_copy_roof(std::size_t bytes, int repeats) {
  const auto [free, total] = memory_info();
  (void)total;
  bytes = std::min(bytes, free / 4);
  DeviceBuffer a(bytes, "the copy roof's source"), b(bytes, "the copy roof's target");
  a.fill_zero();
  Timer t;
  copy_device(b.ptr(), a.ptr(), bytes);  // warm-up
  std::vector<double> ms;
  for (int r = 0; r < repeats; ++r) {
    t.start();
    copy_device(b.ptr(), a.ptr(), bytes);
    ms.push_back(t.stop_ms());
  }
  std::sort(ms.begin(), ms.end());
  return 2.0 * double(bytes) / (ms[ms.size() / 2] * 1e-3);
}

#else  // built without the CUDA toolkit

namespace {
[[noreturn]] void unbuilt() {
  throw Error("GPU: this heartwave was built without the CUDA toolkit; install it "
              "(nvidia-cuda-toolkit) and rebuild, or use --backend cpu");
}
}  // namespace

const GpuStatus& gpu_status() {
  static const GpuStatus s{false, "this heartwave was built without the CUDA toolkit", {}};
  return s;
}
void make_current() { unbuilt(); }
DeviceBuffer::DeviceBuffer(std::size_t, const char*) { unbuilt(); }
DeviceBuffer::~DeviceBuffer() = default;
DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept : p_(o.p_), bytes_(o.bytes_) {}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&&) noexcept { return *this; }
void DeviceBuffer::upload(const void*, std::size_t, std::size_t) { unbuilt(); }
void DeviceBuffer::download(void*, std::size_t, std::size_t) const { unbuilt(); }
void DeviceBuffer::fill_zero() const { unbuilt(); }
void copy_device(DevicePtr, DevicePtr, std::size_t) { unbuilt(); }
HostCopy::HostCopy(std::size_t, const char*) { unbuilt(); }
HostCopy::~HostCopy() = default;
void HostCopy::start(DevicePtr, std::size_t) { unbuilt(); }
const void* HostCopy::wait() { unbuilt(); }
std::pair<std::size_t, std::size_t> memory_info() { unbuilt(); }
Module::Module(const std::string&) { unbuilt(); }
Module::~Module() = default;
Module::Module(Module&&) noexcept {}
Module& Module::operator=(Module&&) noexcept { return *this; }
void* Module::function(const std::string&) const { unbuilt(); }
void launch(void*, Dim3, Dim3, void**, unsigned) { unbuilt(); }
void synchronize() { unbuilt(); }
KernelGraph::~KernelGraph() = default;
void KernelGraph::add(void*, Dim3, Dim3, void**) { unbuilt(); }
void KernelGraph::launch() { unbuilt(); }
KernelResources kernel_resources(void*) { unbuilt(); }
Timer::Timer() { unbuilt(); }
Timer::~Timer() = default;
void Timer::start() { unbuilt(); }
double Timer::stop_ms() { unbuilt(); }
double measure_copy_roof(std::size_t, int) { unbuilt(); }

#endif

}  // namespace hw::gpu
