#!/usr/bin/env python3
"""Reference restitution curves from Myokit, an implementation independent of Heartwave.

Why: `heartwave restitution` decides three things a user plots: APD90 of the S1 beat,
APD90 of each S2 and whether an S2 captured at all. Checked only against ourselves, a
wrong window, a wrong pacing offset or a wrong capture rule would pass. Myokit imports the
same CellML file with its own parser and integrates it with CVODES, paced by its own
protocol engine, so agreement tests the whole chain.

Protocols (the same as cell/restitution.hpp; the model's own stimulus protocol is replaced
by amplitude * pace, as in tools/myokit_golden.py, with the model's own amplitude and
duration):
  S1-S2:   N_S1 stimuli every BCL from the model's initial state; the state at the last S1's
           onset is kept. APD90(S1) is measured on the last S1 beat run alone over one BCL.
           For each coupling interval CI: from that state, stimuli at 0 and CI, run to
           CI + BCL; APD90(S2) in the window [CI, CI + BCL).
  dynamic: BEATS stimuli at each BCL from the longest down, each BCL continuing from the
           state the one before left; the last beat's APD90 and DI = BCL - APD90.
Captured (both protocols): the beat rose at least 80 % of the reference upstroke (the S1's
V_peak - V at onset; for the dynamic protocol the first BCL's last beat) and repolarised
to 90 % within its window (dynamic: the last two beats).

APD90: the definition of cell/biomarkers.hpp and tools/myokit_golden.py, on a 0.01 ms log.
Solver: CVODES, rtol 1e-8, atol 1e-10.

Output: tests/golden/restitution/<model>.json with the protocol, the rows and the tools'
versions, and the rows as <model>.s1s2.csv and <model>.dynamic.csv. tests/unit/test_restitution_vs_myokit.cpp runs Heartwave on the same protocol.

Usage: python3 tools/myokit_restitution.py [--out DIR] (needs tools/requirements.txt).
"""
import argparse
import datetime
import json
import os
import sys

import numpy as np
import myokit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import myokit_golden as mg  # noqa: E402  (the shared model preparation and APD rule)

DENSE_DT_MS = 0.01
CAPTURE_FRACTION = 0.8

# Per model: S1 BCL and count, the coupling intervals (coarse over the curve, 1 ms steps
# across the capture threshold), and the dynamic protocol's cycle lengths.
PROTOCOLS = {
    'luo_rudy_1991': {
        'bcl_ms': 1000.0, 'n_s1': 10,
        'coupling_ms': [340, 360, 370] + list(range(374, 386)) + [390, 400, 450, 500, 600, 700, 800, 1000],
        'dynamic_bcl_ms': [1000, 800, 600, 500, 450, 400, 350, 300], 'dynamic_beats': 20,
    },
    'tentusscher_panfilov_2006_epi': {
        'bcl_ms': 1000.0, 'n_s1': 10,
        'coupling_ms': [300, 330] + list(range(340, 356)) + [360, 380, 400, 450, 500, 600, 700, 800, 1000],
        'dynamic_bcl_ms': [1000, 800, 600, 500, 400, 350, 300, 250], 'dynamic_beats': 20,
    },
}


class PacedModel:
    """A model prepared as tools/myokit_golden.py prepares it, in ms and mV."""

    def __init__(self, path):
        self.name = os.path.splitext(os.path.basename(path))[0]
        model = myokit.formats.importer('cellml').model(path)
        terms = mg.oxmeta_from_xml(path)
        stim = mg.find_stimulus(model, terms)
        amp, dur, _, _ = mg.stimulus_amplitude_duration(model, terms, stim)
        vvar = mg.find_voltage(model, terms)
        time = model.time()
        self.ms_per_unit, self.mv_per_unit = mg.ms_and_mv_per_unit(time, vvar)
        self.duration = dur  # model time units
        mg.pace_stimulus(model, stim, amp)
        self.vq, self.tq = vvar.qname(), time.qname()
        self.sim = myokit.Simulation(model)
        self.sim.set_tolerance(abs_tol=mg.ATOL, rel_tol=mg.RTOL)
        self.stimulus = {'amplitude': amp, 'duration_ms': dur * self.ms_per_unit,
                         'variable': stim.qname(), 'voltage': self.vq}

    def run(self, state, onsets_ms, end_ms, log=True):
        """From `state` at t = 0: stimuli at onsets_ms, run to end_ms. (t, V, final state)."""
        p = myokit.Protocol()
        for on in onsets_ms:
            p.schedule(level=1, start=on / self.ms_per_unit, duration=self.duration)
        self.sim.reset()
        self.sim.set_protocol(p)
        self.sim.set_state(state)
        if not log:
            self.sim.run(end_ms / self.ms_per_unit, log=myokit.LOG_NONE)
            return None, None, self.sim.state()
        n = int(round(end_ms / DENSE_DT_MS))
        times = np.arange(n) * (DENSE_DT_MS / self.ms_per_unit)
        d = self.sim.run(end_ms / self.ms_per_unit, log=[self.tq, self.vq], log_times=times)
        return (np.asarray(d[self.tq]) * self.ms_per_unit, np.asarray(d[self.vq]) * self.mv_per_unit,
                self.sim.state())


