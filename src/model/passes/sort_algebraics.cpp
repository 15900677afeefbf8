#include "model/passes/sort_algebraics.hpp"

#include <algorithm>

#include "model/passes/util.hpp"

namespace hw::model {

void sort_algebraics(Model& m) {
  const std::uint32_t n = static_cast<std::uint32_t>(m.algebraics.size());
  std::vector<std::vector<std::uint32_t>> deps(n);
  for (std::uint32_t i = 0; i < n; ++i) deps[i] = algebraic_refs(m.pool, m.algebraics[i].expr);

  // Iterative depth-first post-order from each algebraic in the original order: stable,
  // and the stack at a back edge is exactly the cycle to report.
  std::vector<std::uint8_t> mark(n, 0);  // 0 new, 1 on the stack, 2 placed
  std::vector<std::uint32_t> order;
  order.reserve(n);
  std::vector<std::pair<std::uint32_t, std::size_t>> stack;
  for (std::uint32_t root = 0; root < n; ++root) {
    if (mark[root]) continue;
    stack.push_back({root, 0});
    mark[root] = 1;
    while (!stack.empty()) {
      auto& [v, next] = stack.back();
      if (next < deps[v].size()) {
        std::uint32_t w = deps[v][next++];
        if (w >= n) throw Error("sort_algebraics: reference to a missing algebraic");
        if (mark[w] == 1) {
          auto it = std::find_if(stack.begin(), stack.end(),
                                 [w](const auto& e) { return e.first == w; });
          std::string msg = "algebraic loop: ";
          for (auto s = it; s != stack.end(); ++s) msg += m.algebraics[s->first].name + " -> ";
          msg += m.algebraics[w].name;
          throw InputError(m.algebraics[w].loc, msg);
        }
        if (mark[w] == 0) {
          mark[w] = 1;
          stack.push_back({w, 0});
        }
      } else {
        mark[v] = 2;
        order.push_back(v);
        stack.pop_back();
      }
    }
  }
  bool identity = true;
  for (std::uint32_t k = 0; k < n; ++k) identity = identity && order[k] == k;
  if (!identity) renumber_algebraics(m, order);
}

}  // namespace hw::model
