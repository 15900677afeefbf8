// The linear blocks' solver printed for their sparsity (model/emit/block_solver.hpp): the
// pattern, the minimum-degree order and its fill counted by hand on a star-shaped chain
// (where the block's own order would fill the whole matrix), both printers emitting it for
// models with blocks only, and the compiled C++ against the interpreter's dense loops in the
// block's own order (the reference shares the model and its block structure, not the
// solver). The stiff set runs the same comparison on its large chains (test_stiff_set.cpp),
// and the GPU test Models/CudaCell runs the printed CUDA against the interpreter.
#include <gtest/gtest.h>

#include <filesystem>

#include "model/emit/block_solver.hpp"
#include "model/emit/cpp_printer.hpp"
#include "model/emit/cuda_printer.hpp"
#include "model/emit/interpreter.hpp"
#include "model/jit/jit.hpp"
#include "model/load.hpp"
#include "model_text.hpp"
#include "test_codegen_support.hpp"

using hw::cell::Integrator;

namespace {

hw::model::LoadedModel load_text(const std::string& text) { return hw::test_models::load_model_text(text, "block_solver"); }

// A hub state h exchanging with three leaves that exchange with nothing else. In the
// block's own order h is eliminated first and fills the matrix; eliminating the leaves
// first (their degree is 1) fills nothing.
hw::model::LoadedModel star() {
  return load_text(
      "model star\ntime t [ms]\nparam k = 2\nparam q = 0.3\n"
      "state V = -80 @membrane_voltage\nstate h = 0.7\nstate l1 = 0.1\nstate l2 = 0.1\nstate l3 = 0.1\n"
      "a = k*exp(V/25)\n"
      "d/dt V = -0.1*(V + 80)\n"
      "d/dt h = q*(l1 + l2 + l3) - 3*a*h\n"
      "d/dt l1 = a*h - q*l1\nd/dt l2 = a*h - q*l2\nd/dt l3 = a*h - q*l3\n");
}

}  // namespace

TEST(BlockSolver, StarChainsOrderAndFillCountedByHand) {
  const auto lm = star();
  const auto& m = lm.analysed;
  ASSERT_EQ(m.blocks.size(), 1u);
  ASSERT_EQ(m.blocks[0].states.size(), 4u);
  const auto patterns = hw::model::block_patterns(m);
  ASSERT_EQ(patterns.size(), 1u);
  const hw::model::BlockPattern& p = patterns[0];
  EXPECT_EQ(p.a_entries(), 10);   // h's row (4), each leaf's h and itself (3 × 2)
  EXPECT_EQ(p.lu_entries(), 10);  // no fill
  // Two leaves; then the hub and the last leaf both have one neighbour, and the tie goes to
  // the lower index.
  EXPECT_EQ(p.order, (std::vector<int>{1, 2, 0, 3}));
  const hw::model::BlockWork w = hw::model::block_work_of(patterns);
  // 10 products h·A and 4 differences 1 − h·A_rr; each of the first three pivots has one
  // entry below it (l = lu·inv: 1) and one to its right (minus l·u: 2), and a reciprocal;
  // the last has nothing below it.
  EXPECT_EQ(w.factor_flops, 14 + 3 * 3);
  EXPECT_EQ(w.factor_divisions, 3);
  EXPECT_EQ(w.solve_flops, 2 * 6);  // 6 entries off the diagonal of L and U
  EXPECT_EQ(w.solve_divisions, 4);
  EXPECT_EQ(w.axpy_flops, 2 * 10 + 2 * 4);
  EXPECT_NE(hw::model::describe_block_sparsity(m).find("0: 10/16 nonzero, LU 10"), std::string::npos)
      << hw::model::describe_block_sparsity(m);
}

TEST(BlockSolver, PrintersEmitItForModelsWithBlocksOnly) {
  const auto lm = star();
  const std::string cpp = hw::model::print_cpp(lm.analysed, {});
  EXPECT_NE(cpp.find("static constexpr bool kSparseBlocks = true;"), std::string::npos);
  EXPECT_NE(cpp.find("void factor_blocks_sparse(Real h, const Real* A, Real* lu) const"), std::string::npos);
  hw::model::CudaOptions co;
  co.use_float = false;
  const std::string cu = hw::model::print_cuda(lm.analysed, co);
  EXPECT_NE(cu.find("__device__ __forceinline__ void solve_blocks_sparse(const double* lu, double* x) const"),
            std::string::npos);
  // Minimum-degree order leaves no fill here, so no entry is written as a fill.
  EXPECT_EQ(cu.find("= -(l *"), std::string::npos);
  const auto none = hw::model::load_model("mfhn");
  ASSERT_TRUE(none.analysed.blocks.empty());
  EXPECT_EQ(hw::model::print_cpp(none.analysed, {}).find("kSparseBlocks"), std::string::npos);
}

TEST(BlockSolver, CompiledStepsAgreeWithTheInterpretersDenseLoops) {
  hw::model::cgtest::use_test_cache();
  const auto lm = star();
  std::string how;
  const auto compiled = hw::model::make_kernel(lm.analysed, hw::model::KernelChoice::automatic, &how);
  if (how.rfind("compiled C++", 0) != 0) GTEST_SKIP() << "no C++ compiler here: " << how;
  const auto interp = hw::model::make_interpreter(lm.analysed);
  const std::uint32_t blocks = 1u << int(Integrator::grl1) | 1u << int(Integrator::grl2);
  for (double dt : {0.01, 0.5}) {  // 0.5 ms: far beyond the explicit limit of the chain
    hw::model::cgtest::expect_steps_match<double>(lm.analysed, *compiled, dt, 1e-13, interp.get(), 1, blocks);
    hw::model::cgtest::expect_steps_match<float>(lm.analysed, *compiled, dt, 1e-5, interp.get(), 1, blocks);
  }
}

TEST(BlockSolver, IyerChainsLoseMostOfTheirEntries) {
  const auto file = std::filesystem::path(HW_TEST_DATA_DIR) / "data" / "stiff" / "iyer_mazhari_winslow_2004.cellml";
  if (!std::filesystem::exists(file)) GTEST_SKIP() << file << " not found";
  const auto lm = hw::model::load_model(file.string());
  int entries = 0, nonzero = 0, lu = 0;
  for (const auto& p : hw::model::block_patterns(lm.analysed)) {
    entries += p.n * p.n;
    nonzero += p.a_entries();
    lu += p.lu_entries();
  }
  // The numbers docs/benchmarks.md quotes: of 556 dense entries, 202 nonzero, 236 with the
  // fill of minimum-degree elimination (362 in the blocks' own order).
  EXPECT_EQ(entries, 556);
  EXPECT_EQ(nonzero, 202);
  EXPECT_EQ(lu, 236);
}
