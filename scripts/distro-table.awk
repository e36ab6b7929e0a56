# SPDX-License-Identifier: GPL-2.0
# distro-table.awk FILE...: the cover letter's line per kernel of make
# check-distro's reports (results/NAME/distro.txt): the page flags and
# MGLRU tier bits of base -> patched under Debian's config, whether the
# series' page->flags #warning fired, and whether the files it touches
# compiled.
function field(s, name,    a) {
	return match(s, " " name " [0-9]+") ? substr(s, RSTART + length(name) + 2, RLENGTH - length(name) - 2) : "?"
}
FNR == 1 { k++ }
/^# make check-distro, / {
	label[k] = $5; sub(/\):$/, "", label[k]); sub(/^\(/, "", label[k])
	deb[k] = $8; sub(/,$/, "", deb[k])
}
/page->flags, base:/ { bf[k] = field($0, "Flags"); bt[k] = field($0, "Tier") }
/page->flags, patched:/ { pf[k] = field($0, "Flags"); pt[k] = field($0, "Tier") }
/the build warns/ { warn[k] = "yes" }
/no #warning/ { warn[k] = "no" }
/ compile$/ { built[k] = "yes" }
END {
	printf "%-9s %-20s %-10s %-10s %-8s %s\n", "kernel", "Debian's config", "page flags",
		"MGLRU tier", "#warning", "compiles"
	for (i = 1; i <= k; i++)
		printf "%-9s %-20s %-10s %-10s %-8s %s\n", label[i], deb[i], bf[i] " -> " pf[i],
			bt[i] " -> " pt[i], warn[i] ? warn[i] : "?", built[i] ? built[i] : "no"
}
