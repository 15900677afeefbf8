// The CUDA engine's sinks (tissue/sinks.hpp), where V lives: the activation/APD90 maps
// (updated by the step kernel's last pass), the pseudo-ECG's sums (one kernel, a few doubles
// back), field snapshots copied beside the steps (gpu::HostCopy), and probes copied on the
// device into one buffer (split: by the cells' owners).
#pragma once

#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <vector>

#include "device/device.hpp"
#include "kernels/cuda/ecg_args.hpp"
#include "kernels/cuda/part_args.hpp"
#include "tissue/cuda/fields.hpp"
#include "tissue/engine.hpp"
#include "tissue/sinks.hpp"
#include "tissue/split.hpp"

namespace hw::tissue::cuda {

// The activation/APD90 maps on the device, grid-indexed (NaN: not yet).
class ActivationMapsSink final : public ActivationSink {
 public:
  std::size_t bytes() const { return act_.bytes() + apd_.bytes() + v_rest_.bytes() + v_peak_.bytes(); }

  ActivationMapsSink(gpu::Device& dev, const Grid& g, const ActivationMaps& m) : grid_(g) {
    const std::size_t N = g.size();
    if (m.act.size() != N || (m.with_apd && (m.apd.size() != N || m.v_rest.size() != N || m.v_peak.size() != N)))
      throw Error("activation maps: arrays of the wrong size for this grid");
    threshold_ = m.threshold;
    with_apd_ = m.with_apd;
    act_ = gpu::DeviceBuffer::from(dev, m.act, "the activation map");
    if (m.with_apd) {
      apd_ = gpu::DeviceBuffer::from(dev, m.apd, "the APD90 map");
      v_rest_ = gpu::DeviceBuffer::from(dev, m.v_rest, "the APD90 map's V_rest");
      v_peak_ = gpu::DeviceBuffer::from(dev, m.v_peak, "the APD90 map's V_peak");
    }
  }

  // Split: gathers every rank's rows of a map before it is read (each rank's kernels follow
  // only its own).
  std::function<void(const gpu::DeviceBuffer&)> gather;

  void read(ActivationMaps& m) const override {
    const std::size_t N = grid_.size();
    m.threshold = threshold_;
    m.with_apd = with_apd_;
    auto get = [&](const gpu::DeviceBuffer& b, std::vector<float>& v) {
      if (gather) gather(b);
      v.resize(N);
      b.download(v.data(), N * sizeof(float));
    };
    get(act_, m.act);
    if (with_apd_) {
      get(apd_, m.apd);
      get(v_rest_, m.v_rest);
      get(v_peak_, m.v_peak);
    }
  }

  // The kernel's map arguments for the pass that ends a step (vstart: V at its start).
  template <class Real>
  void set_args(hw::cuda::PartArgs<Real>& a, const gpu::DeviceBuffer& vstart) const {
    a.act = reinterpret_cast<float*>(act_.ptr());
    a.apd = reinterpret_cast<float*>(apd_.ptr());
    a.v_rest = reinterpret_cast<float*>(v_rest_.ptr());
    a.v_peak = reinterpret_cast<float*>(v_peak_.ptr());
    a.vstart = reinterpret_cast<const Real*>(vstart.ptr());
    a.thr = threshold_;
    a.with_apd = with_apd_;
  }

