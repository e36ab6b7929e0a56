# SPDX-License-Identifier: GPL-2.0
# Count kselftest TAP results. Input: the guest's results.log (or any TAP).
# A program that died without reporting a failure (FNR-RUN rc other than
# 0 or 4 = KSFT_SKIP) counts as one failure. Prints "PASS FAIL SKIP";
# each failure goes to stderr as "FAILED: ...", followed by the lines the
# test printed since its "#  RUN" line (what was wrong where).
/^# FNR-RUN-START / { run = $3 " on " $4; failed_here = 0; n = 0; next }
/^#  RUN / { n = 0 }
/^#/ { if (n < 200) held[++n] = $0; next }
/^ok [0-9]+ .*# SKIP/ { skip++; n = 0; next }
/^ok [0-9]+ / { pass++; n = 0; next }
/^not ok [0-9]+ / {
	fail++
	failed_here = 1
	print "FAILED: " $0 " (" run ")" > "/dev/stderr"
	for (i = 1; i <= n; i++)
		print "    " held[i] > "/dev/stderr"
	n = 0
	next
}
/^FNR-RUN / {
	run = $2 " on " $3
	n = 0
	rc = substr($4, 4) + 0
	if (rc != 0 && rc != 4 && !failed_here) {
		fail++
		print "FAILED: " run " exited with status " rc > "/dev/stderr"
	}
}
END { printf "%d %d %d\n", pass, fail, skip }
