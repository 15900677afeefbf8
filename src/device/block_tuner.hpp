// Picks a kernel's block shape, and which of its compiled variants runs, by timing them on
// the run's own launches (seed 002: try shapes, keep the fastest), and remembers the choice
// in a file beside the kernel's cubin.
//
// Why on the run's own steps: every shape computes the same values (a thread's work does not
// depend on its block), so the launches that time the candidates are real steps of the run
// and nothing is wasted; the first few steps of a run are a little slower, that is all.
#pragma once

#include <string>
#include <vector>

#include "device/device.hpp"

namespace hw::gpu {

// Candidate (x, y, 1) block shapes of at most `threads` threads for a kernel launched over an
// nx × ny × nz box, the default first: whole warps along x with the rest of the block in y
// (flatter tiles reuse the y neighbours in L1, longer rows read longer runs). Shapes that
// tile a face such as 400 × 140 without idle threads (16 × 14) were tried and never won
// (docs/benchmarks.md), so they are not offered.
std::vector<Dim3> box_block_shapes(unsigned nx, unsigned ny, unsigned threads);

// One way to launch a kernel: which compiled variant of it (0: as compiled; the CUDA engine
// adds one with its registers capped for a kernel that needs many, and a sliding window on
// the box), in blocks of what shape, and for a window how many z layers a thread steps.
struct Launch {
  int variant = 0;
  Dim3 block{256, 1, 1};
  unsigned depth = 1;
  // The launch is at its speed only after a step of its own (the tower reads the halo slots
  // its last step wrote): its trials come in pairs, back to back, the faster counting.
  bool paired = false;
  bool operator==(const Launch& o) const { return variant == o.variant && block == o.block && depth == o.depth; }
};

class BlockTuner {
 public:
  // candidates: the launches to try, the first the default; variant_names: how describe()
  // names each variant (may be empty when there is one). cache_file: where the choice is
  // kept ("" = not kept); a valid choice found there ends the tuning before it starts.
  BlockTuner(std::vector<Launch> candidates, std::vector<std::string> variant_names, std::string cache_file,
             int repeats = 3);
  BlockTuner() : BlockTuner({Launch{}}, {}, "") {}

  bool tuning() const { return next_ < trials_.size(); }
  // The next launch (the candidate under trial while tuning).
  const Launch& launch() const;
  // The device time of the launch just made with shape() (only while tuning).
  void record(double ms);
  // "64×4×1 (tuned: 256×1×1 0.41 ms, 128×2×1 0.38 ms, ...)", or "... (from the cache)";
  // with variants, each shape after its variant's name.
  std::string describe() const;

 private:
  std::string candidates_line() const;
  std::string name(const Launch& l) const;

  std::vector<Launch> candidates_;
  std::vector<std::string> variant_names_;
  std::string cache_file_;
  std::vector<std::size_t> trials_;  // candidate of each timed launch, round-robin
  std::size_t next_ = 0;
  std::vector<double> best_ms_;      // per candidate
  std::size_t chosen_ = 0;
  bool from_cache_ = false;
};

}  // namespace hw::gpu
