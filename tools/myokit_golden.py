#!/usr/bin/env python3
"""Golden single-cell traces from Myokit, an implementation independent of Heartwave.

Why: Heartwave's compiler, integrators and pacing must agree with a code that shares none
of them. Myokit imports the same CellML files with its own parser and integrates them with
CVODES, so a match means our whole chain (parse -> IR -> passes -> code -> integrator ->
protocol) is right, not just self-consistent.

PACING CONVENTION (Heartwave's `heartwave cell --bcl 1000 --beats 3` uses the same one):
  * the model's own stimulus protocol (start, period, end, ...) is removed;
  * the stimulus current is amplitude * pace(t), where pace(t) = 1 for
    k*BCL <= t < k*BCL + duration (k = 0, 1, 2: stimuli at t = 0, 1000, 2000 ms) and 0
    otherwise (half-open window, as Myokit's event-based pacing does);
  * amplitude and duration are the model's own values (oxmeta annotations
    membrane_stimulus_current_amplitude / _duration where present, else the variables the
    model's stimulus piecewise refers to, else the literal bounds of that piecewise);
  * the run starts from the model's initial values at t = 0 and lasts 3 * BCL.
  In Myokit this is done by binding a new variable to the `pace` signal of a protocol
  schedule(level=1, start=0, duration=dur, period=BCL) and setting the stimulus current's
  right-hand side to `amplitude * pace`.

Solver: Myokit's CVODES simulation, rtol 1e-8, atol 1e-10. The trace is logged at exact
multiples of 0.5 ms (CVODES dense output) to tests/golden/traces/<model>.csv; a dense
0.01 ms log (not committed) gives the per-beat APD90 in <model>.json, which also records
the RRMS between this run and one at 100x tighter tolerances (the golden's own error).

APD90 definition (tests/unit/test_vs_myokit.cpp uses the same one on our traces): for beat
k, the window is [k*BCL, (k+1)*BCL); V_rest = V at the window's first sample, V_peak = max V
in the window, t_act = the time of the largest forward difference (V[i+1]-V[i])/(t[i+1]-t[i])
taken at the midpoint t[i] + dt/2, and t_rep = the first time after the peak at which V falls
below V_peak - 0.9 (V_peak - V_rest), linearly interpolated. APD90 = t_rep - t_act
(null if V never falls below that level after both t_act and the peak in the window).

Membrane potential: the state Heartwave takes as the voltage (src/model/analysis/roles.cpp):
the oxmeta `membrane_voltage` state, else the first state named V, Vm, V_m, v, vm,
membrane_V, membrane_potential, E_m, u, looking in a `membrane` component first. Converted to mV (and time to ms) when the model's
units are volts (seconds); dimensionless potentials stay as they are (Fenton-Karma 1998:
the state u, not the algebraic Vm = V_0 + u (V_fi - V_0); Mitchell-Schaeffer, FitzHugh).

Usage: python3 tools/myokit_golden.py [--out tests/golden/traces] [model ...]
(models are names in $HW_SHARED_DIR/models/cellml without .cellml; default: all with a
stimulus). Needs: pip install -r tools/requirements.txt (Myokit compiles its simulation
with the system C compiler against SUNDIALS: Debian libsundials-dev).
"""
import argparse
import datetime
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

import numpy as np
import myokit
import myokit.formats

BCL_MS = 1000.0
BEATS = 3
LOG_DT_MS = 0.5
DENSE_DT_MS = 0.01
RTOL = 1e-8
ATOL = 1e-10
OXMETA = 'https://chaste.comlab.ox.ac.uk/cellml/ns/oxford-metadata#'
RDF = '{http://www.w3.org/1999/02/22-rdf-syntax-ns#}'
CMETA_ID = '{http://www.cellml.org/metadata/1.0#}id'


def oxmeta_from_xml(path):
    """Map oxmeta term -> 'component.variable', read from the raw XML.

    Myokit's importer misses annotations written inside a <variable> element (as in the
    Courtemanche file), so both placements are scanned here.
    """
    root = ET.parse(path).getroot()
    ns = root.tag.split('}')[0] + '}' if root.tag.startswith('{') else ''
    by_id, terms = {}, {}
    for comp in root.iter(ns + 'component'):
        for var in comp.findall(ns + 'variable'):
            qname = comp.get('name') + '.' + var.get('name')
            if var.get(CMETA_ID):
                by_id[var.get(CMETA_ID)] = qname
            for el in var.iter():
                res = el.get(RDF + 'resource', '')
                if res.startswith(OXMETA):
                    terms.setdefault(res[len(OXMETA):], qname)
    for desc in root.iter(RDF + 'Description'):
        about = desc.get(RDF + 'about', '')
        if about.startswith('#') and about[1:] in by_id:
            for el in desc.iter():
                res = el.get(RDF + 'resource', '')
                if res.startswith(OXMETA):
                    terms.setdefault(res[len(OXMETA):], by_id[about[1:]])
    return terms


