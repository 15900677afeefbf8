// The point-wise update of a beat's biomarkers (cell/biomarkers.hpp), for the cpu
// BeatTracker and the GPU population kernel alike.
//
// Why one body: a GPU population must report the same biomarkers as the cpu for the same
// samples, and the only way to keep two trackers equal is to have one. NVRTC compiles this
// header as it is, so there are no standard headers here: NaN and infinity come from bit
// patterns on the device and from builtins on the host, and the NaN tests are x != x
// (heartwave is built without -ffast-math, so that holds on both sides).
//
// Definitions of the biomarkers: cell/biomarkers.hpp. BeatState is plain data so the GPU
// can keep one per cell in device memory between launches and the host can read it back.
#pragma once

#include "kernels/diffusion_k.hpp"  // HW_HD

namespace hw::kernels {

HW_HD inline double beat_nan() {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(0x7ff8000000000000ll);
#else
  return __builtin_nan("");
#endif
}

HW_HD inline double beat_inf() {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(0x7ff0000000000000ll);
#else
  return __builtin_inf();
#endif
}

HW_HD inline bool beat_isnan(double x) { return x != x; }
HW_HD inline bool beat_isfinite(double x) { return x == x && x != beat_inf() && x != -beat_inf(); }

// One beat in progress. NaN marks "not found yet" (crossings, activation), as in
// BeatTracker's output; zero-initialised it is inactive.
struct BeatState {
  int active, beat, has_ca;
  double t0, t_prev, v_prev, v_rest;
  double v_peak, t_peak;
  double dvdt_max, t_act;
  double cross[3];  // APD30, 50, 90 crossing times
  double ca_prev, ca_rest, ca_peak, ca_cross;
};

// Time at which the segment (t0, v0)–(t1, v1) crosses `level`.
HW_HD inline double beat_interpolate(double t0, double v0, double t1, double v1, double level) {
  if (v1 == v0) return t1;
  return t0 + (level - v0) / (v1 - v0) * (t1 - t0);
}

// Starts a beat at its stimulus onset; ca is NaN when the model has no calcium role.
HW_HD inline void beat_begin(BeatState& s, int beat, double t, double v, double ca) {
  s.active = 1;
  s.beat = beat;
  s.t0 = s.t_prev = s.t_peak = t;
  s.v_prev = s.v_rest = s.v_peak = v;
  s.dvdt_max = -beat_inf();
  s.t_act = beat_nan();
  for (int k = 0; k < 3; ++k) s.cross[k] = beat_nan();
  s.has_ca = beat_isfinite(ca) ? 1 : 0;
  s.ca_prev = s.ca_rest = s.ca_peak = ca;
  s.ca_cross = beat_nan();
}

// Feeds the next sample (t strictly increasing; others are ignored).
HW_HD inline void beat_sample(BeatState& s, double t, double v, double ca) {
  if (!s.active || !(t > s.t_prev)) return;
  const double dvdt = (v - s.v_prev) / (t - s.t_prev);
  if (dvdt > s.dvdt_max) {
    s.dvdt_max = dvdt;
    s.t_act = 0.5 * (t + s.t_prev);
  }
  if (v > s.v_peak) {
    // A new peak invalidates crossings measured against the old one.
    s.v_peak = v;
    s.t_peak = t;
    for (int k = 0; k < 3; ++k) s.cross[k] = beat_nan();
  } else {
    const double levels[3] = {0.30, 0.50, 0.90};
    for (int k = 0; k < 3; ++k) {
      if (!beat_isnan(s.cross[k])) continue;
      const double level = s.v_peak - levels[k] * (s.v_peak - s.v_rest);
      if (s.v_prev >= level && v < level)
        s.cross[k] = beat_interpolate(s.t_prev, s.v_prev, t, v, level);
    }
  }
  if (s.has_ca) {
    if (ca > s.ca_peak) {
      s.ca_peak = ca;
      s.ca_cross = beat_nan();
    } else if (beat_isnan(s.ca_cross)) {
      const double level = s.ca_peak - 0.9 * (s.ca_peak - s.ca_rest);
      if (s.ca_prev >= level && ca < level)
        s.ca_cross = beat_interpolate(s.t_prev, s.ca_prev, t, ca, level);
    }
    s.ca_prev = ca;
  }
  s.t_prev = t;
  s.v_prev = v;
}

}  // namespace hw::kernels
