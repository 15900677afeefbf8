// An engine's share of a split run (docs/parallel.md): which rows this rank steps, the halo
// exchange of V with the slabs beside it, and the gathers that give every rank the whole
// state when the outputs or a checkpoint read it. The cpu engine moves host memory through
// the communicator here; the CUDA engine takes the same byte ranges (halo_transfers,
// row_ranges, part_ranges, grid_ranges) of device memory and moves them through NCCL
// (comm/device_link.hpp) or stages them through the host.
//
// Why every rank keeps whole-grid arrays: the engine's layout, kernels and set-up stay those
// of one rank (one code path, so N ranks give one rank's bits), and a gather is a copy into
// the ranges other ranks own. What a rank computes is only its slab: the stencil, the cell
// models and the maps of its rows. The cost is memory: each rank holds the whole set-up
// (docs/parallel.md lists it as the next step).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "mesh/decomposition.hpp"
#include "mesh/row_layout.hpp"
#include "tissue/reaction.hpp"

namespace hw::tissue {

class Split {
 public:
  // One rank (comm null or of size 1): the whole grid, no messages.
  Split(comm::Communicator* comm, const Grid& g, const Mask& mask, int ghost_planes) : nx_(std::size_t(g.nx())) {
    rows_ = std::size_t(g.ny()) * std::size_t(g.nz());
    if (comm && comm->size() > 1) {
      comm_ = comm;
      dec_ = decompose(g, mask, comm->size(), ghost_planes);
      const Slab& s = dec_.slabs[std::size_t(comm->rank())];
      r0_ = s.row_begin;
      r1_ = s.row_end;
    } else {
      r1_ = rows_;
    }
  }

  bool active() const { return comm_ != nullptr; }
  int rank() const { return comm_ ? comm_->rank() : 0; }
  std::size_t row_begin() const { return r0_; }
  std::size_t row_end() const { return r1_; }
  // Rows within the stencil's reach of a neighbour's slab: stepped after the halos arrive.
  std::size_t ghost_rows() const { return comm_ ? dec_.ghost_rows : 0; }
  std::size_t cell_begin() const { return r0_ * nx_; }
  std::size_t cell_end() const { return r1_ * nx_; }
  bool owns(std::size_t n) const { return n >= cell_begin() && n < cell_end(); }
  // Whether this rank owns a value a probe reads: V at grid index `index` (part < 0), or a
  // state of part `part` at its compact index `index`.
  bool owns_value(int part, std::size_t index, const std::vector<Part>& parts) const {
    return owns(part < 0 ? index : parts[std::size_t(part)].grid_index(index));
  }
  const Decomposition& decomposition() const { return dec_; }
  comm::Communicator& comm() const { return *comm_; }

  // Sends this slab's face rows of v (storage of layout L) to the slabs beside it and
  // posts the receives of theirs into the rows around this slab; finish_halo() waits.
  template <class Real>
  void start_halo(Real* v, const RowLayout& L) {
    if (!comm_) return;
    std::vector<comm::Transfer> sends, recvs;
    halo_transfers(v, L, sends, recvs);
    comm_->start_exchange(sends, recvs);
  }
  void finish_halo() {
    if (comm_) comm_->finish_exchange();
  }
  // The exchange as byte ranges of the field's storage (elements of `size` bytes), by side:
  // 0 towards/from the previous slab, 1 the next (bytes 0 where there is no neighbour).
  // What this rank sends to its next slab lands where that slab receives from its previous
  // one: the same rows, so the same offset in every rank's whole-grid array (the peer
  // stores, tissue/cuda/peer_halo.hpp, write it there).
  struct Faces {
    std::size_t send_offset[2] = {0, 0}, send_bytes[2] = {0, 0};
    std::size_t recv_offset[2] = {0, 0}, recv_bytes[2] = {0, 0};
  };
  Faces faces(const RowLayout& L, std::size_t size) const {
    Faces f;
    if (!comm_) return f;
    const int r = comm_->rank();
    const std::size_t g = dec_.ghost_rows;
    auto range = [&](std::size_t a, std::size_t b, std::size_t& off, std::size_t& bytes) {
      off = L.first(a) * size;
      bytes = (L.first(b) - L.first(a)) * size;
    };
    if (dec_.previous(r) >= 0) {
      range(r0_, r0_ + g, f.send_offset[0], f.send_bytes[0]);
      const std::size_t a = wrap(std::ptrdiff_t(r0_) - std::ptrdiff_t(g));
      range(a, a + g, f.recv_offset[0], f.recv_bytes[0]);
    }
    if (dec_.next(r) >= 0) {
      range(r1_ - g, r1_, f.send_offset[1], f.send_bytes[1]);
      const std::size_t a = wrap(std::ptrdiff_t(r1_));
      range(a, a + g, f.recv_offset[1], f.recv_bytes[1]);
    }
    return f;
  }
  // The same exchange as messages (faces() at v): the addresses are only computed, never
  // read here, so v may be device memory. Tag 0 travels towards the previous slab, tag 1
  // towards the next (two slabs on a periodic axis are each other's previous and next: the
  // tags keep the faces apart), so what arrives with tag 1 came from the previous slab.
  template <class Real>
  void halo_transfers(Real* v, const RowLayout& L, std::vector<comm::Transfer>& sends,
                      std::vector<comm::Transfer>& recvs) const {
    sends.clear();
    recvs.clear();
    if (!comm_) return;
    const Faces f = faces(L, sizeof(Real));
    auto* base = reinterpret_cast<unsigned char*>(v);
    const int r = comm_->rank(), peer[2] = {dec_.previous(r), dec_.next(r)};
    for (int side = 0; side < 2; ++side) {
      if (peer[side] < 0) continue;
      sends.push_back(comm::Transfer{peer[side], side, base + f.send_offset[side], f.send_bytes[side]});
      recvs.push_back(comm::Transfer{peer[side], 1 - side, base + f.recv_offset[side], f.recv_bytes[side]});
    }
  }

