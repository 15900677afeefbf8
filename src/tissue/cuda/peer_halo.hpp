// Peer stores: a split run's exchange between the GPUs of one host without NCCL or the host
// (docs/parallel.md). Each rank maps every other rank's inbox (CUDA IPC), and an exchange is
// one kernel on the compute stream (kernels/cuda/peer_halo.cuh): it writes this slab's face
// rows of V into the neighbours' inboxes and this rank's failure words into every inbox,
// then waits on the GPU for the others' and lays their rows into V's ghost rows.
// Why: with NCCL the host queues each step's exchange (NCCL's calls, events, an
// all-reduce), and a split step on 4 H200s cost 27-58 µs beyond its share of one GPU's;
// a kernel of the run's own goes into the CUDA graphs one GPU already queues its steps
// with, and the step costs 10-16 µs beyond its share.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "comm/communicator.hpp"
#include "core/error.hpp"
#include "device/compile.hpp"
#include "device/device.hpp"
#include "device/embedded.hpp"
#include "kernels/cuda/peer_halo_args.hpp"
#include "tissue/split.hpp"

namespace hw::tissue::cuda {

class PeerHalo {
 public:
  // Maps every rank's inbox, for exchanges of this rank's `faces` (Split::faces of the
  // field's layout and precision: the same for every exchange of the run). Every rank
  // calls it together; where any rank cannot set up or map the others' inboxes, every rank
  // throws hw::Error (the caller then takes NCCL).
  PeerHalo(const Split& split, gpu::Device& dev, const Split::Faces& faces) : dev_(dev) {
    comm::Communicator& c = split.comm();
    const int ranks = c.size(), me = c.rank();
    // The landing rows hold the widest face of any rank.
    double most = 0;
    for (int side = 0; side < 2; ++side) {
      args_.send_offset[side] = faces.send_offset[side];
      args_.send_bytes[side] = faces.send_bytes[side];
      args_.recv_offset[side] = faces.recv_offset[side];
      args_.recv_bytes[side] = faces.recv_bytes[side];
      most = std::max({most, double(faces.send_bytes[side]), double(faces.recv_bytes[side])});
    }
    face_bytes_ = std::size_t(most);
    c.allreduce(&most, 1, comm::Reduce::max);
    landing_bytes_ = (std::size_t(most) + 15) / 16 * 16;
    // Each step that can fail on one rank is agreed before the next collective step, so
    // that all ranks throw together and none waits alone.
    agreed(c, [&] {
      inbox_ = std::make_unique<gpu::SharedBuffer>(dev, sizeof(hw::cuda::PeerInbox) + 4 * landing_bytes_,
                                                   "the peer stores' inbox");
      counters_ = gpu::DeviceBuffer(dev, 2 * sizeof(unsigned long long), "the peer stores' counters");
      counters_.fill_zero();
      gpu::CudaSource src;
      src.name = "heartwave_peer_halo.cu";
      src.headers = gpu::embedded_sources();
      src.text = "#include \"kernels/cuda/peer_halo.cuh\"\n";
      module_ = gpu::Module(dev, gpu::compile_cuda(src, dev.info().arch()).image);
      exchange_ = module_.function("hw_peer_exchange");
      dev.compute().synchronize();  // the counters zeroed before any rank's first post
    });
    // Every rank's handle reaches every rank.
    std::vector<gpu::SharedBuffer::Handle> handles(static_cast<std::size_t>(ranks));
    handles[std::size_t(me)] = inbox_->handle();
    std::vector<std::size_t> off, cnt;
    for (int r = 0; r < ranks; ++r) {
      off.push_back(std::size_t(r) * sizeof(gpu::SharedBuffer::Handle));
      cnt.push_back(sizeof(gpu::SharedBuffer::Handle));
    }
    c.allgather(handles.data(), off, cnt);
    args_.ranks = ranks;
    args_.me = me;
    args_.previous = split.decomposition().previous(me);
    args_.next = split.decomposition().next(me);
    args_.landing_bytes = landing_bytes_;
    args_.posted = reinterpret_cast<unsigned long long*>(counters_.ptr());
    args_.ticket = reinterpret_cast<unsigned int*>(counters_.ptr() + sizeof(unsigned long long));
    agreed(c, [&] {
      for (int r = 0; r < ranks; ++r) {
        if (r == me) {
          args_.inbox[r] = reinterpret_cast<hw::cuda::PeerInbox*>(inbox_->ptr());
          continue;
        }
        mapped_.push_back(std::make_unique<gpu::PeerMapping>(dev, handles[std::size_t(r)]));
        args_.inbox[r] = reinterpret_cast<hw::cuda::PeerInbox*>(mapped_.back()->ptr());
      }
    });
  }

