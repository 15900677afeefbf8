// A GPU as the rest of heartwave uses it: a Device owns a context, its streams, events and
// a memory pool, and is handed to whatever runs on it (an engine, a population, a
// benchmark). Every launch and copy names the stream it runs on.
//
// Why an executor object (Ginkgo's executor, AMReX's streams) rather than "the current
// device": a run on several GPUs of one host holds one Device per GPU in one process, and
// the boundary layers of a split run go on a high-priority stream beside the interior's, so
// no code may assume device 0, the primary context made current once, or the default
// stream. Two Devices on one GPU are independent too: their streams do not wait for each
// other and their pools do not share memory.
//
// Allocations come from the Device's own pool, ordered on its compute stream (the driver's
// stream-ordered allocator): a buffer freed and one allocated after it on the same stream
// reuse memory without a device-wide synchronisation, and the pool keeps freed memory for
// the next allocation instead of handing it back to the driver.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "device/driver.hpp"

namespace hw::gpu {

using DevicePtr = std::uint64_t;  // CUdeviceptr
using Dim3 = std::array<unsigned, 3>;

class Device;
class Stream;

// A point in a stream's work, from its Device's pool of events: record() it on one stream,
// and another stream (wait_on) or the host (synchronize) waits for the work before it.
// Why events belong to the Device: streams of one Device hand work to each other by them
// (a snapshot's copy stream, the boundary layers of a split run), and a run's timers and
// copies take and give back events without creating them per use.
class Event {
 public:
  Event() = default;
  ~Event();
  Event(Event&& o) noexcept;
  Event& operator=(Event&& o) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(const Stream& on);
  void wait_on(const Stream& s) const;  // work queued on s after this waits for the event
  void wait_on(void* raw_stream) const;  // the same for a stream the Device does not own
  void record(void* raw_stream);
  void synchronize() const;  // the host waits (an event never recorded is complete)
  // Milliseconds from `start` to this event, both recorded and timing events; synchronises.
  double ms_since(const Event& start) const;

 private:
  friend class Device;
  Event(std::shared_ptr<Device> dev, void* e, bool timing) : dev_(std::move(dev)), e_(e), timing_(timing) {}
  std::shared_ptr<Device> dev_;
  void* e_ = nullptr;  // CUevent
  bool timing_ = false;
};

// A stream of a Device: launches and copies on it run in order; streams run side by side.
class Stream {
 public:
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();
  void* handle() const { return s_; }  // CUstream
  Device& device() const { return *dev_; }
  void synchronize() const;  // waits for everything queued so far

 private:
  friend class Device;
  Stream(Device* dev, int priority);
  Device* dev_;
  void* s_ = nullptr;
};

class Device : public std::enable_shared_from_this<Device> {
 public:
  // Opens GPU `ordinal` (its primary context, two streams and a pool of its own); hw::Error
  // with the reason when there is no such usable GPU.
  static std::shared_ptr<Device> open(int ordinal);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const DeviceInfo& info() const { return info_; }
  int ordinal() const { return info_.ordinal; }
  // The stream every kernel of a step runs on, and a high-priority one for work the rest
  // waits for (the boundary layers of a split run).
  Stream& compute() const { return *compute_; }
  Stream& priority() const { return *priority_; }
  // Makes the context current on the calling thread (each call that needs it does so).
  void make_current() const;
  std::pair<std::size_t, std::size_t> memory_info() const;  // free and total bytes
  void synchronize() const;  // both streams
  void* pool() const { return pool_; }  // CUmemoryPool
  // An event from the Device's pool (timing: it can time a region, Event::ms_since; events
  // without timing are cheaper to record and wait on).
  Event event(bool timing = false);

 private:
  friend class Event;
  explicit Device(const DeviceInfo& info);
  void give_back(void* e, bool timing) noexcept;
  DeviceInfo info_;
  std::mutex events_m_;  // events come back from any thread (a snapshot read by a writer)
  std::array<std::vector<void*>, 2> free_events_;  // [timing]: CUevents given back
  void* ctx_ = nullptr;   // CUcontext: the primary context, retained
  void* pool_ = nullptr;  // CUmemoryPool
  std::unique_ptr<Stream> compute_, priority_;
};

// Owns device memory of a Device's pool, allocated and freed in order on its compute
// stream. Copies are ordered after the kernels queued on that stream and return when done.
// Out of memory names the bytes asked and the bytes free.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(Device& dev, std::size_t bytes, const char* what);
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
  void fill_zero() const;  // queued on the compute stream; the contents, not the handle: const

  template <class T>
  static DeviceBuffer from(Device& dev, const std::vector<T>& v, const char* what) {
    DeviceBuffer b(dev, v.size() * sizeof(T), what);
    if (!v.empty()) b.upload(v.data(), v.size() * sizeof(T));
    return b;
  }

 private:
  void release() noexcept;
  std::shared_ptr<Device> dev_;
  DevicePtr p_ = 0;
  std::size_t bytes_ = 0;
};

// dst = src, queued on `on`.
void copy_device(const Stream& on, DevicePtr dst, DevicePtr src, std::size_t bytes);

