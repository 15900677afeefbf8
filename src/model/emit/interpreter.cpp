#include "model/emit/interpreter.hpp"

#include <unordered_map>
#include <vector>

#include "model/passes/eval.hpp"

namespace hw::model {

double evaluate(const Model& m, ExprId e, double t, const double* y, const double* p,
                const double* alg) {
  return evaluate_point(m, e, t, y, p, alg);
}

namespace {

// Straight-line code over slots. Loads read time, y, p or the algebraic value array;
// stores write an algebraic value, a constant, dy/dt or a Jacobian entry.
enum class Code : std::uint8_t {
  constant, time, state, param, alg, compute, store_alg, store_const, store_dydt, store_jac, store_block
};

struct Ins {
  Code code;
  Op op;
  bool wide;              // computed in double whatever Real is (Algebraic::wide)
  std::uint32_t slot;     // destination slot (loads, compute) or source slot (stores)
  std::uint32_t index;    // variable / store index
  double value;           // Code::constant
  std::uint32_t first_arg, n_args;
};

class Program {
 public:
  // Emits the nodes of `root` not yet emitted in this program at this precision; returns
  // its slot. A node used by a wide and by a narrow expression gets a slot for each.
  std::uint32_t emit(const ExprPool& pool, ExprId root, bool wide = false) {
    auto& slot = slots_[wide ? 1 : 0];
    for (ExprId id : topological_nodes(pool, std::span<const ExprId>(&root, 1))) {
      if (slot.count(id)) continue;
      const Node& n = pool.node(id);
      Ins in{Code::compute, n.op, wide, n_slots_, 0, 0.0, 0, 0};
      if (n.op == Op::constant) {
        in.code = Code::constant;
        in.value = n.value;
      } else if (n.op == Op::variable) {
        in.code = n.var_kind == VarKind::time    ? Code::time
                  : n.var_kind == VarKind::state ? Code::state
                  : n.var_kind == VarKind::param ? Code::param
                                                 : Code::alg;
        in.index = n.index;
      } else {
        in.first_arg = static_cast<std::uint32_t>(args_.size());
        in.n_args = static_cast<std::uint32_t>(n.args.size());
        for (ExprId a : n.args) args_.push_back(slot.at(a));
      }
      slot[id] = n_slots_++;
      code_.push_back(in);
    }
    return slot.at(root);
  }
  void store(Code code, std::uint32_t slot, std::uint32_t index) {
    code_.push_back({code, Op::constant, false, slot, index, 0.0, 0, 0});
  }
  // Every slot holds its value twice: s in Real and w in double (the same value where the
  // slot is computed in Real). A wide computation reads w, a narrow one s, so a wide
  // algebraic computes in double from the float values of states and narrow algebraics,
  // as the printed code does. algd holds each algebraic in double beside alg.
  template <class Real>
  void run(Real t, const Real* y, const Real* p, Real* alg, double* algd, Real* c, Real* dydt,
           Real* jac, Real* block = nullptr) const {
    thread_local std::vector<Real> s;
    thread_local std::vector<double> w;
    if (s.size() < n_slots_) s.resize(n_slots_);
    if (w.size() < n_slots_) w.resize(n_slots_);
    const auto set = [&](std::uint32_t slot, Real v) {
      s[slot] = v;
      w[slot] = static_cast<double>(v);
    };
    for (const Ins& in : code_) {
      switch (in.code) {
        case Code::constant:
          set(in.slot, static_cast<Real>(in.value));
          if (in.wide) w[in.slot] = in.value;
          break;
        case Code::time: set(in.slot, t); break;
        case Code::state: set(in.slot, y[in.index]); break;
        case Code::param: set(in.slot, p[in.index]); break;
        case Code::alg:
          s[in.slot] = alg[in.index];
          w[in.slot] = algd[in.index];
          break;
        case Code::compute:
          if (in.wide) {
            w[in.slot] = compute<double>(in, w);
            s[in.slot] = static_cast<Real>(w[in.slot]);
          } else {
            set(in.slot, compute<Real>(in, s));
          }
          break;
        case Code::store_alg:
          alg[in.index] = s[in.slot];
          algd[in.index] = w[in.slot];
          break;
        case Code::store_const: c[in.index] = s[in.slot]; break;
        case Code::store_dydt: dydt[in.index] = s[in.slot]; break;
        case Code::store_jac: jac[in.index] = s[in.slot]; break;
        case Code::store_block: block[in.index] = s[in.slot]; break;
      }
    }
  }

  template <class T>
  T compute(const Ins& in, const std::vector<T>& values) const {
    T a[64];
    std::vector<T> big;
    T* args = a;
    if (in.n_args > 64) {
      big.resize(in.n_args);
      args = big.data();
    }
    for (std::uint32_t j = 0; j < in.n_args; ++j) args[j] = values[args_[in.first_arg + j]];
    return apply_op<T>(in.op, args, in.n_args);
  }

