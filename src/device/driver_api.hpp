// The driver's entry points as the device floor's .cpp files call them (private to
// src/device/: the rest of heartwave sees device.hpp and driver.hpp only, which need no
// CUDA header).
#pragma once

#ifdef HW_HAVE_CUDA
#include <cuda.h>

namespace hw::gpu::detail {

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
  decltype(&::cuDevicePrimaryCtxRelease) primary_release;
  decltype(&::cuCtxSetCurrent) ctx_set_current;
  decltype(&::cuCtxGetStreamPriorityRange) stream_priority_range;
  decltype(&::cuMemGetInfo) mem_info;
  decltype(&::cuMemPoolCreate) pool_create;
  decltype(&::cuMemPoolDestroy) pool_destroy;
  decltype(&::cuMemPoolSetAttribute) pool_set_attribute;
  decltype(&::cuMemAllocFromPoolAsync) alloc_from_pool;
  decltype(&::cuMemFreeAsync) free_async;
  decltype(&::cuMemcpyHtoDAsync) htod_async;
  decltype(&::cuMemcpyDtoHAsync) dtoh_async;
  decltype(&::cuMemcpyDtoDAsync) dtod_async;
  decltype(&::cuMemsetD8Async) memset8_async;
  decltype(&::cuMemHostAlloc) host_alloc;
  decltype(&::cuMemFreeHost) host_free;
  decltype(&::cuStreamCreateWithPriority) stream_create;
  decltype(&::cuStreamDestroy) stream_destroy;
  decltype(&::cuStreamSynchronize) stream_synchronize;
  decltype(&::cuStreamWaitEvent) stream_wait_event;
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
  decltype(&::cuStreamBeginCapture) stream_begin_capture;
  decltype(&::cuMemAlloc) mem_alloc;
  decltype(&::cuLaunchCooperativeKernel) launch_cooperative;
  decltype(&::cuMemFree) mem_free;
  decltype(&::cuIpcGetMemHandle) ipc_get_handle;
  decltype(&::cuIpcOpenMemHandle) ipc_open_handle;
  decltype(&::cuIpcCloseMemHandle) ipc_close_handle;
  decltype(&::cuStreamEndCapture) stream_end_capture;
  // Optional (null where the driver lacks them, before CUDA 12.3): loops on the device.
  decltype(&::cuCtxGetCurrent) ctx_get_current;
  decltype(&::cuGraphAddNode) graph_add_node;
  decltype(&::cuGraphConditionalHandleCreate) graph_conditional_handle;
};

// The loaded driver; hw::Error with gpu_status().why when there is no usable GPU.
const Api& api();
// The driver's table even when no GPU is usable (for destructors and error texts).
const Api& api_unchecked();
// Throws hw::Error naming `what` and the driver's words unless r is CUDA_SUCCESS.
void check(CUresult r, const char* what);

}  // namespace hw::gpu::detail
#endif
