#include "tissue/engine.hpp"

#include "comm/communicator.hpp"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "core/error.hpp"
#include "device/device.hpp"
#include "tissue/simulation.hpp"

namespace hw::tissue {

void write_canonical(const CanonicalState& st, ByteWriter& out) {
  out.put<std::uint8_t>(st.bytes);
  auto put = [&](const std::vector<double>& v) {
    st.bytes == 4 ? out.put_as<float>(v) : out.put_as<double>(v);
  };
  for (const auto& p : st.parts) put(p);
  put(st.v);
}

void read_canonical(ByteReader& in, const std::vector<std::size_t>& parts, std::size_t tissue,
                    CanonicalState& st) {
  st.bytes = in.get<std::uint8_t>();
  if (st.bytes != 4 && st.bytes != 8)
    throw Error(fmt::format("load_state: unknown precision tag {} (4 or 8 expected)", int(st.bytes)));
  auto get = [&](std::size_t n, std::vector<double>& v) {
    st.bytes == 4 ? in.get_as<float>(n, v) : in.get_as<double>(n, v);
  };
  st.parts.resize(parts.size());
  for (std::size_t q = 0; q < parts.size(); ++q) get(parts[q], st.parts[q]);
  get(tissue, st.v);
}

CudaEngineOptions CudaEngineOptions::from_environment() {
  CudaEngineOptions o;
  if (const char* e = std::getenv("HEARTWAVE_CUDA_KERNEL")) o.kernel = e;
  if (const char* e = std::getenv("HEARTWAVE_CUDA_GRAPHS"); e && std::string(e) == "0") o.graphs = false;
  return o;
}

CanonicalState initial_state(const SimSetup& s) {
  CanonicalState st;
  const Grid& g = s.geo.grid;
  std::vector<double> v(g.size(), 0.0);
  for (const Part& p : s.parts) {
    std::vector<double>& y = st.parts.emplace_back(std::size_t(p.ns - 1) * p.n);
    for (int k = 0, slot = 0; k < p.ns; ++k)
      if (k != p.kv) std::fill_n(y.data() + std::size_t(slot++) * p.n, p.n, p.setup.initial_states[std::size_t(k)]);
    const double v0 = p.setup.initial_states[std::size_t(p.kv)] * p.v2mV;
    for (std::size_t i = 0; i < p.n; ++i) v[p.grid_index(i)] = v0;
  }
  for (const ResolvedInitial& ic : s.initial) {
    if (ic.part < 0) {
      for (std::uint32_t n : ic.cells)
        if (is_tissue(&s.geo.mask, n)) v[n] = ic.value;
    } else {
      const Part& p = s.parts[std::size_t(ic.part)];
      const std::size_t slot = std::size_t(ic.state < p.kv ? ic.state : ic.state - 1);
      for (std::uint32_t i : ic.cells) st.parts[std::size_t(ic.part)][slot * p.n + i] = ic.value;
    }
  }
  st.v.reserve(s.tissue_cells);
  for (std::size_t n = 0; n < g.size(); ++n)
    if (is_tissue(&s.geo.mask, n)) st.v.push_back(v[n]);
  return st;
}

std::string failing_variable(const SimSetup& s, std::size_t cell, int k) {
  for (const Part& p : s.parts)
    if (k >= 0 && k < p.ns && k != p.kv &&
        (p.identity || std::binary_search(p.cells.begin(), p.cells.end(), std::uint32_t(cell))))
      return p.setup.state_names[std::size_t(k)];
  return "V";
}

std::array<int, 3> grid_ijk(const Grid& g, std::size_t c) {
  return {int(c % g.nx()), int((c / g.nx()) % g.ny()), int(c / (std::size_t(g.nx()) * g.ny()))};
}

void throw_numerical_error(const Grid& g, std::size_t cell, const std::string& variable, double t,
                           double dt, bool tables) {
  const auto ijk = grid_ijk(g, cell);
  throw NumericalError(
      fmt::format("numerical error: {} is not finite at t = {} ms in cell ({}, {}, {}); "
                  "the state of t = {} ms is kept (smaller dt, more ode_substeps or a "
                  "smaller stimulus may help{})",
                  variable, t + dt, ijk[0], ijk[1], ijk[2], t,
                  tables ? "; with time.cell_maths = \"tables\" a V outside -150 ... 100 mV also gives this: "
                           "\"exact\" computes it there"
                         : ""),
      t + dt, ijk, variable);
}

Backend choose_backend(const std::string& name, std::string* note) {
  const gpu::GpuStatus& g = gpu::gpu_status();
  auto say = [&](std::string s) {
    if (note) *note = std::move(s);
  };
  if (name == "reference") return say("backend reference (plain double loops, the oracle)"), Backend::reference;
  if (name == "cpu") return say("backend cpu"), Backend::cpu;
  if (name == "cuda") {
    if (!g.usable) throw Error("--backend cuda: " + g.why);
    say(fmt::format("backend cuda on {} ({})", g.device.name, g.device.arch()));
    return Backend::cuda;
  }
  if (name == "auto") {
    if (g.usable) {
      say(fmt::format("backend auto: cuda on {} ({})", g.device.name, g.device.arch()));
      return Backend::cuda;
    }
    say(fmt::format("backend auto: cpu ({})", g.why));
    return Backend::cpu;
  }
  throw Error(fmt::format("unknown backend \"{}\" (auto, cpu, cuda, reference)", name));
}

std::unique_ptr<Engine> make_engine(const SimSetup& s, const EngineOptions& opt) {
  if (opt.comm && opt.comm->size() > 1 && opt.backend == Backend::reference)
    throw Error(fmt::format("the reference backend does not split a run over ranks ({} ranks asked for): "
                            "use --backend cpu or cuda, or run on one rank (docs/parallel.md)",
                            opt.comm->size()));
  switch (opt.backend) {
    case Backend::reference: return make_reference_engine(s);
    case Backend::cpu: return make_cpu_engine(s, opt.threads, opt.adapt_threads, opt.comm);
    case Backend::cuda:
      return make_cuda_engine(s, opt.on ? opt.on : gpu::Device::open(opt.device), opt.cuda, opt.comm);
  }
  throw Error("unknown backend");
}

}  // namespace hw::tissue
