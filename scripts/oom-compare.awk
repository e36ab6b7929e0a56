# SPDX-License-Identifier: GPL-2.0
# Compare the OOM edges of two kernels: awk -f oom-compare.awk BASE_LOG
# PATCHED_LOG, each a guest results.log of scripts/guest/jobs/oom: one
# "FNR-OOM extra=E kills=K ..." line per run, then "FNR-OOM-EDGE edge=E
# lo=LO hi=HI runs=N" (edge=below: LO kills; edge=above: HI does not).
# Prints TAP (POSIX awk):
#  1 the patched edge is at most one grid step (16 MiB) below the base's;
#  2 the base kernel kills at the upper bound: kills are seen;
#  3 the patched kernel had pages pending (peak_pending_mib > 0);
# and, as comments, both kernels' runs at their edge and one step past it.
FNR == 1 { k = ++nfile == 1 ? "base" : "patched" }
/^FNR-OOM(-EDGE)? / {
	split("", v)
	for (i = 2; i <= NF; i++) {
		split($i, f, "=")
		v[f[1]] = f[2]
	}
}
/^FNR-OOM / {
	e = v["extra"] + 0
	runs[k, e]++
	kills[k, e] += v["kills"]
	if (!((k, e) in avail) || v["min_avail_mib"] + 0 < avail[k, e])
		avail[k, e] = v["min_avail_mib"] + 0
	if (v["peak_pending_mib"] + 0 > pend[k, e] + 0)
		pend[k, e] = v["peak_pending_mib"] + 0
	if (v["peak_pending_mib"] + 0 > maxpend[k] + 0)
		maxpend[k] = v["peak_pending_mib"] + 0
}
/^FNR-OOM-EDGE / {
	edge[k] = v["edge"]
	lo[k] = v["lo"] + 0
	hi[k] = v["hi"] + 0
	nruns[k] = v["runs"]
}
function num(k) { return edge[k] ~ /^[0-9]+$/ }
function show(k) {
	if (num(k))
		return edge[k] " MiB"
	if (edge[k] == "below")
		return "below " lo[k] " MiB (the lower bound kills)"
	if (edge[k] == "above")
		return "at or above " hi[k] " MiB (the upper bound does not kill)"
	return "not found (" edge[k] ")"
}
function at(k, e) {
	if (!((k, e) in runs))
		return ""
	return sprintf(" %d MiB: %d OOM kills in %d runs, min MemAvailable %d MiB, peak pending %.1f MiB;",
		e, kills[k, e], runs[k, e], avail[k, e], pend[k, e])
}
END {
	if (!("base" in edge) || !("patched" in edge)) {
		print "not ok 1 oom: edge: results missing (see the oom-base and oom-patched boots' logs)"
		print "not ok 2 oom: results missing"
		print "not ok 3 oom: results missing"
		exit
	}
	b = edge["base"]; p = edge["patched"]
	# Out of the range, only what is certain passes.
	ok = num("base") && num("patched") ? p + 0 >= b - 16 : \
		(b == "below" && (num("patched") || p == "above")) || \
		(p == "above" && num("base"))
	printf "%s 1 oom: edge: patched %s >= base %s - 16\n", ok ? "ok" : "not ok",
		show("patched"), show("base")
	e = hi["base"]
	ok = kills["base", e] > 0
	s = ("base", e) in runs ? runs["base", e] " runs" : "not run"
	printf "%s 2 oom: the base kernel kills at the upper bound (%d MiB: %d OOM kills, %s)\n",
		ok ? "ok" : "not ok", e, kills["base", e], s
	# The premise: the patched kernel's churn left pages waiting for a
	# grace period, which the edge is about.
	printf "%s 3 oom: pages were pending on the patched kernel (peak %.1f MiB)\n",
		(maxpend["patched"] > 0) ? "ok" : "not ok", maxpend["patched"]
	for (n = 1; n <= 2; n++) {
		k = n == 1 ? "base" : "patched"
		e = num(k) ? edge[k] + 0 : edge[k] == "above" ? hi[k] : lo[k]
		printf "# oom: %s: edge %s after %d runs;%s%s\n", k, show(k), nruns[k],
			at(k, e), at(k, e + 16)
	}
}
