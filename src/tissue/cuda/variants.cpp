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
}  // namespace

const std::vector<KernelVariant>& kernel_variants() {
  static const std::vector<KernelVariant> table = {
      {"cell", "as compiled", "", false, false, false, false, false, always},
      {"capped", "capped", "_capped", false, false, true, false, false, above_a_step},
      {"fenced", "fenced", "_fenced", false, true, false, false, false, fence_helps},
      {"fenced-capped", "fenced, capped", "_fenced_capped", false, true, true, false, false, fence_helps},
      {"window", "sliding window", "_window", true, false, false, false, true, whole_box},
      {"tower", "tower", "_tower", true, false, false, true, true, whole_box_godunov_explicit},
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
  if (v.window) {
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
