# SPDX-License-Identifier: GPL-2.0
# scale-table.awk RAW: make scale's tables from its raw lines ("scale
# kernel=K round=R fs=F mode=M size=S threads=N ... per_thread=P ...").
#  1. Reads a second per thread (millions), median (min-max) over the boots
#     of each kernel; p/b: the median (min-max) of each round's own
#     patched/base (a round boots each kernel once, in random order); each
#     kernel's median over its "files" row (a file per thread, nothing
#     shared: the ceiling; "ufiles" for the user-space rows, "rfiles" for
#     the rows with read(2)'s copy) at the same
#     file system, size and threads; and over its own 1-thread row of the
#     same mode (1.00: the rate per thread holds as threads are added).
#  2. The pieces (fs=cpu rows): nanoseconds per operation, both kernels'
#     boots together; kernel=host rows (the host's own alu loop, run
#     before each boot) as "host-alu".
# No model: an earlier one fitted a line through the one point that 2
# CPUs give, and its 64-CPU predictions were contradicted by its own
# 2-thread rows.  A many-core machine measures instead (make scale with
# SCALE_CPUS).
# With -v dat=DIR (scripts/scale-chart.sh): no table; DIR/chart-FS-SIZE.dat
# for each file system and read size, a line a thread count: the threads,
# then the medians of base shared, base files, patched shared, patched
# files; prints the FS-SIZE names.
# Needs scripts/median.awk loaded first (awk -f median.awk -f this).
# With -v brief=1 (the cover letter): the kthread rows of 16 B and 4 KiB
# reads with one struct file (shared) and a file per thread (files), but
# not the 1-thread files row (the same read as 1-thread shared), and no
# ranges.  Lines starting with '#' are comments (the
# results file's header).

/^#/ { next }

{
	delete f
	for (i = 2; i <= NF; i++) {
		split($i, kv, "=")
		f[kv[1]] = kv[2]
	}
	boots[f["kernel"], f["round"]] = 1
	if (f["threads"] > maxthr)
		maxthr = f["threads"]
	if (f["fs"] == "cpu") {
		op = f["mode"] SUBSEP f["threads"]
		if (!(op in opseen)) {
			opseen[op] = 1
			oporder[++ops] = op
		}
		opvals[op] = opvals[op] " " 1e9 / f["per_thread"]
		next
	}
	if (brief && (f["mode"] !~ /^(shared|files)$/ || f["size"] > 4096))
		next

	row = f["fs"] SUBSEP f["size"] SUBSEP f["threads"] SUBSEP f["mode"]
	if (!(row in seen)) {
		seen[row] = 1
		order[++rows] = row
	}
	vals[row, f["kernel"]] = vals[row, f["kernel"]] " " f["per_thread"] / 1e6
	rv[row, f["kernel"], f["round"]] = f["per_thread"]
	if (f["round"] > maxround)
		maxround = f["round"]
}

# paired(ROW, K): the rounds' own K/base of ROW, space-separated.
function paired(row, k,    r, out) {
	out = ""
	for (r = 1; r <= maxround; r++)
		if ((row, "base", r) in rv && (row, k, r) in rv && rv[row, "base", r] > 0)
			out = out " " rv[row, k, r] / rv[row, "base", r]
	return out
}

function chart_data(    i, r, p, f, t) {
	for (i = 1; i <= rows; i++) {
		split(order[i], r, SUBSEP)
		if (r[4] != "shared")
			continue
		p = r[1] "-" r[2]
		f = dat "/chart-" p ".dat"
		if (!(p in panel)) {
			panel[p] = 1
			printf "" >f
			print p
		}
		t = r[1] SUBSEP r[2] SUBSEP r[3] SUBSEP
		printf "%d %.4f %.4f %.4f %.4f\n", r[3], median(vals[t "shared", "base"]),
			median(vals[t "files", "base"]), median(vals[t "shared", "patched"]),
			median(vals[t "files", "patched"]) >>f
	}
}

