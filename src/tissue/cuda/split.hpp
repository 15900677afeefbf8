// The CUDA engine's share of a split run (docs/parallel.md): the rows of its slab (Split,
// tissue/split.hpp, as the cpu engine has them), and the moves of device memory between
// the ranks' GPUs: the halo exchange of V around each diffusing pass, and the gathers that
// give every rank the whole state before the outputs read it.
//
// The halos of explicit steps go by peer stores where every rank is on one host
// (tissue/cuda/peer_halo.hpp: one kernel per exchange that also agrees on failures, so the
// steps go into CUDA graphs). Else, and for the gathers, GPU to GPU through NCCL
// (comm/device_link.hpp) on the Device's high-priority stream: the compute stream records
// an event when the field's faces are written, the exchange waits for it, and the pass's
// boundary rows wait for the exchange while its interior rows run beside it. Where NCCL is
// absent they are staged through host memory and the host communicator (MPI), with no
// overlap: correct everywhere, fast only on the GPUs' own links.
#pragma once

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "comm/device_link.hpp"
#include "comm/watchdog.hpp"
#include "device/device.hpp"
#include "tissue/cuda/peer_halo.hpp"
#include "tissue/split.hpp"

namespace hw::tissue::cuda {

class DeviceSplit {
 public:
  DeviceSplit(comm::Communicator* comm, const SimSetup& s, gpu::Device& dev)
      : split_(comm, s.geo.grid, s.geo.mask, s.order == StencilOrder::fourth ? 2 : 1), dev_(dev) {
    if (!split_.active()) return;
    link_ = comm::make_nccl_link(*comm, &why_not_nccl_);
    faces_written_ = dev.event();
    halo_arrived_ = dev.event();
    if (link_) arm_watchdog();
  }

  // A scope whose waits on the GPU may wait for other ranks (the steps, the gathers): past
  // HEARTWAVE_RANK_TIMEOUT the process ends with a message (comm/watchdog.hpp).
  comm::Watchdog::Armed deadline(const char* what) const { return comm::Watchdog::Armed(watchdog_.get(), what); }

  bool active() const { return split_.active(); }
  // Whether the ranks agree on failures on the GPUs (agree_on_device after each step), so
  // that steps can be queued in batches; else the host agrees after every step.
  bool agrees_on_device() const { return link_ != nullptr || peer_ != nullptr; }
  // fail (the failure flag's two words: the failing cell's word, the step) = the least over
  // the ranks, queued on the compute stream after the step's kernels: the next step's
  // kernels on every rank see a failure of any rank and do nothing, as on one GPU.
  void agree_on_device(gpu::DevicePtr fail) {
    if (peer_) {
      peer_->agree(fail);
      return;
    }
    link_->allreduce_min(reinterpret_cast<unsigned long long*>(fail), 2, dev_.compute().handle());
  }
  const Split& split() const { return split_; }

  // Peer stores (tissue/cuda/peer_halo.hpp) carry the halos of explicit steps where every
  // rank is on this host and maps the others' GPU memory, unless HEARTWAVE_HALOS=nccl
  // (HEARTWAVE_HALOS=peer: they must, or the run stops saying why). The gathers stay with
  // NCCL, or staged through MPI without it. Every rank calls it at the same point and they
  // agree.
  template <class Real>
  void enable_peer_stores(const RowLayout& L) {
    const char* e = std::getenv("HEARTWAVE_HALOS");
    const std::string asked = e ? e : "";
    if (asked == "nccl") {
      why_not_peer_ = "HEARTWAVE_HALOS=nccl";
      return;
    }
    if (!asked.empty() && asked != "peer")
      throw Error(fmt::format("HEARTWAVE_HALOS={}: say peer (GPU memory stores between the ranks of one host) or nccl",
                              asked));
    if (PeerHalo::possible(split_.comm(), why_not_peer_)) {
      try {
        peer_ = std::make_unique<PeerHalo>(split_, dev_, split_.faces(L, sizeof(Real)));
      } catch (const Error& x) {
        why_not_peer_ = x.what();
      }
    }
    if (!peer_ && asked == "peer")
      throw Error("HEARTWAVE_HALOS=peer, but no peer stores between these ranks' GPUs: " + why_not_peer_ +
                  " (leave HEARTWAVE_HALOS unset to take NCCL or MPI instead)");
    // The peer stores' waits on the GPU have no deadline of their own either.
    if (peer_ && !watchdog_) arm_watchdog();
  }
  bool peer() const { return peer_ != nullptr; }
  // Queues a peer exchange on the compute stream: v's halos (a field of the layout and
  // precision given to enable_peer_stores) and the ranks' failure words folded into fail.
  void peer_exchange(const gpu::DeviceBuffer& v, gpu::DevicePtr fail) { peer_->exchange(v, fail); }
  // What carries the halos, for the run's description.
  std::string carrier() const {
    if (peer_)
      return "peer stores between the GPUs (" +
             (link_ ? link_->describe() : "host memory and MPI, staged (" + why_not_nccl_ + "),") + " for the gathers)";
    if (link_)
      return link_->describe() + (why_not_peer_.empty() ? std::string() : " (no peer stores: " + why_not_peer_ + ")");
    return "host memory and MPI (staged; " + why_not_nccl_ + ")";
  }

