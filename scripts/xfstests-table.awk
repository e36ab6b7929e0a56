# SPDX-License-Identifier: GPL-2.0
# xfstests-table.awk -v label=NAME BASE-RESULTS PATCHED-RESULTS: the
# "XFSTESTS-RESULT FS TEST pass|fail|notrun" lines of each kernel's boot
# (scripts/guest/xfstests-run) as a table per filesystem and kernel, the
# tests that fail on patched and not on base, and a closing line:
# "xfstests NAME: ..., N failures on patched that base does not have".

FNR == 1 { k = (++file == 1) ? "base" : "patched" }
$1 == "XFSTESTS-RESULT" {
	fs = $2; t = $3; st = $4
	if (!(fs in seen)) { seen[fs] = 1; fss[++nfs] = fs }
	res[k, fs, t] = st
	n[k, fs, st]++
	n[k, fs, "tried"]++
	if (!((fs, t) in known)) { known[fs, t] = 1; tests[fs, ++nt[fs]] = t }
}
END {
	printf "%-5s %-8s %6s %6s %6s %7s\n", "fs", "kernel", "tried", "pass", "fail", "notrun"
	for (i = 1; i <= nfs; i++) {
		fs = fss[i]
		for (j = 1; j <= 2; j++) {
			k = (j == 1) ? "base" : "patched"
			printf "%-5s %-8s %6d %6d %6d %7d\n", fs, k, n[k, fs, "tried"],
				n[k, fs, "pass"], n[k, fs, "fail"], n[k, fs, "notrun"]
		}
	}
	new = 0
	for (i = 1; i <= nfs; i++) {
		fs = fss[i]
		for (j = 1; j <= nt[fs]; j++) {
			t = tests[fs, j]
			b = res["base", fs, t]; p = res["patched", fs, t]
			if (b == "") b = "missing"
			if (p == "") p = "missing"
			if (p == "fail" && b == "fail")
				printf "fails on both kernels: %s %s\n", fs, t
			else if (p == "fail" || p == "missing" && b != "missing") {
				printf "NEW ON PATCHED: %s %s (base: %s, patched: %s)\n", fs, t, b, p
				new++
			} else if (p != b)
				printf "differs: %s %s (base: %s, patched: %s)\n", fs, t, b, p
		}
	}
	line = "xfstests " label ":"
	for (i = 1; i <= nfs; i++) {
		fs = fss[i]
		line = line sprintf(" %s base %d/%d/%d patched %d/%d/%d (pass/fail/notrun),",
			fs, n["base", fs, "pass"], n["base", fs, "fail"], n["base", fs, "notrun"],
			n["patched", fs, "pass"], n["patched", fs, "fail"], n["patched", fs, "notrun"])
	}
	print line " " new " failures on patched that base does not have"
}