END {
	if (dat != "") {
		chart_data()
		exit
	}
	for (k in boots) {
		split(k, kr, SUBSEP)
		nboots[kr[1]]++
	}
	# The kernels: base, patched and, if it ran, rework.
	nk = split(nboots["rework"] ? "base patched rework" : "base patched", kn, " ")
	if (brief) {
		printf "Reads a second per thread, millions, median of %d boots a kernel;\n", nboots["base"]
		printf "p/b, r/b: median of each round's ratio to base (a round boots each\n"
		printf "kernel once, in random order); /1t: over its own 1-thread rate.\n"
	} else {
		printf "Reads a second per thread, millions: median (min-max) of %d boots a\n", nboots["base"]
		printf "kernel; p/b: median (min-max) of each round's patched/base (a round:\n"
		printf "one boot of each kernel, in random order); /fil, /1t: over the same\n"
		printf "kernel's row with a file per thread (nothing shared), and over its\n"
		printf "own 1-thread row (1.00: the rate per thread holds as threads are\n"
		printf "added).\n"
		if (nk == 3) {
			printf "rework: the base with folio_try_get() as one atomic add and a frozen\n"
			printf "bit (Gladyshev's idea, written in the workbench); r/b as p/b.\n"
		}
	}
	if (brief) {
		printf "\n"
	} else {
		printf "Modes: shared (one struct file), open (one per thread), files\n"
		printf "(a file per thread): kthreads calling kernel_read(); move: shared,\n"
		printf "each thread at its own offset, moving on each read; rshared, rfiles:\n"
		printf "shared and files with read(2)'s copy (a user buffer, ITER_UBUF; UML\n"
		printf "walks page tables in software for it); ushared, ufiles: processes\n"
		printf "calling pread() (a UML system call costs microseconds).\n\n"
	}
	# At most 72 columns in the cover letter (brief).
	mfmt = brief ? "%-5s %5s %3s %-6s" : "%-5s %5s %3s %-7s"
	printf mfmt, "fs", "size", "thr", "mode"
	for (k = 1; k <= nk; k++)
		printf brief ? " %6s" : " %-21s", brief && kn[k] == "patched" ? "patchd" : kn[k]
	printf brief ? " %4s" : " %-16s", "p/b"
	if (nk == 3)
		printf brief ? " %4s" : " %-16s", "r/b"
	if (!brief)
		for (k = 1; k <= nk; k++)
			printf " %5s", substr(kn[k], 1, 1) "/fil"
	for (k = 1; k <= nk; k++)
		printf brief ? " %4s" : " %5s", substr(kn[k], 1, 1) "/1t"
	printf "\n"
	for (i = 1; i <= rows; i++)
		for (k = 1; k <= nk; k++)
			m[order[i], kn[k]] = median(vals[order[i], kn[k]])
	for (i = 1; i <= rows; i++) {
		split(order[i], r, SUBSEP)
		# brief: one 1-thread row (shared); files' is the same read.
		if (brief && (r[4] !~ /^(shared|files)$/ || (r[3] == 1 && r[4] == "files")))
			continue
		ceil = r[1] SUBSEP r[2] SUBSEP r[3] SUBSEP (r[4] ~ /^u/ ? "ufiles" : r[4] ~ /^r/ ? "rfiles" : "files")
		one = r[1] SUBSEP r[2] SUBSEP 1 SUBSEP r[4]
		printf mfmt, r[1], r[2], r[3], r[4]
		for (k = 1; k <= nk; k++) {
			v = median(vals[order[i], kn[k]])
			if (brief)
				printf " %6.2f", v
			else
				printf " %-21s", sprintf(v < 0.1 ? "%.4f (%.4f-%.4f)" : "%.3f (%.3f-%.3f)", v, lo, hi)
		}
		for (k = 2; k <= nk; k++) {
			v = median(paired(order[i], kn[k]))
			if (brief)
				printf " %4.2f", v
			else
				printf " %-16s", sprintf("%.2f (%.2f-%.2f)", v, lo, hi)
		}
		if (!brief)
			for (k = 1; k <= nk; k++)
				printf " %5.2f", m[order[i], kn[k]] / m[ceil, kn[k]]
		for (k = 1; k <= nk; k++)
			printf brief ? " %4.2f" : " %5.2f", m[order[i], kn[k]] / m[one, kn[k]]
		printf "\n"
	}

	# brief: the measured table alone; the pieces are in the full table.
	if (brief)
		exit
	if (ops) {
		printf "\nThe pieces, nanoseconds per operation a thread (median (min-max), all\n"
		printf "boots): atomic: an increment of a line of its own; contend: all threads\n"
		printf "increment one line; lfence, mfence: UML's smp_rmb() and smp_mb();\n"
		printf "lockadd: x86's smp_mb(); alu: 64 additions in 8 independent chains\n"
		printf "(throughput-bound: it slows down if the threads share a core, as a\n"
		printf "fast read loop does); memcpy16: a 16 B memcpy(); host-alu: alu on the\n"
		printf "host itself, before each boot.\n\n"
		printf "%-8s %3s %s\n", "op", "thr", "ns"
		for (i = 1; i <= ops; i++) {
			split(oporder[i], o, SUBSEP)
			# brief: each op alone, and the contended one at most threads
			if (brief && o[2] != (o[1] == "contend" ? maxthr : 1))
				continue
			v = median(opvals[oporder[i]])
			printf "%-8s %3s %.1f (%.1f-%.1f)\n", o[1], o[2], v, lo, hi
		}
	}
}
