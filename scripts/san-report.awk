# SPDX-License-Identifier: GPL-2.0
# san-report.awk -v tool=KCSAN|KMSAN -v ours="f g ..." -v touched="h ..."
# [-v gate_stack=1] CONSOLE_LOG: the tool's reports in a boot's console,
# each distinct title once with its count and where it is: "series" when
# a function of its title is one the series adds (ours), "stack" when
# such a function is on one of its stacks, "touched" when a function of
# its title is one the series changes, else "elsewhere". "series" reports
# gate (and "stack" ones with gate_stack=1): their first report is
# printed whole. Last line: "TOOL: N reports, D distinct: G gating, S
# series, K stack, T touched, E elsewhere" (distinct titles).

BEGIN {
	n = split(ours, a, " ")
	for (i = 1; i <= n; i++) isours[a[i]] = 1
	n = split(touched, a, " ")
	for (i = 1; i <= n; i++) istouched[a[i]] = 1
	pfx = "BUG: " tool ": "
}
# fname S: the function of a "name+0x1/0x2" or "name.isra.0+..." symbol.
function fname(s) {
	sub(/^[ \t]*/, "", s)
	sub(/[+ ].*/, "", s)
	sub(/\..*/, "", s)
	return s
}
# Console lines start with a "[ seconds]" stamp.
{ sub(/^\[[ 0-9.]*\] ?/, "") }
index($0, pfx) == 1 {
	if (inrep) {
		# KMSAN prints a second BUG line for an inlined frame.
		next
	}
	inrep = 1
	title = substr($0, length(pfx) + 1)
	gsub(/\+0x[0-9a-f]+\/0x[0-9a-f]+/, "", title)
	tfn = title
	sub(/^[^ ]+ in /, "", tfn)
	nf = split(tfn, tf, " / ")
	onstack = 0
	body = $0 "\n"
	next
}
inrep && /^=====/ {
	inrep = 0
	total++
	if (!(title in count)) {
		titles[++nt] = title
		where = "elsewhere"
		for (i = 1; i <= nf; i++)
			if (fname(tf[i]) in istouched) where = "touched"
		if (onstack) where = "stack"
		for (i = 1; i <= nf; i++)
			if (fname(tf[i]) in isours) where = "series"
		class[title] = where
		text[title] = body
	}
	count[title]++
	next
}
inrep {
	body = body $0 "\n"
	if ($0 ~ /^ *[a-zA-Z_][a-zA-Z_0-9.]*\+0x/ && fname($0) in isours)
		onstack = 1
}
END {
	for (i = 1; i <= nt; i++) {
		t = titles[i]
		c = class[t]
		g = c == "series" || c == "stack" && gate_stack
		printf "%s: %-9s %3d x %s%s\n", tool, c, count[t], t, g ? "  [GATING]" : ""
		if (g || c == "stack") {
			m = split(text[t], l, "\n")
			for (j = 1; j <= m && j <= 60; j++)
				if (l[j] != "") printf "    %s\n", l[j]
		}
		nc[c]++
		ng += g
	}
	printf "%s: %d reports, %d distinct: %d gating, %d series, %d stack, %d touched, %d elsewhere\n",
		tool, total, nt, ng, nc["series"], nc["stack"], nc["touched"], nc["elsewhere"]
}