 private:
  std::vector<Ins> code_;
  std::vector<std::uint32_t> args_;
  std::unordered_map<ExprId, std::uint32_t> slots_[2];  // narrow, wide
  std::uint32_t n_slots_ = 0;
};

class Interpreter final : public hw::cell::CellKernel {
 public:
  explicit Interpreter(const Model& m) {
    n_states_ = static_cast<int>(m.states.size());
    n_params_ = static_cast<int>(m.parameters.size());
    n_alg_ = static_cast<int>(m.algebraics.size());
    if (m.analysis.size() != m.states.size())
      throw Error("interpreter: the model has not been analysed (run the pass pipeline)");
    if (n_states_ > hw::cell::kMaxStates || n_params_ > hw::cell::kMaxParams)
      throw Error("interpreter: model too large for the integrators");
    for (int i = 0; i < n_states_; ++i) {
      if (m.derivatives.at(i) == kNoExpr || m.analysis[i].jacobian_diag == kNoExpr)
        throw Error("interpreter: state '" + m.states[i].name + "' has no derivative");
      gate_.push_back(m.analysis[i].is_gate);
    }
    for (int j = 0; j < n_alg_; ++j) {
      for (std::uint32_t r : algebraic_refs_checked(m, j))
        if (static_cast<int>(r) >= j)
          throw Error("interpreter: algebraic '" + m.algebraics[j].name +
                      "' reads a later one (run sort_algebraics)");
      // Dependency order means every load of an algebraic is emitted after its store, and
      // each algebraic is stored once per run, so a load's slot stays valid.
      if (m.algebraics[j].once_per_cell) {
        const std::uint32_t slot = constants_.emit(m.pool, m.algebraics[j].expr);
        constants_.store(Code::store_alg, slot, j);
        constants_.store(Code::store_const, slot, static_cast<std::uint32_t>(const_alg_.size()));
        const_alg_.push_back(j);
      }
    }
    if (const_alg_.size() > static_cast<std::size_t>(hw::cell::kMaxParams))
      throw Error("interpreter: too many once-per-cell values");
    for (Program* prog : {&rhs_, &rhs_jac_, &rhs_blocks_, &algebraics_, &thresholds_}) {
      for (int j = 0; j < n_alg_; ++j) {
        if (m.algebraics[j].once_per_cell) continue;
        prog->store(Code::store_alg, prog->emit(m.pool, m.algebraics[j].expr, m.algebraics[j].wide), j);
      }
    }
    for (int i = 0; i < n_states_; ++i) {
      rhs_.store(Code::store_dydt, rhs_.emit(m.pool, m.derivatives[i]), i);
      rhs_jac_.store(Code::store_dydt, rhs_jac_.emit(m.pool, m.derivatives[i]), i);
    }
    for (int i = 0; i < n_states_; ++i) {
      rhs_jac_.store(Code::store_jac, rhs_jac_.emit(m.pool, m.analysis[i].jacobian_diag), i);
      rhs_blocks_.store(Code::store_dydt, rhs_blocks_.emit(m.pool, m.derivatives[i]), i);
      rhs_blocks_.store(Code::store_jac, rhs_blocks_.emit(m.pool, m.analysis[i].jacobian_diag), i);
      block_of_.push_back(m.analysis[i].block);
    }
    std::uint32_t entry = 0;
    for (const LinearBlock& b : m.blocks) {
      block_offset_.push_back(int(entry));
      block_size_.push_back(int(b.states.size()));
      block_states_.push_back(std::vector<int>(b.states.begin(), b.states.end()));
      for (ExprId e : b.jacobian) rhs_blocks_.store(Code::store_block, rhs_blocks_.emit(m.pool, e), entry++);
    }
    n_thresholds_ = static_cast<int>(m.thresholds.size());
    if (n_thresholds_ > hw::cell::kMaxThresholds)
      throw Error("interpreter: the model has more than " + std::to_string(hw::cell::kMaxThresholds) +
                  " state thresholds");
    for (int k = 0; k < n_thresholds_; ++k)
      thresholds_.store(Code::store_dydt, thresholds_.emit(m.pool, m.thresholds[k]), k);
    if (entry > std::uint32_t(hw::cell::kMaxBlockEntries))
      throw Error("interpreter: the model's linear blocks have more than " +
                  std::to_string(hw::cell::kMaxBlockEntries) + " Jacobian entries");
  }

  std::string describe() const override { return "interpreter"; }
  int n_states() const override { return n_states_; }
  int n_params() const override { return n_params_; }
  int n_constants() const override { return static_cast<int>(const_alg_.size()); }
  int n_algebraics() const override { return n_alg_; }
  bool is_gate(int i) const override { return gate_[i]; }