 private:
  const Grid& grid_;
  float threshold_ = -20;
  bool with_apd_ = false;
  gpu::DeviceBuffer act_, apd_, v_rest_, v_peak_;
};

// The pseudo-ECG's sums from V where it lives (kernels/cuda/ecg.cuh).
template <class Real>
void ecg_sums(gpu::Device& dev, DeviceFields<Real>& f, const Grid& g, void* fn, gpu::DevicePtr fail,
              const gpu::DeviceBuffer& v, gpu::DeviceBuffer& sums_buffer,
              const std::vector<std::array<double, 3>>& at, double rmin, std::vector<double>& sums) {
  sums.assign(at.size(), 0.0);
  if (sums_buffer.empty()) sums_buffer = gpu::DeviceBuffer(dev, hw::cuda::kEcgElectrodes * sizeof(double), "the ECG sums");
  hw::cuda::PartArgs<Real> a = f.geometry_args(fail);
  a.vin = reinterpret_cast<const Real*>(v.ptr());
  for (std::size_t e0 = 0; e0 < at.size(); e0 += hw::cuda::kEcgElectrodes) {
    hw::cuda::EcgArgs e{};
    e.count = int(std::min<std::size_t>(hw::cuda::kEcgElectrodes, at.size() - e0));
    for (int q = 0; q < e.count; ++q)
      for (int d = 0; d < 3; ++d) e.at[q][d] = at[e0 + std::size_t(q)][std::size_t(d)];
    for (int d = 0; d < 3; ++d) e.h[d] = g.h[std::size_t(d)];
    e.rmin = rmin;
    e.sums = reinterpret_cast<double*>(sums_buffer.ptr());
    sums_buffer.fill_zero();
    f.launch_over_tissue(dev.compute(), fn, a, &e);
    sums_buffer.download(sums.data() + e0, std::size_t(e.count) * sizeof(double));
  }
}

// The host copies of field snapshots (gpu::HostCopy: a device buffer, pinned host memory, a
// stream), kept for the next snapshot: pinned memory takes milliseconds to allocate, and a
// run's outputs ask for the same sizes every time. Shared by the engine and its snapshots,
// which give theirs back from the thread that read them.
class HostCopyPool {
 public:
  explicit HostCopyPool(gpu::Device& dev) : dev_(dev.shared_from_this()) {}
  std::unique_ptr<gpu::HostCopy> take(std::size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(m_);
      for (auto it = free_.begin(); it != free_.end(); ++it)
        if ((*it)->capacity() >= bytes) {
          auto c = std::move(*it);
          free_.erase(it);
          return c;
        }
    }
    return std::make_unique<gpu::HostCopy>(*dev_, bytes, "a field snapshot");
  }
  void give(std::unique_ptr<gpu::HostCopy> c) {
    std::lock_guard<std::mutex> lock(m_);
    free_.push_back(std::move(c));
  }

 private:
  std::shared_ptr<gpu::Device> dev_;
  std::mutex m_;
  std::vector<std::unique_ptr<gpu::HostCopy>> free_;
};

// A snapshot in flight: one host copy per stored field, scattered to grid order on read().
template <class Real>
class DeviceSnapshot final : public Snapshot {
 public:
  struct Piece {
    std::size_t variable;
    FieldRef ref;
    std::unique_ptr<gpu::HostCopy> copy;
  };
  DeviceSnapshot(const SimSetup& s, const RowLayout& layout, std::shared_ptr<HostCopyPool> pool,
                 std::size_t variables)
      : s_(s), layout_(layout), pool_(std::move(pool)), variables_(variables) {}
  ~DeviceSnapshot() override {
    for (Piece& p : pieces_)
      if (p.copy) pool_->give(std::move(p.copy));
  }
  void add(std::size_t variable, FieldRef ref, std::unique_ptr<gpu::HostCopy> copy) {
    pieces_.push_back({variable, ref, std::move(copy)});
  }
  void read(std::vector<Field<float>>& out) override {
    const Grid& g = s_.geo.grid;
    out.assign(variables_, Field<float>());
    for (auto& f : out) f.resize(g.size(), std::numeric_limits<float>::quiet_NaN());
    for (Piece& piece : pieces_) {
      const Real* h = static_cast<const Real*>(piece.copy->wait());
      Field<float>& f = out[piece.variable];
      if (piece.ref.part < 0) {
        for (std::size_t n = 0; n < g.size(); ++n)
          if (is_tissue(&s_.geo.mask, n)) f[n] = float(h[layout_.index(n)]);
      } else {
        const Part& p = s_.parts[std::size_t(piece.ref.part)];
        for (std::size_t i = 0; i < p.n; ++i) f[p.grid_index(i)] = float(h[i]);
      }
      pool_->give(std::move(piece.copy));
    }
  }

 private:
  const SimSetup& s_;
  const RowLayout& layout_;
  std::shared_ptr<HostCopyPool> pool_;
  std::size_t variables_;
  std::vector<Piece> pieces_;
};

