# SPDX-License-Identifier: GPL-2.0
# tested-table.awk FILE...: the cover letter's "what was tested" table of
# one or more results files of make check (results/NAME/check.txt: the
# lines of scripts/tested.awk after a "# kernel LABEL" and a "# closing"
# line), a column per file: passed/failed/skipped, all file systems and
# boots added up, a row per test program.
FNR == 1 { k++ }
/^# kernel / { label[k] = $3; next }
/^# closing / { sub(/^# closing /, ""); closing[k] = $0; next }
/^#/ || NF != 6 { next }
{
	row = $1 == "host" ? "host: run_kselftest.sh" : $2
	if (row == "run_kselftest")
		row = "guest: run_kselftest.sh"
	if (!(row in seen)) { seen[row] = 1; order[++n] = row }
	p[row, k] += $4; f[row, k] += $5; s[row, k] += $6
	tp[k] += $4; tf[k] += $5; ts[k] += $6
	if ($1 != "host" && $1 != "oom" && !((row, $3) in fsseen)) {
		fsseen[row, $3] = 1
		fss[row] = fss[row] (fss[row] == "" ? "" : ",") $3
	}
}
END {
	printf "%-28s", "program (passed/failed/skipped)"
	for (i = 1; i <= k; i++)
		printf " %13s", label[i]
	printf "\n"
	for (j = 1; j <= n; j++) {
		r = order[j]
		printf "%-28s", r
		for (i = 1; i <= k; i++)
			printf " %13s", ((r, i) in p) ? p[r, i] "/" f[r, i] "/" s[r, i] : "-"
		printf "\n"
	}
	printf "%-28s", "total"
	for (i = 1; i <= k; i++)
		printf " %13s", tp[i] "/" tf[i] "/" ts[i]
	printf "\n"
	for (i = 1; i <= k; i++)
		print closing[i]
}
