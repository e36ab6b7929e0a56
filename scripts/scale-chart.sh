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
# files, patched shared, patched files (millions of reads a second).
rm -f "$out"/chart-*.dat
awk -v out="$out" '
function median(list,    v, n, i, j, t) {
	n = split(list, v, " ")
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) {
			t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
		}
	return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
/^#/ { next }
{
	delete f
	for (i = 2; i <= NF; i++) {
		split($i, kv, "=")
		f[kv[1]] = kv[2]
	}
	if (f["fs"] == "cpu" || f["mode"] !~ /^(shared|files)$/)
		next
	p = f["fs"] "-" f["size"]
	if (!(p in seen)) {
		seen[p] = 1
		panels[++np] = p
	}
	thr[p, f["threads"]] = f["threads"]
	v[p, f["threads"], f["kernel"], f["mode"]] = v[p, f["threads"], f["kernel"], f["mode"]] " " f["per_thread"] / 1e6
}
END {
	for (i = 1; i <= np; i++) {
		p = panels[i]
		cmd = "sort -n >" out "/chart-" p ".dat"
		for (k in thr) {
			split(k, kk, SUBSEP)
			if (kk[1] != p)
				continue
			t = kk[2]
			line = sprintf("%d %.4f %.4f %.4f %.4f", t,
				median(v[p, t, "base", "shared"]), median(v[p, t, "base", "files"]),
				median(v[p, t, "patched", "shared"]), median(v[p, t, "patched", "files"]))
			print line | cmd
		}
		close(cmd)
		print p
	}
}' "$results" >"$out/chart-panels.txt"
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
