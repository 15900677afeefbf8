// The faces of a split run as byte ranges (Split::faces, tissue/split.hpp): what the peer
// stores on GPUs (tissue/cuda/peer_halo.hpp) write into a neighbour's landing rows and lay
// into its ghost rows. Each rank computes its side alone, so every pair must agree: what a
// rank sends to its next slab is what that slab receives from its previous one, the same
// bytes at the same offset, and both agree with the messages the cpu and NCCL paths send
// (halo_transfers). Boxes, a periodic axis of two slabs (each slab both neighbours of the
// other), and a masked shell in compressed rows with the fourth-order ghost width.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "mesh/row_layout.hpp"
#include "tissue/split.hpp"

using namespace hw::tissue;

namespace {

// Rank r of n, for building each rank's Split here: nothing is sent.
class RankOf final : public hw::comm::Communicator {
 public:
  RankOf(int r, int n) : r_(r), n_(n) {}
  int rank() const override { return r_; }
  int size() const override { return n_; }
  std::string describe() const override { return "a rank of a test"; }
  void start_exchange(const std::vector<hw::comm::Transfer>&, const std::vector<hw::comm::Transfer>&) override {}
  void finish_exchange() override {}
  void allreduce(double*, std::size_t, hw::comm::Reduce) override {}
  void allgather(void*, const std::vector<std::size_t>&, const std::vector<std::size_t>&) override {}
  void broadcast(void*, std::size_t, int) override {}
  void barrier() override {}
  [[noreturn]] void abort(int) override { std::abort(); }

 private:
  int r_, n_;
};

Grid grid(int nx, int ny, int nz, bool periodic_z = false) {
  Grid g;
  g.n = {nx, ny, nz};
  if (periodic_z) g.bc[2] = Boundary::periodic;
  return g;
}

// An ellipsoidal shell: rows of every length, some empty.
Mask shell(const Grid& g) {
  Mask m(g);
  for (int k = 0; k < g.nz(); ++k)
    for (int j = 0; j < g.ny(); ++j)
      for (int i = 0; i < g.nx(); ++i) {
        const double x = (i + 0.5) / g.nx() - 0.5, y = (j + 0.5) / g.ny() - 0.5, z = (k + 0.5) / g.nz() - 0.5;
        const double r = std::sqrt(x * x + y * y + 0.5 * z * z);
        m[std::size_t(i + g.nx() * (j + g.ny() * k))] = r > 0.25 && r < 0.45;
      }
  return m;
}

void check_pairs(const Grid& g, const Mask& mask, int ranks, int ghost, std::size_t size) {
  const RowLayout L = row_layout(g, mask);
  std::vector<RankOf> comms;
  for (int r = 0; r < ranks; ++r) comms.emplace_back(r, ranks);
  std::vector<Split> splits;
  std::vector<Split::Faces> faces;
  for (int r = 0; r < ranks; ++r) {
    splits.emplace_back(&comms[std::size_t(r)], g, mask, ghost);
    faces.push_back(splits.back().faces(L, size));
  }
  const Decomposition& d = splits.front().decomposition();
  for (int r = 0; r < ranks; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r) + " of " + std::to_string(ranks));
    const Split::Faces& f = faces[std::size_t(r)];
    const int next = d.next(r), prev = d.previous(r);
    EXPECT_EQ(f.send_bytes[1] > 0, next >= 0);
    EXPECT_EQ(f.send_bytes[0] > 0, prev >= 0);
    if (next >= 0) {
      const Split::Faces& n = faces[std::size_t(next)];
      EXPECT_EQ(f.send_bytes[1], n.recv_bytes[0]);
      EXPECT_EQ(f.send_offset[1], n.recv_offset[0]);
      EXPECT_EQ(n.send_bytes[0], f.recv_bytes[1]);
      EXPECT_EQ(n.send_offset[0], f.recv_offset[1]);
    }
    // The same ranges as the messages of halo_transfers (tag 0 towards the previous slab).
    std::vector<hw::comm::Transfer> sends, recvs;
    double* base = nullptr;
    std::vector<double> storage(L.size() + 1);
    base = storage.data();
    splits[std::size_t(r)].halo_transfers(base, L, sends, recvs);
    for (const hw::comm::Transfer& t : sends) {
      const int side = t.tag;
      EXPECT_EQ(t.bytes, f.send_bytes[side] / size * sizeof(double));
      EXPECT_EQ(std::size_t(static_cast<double*>(t.data) - base), f.send_offset[side] / size);
    }
    for (const hw::comm::Transfer& t : recvs) {
      const int side = t.tag == 1 ? 0 : 1;  // what travels towards the next came from the previous
      EXPECT_EQ(t.bytes, f.recv_bytes[side] / size * sizeof(double));
      EXPECT_EQ(std::size_t(static_cast<double*>(t.data) - base), f.recv_offset[side] / size);
    }
  }
}

}  // namespace

TEST(SplitFaces, NeighboursAgreeOnABox) {
  check_pairs(grid(5, 4, 9), {}, 3, 1, sizeof(float));
  check_pairs(grid(5, 4, 9), {}, 4, 2, sizeof(double));
}

TEST(SplitFaces, TwoSlabsOnAPeriodicAxisAreBothNeighbours) {
  const Grid g = grid(4, 3, 8, true);
  check_pairs(g, {}, 2, 1, sizeof(float));
  RankOf c(0, 2);
  const Split s(&c, g, {}, 1);
  const Split::Faces f = s.faces(row_layout(g, {}), sizeof(float));
  // Slab 0 receives its previous face from the grid's last plane and its next from plane 4.
  EXPECT_EQ(f.recv_offset[0], 7u * 12 * sizeof(float));
  EXPECT_EQ(f.recv_offset[1], 4u * 12 * sizeof(float));
  EXPECT_EQ(f.send_offset[0], 0u);
  EXPECT_EQ(f.send_offset[1], 3u * 12 * sizeof(float));
}

TEST(SplitFaces, NeighboursAgreeOnAShellInCompressedRows) {
  const Grid g = grid(14, 12, 20);
  const Mask m = shell(g);
  ASSERT_FALSE(row_layout(g, m).box);
  check_pairs(g, m, 3, 1, sizeof(float));
  check_pairs(g, m, 4, 2, sizeof(double));
}

TEST(SplitFaces, OneRankHasNoFaces) {
  const Split s(nullptr, grid(4, 4, 4), {}, 1);
  const Split::Faces f = s.faces(row_layout(grid(4, 4, 4), {}), sizeof(float));
  EXPECT_EQ(f.send_bytes[0] + f.send_bytes[1] + f.recv_bytes[0] + f.recv_bytes[1], 0u);
}
