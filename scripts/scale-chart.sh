#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scale-chart.sh RESULTS OUTDIR: make scale's charts with gnuplot,
# OUTDIR/chart.svg and chart.png: reads a second per thread (median of the
# boots) against the number of threads, one panel per file system and read
# size, a line each for base and patched with one struct file shared by
# all threads (shared) and with a file per thread (files, the ceiling).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 2 ] || die "usage: $0 RESULTS OUTDIR"
results=$1 out=$2
[ -r "$results" ] || die "$results: no results (run make scale)"
need_cmd gnuplot gnuplot-nox
mkdir -p "$out"

# OUTDIR/chart-FS-SIZE.dat: threads, then the medians of base shared, base
# files, patched shared, patched files (millions of reads a second), from
# scripts/scale-table.awk.
rm -f "$out"/chart-*.dat
awk -v dat="$out" -f "$TOP/scripts/median.awk" -f "$TOP/scripts/scale-table.awk" \
	"$results" >"$out/chart-panels.txt"
[ -s "$out/chart-panels.txt" ] || die "$results has no read rows"

cmds=
while read -r p; do
	d=$out/chart-$p.dat
	cmds+="set title \"${p%-*}, ${p##*-} B reads\"
plot \"$d\" using 1:2 title \"base, one file\" lc rgb \"#c04040\" dt 1, \\
     \"$d\" using 1:3 title \"base, a file each\" lc rgb \"#c04040\" dt 2, \\
     \"$d\" using 1:4 title \"patched, one file\" lc rgb \"#4060a0\" dt 1, \\
     \"$d\" using 1:5 title \"patched, a file each\" lc rgb \"#4060a0\" dt 2
"
done <"$out/chart-panels.txt"
n=$(wc -l <"$out/chart-panels.txt")
rows=$(( (n + 1) / 2 ))

plot() {	# plot TERMINAL-LINE OUTPUT
	gnuplot <<-GP
	$1
	set output "$2"
	set style data linespoints
	set xlabel "threads (CPUs)"
	set ylabel "M reads/s per thread"
	set yrange [0:*]
	set xtics 1
	set grid
	set key below font ",8"
	set multiplot layout $rows,2 title "make scale on $(series_label): kernel_read() on User-Mode Linux SMP (see ${results#"$TOP"/})"
	$cmds
	unset multiplot
	GP
}
plot "set terminal svg size 1100,$((340 * rows)) dynamic noenhanced" "$out/chart.svg"
plot "set terminal pngcairo size 1100,$((340 * rows)) noenhanced" "$out/chart.png"
info "chart: $out/chart.svg and $out/chart.png"