def annotated(model, terms, term):
    for v in model.variables(deep=True):
        if v.meta.get('oxmeta') == term:
            return v
    q = terms.get(term)
    if q and model.has_variable(q):
        return model.get(q)
    return None


def find_voltage(model, terms):
    """Heartwave's rule (src/model/analysis/roles.cpp): a state, oxmeta first, then names."""
    v = annotated(model, terms, 'membrane_voltage')
    if v is not None:
        return v
    states = list(model.states())
    # States of a `membrane` component first: Fenton-Karma 1998 also has a gate named v.
    for pool in ([v for v in states if v.parent().name() == 'membrane'], states):
        for name in ('V', 'Vm', 'V_m', 'v', 'vm', 'membrane_V', 'membrane_potential', 'E_m', 'u'):
            for var in pool:
                if var.name() == name:
                    return var
    return states[0]


def find_stimulus(model, terms):
    """The stimulus current: annotated, else a time-dependent piecewise with a stim name."""
    v = annotated(model, terms, 'membrane_stimulus_current')
    if v is not None:
        return v
    time = model.time()
    candidates = []
    for var in model.variables(deep=True):
        if var.is_state() or var.rhs() is None or not isinstance(var.rhs(), myokit.Piecewise):
            continue
        if time not in {r.var() for r in var.rhs().references()}:
            continue
        score = 2 if re.fullmatch(r'(?i)[ij]_?st(im)?', var.name()) else 1
        candidates.append((score, var))
    if not candidates:
        return None
    candidates.sort(key=lambda sv: -sv[0])
    return candidates[0][1]


def literal(expr):
    try:
        if expr.is_literal() or expr.is_constant():
            return float(expr.eval())
    except Exception:
        pass
    return None


def stimulus_amplitude_duration(model, terms, stim):
    """Amplitude (in the stimulus' units) and duration (in the model's time units)."""
    amp_var = annotated(model, terms, 'membrane_stimulus_current_amplitude')
    dur_var = annotated(model, terms, 'membrane_stimulus_current_duration')
    refs = {r.var() for r in stim.rhs().references()}
    pw = stim.rhs()
    # Piecewise(cond, value, otherwise): the stimulating branch is the non-zero one.
    if amp_var is None:
        for var in refs:
            if re.search(r'(?i)amp', var.name()):
                amp_var = var
    if dur_var is None:
        for var in refs:
            if re.search(r'(?i)dur', var.name()):
                dur_var = var
    amp = float(amp_var.eval()) if amp_var is not None else literal(pw[1])
    if dur_var is not None:
        dur = float(dur_var.eval())
    else:
        # Literal window `t >= a and t <= b` (FitzHugh-Nagumo): duration b - a.
        bounds = [literal(c[1]) for c in pw[0] if isinstance(c, (myokit.MoreEqual, myokit.LessEqual,
                                                              myokit.Less, myokit.More))]
        bounds = [b for b in bounds if b is not None]
        dur = max(bounds) - min(bounds) if len(bounds) == 2 else None
    return amp, dur, amp_var, dur_var


def ms_and_mv_per_unit(time, vvar):
    """Factors from the model's time and voltage units to ms and mV (1 when dimensionless)."""
    ms = myokit.Unit.conversion_factor(time.unit(), myokit.units.ms).value() \
        if time.unit() not in (None, myokit.units.dimensionless) else 1.0
    mv = myokit.Unit.conversion_factor(vvar.unit(), myokit.units.mV).value() \
        if vvar.unit() not in (None, myokit.units.dimensionless) else 1.0
    return ms, mv


def pace_stimulus(model, stim, amp):
    """Replaces the model's own protocol: stim = amplitude * pace, pace bound to Myokit's
    protocol signal (which any other variable bound to it gives up)."""
    comp = stim.parent(myokit.Component)
    pace = comp.add_variable_allow_renaming('hw_pace')
    pace.set_rhs(0)
    pace.set_binding('pace')
    for var in model.variables(deep=True):
        if var is not pace and var.binding() == 'pace':
            var.set_binding(None)
    stim.set_rhs(myokit.Multiply(myokit.Number(amp, stim.unit()), myokit.Name(pace)))
    model.validate(remove_unused_variables=False)


def apd90_per_beat(t, v, bcl, beats):
    """Per-beat APD90 (ms) as defined in the module docstring."""
    out = []
    for k in range(beats):
        idx = np.nonzero((t >= k * bcl - 1e-9) & (t < (k + 1) * bcl - 1e-9))[0]
        if len(idx) < 3:
            out.append(None)
            continue
        tt, vv = t[idx], v[idx]
        v_rest, ip = vv[0], int(np.argmax(vv))
        level = vv[ip] - 0.9 * (vv[ip] - v_rest)
        slope = np.diff(vv) / np.diff(tt)
        ia = int(np.argmax(slope))
        t_act = tt[ia] + 0.5 * (tt[ia + 1] - tt[ia])
        t_rep = None
        for i in range(max(ip, ia), len(vv) - 1):
            if vv[i] >= level > vv[i + 1]:
                t_rep = tt[i] + (vv[i] - level) / (vv[i] - vv[i + 1]) * (tt[i + 1] - tt[i])
                break
        out.append(None if t_rep is None or t_rep <= t_act else float(t_rep - t_act))
    return out


