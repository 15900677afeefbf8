#!/usr/bin/env bash
# Regenerates the converted built-in models (models/*.hwm from ../shared/models/cellml) with
# Heartwave's own CellML→native converter, then derives the published cell-type variants
# by editing parameters or equations, each edit named here with its source. Run after a
# change to the converter:  bash tools/make_builtin_models.sh [path/to/heartwave]
set -euo pipefail
cd "$(dirname "$0")/.."
hw=${1:-build/apps/heartwave/heartwave}
src=../shared/models/cellml
[ -d "$src" ] || { echo "make_builtin_models: $src not found" >&2; exit 1; }

convert() {  # convert CELLML OUT CITATION
  "$hw" model convert "$src/$1.cellml" -o "models/$2.hwm" >/dev/null 2>&1
  # The citation goes in the model header, where `model inspect` and the docs read it.
  sed -i "0,/^model /s//citation \"$3\"\nmodel /" "models/$2.hwm"
  echo "models/$2.hwm"
}

variant() {  # variant FROM TO NEW_MODEL_NAME NOTE SED_EXPR...
  local from=$1 to=$2 name=$3 note=$4; shift 4
  cp "models/$from.hwm" "models/$to.hwm"
  sed -i "s/^model .*/model $name/" "models/$to.hwm"
  sed -i "0,/^model /s//# Variant of $from: $note\nmodel /" "models/$to.hwm"
  for e in "$@"; do
    local before; before=$(md5sum < "models/$to.hwm")
    sed -i -E "$e" "models/$to.hwm"
    [ "$before" != "$(md5sum < "models/$to.hwm")" ] ||
      { echo "make_builtin_models: edit '$e' matched nothing in $to" >&2; exit 1; }
  done
  echo "models/$to.hwm"
}

