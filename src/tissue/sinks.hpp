// Observers as sinks: the activation/APD90 maps, the pseudo-ECG's sums, field snapshots and
// probes are objects the run attaches to a Simulation (Simulation::attach_*), each holding
// its own state (the maps, the electrodes, the cells it reads), not calls on the engine.
//
// Why a SinkHost per engine: a sink is cheap only where V lives. On the GPU the maps ride
// the step kernel, the ECG is one kernel with a few doubles back, a snapshot copies beside
// the steps and the probes are one gather; on the cpu the maps follow V inside the step's
// team. So each engine gives one SinkHost (Engine::sinks()), the only thing it knows of
// observers: it makes each kind of sink in its own memory, or says it cannot (null), and
// the base class then makes the host form from the engine's plain reads. The multi-GPU and
// live-view work add kinds here (a rank's part of a map, a downsampled frame), not virtuals
// on Engine.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <vector>

#include "mesh/grid.hpp"

namespace hw::tissue {

class Engine;

// Activation and APD90 maps on the whole grid (outputs/maps.hpp defines them; NaN = not yet).
struct ActivationMaps {
  float threshold = -20;
  bool with_apd = false;
  std::vector<float> act, apd, v_rest, v_peak;  // grid-sized; apd, v_rest, v_peak with_apd only
};

// The maps kept up to date after every step where V lives.
class ActivationSink {
 public:
  virtual ~ActivationSink() = default;
  // The maps as they stand (after the last step).
  virtual void read(ActivationMaps& m) const = 0;
};

// The pseudo-ECG's integrals from V where it lives: sums[e] = Σ over the tissue cells of
// (∇·σ∇V)_c / max(|x_c − at[e]|, rmin), lengths in mm, with the operator the steps use.
class EcgSink {
 public:
  virtual ~EcgSink() = default;
  virtual void sums(std::vector<double>& out) const = 0;
};

// Fields as they were at one step, read later: the outputs write a snapshot on a host
// thread while the steps after it go on.
class Snapshot {
 public:
  virtual ~Snapshot() = default;
  // Waits for the copy if it is still under way; out[i] is the i-th field asked for
  // (grid-sized, NaN where it has no value). Once only.
  virtual void read(std::vector<Field<float>>& out) = 0;
};

// One field as the engine stores it: V (part < 0) or state k of a part.
struct FieldRef {
  int part = -1;
  int state = -1;
};
// A variable of the outputs: V, or a state name found in one or more parts.
using FieldRefs = std::vector<FieldRef>;

// One value a probe reads: a field at one cell (the grid index for V, the part's compact
// index for a state).
struct ProbeRead {
  FieldRef field;
  std::size_t cell = 0;
};

// The values of a fixed list of ProbeReads, as they stand.
class ProbeSink {
 public:
  virtual ~ProbeSink() = default;
  virtual void read(std::vector<double>& out) const = 0;
};

// The live view's frame: the values of a fixed list of reads (a downsampled slice or three,
// all of one field), gathered where the field lives so that only the frame's few thousand
// floats reach the host (the GPU gathers them with one small kernel per source array).
// out[i] is the i-th read, in float.
class FrameSink {
 public:
  virtual ~FrameSink() = default;
  virtual void read(std::vector<float>& out) const = 0;
};

// What an engine offers the sinks. The base class makes every kind from the engine's plain
// reads (voltage(), state(), voltage_at(), state_at()), except the maps and the ECG, whose
// host forms belong to the outputs (they feed them from copies of V): null there.
class SinkHost {
 public:
  // cells: the grid's (the fields a snapshot gives are grid-sized).
  SinkHost(const Engine& e, std::size_t cells) : engine_(e), cells_(cells) {}
  virtual ~SinkHost() = default;
  SinkHost(const SinkHost&) = delete;
  SinkHost& operator=(const SinkHost&) = delete;

  // Follows the maps from the state m (after the last sample, which is the current V) after
  // every step from now on; null when the caller must feed them from V itself.
  virtual std::shared_ptr<ActivationSink> activation(const ActivationMaps& m);
  // Null when the caller must apply the operator to V itself.
  virtual std::shared_ptr<EcgSink> ecg(const std::vector<std::array<double, 3>>& at, double rmin);
  // The fields `what` as they stand, read later; must be read or dropped before the engine
  // goes.
  virtual std::unique_ptr<Snapshot> snapshot(const std::vector<FieldRefs>& what);
  virtual std::shared_ptr<ProbeSink> probes(const std::vector<ProbeRead>& reads);
  // A frame of the reads (tissue cells only, each read of a field the engine stores).
  virtual std::shared_ptr<FrameSink> frame(const std::vector<ProbeRead>& reads);
  // Bytes the sinks hold where the engine's fields are (device memory on a GPU).
  virtual std::size_t bytes() const { return 0; }

 protected:
  const Engine& engine_;
  std::size_t cells_;
};

}  // namespace hw::tissue