// Device memory that the other processes of this host can map (CUDA IPC), zeroed: the peer
// stores of a split run write into a neighbour's (tissue/cuda/peer_halo.hpp). Plain
// cuMemAlloc memory, not the Device's pool: a pool's allocations have no such handle.
class SharedBuffer {
 public:
  using Handle = std::array<unsigned char, 64>;  // CU_IPC_HANDLE_SIZE
  SharedBuffer(Device& dev, std::size_t bytes, const char* what);
  ~SharedBuffer();
  SharedBuffer(const SharedBuffer&) = delete;
  SharedBuffer& operator=(const SharedBuffer&) = delete;
  DevicePtr ptr() const { return p_; }
  Handle handle() const;  // what another process opens (PeerMapping)

 private:
  std::shared_ptr<Device> dev_;
  DevicePtr p_ = 0;
};

// Another process's SharedBuffer, mapped into this one for `dev` (over NVLink or PCIe where
// the GPUs are peers). Throws hw::Error where it cannot be mapped.
class PeerMapping {
 public:
  PeerMapping(Device& dev, const SharedBuffer::Handle& h);
  ~PeerMapping();
  PeerMapping(const PeerMapping&) = delete;
  PeerMapping& operator=(const PeerMapping&) = delete;
  DevicePtr ptr() const { return p_; }

 private:
  std::shared_ptr<Device> dev_;
  DevicePtr p_ = 0;
};

// A copy of device memory to the host that runs beside the work queued after it: start()
// copies into a device buffer of its own on the compute stream, in order after the kernels
// queued before (a device-to-device copy, microseconds), then into pinned host memory on a
// stream of its own, which does not wait for the kernels queued after. wait() blocks until
// the bytes have landed. Why: a field snapshot of a large case is tens of MB; the steps
// after it then go on while the bytes cross PCIe and while a host thread writes the file.
class HostCopy {
 public:
  HostCopy(Device& dev, std::size_t bytes, const char* what);
  ~HostCopy();
  HostCopy(const HostCopy&) = delete;
  HostCopy& operator=(const HostCopy&) = delete;
  std::size_t capacity() const { return capacity_; }
  void start(DevicePtr src, std::size_t bytes);
  const void* wait();  // any thread

 private:
  std::shared_ptr<Device> dev_;
  DeviceBuffer stage_;
  void* host_ = nullptr;
  void* stream_ = nullptr;
  Event staged_;  // on the compute stream: stage_ holds the bytes
  Event landed_;  // on stream_: host_ holds them
  std::size_t capacity_ = 0;
};

// A loaded module (a cubin from NVRTC) on a Device, and its kernels.
class Module {
 public:
  Module() = default;
  Module(Device& dev, const std::string& image);
  ~Module();
  Module(Module&& o) noexcept;
  Module& operator=(Module&& o) noexcept;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  void* function(const std::string& name) const;  // CUfunction; throws if absent

 private:
  std::shared_ptr<Device> dev_;
  void* m_ = nullptr;
};

// Launches kernel f on stream `on`; args as for cuLaunchKernel.
void launch(const Stream& on, void* f, Dim3 grid, Dim3 block, void** args, unsigned shared_bytes = 0);
// The same with every block resident at once (cuLaunchCooperativeKernel): blocks may wait
// for each other. The grid must fit the GPU at once (at most a block per SM is safe).
void launch_cooperative(const Stream& on, void* f, Dim3 grid, Dim3 block, void** args);

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
  // Or, instead of add(), what this thread queues on `on` between these two, and on the
  // streams `on` hands work to by events (which must hand back before end_capture): what a
  // library queues (NCCL's exchanges, which are no kernel nodes) becomes part of it too.
  void begin_capture(const Stream& on);
  void end_capture(const Stream& on);
  void launch(const Stream& on);  // instantiated at the first launch
  int kernels() const { return nodes_; }

  // A loop on the device (a conditional WHILE node): the kernels added between begin_loop
  // and end_loop run, in order, again and again while the value last set on its handle is
  // not zero (1 as each launch of the graph begins; a kernel, in the loop or before it, sets
  // it with cudaGraphSetConditional(handle, value)). Why: a loop whose length the GPU finds
  // out (a CG's iterations) then needs no host round trip to stop. The handle comes first
  // (loop_handle), so kernels added before the loop can set it too. loops_supported():
  // whether the driver has them (CUDA 12.3).
  static bool loops_supported();
  unsigned long long loop_handle(const Device& dev);
  void begin_loop(const Device& dev, unsigned long long handle);
  void end_loop();

 private:
  void* graph();  // the graph that add() extends: the loop's body inside a loop
  void* g_ = nullptr;
  void* exec_ = nullptr;
  void* last_ = nullptr;
  void* body_ = nullptr;       // the loop's body graph, between begin_loop and end_loop
  void* body_last_ = nullptr;  // its last node
  int nodes_ = 0;
};

// Registers per thread and local (spill) bytes of a kernel, for describe() and tuning.
struct KernelResources {
  int registers = 0, local_bytes = 0, max_threads = 0;
};
KernelResources kernel_resources(void* f);

// Milliseconds of device time between two events recorded on a stream around a region.
class Timer {
 public:
  explicit Timer(const Stream& on);
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;
  void start();
  double stop_ms();  // synchronises

 private:
  const Stream* on_;
  Event a_, b_;
};

// Device-to-device copy rate in bytes/s (read + written), the memory roof the benchmarks
// compare against: a copy of `bytes` bytes repeated, the median of the repeats.
double measure_copy_roof(Device& dev, std::size_t bytes = std::size_t(1) << 30, int repeats = 20);

}  // namespace hw::gpu
