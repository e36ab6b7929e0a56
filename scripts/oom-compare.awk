# SPDX-License-Identifier: GPL-2.0
# Compare the OOM test on two kernels: awk -f oom-compare.awk BASE_LOG
# PATCHED_LOG, each a guest results.log with "FNR-OOM extra=E kills=K ..."
# lines (scripts/guest/jobs/oom). Prints TAP lines (POSIX awk):
#  - at the edge (the smallest extra) the patched kernel kills no more
#    than the base;
#  - past the edge (the largest extra) the base kernel does kill, which
#    shows the workload is near the edge and that kills are seen.
FNR == 1 { nfile++ }
/^FNR-OOM / {
	k = nfile == 1 ? "base" : "patched"
	for (i = 2; i <= NF; i++) {
		split($i, f, "=")
		v[f[1]] = f[2]
	}
	kills[k, v["extra"]] = v["kills"]
	avail[k, v["extra"]] = v["min_avail_mib"]
	pend[k, v["extra"]] = v["peak_pending_mib"]
	if (!n++ || v["extra"] + 0 > past)
		past = v["extra"] + 0
	if (n == 1 || v["extra"] + 0 < edge)
		edge = v["extra"] + 0
}
function desc(k, e) {
	return sprintf("%s: %s OOM kills, min MemAvailable %s MiB, peak pending %s MiB",
		k, kills[k, e], avail[k, e], pend[k, e])
}
END {
	if (!(("base", edge) in kills) || !(("patched", edge) in kills) ||
	    past == edge || !(("base", past) in kills)) {
		print "not ok 1 oom: results missing (see the oom-base and oom-patched logs)"
		print "not ok 2 oom: results missing"
		exit
	}
	ok = kills["patched", edge] + 0 <= kills["base", edge] + 0
	printf "%s 1 oom: at the edge (%d MiB), patched kills no more than base (%s; %s)\n",
		ok ? "ok" : "not ok", edge, desc("base", edge), desc("patched", edge)
	ok = kills["base", past] + 0 > 0
	printf "%s 2 oom: past the edge (%d MiB), base kills (%s)\n",
		ok ? "ok" : "not ok", past, desc("base", past)
	if (("patched", past) in kills)
		printf "# oom: past the edge (%d MiB), %s\n", past, desc("patched", past)
}
