# SPDX-License-Identifier: GPL-2.0
# scale-table.awk RAW: make scale's tables from its raw lines ("scale
# kernel=K round=R fs=F mode=M size=S threads=N ... per_thread=P ...").
#  1. Reads a second per thread (millions), median (min-max) over the boots
#     of each kernel; patched/base of the medians; and each kernel's median
#     over its "files" row (a file per thread, nothing shared: the ceiling;
#     "ufiles" for the user-space rows) at the same file system, size and
#     threads.
#  2. The pieces (fs=cpu rows): nanoseconds per operation, both kernels'
#     boots together.
#  3. A model: t(n) = t1 + (n - 1) * c nanoseconds a read at n CPUs on one
#     file, t1 from the 1-thread "shared" row, c what each further CPU on
#     the one file adds to a read (waiting for the cache lines the others
#     write): at N threads (the most run), shared minus files, over N - 1.
#     Taking the files row, not the 1-thread row, leaves out what the N
#     CPUs share whatever they read (cores' SMT siblings, caches, memory
#     bandwidth): a machine whose CPUs are its own reads t1 on each.
#     Predicted reads a second per thread at 8, 16 and 64 CPUs, and
#     patched/base.
# With -v dat=DIR (scripts/scale-chart.sh): no table; DIR/chart-FS-SIZE.dat
# for each file system and read size, a line a thread count: the threads,
# then the medians of base shared, base files, patched shared, patched
# files; prints the FS-SIZE names.
# Needs scripts/median.awk loaded first (awk -f median.awk -f this).
# With -v brief=1 (the cover letter): the kthread rows of 16 B and 4 KiB
# reads with one struct file (shared) and a file per thread (files).  Lines starting with '#' are comments (the
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
	printf "Reads a second per thread, millions: median (min-max) of %d base and\n", nboots["base"]
	printf "%d patched boots (alternating); p/base: patched over base; b/files and\n", nboots["patched"]
	printf "p/files: over the same kernel's row with a file per thread (nothing\n"
	if (brief) {
		printf "shared). All threads read one struct file (one folio); kthreads\n"
		printf "calling kernel_read() in a loop.\n\n"
	} else {
		printf "shared). Modes: shared (one struct file), open (one per thread), files\n"
		printf "(a file per thread): kthreads calling kernel_read(); ushared, ufiles:\n"
		printf "processes calling pread() (a UML system call costs microseconds).\n\n"
	}
	# 74 columns in the cover letter (brief), 89 in the full table.
	# 73 columns in the cover letter (brief: no mode column, all "shared"),
	# 89 in the full table.
	if (brief) {
		printf "%-5s %5s %3s %-19s %-19s %5s %5s %5s\n", "fs", "size", "thr", "base", "patched", "p/b", "b/fil", "p/fil"
		rfmt = "%-5s %5s %3s%.0s %-19s %-19s %5.2f %5.2f %5.2f\n"
	} else {
		printf "%-5s %5s %3s %-7s %-21s %-21s %6s %7s %7s\n", "fs", "size", "thr", "mode", "base", "patched", "p/b", "b/files", "p/files"
		rfmt = "%-5s %5s %3s %-7s %-21s %-21s %6.2f %7.2f %7.2f\n"
	}
	for (i = 1; i <= rows; i++) {
		split(order[i], r, SUBSEP)
		m[order[i], "base"] = median(vals[order[i], "base"])
		m[order[i], "patched"] = median(vals[order[i], "patched"])
		if (brief && r[4] != "shared")
			continue
		ceil = r[1] SUBSEP r[2] SUBSEP r[3] SUBSEP (r[4] ~ /^u/ ? "ufiles" : "files")
		for (k = 1; k <= 2; k++) {
			kern = k == 1 ? "base" : "patched"
			m[order[i], kern] = median(vals[order[i], kern])
			if (brief)
				range[kern] = sprintf("%.2f (%.2f-%.2f)", m[order[i], kern], lo, hi)
			else
				range[kern] = sprintf(m[order[i], kern] < 0.1 ? "%.4f (%.4f-%.4f)" : "%.3f (%.3f-%.3f)", m[order[i], kern], lo, hi)
			c[kern] = median(vals[ceil, kern])
		}
		printf rfmt, r[1], r[2], r[3], r[4],
			range["base"], range["patched"], m[order[i], "patched"] / m[order[i], "base"],
			m[order[i], "base"] / c["base"], m[order[i], "patched"] / c["patched"]
	}

	# brief: the measured table alone; the pieces and the model (an
	# extrapolation from 2 CPUs) are in the full table only.
	if (brief)
		exit
	if (ops) {
		printf "\nThe pieces, nanoseconds per operation a thread (median (min-max), all\n"
		printf "boots): atomic: an increment of a line of its own; contend: all threads\n"
		printf "increment one line; lfence, mfence: UML's smp_rmb() and smp_mb();\n"
		printf "lockadd: x86's smp_mb().\n\n"
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

	if (maxthr < 2)
		exit
	printf "\nModel: t(n) = t1 + (n-1) c ns a read on one file at n CPUs; t1: 1 thread,\n"
	printf "c: the %d-thread shared row's ns a read less the files row's, over %d;\n", maxthr, maxthr - 1
	printf "predicted reads a second per thread (millions) at n CPUs.\n\n"
	printf "%-5s %5s %-7s %6s %6s %6s %6s %6s %5s %5s %5s\n", "fs", "size", "kernel", "t1", "c",
		"n=8", "n=16", "n=64", "p/b8", "p/b16", "p/b64"
	for (i = 1; i <= rows; i++) {
		split(order[i], r, SUBSEP)
		if (r[3] != 1 || r[4] != "shared" || (brief && r[2] != 16))
			continue
		big = r[1] SUBSEP r[2] SUBSEP maxthr SUBSEP "shared"
		own = r[1] SUBSEP r[2] SUBSEP maxthr SUBSEP "files"
		for (k = 1; k <= 2; k++) {
			kern = k == 1 ? "base" : "patched"
			t1[kern] = 1e3 / m[order[i], kern]
			cc[kern] = (1e3 / m[big, kern] - 1e3 / m[own, kern]) / (maxthr - 1)
			if (cc[kern] < 0)
				cc[kern] = 0
		}
		for (k = 1; k <= 2; k++) {
			kern = k == 1 ? "base" : "patched"
			printf "%-5s %5s %-7s %6.0f %6.0f %6.3f %6.3f %6.3f", r[1], r[2], kern, t1[kern], cc[kern],
				1e3 / (t1[kern] + 7 * cc[kern]), 1e3 / (t1[kern] + 15 * cc[kern]),
				1e3 / (t1[kern] + 63 * cc[kern])
			if (k == 2)
				printf " %5.1f %5.1f %5.1f", (t1["base"] + 7 * cc["base"]) / (t1["patched"] + 7 * cc["patched"]),
					(t1["base"] + 15 * cc["base"]) / (t1["patched"] + 15 * cc["patched"]),
					(t1["base"] + 63 * cc["base"]) / (t1["patched"] + 63 * cc["patched"])
			printf "\n"
		}
	}
}
