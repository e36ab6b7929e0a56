# SPDX-License-Identifier: GPL-2.0
# series-functions.awk PATCH...: the kernel functions a series adds
# ("ours FN") and those it changes ("touched FN", from the hunk headers),
# in the .c and .h files outside tools/ (scripts/check-san.sh).
/^\+\+\+ b\// {
	file = substr($2, 3)
	kernel = file ~ /\.[ch]$/ && file !~ /^tools\//
	next
}
!kernel { next }
/^@@ / {
	# "@@ -a,b +c,d @@ static int fn(args": the function the hunk is in.
	h = $0
	sub(/^@@ [^@]* @@ ?/, "", h)
	if (match(h, /[a-z_0-9]+\(/))
		touched[substr(h, RSTART, RLENGTH - 1)] = 1
	next
}
# A definition added at column 0: "+type name(" with no '=' or ';'.
/^\+[a-z_][^=;(]*[a-z_0-9]\(/ && !/;[ \t]*$/ {
	l = substr($0, 2)
	if (match(l, /[a-z_0-9]+\(/))
		ours[substr(l, RSTART, RLENGTH - 1)] = 1
}
END {
	for (f in ours) print "ours " f
	for (f in touched) if (!(f in ours)) print "touched " f
}
