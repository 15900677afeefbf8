// The host forms of the sinks (tissue/sinks.hpp): what any engine gives through its plain
// reads.
#include "tissue/sinks.hpp"

#include <limits>

#include "tissue/engine.hpp"

namespace hw::tissue {

namespace {

// The fields copied to the host now.
class HostSnapshot final : public Snapshot {
 public:
  explicit HostSnapshot(std::vector<Field<float>> f) : f_(std::move(f)) {}
  void read(std::vector<Field<float>>& out) override { out = std::move(f_); }

 private:
  std::vector<Field<float>> f_;
};

// Each value read from the engine when asked (a GPU engine copies a few bytes per value).
class HostProbes final : public ProbeSink {
 public:
  HostProbes(const Engine& e, std::vector<ProbeRead> reads) : e_(e), reads_(std::move(reads)) {}
  void read(std::vector<double>& out) const override {
    out.resize(reads_.size());
    for (std::size_t i = 0; i < reads_.size(); ++i) {
      const ProbeRead& r = reads_[i];
      out[i] = r.field.part < 0 ? e_.voltage_at(r.cell) : e_.state_at(std::size_t(r.field.part), r.field.state, r.cell);
    }
  }

 private:
  const Engine& e_;
  std::vector<ProbeRead> reads_;
};

// The frame read value by value through the engine's plain reads: the oracle of the GPU's
// gather, and the cpu engine's form (V is at hand; a 256² frame is a few hundred µs).
class HostFrame final : public FrameSink {
 public:
  HostFrame(const Engine& e, std::vector<ProbeRead> reads) : e_(e), reads_(std::move(reads)) {}
  void read(std::vector<float>& out) const override {
    out.resize(reads_.size());
    for (std::size_t i = 0; i < reads_.size(); ++i) {
      const ProbeRead& r = reads_[i];
      out[i] = float(r.field.part < 0 ? e_.voltage_at(r.cell) : e_.state_at(std::size_t(r.field.part), r.field.state, r.cell));
    }
  }

 private:
  const Engine& e_;
  std::vector<ProbeRead> reads_;
};

}  // namespace

std::shared_ptr<FrameSink> SinkHost::frame(const std::vector<ProbeRead>& reads) {
  return std::make_shared<HostFrame>(engine_, reads);
}

std::shared_ptr<ActivationSink> SinkHost::activation(const ActivationMaps&) { return nullptr; }

std::shared_ptr<EcgSink> SinkHost::ecg(const std::vector<std::array<double, 3>>&, double) { return nullptr; }

std::unique_ptr<Snapshot> SinkHost::snapshot(const std::vector<FieldRefs>& what) {
  std::vector<Field<float>> f(what.size());
  for (std::size_t i = 0; i < what.size(); ++i) {
    if (what[i].size() == 1 && what[i][0].part < 0) {
      engine_.voltage(f[i]);
      continue;
    }
    f[i].resize(cells_, std::numeric_limits<float>::quiet_NaN());
    for (const FieldRef& r : what[i]) engine_.state(std::size_t(r.part), r.state, f[i]);
  }
  return std::make_unique<HostSnapshot>(std::move(f));
}

std::shared_ptr<ProbeSink> SinkHost::probes(const std::vector<ProbeRead>& reads) {
  return std::make_shared<HostProbes>(engine_, reads);
}

}  // namespace hw::tissue
