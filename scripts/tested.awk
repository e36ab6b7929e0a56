# SPDX-License-Identifier: GPL-2.0
# tested.awk boot=NAME LOG [boot=NAME LOG ...]: one line per test program
# run in make check, "BOOT PROGRAM FS PASS FAIL SKIP", from the guests'
# results.log (a block per program, closed by its FNR-RUN line), the
# host's run_kselftest.sh log (boot=host) and the OOM comparison's TAP
# (boot=oom). make check writes it to build/NAME/check/tested.txt;
# scripts/tested-table.awk makes the cover letter's table of it.
function flush() {
	if (open_)
		printf "%s %s %s %d %d %d\n", last, prog, fs, p, f, s
	open_ = p = f = s = 0
}
FNR == 1 { flush(); last = boot }
boot == "host" && /^(not )?ok [0-9]+ selftests: filemap-noref: / {
	prog = $NF; fs = "host"; open_ = 1
	if ($1 == "not") f++; else if (/# SKIP/) s++; else p++
	flush()
	next
}
boot == "oom" { prog = "oom_edge"; fs = "base+patched"; open_ = 1 }
/^# FNR-RUN-START / { flush(); next }
/^ok [0-9]+ .*# SKIP/ { s++; next }
/^ok [0-9]+ / { p++; next }
/^not ok [0-9]+ / { f++; next }
/^FNR-RUN / {
	# A program that died without reporting a failure counts as one.
	rc = substr($4, 4) + 0
	if (rc != 0 && rc != 4 && f == 0)
		f = 1
	prog = $2; fs = $3; open_ = 1
	flush()
}
END { flush() }
