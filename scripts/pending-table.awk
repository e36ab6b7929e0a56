# SPDX-License-Identifier: GPL-2.0
# pending-table.awk: "SETTING ROUND FNR-BENCH kind=pending key=value..."
# lines (scripts/pending-compare.sh) to one line per churn and setting,
# the rounds' values separated by '|'.
function kv(k,   i, n, a) {
	for (i = 3; i <= NF; i++) {
		n = index($i, "=")
		if (substr($i, 1, n - 1) == k)
			return substr($i, n + 1)
	}
	return ""
}
{
	fs = kv("fs")
	row = (fs == "truncate") ? "truncate P=1" : fs " P=" kv("threads")
	if (!(row in seen)) { seen[row] = 1; rows[++nrows] = row }
	if (!($1 in sset)) { sset[$1] = 1; settings[++nsettings] = $1 }
	k = row SUBSEP $1
	if (fs == "truncate")
		v = sprintf("peak %.2f drain %.1f ms exp %d", kv("peak_mib"), kv("drain_ms"), kv("expedited"))
	else
		v = sprintf("avg %.2f peak %.2f MiB/s %.1f exp/s %.1f", kv("avg_mib"), kv("peak_mib"),
			    kv("throughput_mibs"), kv("expedited") / 4)
	val[k] = (nval[k]++ ? val[k] " | " : "") v
}
END {
	for (i = 1; i <= nrows; i++)
		for (j = 1; j <= nsettings; j++)
			printf "%-14s %-8s %s\n", (j == 1 ? rows[i] : ""), settings[j] ":",
			       val[rows[i] SUBSEP settings[j]]
}
