# SPDX-License-Identifier: GPL-2.0
# skip-check.awk EXPECTED boot=LABEL RESULTS... : every skip in make check's
# guest results must be one the series expects. EXPECTED has lines
#   BOOT PROGRAM FS TEST REASON...
# ('#' starts a comment; '*' in BOOT, PROGRAM, FS or TEST matches
# anything; REASON is the start of the reason the test prints after
# "# SKIP "). Each RESULTS file (a guest's results.log) is read with the
# boot's label set before it on the command line (boot=check, boot=control
# ...); "# FNR-RUN-START PROGRAM FS" lines say which program and file
# system the TAP lines that follow are from. Prints a "not ok" line for
# each skip that no line of EXPECTED allows, with the test's own "#" lines
# (its "#  RUN" line and the last 19 after it: why it skipped), and exits 1 if
# there was one; with gen=1 it prints the skips found in EXPECTED's format
# instead.

function glob(s) {
	gsub(/[].[^$()+?{}|\\]/, "\\\\&", s)
	gsub(/\*/, ".*", s)
	return "^" s "$"
}

FILENAME == ARGV[1] && !gen {
	if ($0 ~ /^[[:space:]]*(#|$)/)
		next
	n++
	eb[n] = glob($1); ep[n] = glob($2); ef[n] = glob($3); et[n] = glob($4)
	r = $0
	for (i = 1; i <= 4; i++)
		sub(/^[[:space:]]*[^[:space:]]+[[:space:]]+/, "", r)
	er[n] = r
	next
}

FILENAME == ARGV[1] { next }

/^# FNR-RUN-START / { prog = $3; fs = $4; nlog = 0; run = ""; next }

# The harness's lines of the test running now: its RUN line, and the
# last 19 after it in a ring (the SKIP's reason comes last).
/^#  RUN / { nlog = 0; run = $0; next }
/^#/ { log_[nlog++ % 19] = $0 }

/^ok [0-9]+ .* # SKIP / {
	test = $3
	reason = $0
	sub(/^.* # SKIP /, "", reason)
	if (gen) {
		line = boot " " prog " " fs " " test " " reason
		if (!(line in printed)) {
			printed[line] = 1
			print line
		}
		next
	}
	ok = 0
	for (i = 1; i <= n && !ok; i++)
		ok = boot ~ eb[i] && prog ~ ep[i] && fs ~ ef[i] && test ~ et[i] &&
		     substr(reason, 1, length(er[i])) == er[i]
	if (!ok) {
		printf "not ok - unexpected skip: %s boot, %s on %s, %s: %s\n", boot, prog, fs, test, reason
		if (run != "")
			print "  " run
		for (i = nlog > 19 ? nlog - 19 : 0; i < nlog; i++)
			print "  " log_[i % 19]
		bad++
	}
}

END { exit bad ? 1 : 0 }