  template <class Real>
  void constants_t(const Real* p, Real* c) const {
    thread_local std::vector<Real> alg;
    thread_local std::vector<double> algd;
    alg.assign(n_alg_, Real(0));
    algd.assign(n_alg_, 0.0);
    constants_.run<Real>(Real(0), nullptr, p, alg.data(), algd.data(), c, nullptr, nullptr);
  }
  template <class Real>
  void rhs_t(const Program& prog, Real t, const Real* y, const Real* p, const Real* c,
             Real* dydt, Real* jac, Real* alg_out, Real* block = nullptr) const {
    thread_local std::vector<Real> alg;
    thread_local std::vector<double> algd;
    alg.resize(n_alg_);
    algd.resize(n_alg_);
    for (std::size_t k = 0; k < const_alg_.size(); ++k) {
      alg[const_alg_[k]] = c[k];
      algd[const_alg_[k]] = static_cast<double>(c[k]);
    }
    prog.run<Real>(t, y, p, alg.data(), algd.data(), nullptr, dydt, jac, block);
    if (alg_out) std::copy(alg.begin(), alg.end(), alg_out);
  }

  // The integrators' cell-model concept, for one precision.
  template <class Real>
  struct Concept {
    const Interpreter& k;
    int n_states() const { return k.n_states_; }
    int n_params() const { return k.n_params_; }
    int n_constants() const { return static_cast<int>(k.const_alg_.size()); }
    bool is_gate(int i) const { return k.gate_[i]; }
    void constants(const Real* p, Real* c) const { k.constants_t<Real>(p, c); }
    void rhs(Real t, const Real* y, const Real* p, const Real* c, Real* dydt) const {
      k.rhs_t<Real>(k.rhs_, t, y, p, c, dydt, nullptr, nullptr);
    }
    void rhs_jac(Real t, const Real* y, const Real* p, const Real* c, Real* dydt,
                 Real* jdiag) const {
      k.rhs_t<Real>(k.rhs_jac_, t, y, p, c, dydt, jdiag, nullptr);
    }
    // Linear blocks, known at run time (see integrators.hpp).
    static constexpr int kBlockEntries = -1;
    int n_blocks() const { return static_cast<int>(k.block_size_.size()); }
    int block_size(int b) const { return k.block_size_[b]; }
    int block_offset(int b) const { return k.block_offset_[b]; }
    int block_state(int b, int r) const { return k.block_states_[b][r]; }
    int block_of(int i) const { return k.block_of_[i]; }
    void rhs_jac_blocks(Real t, const Real* y, const Real* p, const Real* c, Real* dydt,
                        Real* jdiag, Real* A) const {
      k.rhs_t<Real>(k.rhs_blocks_, t, y, p, c, dydt, jdiag, nullptr, A);
    }
    // State thresholds, known at run time (see integrators.hpp).
    static constexpr int kThresholds = -1;
    int n_thresholds() const { return k.n_thresholds_; }
    void thresholds(Real t, const Real* y, const Real* p, const Real* c, Real* g) const {
      k.rhs_t<Real>(k.thresholds_, t, y, p, c, g, nullptr, nullptr);
    }
  };

  void step(hw::cell::Integrator method, double t, double dt, int steps,
            const hw::cell::Batch<double>& b) const override {
    hw::cell::step_batch(Concept<double>{*this}, method, t, dt, steps, b);
  }
  void step(hw::cell::Integrator method, float t, float dt, int steps,
            const hw::cell::Batch<float>& b) const override {
    hw::cell::step_batch(Concept<float>{*this}, method, t, dt, steps, b);
  }
  void constants(const double* p, double* c) const override { constants_t<double>(p, c); }
  void rhs_jac(double t, const double* y, const double* p, const double* c, double* dydt,
               double* jdiag) const override {
    rhs_t<double>(rhs_jac_, t, y, p, c, dydt, jdiag, nullptr);
  }
  void algebraics(double t, const double* y, const double* p, const double* c,
                  double* out) const override {
    rhs_t<double>(algebraics_, t, y, p, c, nullptr, nullptr, out);
  }

 private:
  static std::vector<std::uint32_t> algebraic_refs_checked(const Model& m, int j) {
    std::vector<std::uint32_t> refs;
    ExprId e = m.algebraics[j].expr;
    if (e == kNoExpr)
      throw Error("interpreter: algebraic '" + m.algebraics[j].name + "' has no definition");
    for (ExprId id : topological_nodes(m.pool, std::span<const ExprId>(&e, 1)))
      if (m.pool.is_variable(id, VarKind::algebraic)) refs.push_back(m.pool.node(id).index);
    return refs;
  }

  int n_states_ = 0, n_params_ = 0, n_alg_ = 0, n_thresholds_ = 0;
  std::vector<bool> gate_;
  std::vector<std::uint32_t> const_alg_;  // algebraic index of each constant
  Program constants_, rhs_, rhs_jac_, rhs_blocks_, algebraics_, thresholds_;
  std::vector<int> block_of_, block_size_, block_offset_;
  std::vector<std::vector<int>> block_states_;
};

}  // namespace

std::unique_ptr<hw::cell::CellKernel> make_interpreter(const Model& analysed) {
  return std::make_unique<Interpreter>(analysed);
}

}  // namespace hw::model
