// The linear blocks' implicit update printed for each block's own sparsity.
//
// Why: runtime/integrators.hpp factors I − h·A of every linear block (Markov chains,
// model/passes/linear_blocks.hpp) with dense loops. Printed models unroll those loops, but
// a multiplication by a structural zero of A is not folded away (h·0 is NaN for an infinite
// h, so no compiler may drop it without fast-math), and a chain's generator is sparse: Iyer
// 2004's eight blocks hold 556 entries of which 202 are nonzero. Printed as straight-line
// code over the nonzeros and their fill, the factorisation and the substitutions do only
// the arithmetic that can change a value, and every index is a constant, so the arrays
// become registers without relying on the compiler's unrolling thresholds.
//
// Guarantees: the printed factor_blocks_sparse, solve_blocks_sparse and block_axpy_sparse
// compute what integrators.hpp's dense factor_blocks, solve_blocks and block_axpy compute
// (the same LU without pivoting of I − h·A, the same substitutions and products), leaving
// out only products with a structural zero, and eliminating in minimum-degree order rather
// than the block's own. The two therefore agree to rounding, not bit for bit. The order is
// a symmetric permutation, which keeps the column diagonal dominance of a chain's I − h·A
// that makes elimination without pivoting stable. An entry of A is structurally zero when
// its folded Jacobian expression is the constant 0. The reference engine (the interpreter)
// keeps the dense loops in the block's order: the two share the block structure only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/ir/model.hpp"

namespace hw::model {

// One block's sparsity and pivot order. Positions (r, c) below are in pivot order: row r of
// the factored matrix is row order[r] of the block, state states[order[r]].
struct BlockPattern {
  int n = 0;
  int offset = 0;                         // of the block's entries in A[] and lu[]
  std::vector<std::uint32_t> states;      // the block's states, in the block's order
  std::vector<std::uint8_t> a_nonzero;    // n×n, the block's order (as A[] holds it)
  std::vector<int> order;                 // pivot order (minimum degree)
  std::vector<std::uint8_t> lu_nonzero;   // n×n, pivot order: A's pattern, the diagonal, the fill

  bool a(int r, int c) const { return a_nonzero[std::size_t(order[r]) * n + order[c]] != 0; }
  bool lu(int r, int c) const { return lu_nonzero[std::size_t(r) * n + c] != 0; }
  int a_index(int r, int c) const { return offset + order[r] * n + order[c]; }
  int lu_index(int r, int c) const { return offset + r * n + c; }
  std::uint32_t state(int r) const { return states[order[r]]; }
  int a_entries() const;
  int lu_entries() const;
};

std::vector<BlockPattern> block_patterns(const Model& m);

// Flops of one factorisation, one solve and one product over all blocks, as printed.
struct BlockWork {
  double factor_flops = 0, factor_divisions = 0;
  double solve_flops = 0, solve_divisions = 0;
  double axpy_flops = 0;
};
BlockWork block_work_of(const std::vector<BlockPattern>& patterns);

// The members kSparseBlocks, factor_blocks_sparse, solve_blocks_sparse and
// block_axpy_sparse of the integrators' model concept, for a model with blocks ("" without).
// `real` spells the floating-point type, `qualifier` precedes each function
// ("__device__ __forceinline__ " or ""), `indent` each line.
std::string print_block_solver(const Model& m, const std::string& real, const std::string& qualifier,
                               const std::string& indent);

// One block's factorisation of I − h·A into lu[] and its substitutions on x[] (indexed by
// state), as factor_blocks_sparse and solve_blocks_sparse print them, for a printed step
// that solves each block where its entries are ready (fused_step.hpp). Reads h and A.
std::string print_block_factor_solve(const BlockPattern& p, std::size_t b, const std::string& real,
                                     const std::string& indent);
// "0: 10/16 nonzero, LU 10; 1: 39/121 nonzero, LU 47; ...": each block's nonzeros of A and
// entries of its LU after fill, for model inspect.
std::string describe_block_sparsity(const Model& m);

}  // namespace hw::model