  // Queues the exchange of field v's face rows (layout L) after the work queued so far on
  // the compute stream; finish_halo() makes the work queued after it wait for the halos.
  template <class Real>
  void start_halo(const gpu::DeviceBuffer& v, const RowLayout& L) {
    std::vector<comm::Transfer> sends, recvs;
    split_.halo_transfers(reinterpret_cast<Real*>(v.ptr()), L, sends, recvs);
    if (link_) {
      faces_written_.record(dev_.compute());
      faces_written_.wait_on(dev_.priority());
      link_->exchange(sends, recvs, dev_.priority().handle());
      halo_arrived_.record(dev_.priority());
      return;
    }
    // Staged: the faces to the host (after the queued kernels), through MPI, back.
    staged_.resize(sends.size() + recvs.size());
    std::vector<comm::Transfer> hs = sends, hr = recvs;
    for (std::size_t i = 0; i < sends.size(); ++i) {
      staged_[i].resize(sends[i].bytes);
      v.download(staged_[i].data(), sends[i].bytes, offset_in(v, sends[i]));
      hs[i].data = staged_[i].data();
    }
    for (std::size_t i = 0; i < recvs.size(); ++i) {
      auto& b = staged_[sends.size() + i];
      b.resize(recvs[i].bytes);
      hr[i].data = b.data();
    }
    split_.comm().start_exchange(hs, hr);
    pending_ = {&v, recvs};
  }
  void finish_halo() {
    if (link_) {
      halo_arrived_.wait_on(dev_.compute());
      return;
    }
    split_.comm().finish_exchange();
    const std::size_t first = staged_.size() - pending_.recvs.size();
    for (std::size_t i = 0; i < pending_.recvs.size(); ++i)
      const_cast<gpu::DeviceBuffer*>(pending_.v)->upload(staged_[first + i].data(), pending_.recvs[i].bytes,
                                                         offset_in(*pending_.v, pending_.recvs[i]));
  }

  // Every rank's ranges (bytes, Split's *_ranges) of the device array b reach every rank.
  void gather(const gpu::DeviceBuffer& b, std::size_t base, std::vector<std::size_t> off,
              const std::vector<std::size_t>& cnt) {
    for (auto& o : off) o += base;
    if (link_) {
      link_->allgather(reinterpret_cast<void*>(b.ptr()), off, cnt, dev_.compute().handle());
      return;
    }
    std::vector<unsigned char> host(b.bytes());
    b.download(host.data(), host.size());
    split_.comm().allgather(host.data(), off, cnt);
    const_cast<gpu::DeviceBuffer&>(b).upload(host.data(), host.size());
  }

 private:
  // NCCL's waits and the peer stores' have no deadline of their own (the staged path's MPI
  // waits do).
  void arm_watchdog() {
    comm::Communicator& c = split_.comm();
    watchdog_ = std::make_unique<comm::Watchdog>(comm::rank_timeout_seconds(),
                                                 "rank " + std::to_string(c.rank()) + " of " + std::to_string(c.size()));
  }

  static std::size_t offset_in(const gpu::DeviceBuffer& v, const comm::Transfer& t) {
    return std::size_t(reinterpret_cast<gpu::DevicePtr>(t.data) - v.ptr());
  }

  Split split_;
  gpu::Device& dev_;
  std::unique_ptr<comm::DeviceLink> link_;
  std::unique_ptr<comm::Watchdog> watchdog_;  // with link_ or peer_: the deadline of their waits
  std::string why_not_nccl_;
  std::unique_ptr<PeerHalo> peer_;  // peer stores carry the steps' halos
  std::string why_not_peer_;
  gpu::Event faces_written_, halo_arrived_;
  std::vector<std::vector<unsigned char>> staged_;  // the staged faces: sends, then receives
  struct Pending {
    const gpu::DeviceBuffer* v = nullptr;
    std::vector<comm::Transfer> recvs;
  } pending_;
};

}  // namespace hw::tissue::cuda
