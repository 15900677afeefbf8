// Device memory between the ranks' GPUs: the halo exchange and the gathers of a split CUDA
// run, queued on a CUDA stream so that they order with the kernels around them and never
// pass through the host. NCCL carries them (its point-to-point sends over NVLink or PCIe
// peer access within a host, its network transports between hosts); its communicator is
// bootstrapped through the host communicator (rank 0's unique id broadcast over MPI).
//
// Why NCCL is loaded at run time (dlopen, like the CUDA driver): the build needs neither
// its header nor its library, a binary without it still runs (the engine then stages the
// bytes through host memory and MPI), and the library a machine has (the CUDA toolkit's, a
// Python wheel's) is the one used. HEARTWAVE_NCCL names the file where it is not on the
// loader's path.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "comm/communicator.hpp"

namespace hw::comm {

class DeviceLink {
 public:
  virtual ~DeviceLink() = default;
  // What carries the bytes ("NCCL 2.21.5").
  virtual std::string describe() const = 0;
  // Queues on `stream` (a CUstream) the sends and receives of device memory; the work
  // queued on `stream` after this call sees the received bytes. Messages with the same
  // peer are matched in tag order (each pair of ranks sends them in that order).
  virtual void exchange(const std::vector<Transfer>& sends, const std::vector<Transfer>& receives, void* stream) = 0;
  // Rank r's bytes [offset[r], offset[r] + count[r]) of the device array `data` reach every
  // rank at the same place, queued on `stream` (collective).
  virtual void allgather(void* data, const std::vector<std::size_t>& offset, const std::vector<std::size_t>& count,
                         void* stream) = 0;
  // data[i] = the least of data[i] over the ranks (n unsigned 64-bit words of device memory,
  // in place), queued on `stream` (collective).
  virtual void allreduce_min(unsigned long long* data, std::size_t n, void* stream) = 0;
};

// A DeviceLink among the ranks of `host` (collective: every rank calls it, each with its
// GPU's context current on the calling thread). Null when NCCL cannot be loaded, with the
// reason in *why_not (one line); hw::Error when it loads but its set-up fails.
std::unique_ptr<DeviceLink> make_nccl_link(Communicator& host, std::string* why_not);

}  // namespace hw::comm
