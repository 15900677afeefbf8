// The arguments of the peer stores' kernels (kernels/cuda/peer_halo.cuh) and the layout of a
// rank's inbox, shared by the host (tissue/cuda/peer_halo.hpp) and NVRTC.
#pragma once

namespace hw::cuda {

constexpr int kMaxPeerRanks = 16;

// The inbox's words; its landing rows follow it (4 × landing_bytes: two sides, two parities).
struct PeerInbox {
  unsigned long long posted[kMaxPeerRanks];
  unsigned long long fail[2][kMaxPeerRanks][2];
};

struct PeerArgs {
  // This rank's field (the exchange's V) and its face rows, towards the previous and the
  // next slab (bytes; 0: no neighbour that side, or no faces in this exchange).
  unsigned char* v;
  unsigned long long send_offset[2], send_bytes[2];
  unsigned long long recv_offset[2], recv_bytes[2];
  // Every rank's inbox (this rank's own included), and which ranks are previous and next.
  PeerInbox* inbox[kMaxPeerRanks];
  int ranks, me, previous, next;
  unsigned long long landing_bytes;  // per side and parity
  unsigned long long* posted;        // exchanges this rank has posted (its own GPU's word)
  unsigned int* ticket;              // blocks of hw_peer_send done (back to 0 by the last)
  unsigned long long* fail;          // the failure flag's two words
};

static_assert(sizeof(PeerInbox) % 16 == 0, "the landing rows start 16-byte aligned");

}  // namespace hw::cuda