  // Each rank's range (offset, count in bytes) of an array: rows of layout L of elements
  // of `size` bytes; a part's compact cells (one state array of part p); the grid.
  void row_ranges(const RowLayout& L, std::size_t size, std::vector<std::size_t>& off, std::vector<std::size_t>& cnt) const {
    off.clear();
    cnt.clear();
    for (const Slab& s : dec_.slabs) {
      off.push_back(L.first(s.row_begin) * size);
      cnt.push_back((L.first(s.row_end) - L.first(s.row_begin)) * size);
    }
  }
  void part_ranges(const Part& p, std::size_t size, std::vector<std::size_t>& off, std::vector<std::size_t>& cnt) const {
    off.clear();
    cnt.clear();
    for (const Slab& s : dec_.slabs) {
      const std::size_t b = p.row_begin(s.row_begin, int(nx_)), e = p.row_begin(s.row_end, int(nx_));
      off.push_back(b * size);
      cnt.push_back((e - b) * size);
    }
  }
  void grid_ranges(std::size_t size, std::vector<std::size_t>& off, std::vector<std::size_t>& cnt) const {
    off.clear();
    cnt.clear();
    for (const Slab& s : dec_.slabs) {
      off.push_back(s.row_begin * nx_ * size);
      cnt.push_back((s.row_end - s.row_begin) * nx_ * size);
    }
  }

  // Every rank's rows of v (storage of L) reach every rank.
  template <class Real>
  void gather_rows(Real* v, const RowLayout& L) const {
    if (!comm_) return;
    std::vector<std::size_t> off, cnt;
    row_ranges(L, sizeof(Real), off, cnt);
    comm_->allgather(v, off, cnt);
  }
  // Every rank's rows of a per-row array (per_row values of T for each row): the CG's row
  // sums (diffusion_stepper.cpp).
  template <class T>
  void gather_row_values(T* a, std::size_t per_row) const {
    if (!comm_) return;
    std::vector<std::size_t> off, cnt;
    for (const Slab& s : dec_.slabs) {
      off.push_back(s.row_begin * per_row * sizeof(T));
      cnt.push_back((s.row_end - s.row_begin) * per_row * sizeof(T));
    }
    comm_->allgather(a, off, cnt);
  }
  // Every rank's cells of one of part p's state arrays (n values, compact order).
  template <class T>
  void gather_part(T* y, const Part& p) const {
    if (!comm_) return;
    std::vector<std::size_t> off, cnt;
    part_ranges(p, sizeof(T), off, cnt);
    comm_->allgather(y, off, cnt);
  }
  // Every rank's cells of a grid-sized array (grid order).
  template <class T>
  void gather_grid(T* f) const {
    if (!comm_) return;
    std::vector<std::size_t> off, cnt;
    grid_ranges(sizeof(T), off, cnt);
    comm_->allgather(f, off, cnt);
  }
  // Values only their owners know (the others pass −0, the sum's identity): each sum is its owner's bits.
  void from_owners(std::vector<double>& v) const {
    if (comm_ && !v.empty()) comm_->allreduce(v.data(), v.size(), comm::Reduce::sum);
  }

  // The failure every rank reports after a step: the lowest failing cell of any rank and
  // its variable (from its owner); cell = max when no rank failed.
  void agree_on_failure(std::size_t& cell, std::string& variable) const {
    if (!comm_) return;
    constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
    double c = cell == none ? std::numeric_limits<double>::infinity() : double(cell);
    comm_->allreduce(&c, 1, comm::Reduce::min);
    if (c == std::numeric_limits<double>::infinity()) {
      cell = none;
      return;
    }
    const std::size_t failed = std::size_t(c);
    const int root = dec_.owner(failed, int(nx_));
    char name[256] = {};
    if (comm_->rank() == root) std::strncpy(name, variable.c_str(), sizeof(name) - 1);
    comm_->broadcast(name, sizeof(name), root);
    cell = failed;
    variable = name;
  }

 private:
  std::size_t wrap(std::ptrdiff_t r) const {
    const auto R = std::ptrdiff_t(rows_);
    return std::size_t(((r % R) + R) % R);
  }

  comm::Communicator* comm_ = nullptr;
  Decomposition dec_;
  std::size_t nx_ = 1, rows_ = 0, r0_ = 0, r1_ = 0;
};

}  // namespace hw::tissue
