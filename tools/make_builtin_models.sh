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
# ORd selects the cell type by its own parameter celltype: 0 endo, 1 epi, 2 M.
variant ohara_rudy_2011_endo ohara_rudy_2011_epi ohara_rudy_2011_epi \
  "epicardial cell (celltype = 1), O'Hara et al. 2011" 's/^(param celltype +)= 0 /\1= 1 /'
variant ohara_rudy_2011_endo ohara_rudy_2011_m ohara_rudy_2011_m \
  "mid-myocardial cell (celltype = 2), O'Hara et al. 2011" 's/^(param celltype +)= 0 /\1= 2 /'
convert luo_rudy_1991 luo_rudy_1991 "Luo CH, Rudy Y. A model of the ventricular cardiac action potential. Circ Res 1991;68:1501-1526"
convert beeler_reuter_1977 beeler_reuter_1977 "Beeler GW, Reuter H. Reconstruction of the action potential of ventricular myocardial fibres. J Physiol 1977;268:177-210"
convert courtemanche_ramirez_nattel_1998 courtemanche_1998 "Courtemanche M, Ramirez RJ, Nattel S. Ionic mechanisms underlying human atrial action potential properties. Am J Physiol 1998;275:H301-H321"
