#include "device/device.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "core/error.hpp"
#include "device/driver_api.hpp"

namespace hw::gpu {

#ifdef HW_HAVE_CUDA

using detail::api;
using detail::check;

namespace {
CUstream raw(const Stream& s) { return static_cast<CUstream>(s.handle()); }
}  // namespace

// ---- Stream ----------------------------------------------------------------------------

Stream::Stream(Device* dev, int priority) : dev_(dev) {
  dev->make_current();
  CUstream s = nullptr;
  // Non-blocking: no implicit ordering with the legacy default stream, which nothing uses.
  check(api().stream_create(&s, CU_STREAM_NON_BLOCKING, priority), "cuStreamCreateWithPriority");
  s_ = s;
}

Stream::~Stream() {
  if (s_) detail::api_unchecked().stream_destroy(static_cast<CUstream>(s_));
}

void Stream::synchronize() const {
  check(api().stream_synchronize(static_cast<CUstream>(s_)), "cuStreamSynchronize (a kernel failed)");
}

// ---- Device ----------------------------------------------------------------------------

std::shared_ptr<Device> Device::open(int ordinal) {
  return std::shared_ptr<Device>(new Device(device_info(ordinal)));
}

Device::Device(const DeviceInfo& info) : info_(info) {
  const detail::Api& a = api();
  CUdevice dev = 0;
  check(a.device_get(&dev, info.ordinal), "cuDeviceGet");
  CUcontext ctx = nullptr;
  if (CUresult r = a.primary_retain(&ctx, dev); r != CUDA_SUCCESS) {
    const char* m = nullptr;
    a.error_string(r, &m);
    throw Error(fmt::format("GPU: could not open a context on GPU {} ({}): {}; use --backend cpu", info.ordinal,
                            info.name, m ? m : "unknown error"));
  }
  ctx_ = ctx;
  make_current();
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = info.ordinal;
  CUmemoryPool pool = nullptr;
  check(a.pool_create(&pool, &props), "cuMemPoolCreate");
  pool_ = pool;
  // Keep what is freed for the next allocation rather than handing it back at every sync.
  cuuint64_t keep = std::numeric_limits<cuuint64_t>::max();
  check(a.pool_set_attribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep), "cuMemPoolSetAttribute");
  int least = 0, greatest = 0;  // numerically: greatest priority is the smallest number
  check(a.stream_priority_range(&least, &greatest), "cuCtxGetStreamPriorityRange");
  compute_.reset(new Stream(this, least));
  priority_.reset(new Stream(this, greatest));
}

Device::~Device() {
  const detail::Api& a = detail::api_unchecked();
  if (!ctx_) return;
  a.ctx_set_current(static_cast<CUcontext>(ctx_));
  if (compute_) a.stream_synchronize(raw(*compute_));
  if (priority_) a.stream_synchronize(raw(*priority_));
  compute_.reset();
  priority_.reset();
  for (const auto& list : free_events_)
    for (void* e : list) a.event_destroy(static_cast<CUevent>(e));
  if (pool_) a.pool_destroy(static_cast<CUmemoryPool>(pool_));
  CUdevice dev = 0;
  if (a.device_get(&dev, info_.ordinal) == CUDA_SUCCESS) a.primary_release(dev);
}

void Device::make_current() const {
  check(api().ctx_set_current(static_cast<CUcontext>(ctx_)), "cuCtxSetCurrent");
}

std::pair<std::size_t, std::size_t> Device::memory_info() const {
  make_current();
  std::size_t free = 0, total = 0;
  check(api().mem_info(&free, &total), "cuMemGetInfo");
  return {free, total};
}

void Device::synchronize() const {
  make_current();
  compute_->synchronize();
  priority_->synchronize();
}

