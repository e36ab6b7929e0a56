# SPDX-License-Identifier: GPL-2.0
# median(LIST): the median of the numbers in the space-separated LIST; sets
# lo and hi to the smallest and the largest. Loaded before the tables'
# scripts (awk -f scripts/median.awk -f ...). POSIX awk (mawk).

function median(list,    v, n, i, j, t) {
	n = split(list, v, " ")
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) {
			t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
		}
	lo = v[1]; hi = v[n]
	return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
