# SPDX-License-Identifier: GPL-2.0
# profile-table.awk -v tsv=FILE -v rows=N [-v bench=TSV] BASE.log PATCHED.log:
# from the results of the profile job (scripts/guest/jobs/profile) on the
# base and the patched kernel, the instructions per read by function
# (self: where the sampled instruction was): the report of the run with 2N
# reads minus the one with N, divided by N. Prints, per workload, the total
# against pread_bench's own figure in the same boot (and make bench's
# icount figure, from its results.tsv BENCH, if given) and the ROWS
# functions with the most instructions in either kernel; writes every
# function to TSV. POSIX awk (mawk).
BEGIN {
	# make bench's icount rows (kind fs size threads dest base patched ...).
	if (bench != "") {
		while ((getline l < bench) > 0) {
			split(l, bc, "\t")
			if (bc[1] == "icount" && bc[4] == 1 && bc[5] == "buf") {
				mb["base", bc[2] " " bc[3]] = bc[6]
				mb["patched", bc[2] " " bc[3]] = bc[7]
			}
		}
		close(bench)
	}
	if (rows == "")
		rows = 25
}
function kern() { return FILENAME == ARGV[1] ? "base" : "patched" }
function kv(line, key) {
	if (match(line, " " key "=[^ ]+"))
		return substr(line, RSTART + length(key) + 2, RLENGTH - length(key) - 2)
	return ""
}
/^FNR-BENCH / {
	pb[kern(), kv($0, "fs") " " kv($0, "size")] = kv($0, "ns_per_op")
	next
}
/^FNR-PROFILE-BEGIN / {
	w = kv($0, "fs") " " kv($0, "size")
	r = kv($0, "reads") + 0
	k = kern()
	if (!(w in seen)) { seen[w] = 1; order[++nw] = w }
	if (!((k, w) in lo) || r < lo[k, w]) lo[k, w] = r
	if (r > hi[k, w]) hi[k, w] = r
	inrep = 1
	next
}
/^FNR-PROFILE-END/ { inrep = 0; next }
inrep && /^# Event count \(approx\.\): / { total[k, w, r] = $NF + 0; next }
# "    13.33%          3060     306009180  [k] filemap_get_read_batch"
inrep && /^ +[0-9.]+% +[0-9]+ +[0-9]+ +\[/ {
	sym = $5
	for (i = 6; i <= NF; i++) sym = sym " " $i
	self[k, w, r, sym] = $3 + 0
	if (!((w, sym) in has)) { has[w, sym] = 1; syms[w] = syms[w] SUBSEP sym }
	next
}
# Per read: (figure of the 2N run - figure of the N run) / N.
function per(arr, k, w, sym) {
	if (!lo[k, w] || hi[k, w] <= lo[k, w]) return 0
	return (arr[k, w, hi[k, w], sym] - arr[k, w, lo[k, w], sym]) / (hi[k, w] - lo[k, w])
}
function tot(k, w) {
	if (!lo[k, w] || hi[k, w] <= lo[k, w]) return 0
	return (total[k, w, hi[k, w]] - total[k, w, lo[k, w]]) / (hi[k, w] - lo[k, w])
}
END {
	if (tsv != "") print "fs\tsize\tfunction\tbase\tpatched\tpatched_minus_base" >tsv
	for (i = 1; i <= nw; i++) {
		w = order[i]
		split(w, f, " ")
		printf "\n%s, %s B reads: instructions per read (self)\n", f[1], f[2]
		for (kk = 1; kk <= 2; kk++) {
			k = kk == 1 ? "base" : "patched"
			t = tot(k, w); b = pb[k, w]
			printf "  %-7s profile total %8.0f, pread_bench %8.0f (%+.1f %%)", k, t, b,
				b ? (t / b - 1) * 100 : 0
			if ((k, w) in mb)
				printf ", make bench %8.0f (%+.1f %%)", mb[k, w],
					mb[k, w] ? (t / mb[k, w] - 1) * 100 : 0
			printf "\n"
		}
		printf "  %-44s %9s %9s %9s\n", "function", "base", "patched", "p - b"
		n = split(substr(syms[w], 2), list, SUBSEP)
		# By the larger of the two figures, descending (insertion sort).
		for (j = 1; j <= n; j++) {
			s = list[j]
			vb = per(self, "base", w, s)
			vp = per(self, "patched", w, s)
			key[j] = vb > vp ? vb : vp
			idx[j] = s
			for (m = j; m > 1 && key[m] > key[m - 1]; m--) {
				tk = key[m]; key[m] = key[m - 1]; key[m - 1] = tk
				ts = idx[m]; idx[m] = idx[m - 1]; idx[m - 1] = ts
			}
		}
		for (j = 1; j <= n; j++) {
			s = idx[j]
			vb = per(self, "base", w, s)
			vp = per(self, "patched", w, s)
			if (tsv != "")
				printf "%s\t%s\t%s\t%.1f\t%.1f\t%.1f\n", f[1], f[2], s, vb, vp, vp - vb >tsv
			if (j <= rows)
				printf "  %-44s %9.1f %9.1f %+9.1f\n", substr(s, 1, 44), vb, vp, vp - vb
		}
	}
}