Event Device::event(bool timing) {
  {
    std::lock_guard<std::mutex> lock(events_m_);
    std::vector<void*>& list = free_events_[timing];
    if (!list.empty()) {
      void* e = list.back();
      list.pop_back();
      return Event(shared_from_this(), e, timing);
    }
  }
  make_current();
  CUevent e = nullptr;
  check(api().event_create(&e, timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  return Event(shared_from_this(), e, timing);
}

void Device::give_back(void* e, bool timing) noexcept {
  try {
    std::lock_guard<std::mutex> lock(events_m_);
    free_events_[timing].push_back(e);
  } catch (...) {
    detail::api_unchecked().event_destroy(static_cast<CUevent>(e));
  }
}

// ---- Event -----------------------------------------------------------------------------

Event::~Event() {
  if (e_) dev_->give_back(e_, timing_);
}

Event::Event(Event&& o) noexcept : dev_(std::move(o.dev_)), e_(std::exchange(o.e_, nullptr)), timing_(o.timing_) {}

Event& Event::operator=(Event&& o) noexcept {
  if (this != &o) {
    if (e_) dev_->give_back(e_, timing_);
    dev_ = std::move(o.dev_);
    e_ = std::exchange(o.e_, nullptr);
    timing_ = o.timing_;
  }
  return *this;
}

void Event::record(const Stream& on) { record(on.handle()); }

void Event::record(void* raw_stream) {
  check(api().event_record(static_cast<CUevent>(e_), static_cast<CUstream>(raw_stream)), "cuEventRecord");
}

void Event::wait_on(const Stream& s) const { wait_on(s.handle()); }

void Event::wait_on(void* raw_stream) const {
  check(api().stream_wait_event(static_cast<CUstream>(raw_stream), static_cast<CUevent>(e_), 0), "cuStreamWaitEvent");
}

void Event::synchronize() const {
  dev_->make_current();
  check(api().event_synchronize(static_cast<CUevent>(e_)), "cuEventSynchronize");
}

double Event::ms_since(const Event& start) const {
  synchronize();
  float ms = 0;
  check(api().event_elapsed(&ms, static_cast<CUevent>(start.e_), static_cast<CUevent>(e_)), "cuEventElapsedTime");
  return ms;
}

// ---- DeviceBuffer ----------------------------------------------------------------------

DeviceBuffer::DeviceBuffer(Device& dev, std::size_t bytes, const char* what)
    : dev_(dev.shared_from_this()), bytes_(bytes) {
  if (bytes == 0) return;
  dev.make_current();
  CUdeviceptr p = 0;
  const CUresult r = api().alloc_from_pool(&p, bytes, static_cast<CUmemoryPool>(dev.pool()), raw(dev.compute()));
  if (r == CUDA_ERROR_OUT_OF_MEMORY) {
    const auto [free, total] = dev.memory_info();
    throw Error(fmt::format("GPU {} out of memory: {} needs {:.1f} MiB, {:.1f} MiB of {:.1f} MiB are "
                            "free; run in float (time.precision = \"float\"), on a smaller case, "
                            "on more GPUs, or with --backend cpu",
                            dev.ordinal(), what, bytes / 1048576.0, free / 1048576.0, total / 1048576.0));
  }
  check(r, what);
  p_ = p;
}

void DeviceBuffer::release() noexcept {
  if (!p_) return;
  dev_->make_current();
  detail::api_unchecked().free_async(CUdeviceptr(p_), raw(dev_->compute()));
  p_ = 0;
}

DeviceBuffer::~DeviceBuffer() {
  try {
    release();
  } catch (...) {  // a destructor must not throw; the context is gone with the process
  }
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : dev_(std::move(o.dev_)), p_(o.p_), bytes_(o.bytes_) {
  o.p_ = 0;
  o.bytes_ = 0;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    try {
      release();
    } catch (...) {
    }
    dev_ = std::move(o.dev_);
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
  dev_->make_current();
  const Stream& s = dev_->compute();
  check(api().htod_async(CUdeviceptr(p_ + offset), src, bytes, raw(s)), "cuMemcpyHtoDAsync");
  s.synchronize();
}

void DeviceBuffer::download(void* dst, std::size_t bytes, std::size_t offset) const {
  if (bytes == 0) return;
  if (offset + bytes > bytes_) throw Error("GPU: download past the end of a buffer");
  dev_->make_current();
  const Stream& s = dev_->compute();
  check(api().dtoh_async(dst, CUdeviceptr(p_ + offset), bytes, raw(s)), "cuMemcpyDtoHAsync");
  s.synchronize();
}

void DeviceBuffer::fill_zero() const {
  if (!bytes_) return;
  dev_->make_current();
  check(api().memset8_async(CUdeviceptr(p_), 0, bytes_, raw(dev_->compute())), "cuMemsetD8Async");
}

void copy_device(const Stream& on, DevicePtr dst, DevicePtr src, std::size_t bytes) {
  if (!bytes) return;
  on.device().make_current();
  check(api().dtod_async(CUdeviceptr(dst), CUdeviceptr(src), bytes, raw(on)), "cuMemcpyDtoDAsync");
}

// ---- SharedBuffer, PeerMapping ----------------------------------------------------------

SharedBuffer::SharedBuffer(Device& dev, std::size_t bytes, const char* what) : dev_(dev.shared_from_this()) {
  dev.make_current();
  CUdeviceptr p = 0;
  check(api().mem_alloc(&p, bytes), what);
  p_ = p;
  check(api().memset8_async(p, 0, bytes, raw(dev.compute())), "cuMemsetD8Async");
  dev.compute().synchronize();
}

SharedBuffer::~SharedBuffer() {
  if (!p_) return;
  dev_->make_current();
  detail::api_unchecked().mem_free(CUdeviceptr(p_));
}

SharedBuffer::Handle SharedBuffer::handle() const {
  CUipcMemHandle h{};
  dev_->make_current();
  check(api().ipc_get_handle(&h, CUdeviceptr(p_)), "cuIpcGetMemHandle");
  Handle out{};
  static_assert(sizeof h == sizeof out);
  std::memcpy(out.data(), &h, sizeof h);
  return out;
}

PeerMapping::PeerMapping(Device& dev, const SharedBuffer::Handle& h) : dev_(dev.shared_from_this()) {
  CUipcMemHandle raw_handle{};
  std::memcpy(&raw_handle, h.data(), sizeof raw_handle);
  dev.make_current();
  CUdeviceptr p = 0;
  check(api().ipc_open_handle(&p, raw_handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
        "cuIpcOpenMemHandle (another rank's GPU memory)");
  p_ = p;
}

PeerMapping::~PeerMapping() {
  if (!p_) return;
  dev_->make_current();
  detail::api_unchecked().ipc_close_handle(CUdeviceptr(p_));
}

// ---- HostCopy --------------------------------------------------------------------------

HostCopy::HostCopy(Device& dev, std::size_t bytes, const char* what)
    : dev_(dev.shared_from_this()), stage_(dev, bytes, what), capacity_(bytes) {
  dev.make_current();
  const detail::Api& a = api();
  if (bytes) {
    const CUresult r = a.host_alloc(&host_, bytes, 0);
    if (r == CUDA_ERROR_OUT_OF_MEMORY)
      throw Error(fmt::format("out of pinned host memory: {} needs {:.1f} MiB; write fewer "
                              "variables per output, or run on a smaller case",
                              what, bytes / 1048576.0));
    check(r, "cuMemHostAlloc");
  }
  CUstream st = nullptr;
  check(a.stream_create(&st, CU_STREAM_NON_BLOCKING, 0), "cuStreamCreateWithPriority");
  stream_ = st;
  staged_ = dev.event();
  landed_ = dev.event();
}

HostCopy::~HostCopy() {
  const detail::Api& a = detail::api_unchecked();
  try {
    dev_->make_current();
  } catch (...) {
    return;
  }
  try {
    landed_.synchronize();  // nothing may land in freed memory
  } catch (...) {
  }
  if (stream_) a.stream_destroy(static_cast<CUstream>(stream_));
  if (host_) a.host_free(host_);
}

void HostCopy::start(DevicePtr src, std::size_t bytes) {
  if (bytes > capacity_) throw Error("GPU: a host copy larger than its buffer (internal error)");
  const detail::Api& a = api();
  dev_->make_current();
  CUstream compute = raw(dev_->compute());
  auto* st = static_cast<CUstream>(stream_);
  // A copy dropped unread may still be reading stage_ on stream_ (an event never recorded
  // is complete: the first start() waits for nothing).
  landed_.wait_on(compute);
  check(a.dtod_async(CUdeviceptr(stage_.ptr()), CUdeviceptr(src), bytes, compute), "cuMemcpyDtoDAsync");
  staged_.record(compute);
  staged_.wait_on(st);
  check(a.dtoh_async(host_, CUdeviceptr(stage_.ptr()), bytes, st), "cuMemcpyDtoHAsync");
  landed_.record(st);
}

const void* HostCopy::wait() {
  landed_.synchronize();
  return host_;
}

// ---- Module, launches, graphs ----------------------------------------------------------

Module::Module(Device& dev, const std::string& image) : dev_(dev.shared_from_this()) {
  dev.make_current();
  CUmodule m = nullptr;
  check(api().module_load(&m, image.data()), "cuModuleLoadData (loading the compiled kernels)");
  m_ = m;
}

Module::~Module() {
  if (!m_) return;
  try {
    dev_->make_current();
    detail::api_unchecked().module_unload(static_cast<CUmodule>(m_));
  } catch (...) {
  }
}

Module::Module(Module&& o) noexcept : dev_(std::move(o.dev_)), m_(o.m_) { o.m_ = nullptr; }

Module& Module::operator=(Module&& o) noexcept {
  if (this != &o) {
    if (m_) {
      try {
        dev_->make_current();
        detail::api_unchecked().module_unload(static_cast<CUmodule>(m_));
      } catch (...) {
      }
    }
    dev_ = std::move(o.dev_);
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

void launch(const Stream& on, void* f, Dim3 grid, Dim3 block, void** args, unsigned shared_bytes) {
  if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0) return;
  on.device().make_current();
  check(api().launch(static_cast<CUfunction>(f), grid[0], grid[1], grid[2], block[0], block[1], block[2],
                     shared_bytes, raw(on), args, nullptr),
        "cuLaunchKernel");
}

void launch_cooperative(const Stream& on, void* f, Dim3 grid, Dim3 block, void** args) {
  on.device().make_current();
  check(api().launch_cooperative(static_cast<CUfunction>(f), grid[0], grid[1], grid[2], block[0], block[1], block[2], 0,
                                 raw(on), args),
        "cuLaunchCooperativeKernel");
}

KernelGraph::~KernelGraph() {
  const detail::Api& a = detail::api_unchecked();
  if (exec_) a.graph_exec_destroy(static_cast<CUgraphExec>(exec_));
  if (g_) a.graph_destroy(static_cast<CUgraph>(g_));
}

void* KernelGraph::graph() {
  if (!g_) {
    CUgraph g = nullptr;
    check(api().graph_create(&g, 0), "cuGraphCreate");
    g_ = g;
  }
  return body_ ? body_ : g_;
}

void KernelGraph::add(void* f, Dim3 grid, Dim3 block, void** args) {
  if (exec_) throw Error("KernelGraph::add after launch (internal error)");
  CUgraph into = static_cast<CUgraph>(graph());
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
  void*& after = body_ ? body_last_ : last_;
  CUgraphNode node = nullptr, last = static_cast<CUgraphNode>(after);
  check(api().graph_add_kernel(&node, into, last ? &last : nullptr, last ? 1 : 0, &k), "cuGraphAddKernelNode");
  after = node;
  ++nodes_;
}

bool KernelGraph::loops_supported() {
  const detail::Api& a = detail::api_unchecked();
  return a.graph_add_node && a.graph_conditional_handle && a.ctx_get_current;
}

namespace {
CUcontext current_context(const Device& dev) {
  if (!KernelGraph::loops_supported())
    throw Error("the NVIDIA driver has no loops in CUDA graphs (CUDA 12.3 or newer needed; internal error: "
                "ask KernelGraph::loops_supported first)");
  dev.make_current();
  CUcontext ctx = nullptr;
  check(api().ctx_get_current(&ctx), "cuCtxGetCurrent");
  return ctx;
}
}  // namespace

unsigned long long KernelGraph::loop_handle(const Device& dev) {
  if (exec_ || body_) throw Error("KernelGraph::loop_handle inside a loop or after launch (internal error)");
  const CUcontext ctx = current_context(dev);
  CUgraphConditionalHandle h = 0;
  check(api().graph_conditional_handle(&h, static_cast<CUgraph>(graph()), ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT),
        "cuGraphConditionalHandleCreate");
  return static_cast<unsigned long long>(h);
}

void KernelGraph::begin_loop(const Device& dev, unsigned long long handle) {
  if (exec_ || body_) throw Error("KernelGraph::begin_loop inside a loop or after launch (internal error)");
  const CUcontext ctx = current_context(dev);
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
  p.conditional.handle = static_cast<CUgraphConditionalHandle>(handle);
  p.conditional.type = CU_GRAPH_COND_TYPE_WHILE;
  p.conditional.size = 1;
  p.conditional.ctx = ctx;
  CUgraphNode node = nullptr, last = static_cast<CUgraphNode>(last_);
  check(api().graph_add_node(&node, static_cast<CUgraph>(graph()), last ? &last : nullptr, nullptr, last ? 1 : 0, &p),
        "cuGraphAddNode (a loop)");
  last_ = node;
  body_ = p.conditional.phGraph_out[0];
  body_last_ = nullptr;
}

void KernelGraph::end_loop() {
  if (!body_) throw Error("KernelGraph::end_loop without begin_loop (internal error)");
  body_ = nullptr;
  body_last_ = nullptr;
}

void KernelGraph::begin_capture(const Stream& on) {
  if (g_) throw Error("KernelGraph::begin_capture on a graph already built (internal error)");
  on.device().make_current();
  // Thread-local: only this thread's calls are captured (an output writer's copies are not).
  check(api().stream_begin_capture(raw(on), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture");
}

void KernelGraph::end_capture(const Stream& on) {
  CUgraph g = nullptr;
  check(api().stream_end_capture(raw(on), &g), "cuStreamEndCapture");
  g_ = g;
  nodes_ = -1;  // not counted
}

void KernelGraph::launch(const Stream& on) {
  if (!g_) return;
  on.device().make_current();
  if (!exec_) {
    CUgraphExec e = nullptr;
    check(api().graph_instantiate(&e, static_cast<CUgraph>(g_), 0), "cuGraphInstantiateWithFlags");
    exec_ = e;
  }
  check(api().graph_launch(static_cast<CUgraphExec>(exec_), raw(on)), "cuGraphLaunch");
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

// ---- Timer, the copy roof --------------------------------------------------------------

Timer::Timer(const Stream& on) : on_(&on), a_(on.device().event(true)), b_(on.device().event(true)) {}

void Timer::start() { a_.record(*on_); }

double Timer::stop_ms() {
  b_.record(*on_);
  return b_.ms_since(a_);
}

double measure_copy_roof(Device& dev, std::size_t bytes, int repeats) {
  const auto [free, total] = dev.memory_info();
  (void)total;
  bytes = std::min(bytes, free / 4);
  DeviceBuffer a(dev, bytes, "the copy roof's source"), b(dev, bytes, "the copy roof's target");
  a.fill_zero();
  const Stream& s = dev.compute();
  Timer t(s);
  copy_device(s, b.ptr(), a.ptr(), bytes);  // warm-up
  std::vector<double> ms;
  for (int r = 0; r < repeats; ++r) {
    t.start();
    copy_device(s, b.ptr(), a.ptr(), bytes);
    ms.push_back(t.stop_ms());
  }
  std::sort(ms.begin(), ms.end());
  return 2.0 * double(bytes) / (ms[ms.size() / 2] * 1e-3);
}

#else  // built without the CUDA toolkit: everything links, and says why it cannot run

namespace {
[[noreturn]] void unbuilt() {
  throw Error("GPU: this heartwave was built without the CUDA toolkit; install it "
              "(nvidia-cuda-toolkit) and rebuild, or use --backend cpu");
}
}  // namespace

Stream::Stream(Device* dev, int) : dev_(dev) { unbuilt(); }
Stream::~Stream() = default;
void Stream::synchronize() const { unbuilt(); }
std::shared_ptr<Device> Device::open(int) { unbuilt(); }
Device::Device(const DeviceInfo& info) : info_(info) { unbuilt(); }
Device::~Device() = default;
void Device::make_current() const { unbuilt(); }
std::pair<std::size_t, std::size_t> Device::memory_info() const { unbuilt(); }
void Device::synchronize() const { unbuilt(); }
Event Device::event(bool) { unbuilt(); }
void Device::give_back(void*, bool) noexcept {}
Event::~Event() = default;
Event::Event(Event&&) noexcept {}
Event& Event::operator=(Event&&) noexcept { return *this; }
void Event::record(const Stream&) { unbuilt(); }
void Event::record(void*) { unbuilt(); }
void Event::wait_on(const Stream&) const { unbuilt(); }
void Event::wait_on(void*) const { unbuilt(); }
void Event::synchronize() const { unbuilt(); }
double Event::ms_since(const Event&) const { unbuilt(); }
DeviceBuffer::DeviceBuffer(Device&, std::size_t, const char*) { unbuilt(); }
void DeviceBuffer::release() noexcept {}
DeviceBuffer::~DeviceBuffer() = default;
DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept : p_(o.p_), bytes_(o.bytes_) {}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&&) noexcept { return *this; }
void DeviceBuffer::upload(const void*, std::size_t, std::size_t) { unbuilt(); }
void DeviceBuffer::download(void*, std::size_t, std::size_t) const { unbuilt(); }
void DeviceBuffer::fill_zero() const { unbuilt(); }
void copy_device(const Stream&, DevicePtr, DevicePtr, std::size_t) { unbuilt(); }
SharedBuffer::SharedBuffer(Device&, std::size_t, const char*) { unbuilt(); }
SharedBuffer::~SharedBuffer() = default;
SharedBuffer::Handle SharedBuffer::handle() const { unbuilt(); }
PeerMapping::PeerMapping(Device&, const SharedBuffer::Handle&) { unbuilt(); }
PeerMapping::~PeerMapping() = default;
HostCopy::HostCopy(Device&, std::size_t, const char*) { unbuilt(); }
HostCopy::~HostCopy() = default;
void HostCopy::start(DevicePtr, std::size_t) { unbuilt(); }
const void* HostCopy::wait() { unbuilt(); }
Module::Module(Device&, const std::string&) { unbuilt(); }
Module::~Module() = default;
Module::Module(Module&&) noexcept {}
Module& Module::operator=(Module&&) noexcept { return *this; }
void* Module::function(const std::string&) const { unbuilt(); }
void launch(const Stream&, void*, Dim3, Dim3, void**, unsigned) { unbuilt(); }
void launch_cooperative(const Stream&, void*, Dim3, Dim3, void**) { unbuilt(); }
KernelGraph::~KernelGraph() = default;
void KernelGraph::add(void*, Dim3, Dim3, void**) { unbuilt(); }
void KernelGraph::launch(const Stream&) { unbuilt(); }
void KernelGraph::begin_capture(const Stream&) { unbuilt(); }
void KernelGraph::end_capture(const Stream&) { unbuilt(); }
bool KernelGraph::loops_supported() { return false; }
unsigned long long KernelGraph::loop_handle(const Device&) { unbuilt(); }
void KernelGraph::begin_loop(const Device&, unsigned long long) { unbuilt(); }
void KernelGraph::end_loop() { unbuilt(); }
KernelResources kernel_resources(void*) { unbuilt(); }
Timer::Timer(const Stream& on) : on_(&on) { unbuilt(); }
void Timer::start() { unbuilt(); }
double Timer::stop_ms() { unbuilt(); }
double measure_copy_roof(Device&, std::size_t, int) { unbuilt(); }

#endif

}  // namespace hw::gpu