// Starts the copies of the fields `what` (as FieldRefs) of the engine's current V and
// states: on the compute stream after the steps queued so far; the steps queued after them
// do not wait for the bytes to reach the host.
template <class Real>
std::unique_ptr<Snapshot> start_snapshot(const SimSetup& s, const DeviceFields<Real>& f, int cur,
                                         const std::shared_ptr<HostCopyPool>& copies,
                                         const std::vector<FieldRefs>& what) {
  auto snap = std::make_unique<DeviceSnapshot<Real>>(s, f.layout(), copies, what.size());
  for (std::size_t i = 0; i < what.size(); ++i)
    for (const FieldRef& r : what[i]) {
      std::size_t bytes = f.layout().size() * sizeof(Real);
      gpu::DevicePtr src = f.v(cur).ptr();
      if (r.part >= 0) {
        const Part& p = s.parts[std::size_t(r.part)];
        bytes = p.n * sizeof(Real);
        src = f.parts()[std::size_t(r.part)].y.ptr() + DeviceFields<Real>::slot(p, r.state) * p.n * sizeof(Real);
      }
      auto copy = copies->take(bytes);
      copy->start(src, bytes);
      snap->add(i, r, std::move(copy));
    }
  return snap;
}

// The pseudo-ECG's electrodes, summed where V lives when asked.
template <class Real>
class EcgSumsSink final : public EcgSink {
 public:
  using Run = std::function<void(const std::vector<std::array<double, 3>>&, double, std::vector<double>&)>;
  EcgSumsSink(Run run, std::vector<std::array<double, 3>> at, double rmin)
      : run_(std::move(run)), at_(std::move(at)), rmin_(rmin) {}
  void sums(std::vector<double>& out) const override { run_(at_, rmin_, out); }

 private:
  Run run_;
  std::vector<std::array<double, 3>> at_;
  double rmin_;
};

// The live view's frame gathered on the device (kernels/cuda/frame.cuh): per source array
// (V, or one state of a part) the samples' storage indices and frame slots, uploaded once;
// read() launches one gather per source on the compute stream, after the steps queued, and
// copies the frame's floats back (a 256² frame: 256 KB).
template <class Real>
class DeviceFrame final : public FrameSink {
 public:
  // `fn`: the engine's gather kernel, by reference: the engine compiles its kernels again
  // mid-run (the first stimulus added to a run that had none, a live click), and the old
  // module's function is gone then.
  DeviceFrame(gpu::Device& dev, const SimSetup& s, const DeviceFields<Real>& f, const int& current, void* const& fn,
              const std::vector<ProbeRead>& reads)
      : dev_(dev), f_(f), cur_(current), fn_(fn), count_(reads.size()) {
    if (!fn_) throw Error("live frame: the CUDA engine's kernels are not compiled yet");
    // Group the reads by source: V (part −1) first, then each (part, state) met.
    std::vector<std::pair<FieldRef, std::pair<std::vector<unsigned>, std::vector<unsigned>>>> groups;
    for (std::size_t i = 0; i < reads.size(); ++i) {
      const ProbeRead& r = reads[i];
      auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) {
        return g.first.part == r.field.part && g.first.state == r.field.state;
      });
      if (it == groups.end()) it = groups.insert(groups.end(), {r.field, {}});
      const unsigned from = unsigned(r.field.part < 0 ? f.layout().index(r.cell) : r.cell);
      it->second.first.push_back(from);
      it->second.second.push_back(unsigned(i));
    }
    for (auto& [ref, lists] : groups) {
      Source src;
      src.ref = ref;
      if (ref.part >= 0) {
        const Part& p = s.parts[std::size_t(ref.part)];
        src.offset = DeviceFields<Real>::slot(p, ref.state) * p.n * sizeof(Real);
      }
      src.count = lists.first.size();
      src.from = gpu::DeviceBuffer::from(dev, lists.first, "the live frame's sample cells");
      src.to = gpu::DeviceBuffer::from(dev, lists.second, "the live frame's sample slots");
      sources_.push_back(std::move(src));
    }
    out_ = gpu::DeviceBuffer(dev, std::max<std::size_t>(1, count_) * sizeof(float), "the live frame");
  }

  void read(std::vector<float>& out) const override {
    out.resize(count_);
    // frame[to[i]] = field[from[i]]
    for (const Source& s : sources_) {
      gpu::DevicePtr src = (s.ref.part < 0 ? f_.v(cur_).ptr() : f_.parts()[std::size_t(s.ref.part)].y.ptr()) + s.offset;
      gpu::DevicePtr from = s.from.ptr(), to = s.to.ptr(), frame = out_.ptr();
      unsigned long long count = s.count;
      void* args[] = {&src, &from, &to, &count, &frame};
      gpu::launch(dev_.compute(), fn_, {unsigned((count + 255) / 256), 1, 1}, {256, 1, 1}, args);
    }
    if (count_) out_.download(out.data(), count_ * sizeof(float));
  }

  std::size_t bytes() const {
    std::size_t b = out_.bytes();
    for (const Source& s : sources_) b += s.from.bytes() + s.to.bytes();
    return b;
  }

 private:
  struct Source {
    FieldRef ref;
    std::size_t offset = 0;  // bytes into the part's states
    std::size_t count = 0;
    gpu::DeviceBuffer from, to;
  };
  gpu::Device& dev_;
  const DeviceFields<Real>& f_;
  const int& cur_;
  void* const& fn_;
  std::size_t count_;
  std::vector<Source> sources_;
  gpu::DeviceBuffer out_;
};

