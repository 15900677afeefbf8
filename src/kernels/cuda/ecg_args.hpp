// The arguments of the pseudo-ECG kernel (kernels/cuda/ecg.cuh), passed by value: plain C++
// that the host (tissue/cuda/engine.cpp) and NVRTC read the same way.
#pragma once

namespace hw::cuda {

// Electrodes per launch; more are summed in further launches.
constexpr int kEcgElectrodes = 8;

struct EcgArgs {
  int count;                       // electrodes in this launch (≤ kEcgElectrodes)
  double at[kEcgElectrodes][3];    // their positions, mm
  double h[3];                     // the cell size, mm (cell (i, j, k) is centred at (i + ½)·h)
  double rmin;                     // distances below this count as this (mm)
  double* sums;                    // count values, zeroed by the host before the launch
};

}  // namespace hw::cuda
