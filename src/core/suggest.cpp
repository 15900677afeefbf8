// See suggest.hpp.
#include "core/suggest.hpp"

#include <algorithm>
#include <cctype>

namespace hw {

namespace {

char fold(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

bool equal_but_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return fold(x) == fold(y); });
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b, bool fold_case) {
  const auto same = [&](char x, char y) { return fold_case ? fold(x) == fold(y) : x == y; };
  const std::size_t w = b.size() + 1;
  std::vector<std::size_t> d((a.size() + 1) * w);
  for (std::size_t i = 0; i <= a.size(); ++i) d[i * w] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t v = std::min({d[(i - 1) * w + j] + 1, d[i * w + j - 1] + 1,
                                d[(i - 1) * w + j - 1] + (same(a[i - 1], b[j - 1]) ? 0 : 1)});
      if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1]))
        v = std::min(v, d[(i - 2) * w + j - 2] + 1);
      d[i * w + j] = v;
    }
  return d[a.size() * w + b.size()];
}

std::vector<std::string> nearest_names(std::string_view name, const std::vector<std::string>& candidates,
                                       std::size_t limit) {
  if (name.empty() || name.size() > 200) return {};
  // Near: within a third of the name's length, at least 1 and at most 3 edits (a short
  // name within 1 edit of everything suggests nothing useful).
  const std::size_t reach = std::clamp<std::size_t>(name.size() / 3, 1, 3);
  std::vector<std::pair<std::size_t, std::size_t>> scored;  // (score, index); 0 = case only
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const std::string& c = candidates[i];
    if (c == name || c.size() > 200) continue;
    if (equal_but_case(name, c)) {
      scored.emplace_back(0, i);
      continue;
    }
    const std::size_t d = edit_distance(name, c, true);
    if (d <= reach) scored.emplace_back(d, i);
  }
  std::stable_sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (const auto& [score, i] : scored) {
    if (out.size() >= limit) break;
    if (std::find(out.begin(), out.end(), candidates[i]) == out.end()) out.push_back(candidates[i]);
  }
  return out;
}

std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates, std::size_t limit) {
  const auto near = nearest_names(name, candidates, limit);
  if (near.empty()) return "";
  std::string s = " (did you mean '" + near[0] + "'";
  for (std::size_t k = 1; k < near.size(); ++k) s += (k + 1 == near.size() ? " or '" : ", '") + near[k] + "'";
  return s + "?)";
}

}  // namespace hw
