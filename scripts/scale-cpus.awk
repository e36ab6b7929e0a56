# SPDX-License-Identifier: GPL-2.0
# scale-cpus.awk -v k=KERNEL -v r=ROUND -v st=STEAL_TICKS -v hz=HZ SAMPLES:
# one '# boot' line for make scale's results from scripts/scale.sh's
# samples ("tid cpu ticks", every 2 s, of each thread of a UML boot): the
# host's steal time during the boot, and for each thread that ran 5 % or
# more of the boot's CPU time, the host CPUs it was seen on, each with
# the share of the thread's time it ran there (the time since the last
# sample is put on the CPU the thread is on at this one).
{
	if ($1 in last) {
		d = $3 - last[$1]
		busy[$1] += d
		on[$1, $2] += d
		total += d
		cpus[$2] = 1
	}
	last[$1] = $3
}

END {
	printf "# boot %s round %s: steal %.1f s; busy UML threads, host CPU (share):", k, r, st / hz
	n = 0
	for (t in busy) {
		if (!total || busy[t] < total / 20)
			continue
		printf "%s %s", n++ ? ";" : "", t
		for (c in cpus)
			if (on[t, c])
				printf " cpu%s %d%%", c, 100 * on[t, c] / busy[t]
	}
	printf "%s\n", n ? "" : " none sampled"
}
