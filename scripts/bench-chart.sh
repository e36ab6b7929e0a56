#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bench-chart.sh RESULTS_TSV OUTDIR: bar charts of the make bench results
# with gnuplot: OUTDIR/results.svg and results.png, patched/base for the
# instructions per read (below 1 is better) and for the per-thread reads/s
# under contention (above 1 is better), one bar per row of the table.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 2 ] || die "usage: $0 RESULTS_TSV OUTDIR"
tsv=$1 out=$2
[ -r "$tsv" ] || die "$tsv: no results (run make bench)"
need_cmd gnuplot gnuplot-nox
mkdir -p "$out"

# label<TAB>ratio, for the rows of one kind (the same/sep rows left out).
awk -F'\t' '$1 == "icount" { printf "%s %s %s\t%s\n", $2, $3, $5, $8 }' \
	"$tsv" >"$out/chart-icount.dat"
awk -F'\t' '$1 == "contention" && $5 != "same/sep" {
	printf "%s %s %s\t%s\n", $2, $3, $5, $8 }' "$tsv" >"$out/chart-contention.dat"
[ -s "$out/chart-icount.dat" ] || [ -s "$out/chart-contention.dat" ] ||
	die "$tsv has neither icount nor contention rows"

# One panel per kind that has rows.
panels=0
cmds=
if [ -s "$out/chart-icount.dat" ]; then
	panels=$((panels + 1))
	cmds+='set title "instructions per pread() (icount, 1 vCPU): below 1 is better"
set yrange [0.8:*]
plot "'"$out"'/chart-icount.dat" using 2:xtic(1) lc rgb "#4060a0", 1 with lines lc rgb "black" notitle
'
fi
if [ -s "$out/chart-contention.dat" ]; then
	panels=$((panels + 1))
	cmds+='set title "reads/s per thread, 2 vCPUs (median of alternating boots): above 1 is better"
set yrange [0.7:*]
plot "'"$out"'/chart-contention.dat" using 2:xtic(1) lc rgb "#40a060", 1 with lines lc rgb "black" notitle
'
fi

plot() {	# plot TERMINAL-LINE OUTPUT
	gnuplot <<-GP
	$1
	set output "$2"
	set datafile separator "\t"
	set style data histograms
	set style fill solid 0.6 border -1
	set boxwidth 0.8
	set xtics rotate by -60 font ",8" nomirror
	set grid ytics
	set key off
	set multiplot layout $panels,1 title "filemap-noref on $(series_label): patched/base (QEMU TCG; see ${tsv#"$TOP"/})"
	$cmds
	unset multiplot
	GP
}
plot "set terminal svg size 1100,$((400 * panels)) dynamic" "$out/results.svg"
plot "set terminal pngcairo size 1100,$((400 * panels))" "$out/results.png"
info "chart: $out/results.svg and $out/results.png"
