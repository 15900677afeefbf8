#include "model/ir/expr.hpp"

#include <bit>
#include <stdexcept>

namespace hw::model {

static const OpInfo kOpInfo[] = {
#define HW_X(name, arity, spelling) {#name, arity, spelling},
    HW_EXPR_OPS(HW_X)
#undef HW_X
};

const OpInfo& op_info(Op op) { return kOpInfo[static_cast<int>(op)]; }

bool is_boolean(Op op) {
  switch (op) {
    case Op::lt: case Op::le: case Op::gt: case Op::ge: case Op::eq: case Op::ne:
    case Op::logical_and: case Op::logical_or: case Op::logical_xor: case Op::logical_not:
      return true;
    default:
      return false;
  }
}

bool is_unary_function(Op op) {
  switch (op) {
    case Op::exp: case Op::log: case Op::log10: case Op::sqrt: case Op::abs: case Op::floor:
    case Op::ceil: case Op::sin: case Op::cos: case Op::tan: case Op::asin: case Op::acos:
    case Op::atan: case Op::sinh: case Op::cosh: case Op::tanh: case Op::asinh:
    case Op::acosh: case Op::atanh:
      return true;
    default:
      return false;
  }
}

std::size_t ExprPool::KeyHash::operator()(ExprId id) const {
  const Node& n = pool->nodes_[id];
  std::size_t h = static_cast<std::size_t>(n.op) * 0x9E3779B97F4A7C15ull;
  auto mix = [&h](std::uint64_t v) { h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2); };
  if (n.op == Op::constant) mix(std::bit_cast<std::uint64_t>(n.value));
  if (n.op == Op::variable) mix((std::uint64_t(n.var_kind) << 32) | n.index);
  for (ExprId a : n.args) mix(a);
  return h;
}

bool ExprPool::KeyEq::operator()(ExprId a, ExprId b) const {
  const Node& x = pool->nodes_[a];
  const Node& y = pool->nodes_[b];
  if (x.op != y.op || x.args != y.args) return false;
  if (x.op == Op::constant)
    return std::bit_cast<std::uint64_t>(x.value) == std::bit_cast<std::uint64_t>(y.value);
  if (x.op == Op::variable) return x.var_kind == y.var_kind && x.index == y.index;
  return true;
}

ExprPool::ExprPool() : index_(64, KeyHash{this}, KeyEq{this}) {}

ExprPool::ExprPool(const ExprPool& other) : ExprPool() { *this = other; }
ExprPool::ExprPool(ExprPool&& other) noexcept : ExprPool() { *this = std::move(other); }

ExprPool& ExprPool::operator=(const ExprPool& other) {
  if (this == &other) return *this;
  nodes_ = other.nodes_;
  index_.clear();
  for (ExprId i = 0; i < nodes_.size(); ++i) index_.emplace(i, i);
  return *this;
}

ExprPool& ExprPool::operator=(ExprPool&& other) noexcept {
  if (this == &other) return *this;
  nodes_ = std::move(other.nodes_);
  other.nodes_.clear();
  other.index_.clear();
  index_.clear();
  for (ExprId i = 0; i < nodes_.size(); ++i) index_.emplace(i, i);
  return *this;
}

ExprId ExprPool::intern(Node n) {
  nodes_.push_back(std::move(n));
  ExprId candidate = static_cast<ExprId>(nodes_.size() - 1);
  auto [it, inserted] = index_.emplace(candidate, candidate);
  if (!inserted) {
    nodes_.pop_back();
    return it->second;
  }
  return candidate;
}

ExprId ExprPool::constant(double value) {
  Node n;
  n.op = Op::constant;
  n.value = value;
  return intern(std::move(n));
}

ExprId ExprPool::variable(VarKind kind, std::uint32_t index) {
  Node n;
  n.op = Op::variable;
  n.var_kind = kind;
  n.index = index;
  return intern(std::move(n));
}

ExprId ExprPool::make(Op op, std::vector<ExprId> args) {
  const OpInfo& info = op_info(op);
  if (op == Op::constant || op == Op::variable)
    throw std::logic_error("ExprPool::make: use constant()/variable() for leaves");
  if (info.arity >= 0 && static_cast<int>(args.size()) != info.arity)
    throw std::logic_error("ExprPool::make: wrong number of arguments for " +
                           std::string(info.name));
  if (op == Op::piecewise && args.size() % 2 == 0)
    throw std::logic_error("ExprPool::make: piecewise needs an odd number of arguments");
  for (ExprId a : args)
    if (a >= nodes_.size()) throw std::logic_error("ExprPool::make: dangling argument");
  Node n;
  n.op = op;
  n.args = std::move(args);
  return intern(std::move(n));
}

ExprId rebuild_with(ExprPool& pool, ExprId id, std::vector<ExprId>& new_args) {
  if (new_args.empty()) return id;
  auto old = pool.args(id);
  if (std::equal(old.begin(), old.end(), new_args.begin(), new_args.end())) return id;
  return pool.make(pool.op(id), new_args);
}

std::vector<ExprId> topological_nodes(const ExprPool& pool, std::span<const ExprId> roots) {
  std::vector<ExprId> order;
  std::vector<std::uint8_t> mark(pool.size(), 0);  // 0 new, 1 on stack, 2 done
  std::vector<std::pair<ExprId, std::size_t>> stack;
  for (ExprId r : roots) {
    if (r == kNoExpr || mark[r]) continue;
    stack.push_back({r, 0});
    mark[r] = 1;
    while (!stack.empty()) {
      auto& [id, next] = stack.back();
      auto args = pool.args(id);
      if (next < args.size()) {
        ExprId child = args[next++];
        if (!mark[child]) {
          mark[child] = 1;
          stack.push_back({child, 0});
        }
      } else {
        mark[id] = 2;
        order.push_back(id);
        stack.pop_back();
      }
    }
  }
  return order;
}

std::vector<ExprId> rewrite(ExprPool& pool, std::span<const ExprId> roots,
                            const std::function<ExprId(ExprId, std::vector<ExprId>&)>& rebuild) {
  std::vector<ExprId> order = topological_nodes(pool, roots);
  std::unordered_map<ExprId, ExprId> done;
  done.reserve(order.size());
  std::vector<ExprId> new_args;
  for (ExprId id : order) {
    new_args.clear();
    for (ExprId a : pool.args(id)) new_args.push_back(done.at(a));
    done[id] = rebuild(id, new_args);
  }
  std::vector<ExprId> out;
  out.reserve(roots.size());
  for (ExprId r : roots) out.push_back(r == kNoExpr ? kNoExpr : done.at(r));
  return out;
}

bool occurs(const ExprPool& pool, ExprId root, ExprId target) {
  for (ExprId id : topological_nodes(pool, std::span<const ExprId>(&root, 1)))
    if (id == target) return true;
  return false;
}

}  // namespace hw::model