// Probes read on the device: each value copied, after the steps queued, into one small
// buffer, then one read back (one wait for all of them, not one per value). Split, each
// rank reads the cells it owns (its rows are current without a gather) and the values are
// summed across the ranks, the others adding −0, the identity of every value (NaN and −0
// included): one all-reduce of a few doubles where a gather moved every rank's states.
template <class Real>
class DeviceProbes final : public ProbeSink {
 public:
  DeviceProbes(gpu::Device& dev, const SimSetup& s, const DeviceFields<Real>& f, const int& current,
               const Split* split, const std::vector<ProbeRead>& reads)
      : dev_(dev), f_(f), cur_(current), split_(split) {
    for (const ProbeRead& r : reads) {
      Read x;
      x.part = r.field.part;
      if (r.field.part < 0) {
        x.tissue = is_tissue(&s.geo.mask, r.cell);
        if (x.tissue) x.offset = f.layout().index(r.cell) * sizeof(Real);
      } else {
        const Part& p = s.parts[std::size_t(r.field.part)];
        x.offset = (DeviceFields<Real>::slot(p, r.field.state) * p.n + r.cell) * sizeof(Real);
      }
      x.mine = !split || split->owns_value(r.field.part, r.cell, s.parts);
      reads_.push_back(x);
    }
    buf_ = gpu::DeviceBuffer(dev, std::max<std::size_t>(1, reads_.size()) * sizeof(Real), "the probe values");
    host_.resize(reads_.size());
  }

  void read(std::vector<double>& out) const override {
    bool any = false;
    for (std::size_t q = 0; q < reads_.size(); ++q) {
      const Read& r = reads_[q];
      if (!r.mine || !r.tissue) continue;
      const gpu::DevicePtr src = (r.part < 0 ? f_.v(cur_).ptr() : f_.parts()[std::size_t(r.part)].y.ptr()) + r.offset;
      gpu::copy_device(dev_.compute(), buf_.ptr() + q * sizeof(Real), src, sizeof(Real));
      any = true;
    }
    if (any) buf_.download(host_.data(), host_.size() * sizeof(Real));
    out.resize(reads_.size());
    for (std::size_t q = 0; q < reads_.size(); ++q) {
      const Read& r = reads_[q];
      out[q] = !r.mine ? -0.0 : r.tissue ? double(host_[q]) : std::numeric_limits<double>::quiet_NaN();
    }
    if (split_) split_->from_owners(out);
  }

 private:
  struct Read {
    int part = -1;            // −1: V
    std::size_t offset = 0;   // bytes into V's field or the part's states
    bool tissue = true;       // V off the tissue reads NaN
    bool mine = true;         // this rank owns the cell
  };
  gpu::Device& dev_;
  const DeviceFields<Real>& f_;
  const int& cur_;
  const Split* split_;
  std::vector<Read> reads_;
  gpu::DeviceBuffer buf_;
  mutable std::vector<Real> host_;
};

