// The tissue stimulus as the fast engines apply it, for the cpu loops and the GPU's
// stimulus kernel alike (tissue/stimuli.hpp describes the stimuli).
//
// Why a field laid from cell lists: the set of stimuli on changes a few times a beat, so
// their increments are laid into one value per cell of a part only then (lay_stimulus,
// once per cell of each active stimulus, in the stimuli's order), and the reaction adds
// that value to V before the model's step (add_stimulus) with no look at which stimuli
// cover the cell: no cap on their number, and one added while a run goes on is one more
// list. No standard headers, so NVRTC compiles it as it is.
#pragma once

#include "kernels/diffusion_k.hpp"  // HW_HD

namespace hw::kernels {

// Cell i of a stimulus's list (compact indices of the part): its increment dv (model units
// over the pass) onto the part's stimulus field.
template <class Real>
HW_HD inline void lay_stimulus(Real* field, const unsigned int* cells, unsigned long long i, Real dv) {
  field[cells[i]] += dv;
}

// V (model units) of compact cell c as the model's step starts: V* plus the stimuli laid.
template <class Real>
HW_HD inline Real add_stimulus(Real v, const Real* field, unsigned long long c) {
  return v + field[c];
}

}  // namespace hw::kernels
