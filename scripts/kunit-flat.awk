# SPDX-License-Identifier: GPL-2.0
# KUnit's KTAP (kunit.py --raw_output=kunit) as flat TAP, a line per case
# and parameter: "ok N SUITE: TEST: PARAM" (a test without parameters:
# "ok N SUITE: TEST"). A result that has results under it (a test with
# parameters, the suite) is counted through them, not again.
function indent(s) { match(s, /^ */); return RLENGTH }
/^ *# Subtest: / {
	d = indent($0) / 4
	name[d] = $0
	sub(/^ *# Subtest: /, "", name[d])
	has[d] = 0
	next
}
/^ *(not )?ok [0-9]+ / {
	d = indent($0) / 4
	line = $0
	sub(/^ */, "", line)
	ok = line !~ /^not /
	sub(/^(not )?ok [0-9]+ /, "", line)
	has[d - 1] = 1
	# A result with subtests of its own was counted through them.
	if (has[d]) { has[d] = 0; next }
	if (d == 0)
		next
	# The Subtest line at a result's own indentation names its parent.
	path = name[1]
	for (i = 2; i <= d; i++)
		path = path ": " name[i]
	printf "%sok %d %s: %s\n", ok ? "" : "not ", ++n, path, line
	next
}