units() {  # units MODEL NAME UNITS [NAME UNITS]...: replace the [units] of single-line declarations
  # Only the bracket changes, never a value or an expression (units never change a value).
  local f="models/$1.hwm"; shift
  while [ $# -gt 0 ]; do
    local name=$1 u=$2 re; shift 2
    re="^((param |state )?$name +=[^[]*) \[[^]]*\]"
    [ "$(grep -cE "$re" "$f")" = 1 ] ||
      { echo "make_builtin_models: units: '$name' is not one single-line declaration in $f" >&2; exit 1; }
    sed -i -E "s#$re#\1 [$u]#" "$f"
  done
}

header_note() {  # header_note MODEL < TEXT: TEXT as '# ' comment lines after the citation
  local f="models/$1.hwm" tmp; tmp=$(mktemp)
  sed -E 's/^/# /; s/ +$//' > "$tmp"
  sed -i "/^citation /r $tmp" "$f"
  rm -f "$tmp"
}

tt06="ten Tusscher KHWJ, Panfilov AV. Alternans and spiral breakup in a human ventricular tissue model. Am J Physiol Heart Circ Physiol 2006;291:H1088-H1100"
ord="O'Hara T, Virag L, Varro A, Rudy Y. Simulation of the undiseased human cardiac ventricular action potential. PLoS Comput Biol 2011;7:e1002061"
convert tentusscher_panfilov_2006_epi tentusscher_2006_epi "$tt06"
# Endocardial: G_to = 0.073 nS/pF and the endocardial s-gate (ten Tusscher 2004/2006, Table 1 and the s-gate equations).
variant tentusscher_2006_epi tentusscher_2006_endo tentusscher_2006_endo \
  "endocardial cell (G_to 0.073, endocardial s gate), ten Tusscher & Panfilov 2006" \
  's/^(param g_to +)= 0\.294 /\1= 0.073 /' \
  's/^s_inf = 1\/\(1 \+ exp\(\(V \+ 20\)\/5\)\)/s_inf = 1\/(1 + exp((V + 28)\/5))/' \
  's/^tau_s = 85\*exp\(-\(V \+ 45\)\^2\/320\) \+ 5\/\(1 \+ exp\(\(V - 20\)\/5\)\) \+ 3/tau_s = 1000*exp(-(V + 67)^2\/1000) + 8/'
# M cell: G_Ks = 0.098 nS/pF, otherwise epicardial.
variant tentusscher_2006_epi tentusscher_2006_m tentusscher_2006_m \
  "mid-myocardial cell (G_Ks 0.098), ten Tusscher & Panfilov 2006" \
  's/^(param g_Ks +)= 0\.392 /\1= 0.098 /'
convert ohara_rudy_2011_endo ohara_rudy_2011_endo "$ord"
# ORd units: the CellML file declares units that contradict its own equations (44 unit
# warnings). Declarations only, so values and equations stay the converter's; the units
# follow Myokit's annotated ohara-2011.mmt (M. Clerx). The note says what and why.
pcm='cm^3/(uF*s)'  # permeability: cm/s per uF/cm^2 of membrane
units ohara_rudy_2011_endo \
  kna1 millimolar kna2 millimolar kna3 millimolar Kki millimolar Kko millimolar \
  eP millimolar P millimolar delta dimensionless rk1 dimensionless \
  PCa_b "$pcm" PCa "$pcm" PCap "$pcm" PCaNa "$pcm" PCaK "$pcm" PCaNap "$pcm" PCaKp "$pcm" \
  PNab "$pcm" PCab "$pcm" PhiCaL 'millimolar*C/mol' PhiCaNa 'millimolar*C/mol' \
  PhiCaK 'millimolar*C/mol' GpCa A/F GK1_b 'mS/uF/mM^0.5' GK1 'mS/uF/mM^0.5' \
  Jrelnp mM/ms Jrelp mM/ms Jrel_inf mM/ms Jrel_infp mM/ms Jrel_temp mM/ms Jrel_inf_temp mM/ms \
  wna 1/s wca 1/s wnaca 1/s kcaon '1/(mM*s)' kcaoff 1/s Gncx_b C/F Gncx C/F \
  k1p 1/s k1m '1/(mM*s)' k2p 1/s k2m 1/s k3p 1/s k3m '1/(mM^2*s)' k4p 1/s k4m 1/s \
  Pnak_b C/F Pnak C/F JnakNa 1/s JnakK 1/s \
  a1 1/s b1 1/s a2 1/s b2 1/s a3 1/s b3 1/s a4 1/s b4 1/s \
  x1 1/s^3 x2 1/s^3 x3 1/s^3 x4 1/s^3
for c in i ss; do
  units ohara_rudy_2011_endo \
    k1_$c 1/s k2_$c 1/s k3p_$c 1/s k3pp_$c 1/s k3_$c 1/s k4_$c 1/s k4p_$c 1/s k4pp_$c 1/s \
    k5_$c 1/s k6_$c 1/s k7_$c 1/s k8_$c 1/s \
    x1_$c 1/s^3 x2_$c 1/s^3 x3_$c 1/s^3 x4_$c 1/s^3 JncxNa_$c 1/s JncxCa_$c 1/s
done
header_note ohara_rudy_2011_endo <<'EOF'

Units corrected after conversion by tools/make_builtin_models.sh (declarations only:
every value and equation is the converter's, and units never change a value), following
Myokit's annotated ohara-2011.mmt:
- kna1-3, Kki, Kko in mM (the CellML file has 1/ms); eP and P (phosphate, Smith &
  Crampin's INaK) in mM; delta dimensionless (was mV); rk1 dimensionless (was ms).
- PCa_b, PCa, PCap, PCaNa, PCaK, PCaNap, PCaKp, PNab, PCab (dimensionless or mS/uF in the
  CellML file) in cm^3/(uF*s): the paper's cm/s per uF/cm^2 of membrane, since
  ICaL = PCa*PhiCaL*... is a current per capacitance (Myokit: L/(ms*F), the same unit);
  PhiCaL, PhiCaNa, PhiCaK (GHK terms) in mM*C/mol; GpCa in A/F.
- INaCa and INaK: the rate constants (wna, wca, wnaca, k1p...k4m), the rates built from
  them (k1_i...k8_i, k1_ss...k8_ss, a1...b4) and the turnover rates JncxNa/JncxCa/JnakNa/
  JnakK in Hz (1/s), the sums x* in 1/s^3, the scales Gncx_b, Gncx, Pnak_b, Pnak in C/F, so
  that Gncx*J and Pnak*J are A/F (the CellML file: dimensionless rates, mM/ms fluxes).
- Jrelnp, Jrelp and their targets Jrel_inf, Jrel_infp, Jrel_inf_temp, Jrel_temp: fluxes,
  mM/ms (the CellML file: dimensionless).
Unit quirks of the published model, declared as the quantities act (not unit warnings):
- kcaon, kcaoff: 1/ms in the CellML file, mM/ms in Myokit's (which converts them with
  1/(M*mM) and 1/M). As used, k1 = h12*cao*kcaon and k2 = kcaoff are added to rates in Hz,
  so they are declared 1/(mM*s) and 1/s.
- GK1_total = GK1*sqrt(ko) takes the root of ko in mM, so GK1_b and GK1 are declared
  mS/uF/mM^0.5 (Myokit divides ko by 1 mM instead).
- Jrel_inf_temp = a_rel*(-ICaL)/(...) with a_rel = 0.5*bt in ms: ms*A/F is mV, not mM/ms;
  the published formula carries an implicit 1 mM/(ms*mV) (Myokit writes it out). a_rel
  keeps ms and Jrel_* mM/ms; the unit check cannot see the gap because the literal
  constants in these expressions carry no units.
EOF
# ORd selects the cell type by its own parameter celltype: 0 endo, 1 epi, 2 M.
variant ohara_rudy_2011_endo ohara_rudy_2011_epi ohara_rudy_2011_epi \
  "epicardial cell (celltype = 1), O'Hara et al. 2011" 's/^(param celltype +)= 0 /\1= 1 /'
variant ohara_rudy_2011_endo ohara_rudy_2011_m ohara_rudy_2011_m \
  "mid-myocardial cell (celltype = 2), O'Hara et al. 2011" 's/^(param celltype +)= 0 /\1= 2 /'
convert luo_rudy_1991 luo_rudy_1991 "Luo CH, Rudy Y. A model of the ventricular cardiac action potential. Circ Res 1991;68:1501-1526"
convert beeler_reuter_1977 beeler_reuter_1977 "Beeler GW, Reuter H. Reconstruction of the action potential of ventricular myocardial fibres. J Physiol 1977;268:177-210"
convert courtemanche_ramirez_nattel_1998 courtemanche_1998 "Courtemanche M, Ramirez RJ, Nattel S. Ionic mechanisms underlying human atrial action potential properties. Am J Physiol 1998;275:H301-H321"
