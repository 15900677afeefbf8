#include "device/block_tuner.hpp"

#include <algorithm>
#include <fstream>
#include <limits>

#include <fmt/format.h>

#include "core/atomic_file.hpp"

namespace hw::gpu {

namespace {
std::string shape_str(const Dim3& d) { return fmt::format("{}x{}x{}", d[0], d[1], d[2]); }
}  // namespace

std::vector<Dim3> box_block_shapes(unsigned nx, unsigned ny, unsigned threads) {
  nx = std::max(nx, 1u);
  std::vector<Dim3> shapes;
  for (unsigned bx = std::min(threads, (nx + 31) / 32 * 32); bx >= 32; bx /= 2)
    if (threads / bx == 1 || ny > 1) shapes.push_back({bx, threads / bx, 1});
  return shapes;
}

BlockTuner::BlockTuner(std::vector<Launch> candidates, std::vector<std::string> variant_names,
                       std::string cache_file, int repeats)
    : candidates_(std::move(candidates)), variant_names_(std::move(variant_names)),
      cache_file_(std::move(cache_file)), best_ms_(candidates_.size(), std::numeric_limits<double>::infinity()) {
  if (candidates_.size() < 2) return;
  if (!cache_file_.empty()) {
    // The choice counts only among the same candidates (a newer build may offer others).
    std::ifstream in(cache_file_);
    Launch d{};
    std::string among;
    if (in >> d.variant >> d.block[0] >> d.block[1] >> d.block[2] >> d.depth && std::getline(in, among) &&
        among == candidates_line()) {
      const auto it = std::find(candidates_.begin(), candidates_.end(), d);
      if (it != candidates_.end()) {
        chosen_ = std::size_t(it - candidates_.begin());
        from_cache_ = true;
        return;
      }
    }
  }
  for (int r = 0; r < repeats; ++r)
    for (std::size_t c = 0; c < candidates_.size(); ++c)
      for (int k = 0; k < (candidates_[c].paired ? 2 : 1); ++k) trials_.push_back(c);
}

std::string BlockTuner::name(const Launch& l) const {
  std::string s = shape_str(l.block);
  if (l.depth > 1) s += fmt::format(" {} deep", l.depth);
  if (variant_names_.size() < 2) return s;
  return variant_names_.at(std::size_t(l.variant)) + " " + s;
}

std::string BlockTuner::candidates_line() const {
  std::string s = " among";
  for (const Launch& c : candidates_)
    s += fmt::format(" {}:{}{}", c.variant, shape_str(c.block), c.depth > 1 ? fmt::format("/{}", c.depth) : "");
  return s;
}

const Launch& BlockTuner::launch() const {
  return candidates_[tuning() ? trials_[next_] : chosen_];
}

void BlockTuner::record(double ms) {
  if (!tuning()) return;
  double& b = best_ms_[trials_[next_]];
  b = std::min(b, ms);
  if (++next_ < trials_.size()) return;
  chosen_ = std::size_t(std::min_element(best_ms_.begin(), best_ms_.end()) - best_ms_.begin());
  if (cache_file_.empty()) return;
  try {
    const Launch& c = candidates_[chosen_];
    io::write_file_atomic(cache_file_,
                          fmt::format("{} {} {} {} {}{}\n", c.variant, c.block[0], c.block[1], c.block[2], c.depth, candidates_line()),
                          false);
  } catch (const std::exception&) {
    // An unwritable cache costs a tuning next time, nothing else.
  }
}

std::string BlockTuner::describe() const {
  const std::string s = name(candidates_[chosen_]);
  if (candidates_.size() < 2) return s;
  if (from_cache_) return s + " (tuned earlier, from the cache)";
  if (tuning()) return s + " (tuning)";
  std::string d = s + " (tuned:";
  for (std::size_t c = 0; c < candidates_.size(); ++c)
    d += fmt::format("{} {} {:.3g} ms", c ? "," : "", name(candidates_[c]), best_ms_[c]);
  return d + ")";
}

}  // namespace hw::gpu