  // Whether peer stores can carry this run's halos: every rank on this host, at most
  // kMaxPeerRanks of them. (Whether the GPUs can reach each other is found by mapping.)
  static bool possible(const comm::Communicator& c, std::string& why_not) {
    if (c.local_size() != c.size()) {
      why_not = "the ranks are on several hosts";
      return false;
    }
    if (c.size() > hw::cuda::kMaxPeerRanks) {
      why_not = fmt::format("more than {} ranks", hw::cuda::kMaxPeerRanks);
      return false;
    }
    return true;
  }

  // Queues an exchange on the compute stream: the face rows of v (a field of the layout and
  // precision the faces were made for) out to the neighbours and theirs in, and every
  // rank's failure words folded into `fail` (the least of each word, as NCCL's all-reduce
  // gives it).
  void exchange(const gpu::DeviceBuffer& v, gpu::DevicePtr fail) {
    hw::cuda::PeerArgs a = args_;
    a.v = reinterpret_cast<unsigned char*>(v.ptr());
    launch(a, fail, face_bytes_);
  }
  // The failure words only: `fail` becomes the least over the ranks.
  void agree(gpu::DevicePtr fail) {
    hw::cuda::PeerArgs a = args_;
    for (int side = 0; side < 2; ++side) a.send_bytes[side] = a.recv_bytes[side] = 0;
    launch(a, fail, 0);
  }

 private:
  void launch(hw::cuda::PeerArgs& a, gpu::DevicePtr fail, std::size_t most) {
    a.fail = reinterpret_cast<unsigned long long*>(fail);
    void* args[] = {&a};
    // A thread per 4-byte word, at most a block per SM (all resident at once).
    const unsigned blocks = unsigned(std::max<std::size_t>((most / 4 + 255) / 256, 1));
    const unsigned resident = unsigned(std::max(1, dev_.info().multiprocessors));
    gpu::launch_cooperative(dev_.compute(), exchange_, {std::min(blocks, resident), 1, 1}, {256, 1, 1}, args);
  }

  // Runs f; if it throws on any rank, every rank throws (this one's reason, or "another rank's").
  template <class F>
  static void agreed(comm::Communicator& c, F&& f) {
    std::string why;
    try {
      f();
    } catch (const std::exception& e) {
      why = e.what();
    }
    double ok = why.empty() ? 1 : 0;
    c.allreduce(&ok, 1, comm::Reduce::min);
    if (ok == 0) throw Error(why.empty() ? "another rank could not set up its peer stores" : why);
  }

  gpu::Device& dev_;
  std::size_t face_bytes_ = 0;     // this rank's widest face
  std::size_t landing_bytes_ = 0;  // every rank's widest, rounded up to 16
  std::unique_ptr<gpu::SharedBuffer> inbox_;
  std::vector<std::unique_ptr<gpu::PeerMapping>> mapped_;
  gpu::DeviceBuffer counters_;  // posted (u64), ticket (u32)
  gpu::Module module_;
  void* exchange_ = nullptr;
  hw::cuda::PeerArgs args_{};
};

}  // namespace hw::tissue::cuda
