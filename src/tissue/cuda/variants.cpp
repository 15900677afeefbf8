#include "tissue/cuda/variants.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"

namespace hw::tissue::cuda {

namespace {
bool always(const PartContext&) { return true; }
bool above_a_step(const PartContext& c) { return c.register_cap > 0; }
// With several sub-steps the kernel as compiled already steps the model in a loop, a block
// of its own: fenced would add nothing.
bool fence_helps(const PartContext& c) { return c.register_cap > 0 && c.substeps == 1; }
bool whole_box(const PartContext& c) { return c.whole_box; }
bool whole_box_godunov_explicit(const PartContext& c) { return c.whole_box && c.godunov_explicit; }
bool several_steps(const PartContext& c) {
  return c.whole_box && c.godunov_explicit && !c.phase && c.states <= kMostStepsStates;
}
bool several_steps_in_float(const PartContext& c) { return several_steps(c) && c.f32; }

// The several-steps kernels' block shapes: tiles whose output (the columns K in from each
// edge) is at least 40 % of their columns; K = 3 keeps 66 % of 32 × 32, 57 % of 64 × 16 and
// 51 % of 32 × 16; K = 5 only 32 × 32 (47 %).
// On a sheet (one layer in z) the kernel marches along y with rows of x: rows of 128 to 512
// (K = 3: 95 to 99 % kept).
bool marches_y(const std::array<unsigned, 3>& n) { return n[2] == 1 && n[1] > 1; }
std::vector<gpu::Dim3> steps_block_shapes(int k, const std::array<unsigned, 3>& n) {
  if (marches_y(n)) return {{128, 1, 1}, {256, 1, 1}, {512, 1, 1}};
  std::vector<gpu::Dim3> out;
  for (const gpu::Dim3& b : {gpu::Dim3{32, 32, 1}, gpu::Dim3{64, 16, 1}, gpu::Dim3{32, 16, 1}})
    if (double(b[0] - 2 * k) * double(b[1] - 2 * k) >= 0.4 * double(b[0] * b[1])) out.push_back(b);
  return out;
}
}  // namespace

const std::vector<KernelVariant>& kernel_variants() {
  static const std::vector<KernelVariant> table = {
      {"cell", "as compiled", "", false, false, false, false, false, always},
      {"capped", "capped", "_capped", false, false, true, false, false, above_a_step},
      {"fenced", "fenced", "_fenced", false, true, false, false, false, fence_helps},
      {"fenced-capped", "fenced, capped", "_fenced_capped", false, true, true, false, false, fence_helps},
      {"window", "sliding window", "_window", true, false, false, false, true, whole_box},
      {"tower", "tower", "_tower", true, false, false, true, true, whole_box_godunov_explicit},
      {"steps3", "3 steps per pass", "_steps3", false, false, false, false, true, several_steps, 3},
      {"steps5", "5 steps per pass", "_steps5", false, false, false, false, true, several_steps_in_float, 5},
  };
  return table;
}

std::vector<const KernelVariant*> offered_variants(const PartContext& c, const std::string& asked) {
  const auto& all = kernel_variants();
  if (!asked.empty() && std::none_of(all.begin(), all.end(), [&](const KernelVariant& v) { return asked == v.name; })) {
    std::string names;
    for (const KernelVariant& v : all) names += (names.empty() ? "" : ", ") + std::string(v.name);
    throw Error(fmt::format("HEARTWAVE_CUDA_KERNEL={}: expected one of {}", asked, names));
  }
  std::vector<const KernelVariant*> out;
  for (const KernelVariant& v : all)
    if (v.offered(c) && (!v.on_request || asked == v.name)) out.push_back(&v);
  return out;
}

bool offers_several_steps(const PartContext& c, const std::string& asked) {
  for (const KernelVariant* v : offered_variants(c, asked))
    if (v->steps > 1) return true;
  return false;
}

int register_cap(int registers) { return registers > 128 ? 128 : registers > 64 ? 64 : 0; }

// 65536 registers per SM, allocated per warp in units of 256, at most 2048 threads and 32
// blocks. A model with many states needs many registers, and then smaller blocks fill the
// SM better (TT06 at 97 registers: 5 blocks of 128 = 640 threads against 2 of 256 = 512).
unsigned block_size(int registers) {
  const unsigned per_warp = (unsigned(std::max(registers, 1)) * 32 + 255) / 256 * 256;
  unsigned best = kThreads, best_resident = 0;
  for (unsigned tb : {256u, 128u, 64u}) {
    const unsigned warps = tb / 32;
    const unsigned blocks = std::min({65536u / (per_warp * warps), 2048u / tb, 32u});
    if (blocks * tb > best_resident) {
      best_resident = blocks * tb;
      best = tb;
    }
  }
  return best;
}

model::TissueKernelSpec::Kernel kernel_of(const KernelVariant& v, unsigned threads, int cap) {
  model::TissueKernelSpec::Kernel k;
  k.suffix = v.suffix;
  if (v.steps > 1) {
    k.bounds = std::to_string(kStepsThreads);
    k.function = "part_steps";
    k.extra = fmt::format(", {}", v.steps);
  } else if (v.window) {
    k.bounds = std::to_string(kWindowThreads);
    k.function = "part_step_window";
    k.extra = v.tower ? ", true" : "";
  } else {
    k.bounds = v.capped ? fmt::format("{}, {}", kCappedThreads, 65536 / (kCappedThreads * unsigned(cap)))
                        : std::to_string(threads);
    k.function = "part_step";
    k.v_type = v.fenced ? "_fenced" : "";
  }
  return k;
}

std::vector<gpu::Launch> launches_of(const KernelVariant& v, int index, bool identity, const std::array<unsigned, 3>& n,
                                     unsigned threads) {
  std::vector<gpu::Launch> out;
  if (v.steps > 1) {
    const unsigned layers = marches_y(n) ? n[1] : n[2];
    for (const gpu::Dim3& b : steps_block_shapes(v.steps, n))
      for (unsigned depth : kStepsDepths) out.push_back({index, b, std::min(depth, layers)});
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
  if (v.window) {
    for (const gpu::Dim3& b : gpu::box_block_shapes(n[0], n[1], kWindowThreads))
      for (unsigned depth : kWindowDepths) out.push_back({index, b, std::min(depth, n[2]), v.tower});
    // A grid thinner than the depths offers the same launch twice.
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
  const unsigned tb = v.capped ? kCappedThreads : threads;
  if (identity)
    for (const gpu::Dim3& b : gpu::box_block_shapes(n[0], n[1], tb)) out.push_back({index, b});
  else
    out.push_back({index, {tb, 1, 1}});
  return out;
}

gpu::Dim3 steps_grid(const std::array<unsigned, 3>& n, const gpu::Dim3& block, unsigned depth, int k) {
  const unsigned out_x = block[0] - 2 * unsigned(k);
  if (marches_y(n)) return {(n[0] + out_x - 1) / out_x, 1, (n[1] + depth - 1) / depth};
  const unsigned out_y = block[1] - 2 * unsigned(k);
  return {(n[0] + out_x - 1) / out_x, (n[1] + out_y - 1) / out_y, (n[2] + depth - 1) / depth};
}

std::size_t tower_slots(const std::array<unsigned, 3>& n, unsigned bx, unsigned by) {
  const std::size_t tiles = (std::size_t(n[0]) + bx - 1) / bx * ((std::size_t(n[1]) + by - 1) / by);
  return tiles * std::size_t(n[2]) * 2 * by;
}

std::size_t most_tower_slots(const std::array<unsigned, 3>& n) {
  std::size_t most = 0;
  for (const gpu::Dim3& b : gpu::box_block_shapes(n[0], n[1], kWindowThreads))
    most = std::max(most, tower_slots(n, b[0], b[1]));
  return most;
}

}  // namespace hw::tissue::cuda
