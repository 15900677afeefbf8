// The per-cell update of the activation and APD90 maps (definitions in outputs/maps.hpp), for the
// host tracker and for the GPU engine, which runs it inside its step kernel where V lives.
//
// Why one body: a map computed on the GPU must be the map the cpu would compute from the
// same V samples. No standard headers, so NVRTC compiles it as it is; NaN is "not yet".
#pragma once

#include "kernels/diffusion_k.hpp"  // HW_HD

namespace hw::io {

// One sample: V went from a (time t_prev) to b (time t_prev + dt) in this cell.
//   act:    activation time, NaN until the first upward crossing of thr (interpolated)
//   apd:    APD90, NaN until the first downward crossing of V_peak − 0.9 (V_peak − V_rest)
//   v_rest: lowest V before activation; v_peak: highest V since activation (with_apd only)
HW_HD inline void activation_update(float a, float b, float thr, double t_prev, double dt,
                                    bool with_apd, float& act, float& apd, float& v_rest,
                                    float& v_peak) {
  if (act != act) {
    // T = t₀ + (θ − V₀)/(V₁ − V₀)·(t₁ − t₀) at the first V₀ < θ ≤ V₁.
    if (a < thr && b >= thr) {
      act = static_cast<float>(t_prev + (thr - a) / double(b - a) * dt);
      if (with_apd) v_peak = b;
    } else if (with_apd) {
      v_rest = b < v_rest ? b : v_rest;
    }
  } else if (with_apd && apd != apd) {
    // Level L = V_peak − 0.9 (V_peak − V_rest); APD90 ends at the first V₀ > L ≥ V₁.
    v_peak = v_peak < b ? b : v_peak;
    const float level = v_peak - 0.9f * (v_peak - v_rest);
    if (a > level && b <= level) {
      const double tx = t_prev + (a - level) / double(a - b) * dt;
      apd = static_cast<float>(tx - act);
    }
  }
}

}  // namespace hw::io