def beat(t, v, start, end):
    """APD90 (NaN when none) and upstroke amplitude of the window [start, end)."""
    idx = np.nonzero((t >= start - 1e-9) & (t < end - 1e-9))[0]
    apd = mg.apd90_per_beat(t[idx] - start, v[idx], end - start, 1)[0]
    return (float('nan') if apd is None else apd), float(np.max(v[idx]) - v[idx][0])


def s1s2(m, proto, initial):
    bcl, n = proto['bcl_ms'], proto['n_s1']
    state = initial
    if n > 1:
        _, _, state = m.run(initial, [k * bcl for k in range(n - 1)], (n - 1) * bcl, log=False)
    t, v, _ = m.run(state, [0.0], bcl)
    apd_s1, amp_s1 = beat(t, v, 0.0, bcl)
    rows = []
    for ci in proto['coupling_ms']:
        t, v, _ = m.run(state, [0.0, float(ci)], ci + bcl)
        apd, amp = beat(t, v, float(ci), ci + bcl)
        captured = bool(np.isfinite(apd) and amp >= CAPTURE_FRACTION * amp_s1)
        rows.append({'coupling_ms': ci, 'di_ms': ci - apd_s1, 'apd90_s2': apd if captured else None,
                     'captured': captured})
    return apd_s1, rows


def dynamic(m, proto, initial):
    state, reference, rows = initial, None, []
    beats = proto['dynamic_beats']
    for bcl in proto['dynamic_bcl_ms']:
        t, v, state = m.run(state, [k * bcl for k in range(beats)], beats * bcl)
        last = beat(t, v, (beats - 1) * bcl, beats * bcl)
        before = beat(t, v, (beats - 2) * bcl, (beats - 1) * bcl)
        if reference is None:
            reference = last[1]
        full = [np.isfinite(a) and amp >= CAPTURE_FRACTION * reference for a, amp in (last, before)]
        captured = bool(all(full))
        rows.append({'bcl_ms': bcl, 'apd90': last[0] if captured else None, 'captured': captured})
    return rows


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    shared = os.environ.get('HW_SHARED_DIR', os.path.join(here, '..', '..', 'shared'))
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--out', default=os.path.join(here, '..', 'tests', 'golden', 'restitution'))
    ap.add_argument('--models-dir', default=os.path.join(shared, 'models', 'cellml'))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name, proto in PROTOCOLS.items():
        m = PacedModel(os.path.join(args.models_dir, name + '.cellml'))
        initial = m.sim.default_state()
        apd_s1, rows = s1s2(m, proto, initial)
        dyn = dynamic(m, proto, initial)
        info = {'model': name, 'myokit': myokit.__version__, 'date': datetime.date.today().isoformat(),
                'command': 'python3 tools/myokit_restitution.py', 'rtol': mg.RTOL, 'atol': mg.ATOL,
                'log_interval_ms': DENSE_DT_MS, 'stimulus': m.stimulus, 'protocol': proto,
                'apd90_s1': apd_s1, 's1s2': rows, 'dynamic': dyn}
        with open(os.path.join(args.out, name + '.json'), 'w') as f:
            json.dump(info, f, indent=1)
            f.write('\n')
        # The rows again as CSV (NaN for no APD), what the C++ test reads.
        nan = lambda x: 'nan' if x is None else repr(x)
        with open(os.path.join(args.out, name + '.s1s2.csv'), 'w') as f:
            f.write(f'# myokit {myokit.__version__}; APD90(S1) {apd_s1!r} ms; N_S1 {proto["n_s1"]} at BCL '
                    f'{proto["bcl_ms"]} ms\ncoupling_ms,apd90_s1,apd90_s2,captured\n')
            for r in rows:
                f.write(f"{r['coupling_ms']},{apd_s1!r},{nan(r['apd90_s2'])},{int(r['captured'])}\n")
        with open(os.path.join(args.out, name + '.dynamic.csv'), 'w') as f:
            f.write(f'# myokit {myokit.__version__}; {proto["dynamic_beats"]} beats per cycle length\n'
                    'bcl_ms,apd90,captured\n')
            for r in dyn:
                f.write(f"{r['bcl_ms']},{nan(r['apd90'])},{int(r['captured'])}\n")
        first = next((r['coupling_ms'] for r in rows if r['captured']), None)
        print(f'{name}: APD90(S1) {apd_s1:.2f} ms, first captured CI {first} ms, dynamic '
              + ', '.join(f"{r['bcl_ms']}:{'block' if r['apd90'] is None else round(r['apd90'], 1)}"
                          for r in dyn))


if __name__ == '__main__':
    sys.exit(main())
