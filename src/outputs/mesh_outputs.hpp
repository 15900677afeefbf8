// A run's results on the nodes of the mesh its geometry was voxelised from (geometry kind
// mesh): V over time as openCARP's .igb, the activation and APD90 maps as .dat (one value
// per node, openCARP's convention) and as point data of a .vtu that ParaView opens, so
// results compare node by node with openCARP or Chaste on the same mesh.
//
// Why sampled, not solved on the mesh: the run is on the voxel grid; each node takes the
// trilinear mix of the tissue voxels around it (mesh/voxelise.hpp: NodeSampler), which is
// exact for a linear field and keeps a node on the boundary from reading a non-tissue voxel.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include "formats/unstructured_mesh.hpp"
#include "mesh/grid.hpp"
#include "mesh/voxelise.hpp"

namespace hw::io {

class MeshOutputs {
 public:
  // dir: the run's output folder; mesh in mm in the frame of g.origin. resumed_at: for a run
  // resumed from a checkpoint, the checkpoint's time (ms): V_mesh.igb then keeps the frames
  // up to that time and goes on after them, so the restarted run's file equals an
  // uninterrupted run's; NaN for a new run (the file is written afresh).
  MeshOutputs(std::string dir, std::shared_ptr<const UnstructuredMesh> mesh, const tissue::Grid& g,
              const tissue::Mask* mask, double resumed_at);
  ~MeshOutputs();
  MeshOutputs(const MeshOutputs&) = delete;
  MeshOutputs& operator=(const MeshOutputs&) = delete;

  // Appends V (grid order, mV) at time t to V_mesh.igb; dt is the field interval.
  void add_frame(const tissue::Field<float>& v, double t, double dt);
  // For the run's log: how a resumed run continued V_mesh.igb (empty otherwise).
  const std::string& note() const { return note_; }
  // Writes maps_mesh.vtu (activation, apd90 when given, as point data) and activation.dat
  // (apd90.dat); returns the lines for the run's log.
  std::vector<std::string> finish(const tissue::Field<float>* activation, const tissue::Field<float>* apd90);

 private:
  void close_igb();
  // Opens V_mesh.igb for a resumed run whose first new frame is at t: the old file cut after
  // its last frame at or before resumed_at_. False when there is no such file to continue.
  bool continue_igb(const std::string& path, double t, double dt);
  std::string dir_;
  std::shared_ptr<const UnstructuredMesh> mesh_;
  tissue::NodeSampler sampler_;
  std::FILE* igb_ = nullptr;
  IgbHeader header_;
  double resumed_at_;
  std::string note_;
};

}  // namespace hw::io