// What the CUDA engine offers the sinks. `current` names V's current field (the engine's
// parity); the ECG kernel and the failure flag come once the kernels are compiled.
template <class Real>
class DeviceSinks final : public SinkHost {
 public:
  DeviceSinks(const Engine& e, gpu::Device& dev, const SimSetup& s, DeviceFields<Real>& f, const int& current)
      : SinkHost(e, s.geo.grid.size()), dev_(dev), s_(s), f_(f), cur_(current),
        copies_(std::make_shared<HostCopyPool>(dev)) {}

  void set_ecg_kernel(void* fn, gpu::DevicePtr fail) {
    ecg_fn_ = fn;
    fail_ = fail;
  }
  void set_frame_kernel(void* fn) { frame_fn_ = fn; }
  // Split (tissue/cuda/split.hpp): `whole` gives every rank the whole V and states before a
  // read; `grid` gathers a grid-ordered array (a map).
  void set_gather(std::function<void()> whole, std::function<void(const gpu::DeviceBuffer&)> grid) {
    gather_ = std::move(whole);
    gather_grid_ = std::move(grid);
  }

  // Split (set_gather): the cells' owners read them; the others add nothing.
  void set_split(const Split* split) { split_ = split; }

  std::shared_ptr<ProbeSink> probes(const std::vector<ProbeRead>& reads) override {
    return std::make_shared<DeviceProbes<Real>>(dev_, s_, f_, cur_, split_, reads);
  }

  std::shared_ptr<FrameSink> frame(const std::vector<ProbeRead>& reads) override {
    if (gather_) return nullptr;  // split: the host form, from the engine's reads (which gather)
    return std::make_shared<DeviceFrame<Real>>(dev_, s_, f_, cur_, frame_fn_, reads);
  }

  // One set of maps rides the step kernel (it has one slot): a second, while the first is
  // held, takes the host form (null).
  std::shared_ptr<ActivationSink> activation(const ActivationMaps& m) override {
    if (!maps_.expired()) return nullptr;
    auto sink = std::make_shared<ActivationMapsSink>(dev_, s_.geo.grid, m);
    sink->gather = gather_grid_;
    maps_ = sink;
    ++generation_;
    return sink;
  }
  // At the start of a batch: the maps the step kernel updates (null when none is held),
  // kept by the engine for the batch.
  std::shared_ptr<const ActivationMapsSink> maps() {
    auto m = maps_.lock();
    if (!m && held_) ++generation_;  // dropped since
    held_ = bool(m);
    return m;
  }
  // Changes whenever the maps come or go (CUDA graphs hold their pointers).
  long generation() const { return generation_; }

  std::shared_ptr<EcgSink> ecg(const std::vector<std::array<double, 3>>& at, double rmin) override {
    return std::make_shared<EcgSumsSink<Real>>(
        [this](const std::vector<std::array<double, 3>>& p, double r, std::vector<double>& out) {
          if (gather_) gather_();
          ecg_sums<Real>(dev_, f_, s_.geo.grid, ecg_fn_, fail_, f_.v(cur_), sums_, p, r, out);
        },
        at, rmin);
  }

  std::unique_ptr<Snapshot> snapshot(const std::vector<FieldRefs>& what) override {
    if (gather_) gather_();
    return start_snapshot<Real>(s_, f_, cur_, copies_, what);
  }

  std::size_t bytes() const override {
    const auto m = maps_.lock();
    return (m ? m->bytes() : 0) + sums_.bytes();
  }

 private:
  gpu::Device& dev_;
  const SimSetup& s_;
  DeviceFields<Real>& f_;
  const int& cur_;
  std::shared_ptr<HostCopyPool> copies_;
  std::weak_ptr<ActivationMapsSink> maps_;
  bool held_ = false;
  long generation_ = 0;
  void* ecg_fn_ = nullptr;
  void* frame_fn_ = nullptr;
  gpu::DevicePtr fail_ = 0;
  gpu::DeviceBuffer sums_;
  std::function<void()> gather_;
  std::function<void(const gpu::DeviceBuffer&)> gather_grid_;
  const Split* split_ = nullptr;
};

}  // namespace hw::tissue::cuda
