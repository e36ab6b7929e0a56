# SPDX-License-Identifier: GPL-2.0
# control-rates.awk RESULTS: the detection rate of each control run in a
# control boot of several rounds (make control-rates). Reads the guest's
# results.log: "# FNR-RUN-START LABEL FS" names the file system, a test's
# "... reads in S s" log line its time, and "ok N TEST" (the injected bug
# found: a race control read the page poison of a freed page, a flush
# control (cma, memcg) saw the failure that a missing wait causes) or
# "not ok N TEST" (not found) its verdict; skips are left out.
# Prints one line per control and file system: the runs that found the
# bug, of all, and the median and longest time to find it ("-" for a
# control that logs no time: the flush controls).
function median(t, n,    i, j, x) {
	for (i = 2; i <= n; i++) {
		x = t[i]
		for (j = i - 1; j > 0 && t[j] > x; j--)
			t[j + 1] = t[j]
		t[j + 1] = x
	}
	return n % 2 ? t[(n + 1) / 2] : (t[n / 2] + t[n / 2 + 1]) / 2
}
/^# FNR-RUN-START / { fs = $4; secs = ""; next }
/ reads in [0-9.]+ s/ {
	secs = $0
	sub(/.* reads in /, "", secs)
	sub(/ s.*/, "", secs)
	next
}
/^(not )?ok [0-9]+ / {
	if ($0 ~ /# SKIP /)
		next
	found = $1 == "ok"
	test = found ? $3 : $4
	sub(/\.race$/, "", test)
	k = test " " fs
	if (!(k in runs))
		keys[++nk] = k
	runs[k]++
	if (found) {
		hits[k]++
		if (secs != "") {
			t[k, ++timed[k]] = secs + 0
			if (secs + 0 > worst[k])
				worst[k] = secs + 0
		}
	}
	secs = ""
}
END {
	printf "%-32s %-10s %7s %9s %9s\n", "control", "fs", "found", "median s", "max s"
	for (i = 1; i <= nk; i++) {
		k = keys[i]
		split(k, p, " ")
		n = hits[k] + 0
		m = timed[k] + 0
		for (j = 1; j <= m; j++)
			tt[j] = t[k, j]
		printf "%-32s %-10s %3d/%-3d %9s %9s\n", p[1], p[2], n, runs[k],
		       m ? sprintf("%.1f", median(tt, m)) : "-",
		       m ? sprintf("%.1f", worst[k]) : "-"
		if (n < runs[k])
			missed = 1
	}
	exit missed
}
