# SPDX-License-Identifier: GPL-2.0
# Turn "KERNEL JOB FNR-BENCH key=value..." lines (and the oom job's "KERNEL
# oom FNR-OOM-EDGE edge=E ...") into the side-by-side table on stdout and
# the TSV file named by -v tsv=FILE; -v oom_mib=N: the oom guest's memory.
# POSIX awk (mawk).

{
	kernel = $1; job = $2
	delete kv
	for (i = 4; i <= NF; i++) {
		split($i, f, "=")
		kv[f[1]] = f[2]
	}
	if (job == "bench-pending") {
		# One line carries several figures: one row per figure.
		n = split("avg_mib avg MiB peak_mib peak MiB throughput_mibs throughput MiB/s drain_ms drain_ms ms expedited expedited count", pm, " ")
		for (i = 1; i < n; i += 3) {
			if (!(pm[i] in kv))
				continue
			key = "pending\t" kv["fs"] "\t" kv["size"] "\t" kv["threads"] "\t" pm[i + 1]
			add(key, kernel, kv[pm[i]])
			unit[key] = pm[i + 2]
		}
		next
	}
	if (job == "oom") {
		# oom_churn's 4 churners (2 file, 2 memfd) on ext4; the edge in
		# MiB, or below/above the job's range.
		key = "oom\text4\t" oom_mib "\t4\tedge"
		add(key, kernel, kv["edge"])
		unit[key] = "MiB"
		next
	}
	if (job == "bench-wis") {
		# will-it-scale: reads per second of all tasks together.
		key = "wis\t" kv["fs"] "\t" kv["size"] "\t" kv["threads"] "\t" kv["test"]
		add(key, kernel, kv["ops_per_s"])
		unit[key] = "reads/s"
		next
	}
	if (job == "bench-icount") {
		key = "icount\t" kv["fs"] "\t" kv["size"] "\t" kv["threads"] "\t" kv["dest"]
		val = kv["ns_per_op"]
	} else {
		key = "contention\t" kv["fs"] "\t" kv["size"] "\t" kv["threads"] "\t" kv["mode"]
		val = kv["per_thread_ops_per_s"]
	}
	add(key, kernel, val)
}

function add(key, kernel, val) {
	if (!(key in seen)) {
		seen[key] = 1
		order[++nkeys] = key
	}
	vals[key, kernel] = vals[key, kernel] " " val
}

# The ratio is "-" where base is 0 (nothing is ever pending on base).
function row(key, b, p, unit, rb, rp,    r) {
	r = b + 0 == 0 ? "-" : sprintf("%.4f", p / b)
	printf "%s\t%s\t%s\t%s\t%s\n", key, b, p, r, unit > tsv
	split(key, k, "\t")
	printf "%-10s %-8s %8s %3s %-10s %14s %14s %7s %-12s%s\n",
		k[1], k[2], k[3], k[4], k[5], b, p, r, unit,
		rb == "" ? "" : "  base " rb "  patched " rp
}

END {
	print "kind\tfs\tsize\tthreads\tmode\tbase\tpatched\tratio\tunit" > tsv
	printf "%-10s %-8s %8s %3s %-10s %14s %14s %7s %-12s\n",
		"kind", "fs", "size", "thr", "mode", "base", "patched", "ratio", "unit"
	for (i = 1; i <= nkeys; i++) {
		key = order[i]
		split(key, k, "\t")
		if (k[1] == "pending" || k[1] == "oom" || k[1] == "wis") {
			b = median(vals[key, "base"]); rb = lo "-" hi
			p = median(vals[key, "patched"]); rp = lo "-" hi
			row(key, b, p, unit[key], rb, rp)
			continue
		}
		if (k[1] == "icount") {
			row(key, median(vals[key, "base"]), median(vals[key, "patched"]), "insn/read")
			continue
		}
		b = median(vals[key, "base"]); rb = lo "-" hi
		p = median(vals[key, "patched"]); rp = lo "-" hi
		row(key, sprintf("%.0f", b), sprintf("%.0f", p), "ops/s/thread", rb, rp)
		med[k[2], k[3], k[4], k[5], "base"] = b
		med[k[2], k[3], k[4], k[5], "patched"] = p
		if (k[5] == "sep") {
			sb = med[k[2], k[3], k[4], "same", "base"] / b
			sp = med[k[2], k[3], k[4], "same", "patched"] / p
			row("contention\t" k[2] "\t" k[3] "\t" k[4] "\tsame/sep",
				sprintf("%.4f", sb), sprintf("%.4f", sp), "ratio")
		}
	}
}
