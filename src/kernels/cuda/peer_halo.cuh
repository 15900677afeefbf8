// The peer stores of a split run on the GPUs of one host (tissue/cuda/peer_halo.hpp): the
// halo exchange and the agreement on failures as one kernel that writes straight into the
// other ranks' GPU memory (over NVLink where there is one), so that a step's exchange is
// part of a CUDA graph and needs neither the host nor NCCL. Text for NVRTC.
//
// Each rank has an inbox (device memory the other ranks map): a word per rank that says how
// many exchanges that rank has posted, each rank's failure words, and the landing rows for
// the faces of the slabs beside it. Exchange k (counted on each rank's GPU: `posted`) is one
// kernel, hw_peer_exchange:
//   peer_post: every block copies its share of this slab's face rows into the landing rows
//     of the neighbours' inboxes, then counts itself done; the last block writes this rank's
//     failure words into every inbox, then k as this rank's count (after a system fence: a
//     rank that reads k reads the rows and words before it).
//   peer_collect: every block waits until the ranks it reads from have posted k, then copies
//     the landed rows into the ghost rows of V; block 0 writes the least failure words of
//     all ranks over this rank's (every rank computes the same least: the same values).
// Why the landing rows and the failure words come twice (by the parity of k): a rank may
// post k + 1 while a slower one still copies k's (it waited for k only); it cannot post
// k + 2 before that one posted k + 1, which it does after it copied k's.
#pragma once

#include "kernels/cuda/peer_halo_args.hpp"

namespace hw::cuda {

// Side s of parity p's landing rows in an inbox: side 0 from the previous slab, 1 from the next.
__device__ __forceinline__ unsigned char* peer_landing(PeerInbox* box, const PeerArgs& a, unsigned long long k,
                                                        int side) {
  return reinterpret_cast<unsigned char*>(box + 1) + ((k & 1ull) * 2 + (unsigned long long)side) * a.landing_bytes;
}

// Copies n bytes (a multiple of 4, 4-aligned) over the whole grid: in 16-byte words where
// both ends and n allow (a box's planes), else in 4-byte words (rows of a row layout).
__device__ __forceinline__ void peer_copy(unsigned char* to, const unsigned char* from, unsigned long long n) {
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  const unsigned long long first = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (((reinterpret_cast<unsigned long long>(to) | reinterpret_cast<unsigned long long>(from) | n) & 15ull) == 0) {
    const uint4* f = reinterpret_cast<const uint4*>(from);
    uint4* t = reinterpret_cast<uint4*>(to);
    for (unsigned long long i = first; i < n / 16; i += stride) t[i] = f[i];
    return;
  }
  const unsigned* f = reinterpret_cast<const unsigned*>(from);
  unsigned* t = reinterpret_cast<unsigned*>(to);
  for (unsigned long long i = first; i < n / 4; i += stride) t[i] = f[i];
}

}  // namespace hw::cuda

namespace hw::cuda {

// Exchange k's sending half: this slab's faces to the neighbours' landing rows, then (the
// last block of the grid) the failure words and k to every inbox.
__device__ __forceinline__ void peer_post(const PeerArgs& a, unsigned long long k) {
  // To the previous slab's "from the next" side, and the next slab's "from the previous".
  if (a.previous >= 0 && a.send_bytes[0])
    peer_copy(peer_landing(a.inbox[a.previous], a, k, 1), a.v + a.send_offset[0], a.send_bytes[0]);
  if (a.next >= 0 && a.send_bytes[1])
    peer_copy(peer_landing(a.inbox[a.next], a, k, 0), a.v + a.send_offset[1], a.send_bytes[1]);
  __syncthreads();
  if (threadIdx.x != 0) return;
  __threadfence_system();
  if (atomicAdd(a.ticket, 1u) != gridDim.x - 1) return;
  // The last block: every block's rows are out.
  __threadfence_system();
  const unsigned long long f0 = *(volatile unsigned long long*)&a.fail[0], f1 = *(volatile unsigned long long*)&a.fail[1];
  for (int q = 0; q < a.ranks; ++q) {
    volatile unsigned long long* w = a.inbox[q]->fail[k & 1ull][a.me];
    w[0] = f0;
    w[1] = f1;
  }
  __threadfence_system();
  for (int q = 0; q < a.ranks; ++q) *(volatile unsigned long long*)&a.inbox[q]->posted[a.me] = k;
  *a.ticket = 0;
  *(volatile unsigned long long*)a.posted = k;
}

// Exchange k's receiving half: wait for the ranks this block reads from (block 0: all, for
// their failure words), lay the landed rows into V, and the least failure words into fail.
__device__ __forceinline__ void peer_collect(const PeerArgs& a, unsigned long long k) {
  PeerInbox* mine = a.inbox[a.me];
  if (threadIdx.x == 0) {
    for (int q = 0; q < a.ranks; ++q) {
      const bool needed = blockIdx.x == 0 || ((q == a.previous && a.recv_bytes[0]) || (q == a.next && a.recv_bytes[1]));
      if (!needed) continue;
      while (*(volatile unsigned long long*)&mine->posted[q] < k) {
      }
    }
    __threadfence_system();
  }
  __syncthreads();
  if (a.previous >= 0 && a.recv_bytes[0]) peer_copy(a.v + a.recv_offset[0], peer_landing(mine, a, k, 0), a.recv_bytes[0]);
  if (a.next >= 0 && a.recv_bytes[1]) peer_copy(a.v + a.recv_offset[1], peer_landing(mine, a, k, 1), a.recv_bytes[1]);
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    unsigned long long f0 = ~0ull, f1 = ~0ull;
    for (int q = 0; q < a.ranks; ++q) {
      volatile unsigned long long* w = mine->fail[k & 1ull][q];
      f0 = w[0] < f0 ? w[0] : f0;
      f1 = w[1] < f1 ? w[1] : f1;
    }
    a.fail[0] = f0;
    a.fail[1] = f1;
  }
}

}  // namespace hw::cuda

// One cooperative launch (every block resident: a block that waits cannot keep the last one
// from posting). Every block reads k before any block posts it. As two launches (a sending
// kernel, then a waiting one) the exchange cost 1-3 % more steps/s on 2 H200s
// (docs/parallel.md).
extern "C" __global__ void hw_peer_exchange(const hw::cuda::PeerArgs a) {
  const unsigned long long k = *(volatile unsigned long long*)a.posted + 1;
  hw::cuda::peer_post(a, k);
  hw::cuda::peer_collect(a, k);
}