def golden(path, out_dir, command):
    name = os.path.splitext(os.path.basename(path))[0]
    model = myokit.formats.importer('cellml').model(path)
    terms = oxmeta_from_xml(path)
    stim = find_stimulus(model, terms)
    if stim is None:
        print(f'{name}: no stimulus found, skipped')
        return None
    amp, dur, amp_var, dur_var = stimulus_amplitude_duration(model, terms, stim)
    if amp is None or dur is None:
        print(f'{name}: stimulus amplitude/duration not found, skipped')
        return None
    vvar = find_voltage(model, terms)
    time = model.time()
    # Everything below is in the model's own time unit; ms_per_unit converts.
    ms_per_unit, mv_per_unit = ms_and_mv_per_unit(time, vvar)
    dur_ms = dur * ms_per_unit
    pace_stimulus(model, stim, amp)

    bcl = BCL_MS / ms_per_unit
    protocol = myokit.Protocol()
    protocol.schedule(level=1, start=0, duration=dur, period=bcl, multiplier=BEATS)
    sim = myokit.Simulation(model, protocol)
    sim.set_tolerance(abs_tol=ATOL, rel_tol=RTOL)
    vq = vvar.qname()
    tq = time.qname()
    total = BEATS * bcl
    n_dense = int(round(total * ms_per_unit / DENSE_DT_MS))
    dense_times = np.arange(n_dense) * (DENSE_DT_MS / ms_per_unit)
    log = sim.run(total, log=[tq, vq], log_times=dense_times)
    t = np.asarray(log[tq]) * ms_per_unit
    v = np.asarray(log[vq]) * mv_per_unit
    step = int(round(LOG_DT_MS / DENSE_DT_MS))
    # Self-check of the golden: the same run at 100x tighter tolerances, RRMS on the
    # committed 0.5 ms grid (recorded in the JSON and in docs/verification.md).
    sim.reset()
    sim.set_tolerance(abs_tol=ATOL * 1e-2, rel_tol=RTOL * 1e-2)
    tight = np.asarray(sim.run(total, log=[vq], log_times=dense_times)[vq]) * mv_per_unit
    self_rrms = float(np.sqrt(np.sum((v[::step] - tight[::step]) ** 2) / np.sum(tight[::step] ** 2)))

    os.makedirs(out_dir, exist_ok=True)
    date = datetime.date.today().isoformat()
    csv_path = os.path.join(out_dir, name + '.csv')
    with open(csv_path, 'w') as f:
        f.write(f'# myokit {myokit.__version__}, {command}, {date}\n')
        f.write('t,V\n')
        for ti, vi in zip(t[::step], v[::step]):
            f.write(f'{ti:.2f},{vi:.9g}\n')
    apd = apd90_per_beat(t, v, BCL_MS, BEATS)
    info = {
        'model': name,
        'myokit': myokit.__version__,
        'command': command,
        'date': date,
        'bcl_ms': BCL_MS, 'beats': BEATS,
        'stimulus_variable': stim.qname(),
        'stimulus_amplitude': amp,
        'stimulus_amplitude_units': str(stim.unit()),
        'stimulus_amplitude_from': amp_var.qname() if amp_var is not None else 'literal',
        'stimulus_duration_ms': dur_ms,
        'voltage_variable': vq,
        'voltage_is_state': vvar.is_state(),
        'rtol': RTOL, 'atol': ATOL,
        'log_interval_ms': LOG_DT_MS,
        'apd90_ms': apd,
        'rrms_vs_100x_tighter_tolerances': self_rrms,
        'apd_definition': 'per beat window [k*BCL,(k+1)*BCL): t_act = max forward-difference '
                          'dV/dt (midpoint), t_rep = first interpolated crossing below '
                          'Vpeak-0.9(Vpeak-V(window start)) after the peak; from a 0.01 ms log',
    }
    with open(os.path.join(out_dir, name + '.json'), 'w') as f:
        json.dump(info, f, indent=1)
        f.write('\n')
    print(f'{name}: V={vq} stim={stim.qname()} amp={amp} dur={dur_ms} ms APD90={apd} '
          f'self-RRMS={self_rrms:.2e}')
    return info


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    shared = os.environ.get('HW_SHARED_DIR', os.path.join(here, '..', '..', 'shared'))
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--out', default=os.path.join(here, '..', 'tests', 'golden', 'traces'))
    ap.add_argument('--models-dir', default=os.path.join(shared, 'models', 'cellml'))
    ap.add_argument('models', nargs='*')
    args = ap.parse_args()
    names = args.models or sorted(
        f[:-7] for f in os.listdir(args.models_dir) if f.endswith('.cellml'))
    command = 'python3 tools/myokit_golden.py' + (' ' + ' '.join(args.models) if args.models else '')
    for n in names:
        golden(os.path.join(args.models_dir, n + '.cellml'), args.out, command)


if __name__ == '__main__':
    sys.exit(main())
