#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "model/analysis/roles.hpp"
#include "model/emit/interpreter.hpp"
#include "model/frontend/cellml/cellml.hpp"
#include "model/passes/pipeline.hpp"

using namespace hw::model;

TEST(Pipeline, ReportsEveryPassInOrder) {
  Model m;
  State s;
  s.name = "y";
  s.initial = 1;
  m.states.push_back(s);
  m.derivatives.push_back(m.pool.neg(m.pool.state(0)));
  std::vector<std::string> seen;
  PipelineOptions opt;
  opt.after_each = [&](const std::string& pass, const Model&) { seen.push_back(pass); };
  hw::DiagnosticSink sink;
  run_pipeline(m, opt, sink);
  EXPECT_EQ(seen, pipeline_pass_names());
  ASSERT_EQ(m.analysis.size(), 1u);
  EXPECT_TRUE(m.analysis[0].is_gate);
}

// Every shared CellML model goes through the pipeline, and the analysed model gives the
// same derivatives as the model as loaded at random states near the initial one.
TEST(Pipeline, SharedModelsKeepTheirValues) {
  const std::string dir = std::string(HW_SHARED_DIR) + "/models/cellml";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "shared models not found under " << dir;
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".cellml") continue;
    SCOPED_TRACE(entry.path().filename().string());
    Model loaded = load_cellml(entry.path().string());
    detect_roles(loaded);
    Model m = loaded;
    hw::DiagnosticSink sink;
    run_pipeline(m, {}, sink);
    EXPECT_FALSE(sink.has_errors());
    auto kernel = make_interpreter(m);
    std::vector<double> p, c(kernel->n_constants()), f(m.states.size()), j(m.states.size());
    for (const auto& q : m.parameters) p.push_back(q.value);
    kernel->constants(p.data(), c.data());
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> u(0.99, 1.01);
    for (int trial = 0; trial < 3; ++trial) {
      std::vector<double> y;
      for (const auto& s : m.states) y.push_back(s.initial * (trial ? u(rng) : 1.0));
      const double t = 0.25 * trial;
      kernel->rhs_jac(t, y.data(), p.data(), c.data(), f.data(), j.data());
      for (std::size_t i = 0; i < m.states.size(); ++i) {
        const double ref = evaluate(loaded, loaded.derivatives[i], t, y.data(), p.data());
        EXPECT_NEAR(f[i], ref, 1e-9 * std::max(1.0, std::fabs(ref))) << m.states[i].name;
        EXPECT_TRUE(std::isfinite(j[i])) << m.states[i].name;
      }
    }
    ++n;
  }
  EXPECT_GE(n, 11);
}
