// SPDX-License-Identifier: GPL-2.0
/*
 * How much freed memory waits for an RCU grace period under churn.
 *
 *   pending_bench -k memfd|file|fadvise -P procs [-d dir] [-S MiB] [-T s]
 *	P processes cycle a file each (memfd or file: write, read twice so
 *	the folios are hot, truncate; fadvise: written once, then read twice
 *	and POSIX_FADV_DONTNEED); the counter nr_rcu_free_pending is sampled
 *	every 2 ms.  Prints average and peak MiB pending, the MiB/s the
 *	churners wrote and read, and the expedited grace periods started.
 *   pending_bench -k truncate [-d dir] [-S MiB]
 *	Truncate a hot file (default 256 MiB): peak MiB pending and the ms
 *	from the truncate's return until no page is pending.
 *   -H hogs
 *	Also run that many CPU-bound processes (nice 0) throughout, to see
 *	whether the deferred-free worker still gets CPU time.
 *
 * One line "FNR-BENCH kind=pending ..." per run.  On a kernel without the
 * counter (base) the pending figures are 0.  A benchmark, not a test.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <getopt.h>

#include "fnr_common.h"
#include "fnr_pressure.h"

static long pending_pages(void)
{
	long v = fnr_vmstat(FNR_PENDING);

	return v < 0 ? 0 : v;
}

static long expedited(void)
{
	long v = fnr_vmstat(FNR_EXPEDITED);

	return v < 0 ? 0 : v;
}

static int nr_hogs;
static pid_t hogs[64];

static void start_hogs(void)
{
	int i;

	for (i = 0; i < nr_hogs; i++) {
		hogs[i] = fork();
		if (!hogs[i])
			for (;;)
				;
	}
}

static void stop_hogs(void)
{
	int i;

	for (i = 0; i < nr_hogs; i++) {
		if (hogs[i] > 0) {
			kill(hogs[i], SIGKILL);
			waitpid(hogs[i], NULL, 0);
		}
	}
}

static double mib(double pages)
{
	return pages * FNR_PAGE / FNR_MIB;
}

static int churn(enum fnr_churn_kind kind, const char *label, const char *dir,
		 int procs, size_t size, int seconds)
{
	struct fnr_churners c;
	double t0, t, sum = 0;
	long v, peak = 0, n = 0, exp0;
	uint64_t bytes;

	fnr_wait_drained(5);
	exp0 = expedited();
	start_hogs();
	if (fnr_churn_start(&c, procs, kind, dir, size)) {
		perror("pending_bench: starting churners");
		return 1;
	}
	t0 = fnr_now();
	while ((t = fnr_now()) - t0 < seconds) {
		v = pending_pages();
		sum += v;
		n++;
		if (v > peak)
			peak = v;
		usleep(2000);
	}
	bytes = __atomic_load_n(&c.shared->bytes, __ATOMIC_RELAXED);
	t = fnr_now() - t0;
	stop_hogs();
	if (fnr_churn_stop(&c, NULL)) {
		fprintf(stderr, "pending_bench: a churner failed\n");
		return 1;
	}
	printf("FNR-BENCH kind=pending fs=%s size=%zu threads=%d hogs=%d "
	       "avg_mib=%.2f peak_mib=%.2f throughput_mibs=%.1f expedited=%ld samples=%ld\n",
	       label, size / FNR_MIB, procs, nr_hogs, mib(n ? sum / n : 0),
	       mib(peak), bytes / t / FNR_MIB, expedited() - exp0, n);
	fflush(stdout);
	return 0;
}

static int truncate_hot(const char *dir, size_t size)
{
	double t_end, drain = 0;
	long v, peak = 0, exp0;
	char path[4096];
	int fd, status;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/fnr_truncate.%d", dir, getpid());
	fd = fnr_hot_file(path, size);
	unlink(path);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	fnr_wait_drained(5);
	exp0 = expedited();
	start_hogs();
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid)
		_exit(ftruncate(fd, 0) ? 1 : 0);
	while (waitpid(pid, &status, WNOHANG) == 0) {
		v = pending_pages();
		if (v > peak)
			peak = v;
		usleep(500);
	}
	t_end = fnr_now();
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "pending_bench: ftruncate failed\n");
		return 1;
	}
	/* Exact counter from here: per-CPU deltas could hide the last pages. */
	for (;;) {
		v = fnr_pending_exact();
		if (v > peak)
			peak = v;
		if (v <= 0)
			break;
		drain = fnr_now() - t_end;
		if (drain > 10) {
			stop_hogs();
			fprintf(stderr, "pending_bench: %ld pages pending after 10 s\n", v);
			return 1;
		}
		usleep(500);
	}
	drain = fnr_now() - t_end;
	stop_hogs();
	printf("FNR-BENCH kind=pending fs=truncate size=%zu threads=1 hogs=%d "
	       "peak_mib=%.2f drain_ms=%.1f expedited=%ld\n",
	       size / FNR_MIB, nr_hogs, mib(peak), drain * 1000,
	       expedited() - exp0);
	fflush(stdout);
	close(fd);
	return 0;
}

static void bad_args(void)
{
	fprintf(stderr,
		"usage: pending_bench -k memfd|file|fadvise|truncate [-P procs] [-d dir]\n"
		"       [-l label] [-S MiB] [-T seconds] [-H hogs]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *kind = NULL, *dir = ".", *label = NULL;
	int c, procs = 1, seconds = 4;
	size_t size = 0;

	while ((c = getopt(argc, argv, "k:P:d:l:S:T:H:h")) != -1) {
		switch (c) {
		case 'k':
			kind = optarg;
			break;
		case 'P':
			procs = atoi(optarg);
			break;
		case 'd':
			dir = optarg;
			break;
		case 'l':
			label = optarg;
			break;
		case 'S':
			size = strtoul(optarg, NULL, 0) * FNR_MIB;
			break;
		case 'T':
			seconds = atoi(optarg);
			break;
		case 'H':
			nr_hogs = atoi(optarg);
			break;
		default:
			bad_args();
		}
	}
	if (!kind || procs < 1 || procs > 64 || seconds < 1 || nr_hogs < 0 ||
	    nr_hogs > 64)
		bad_args();
	if (!strcmp(kind, "truncate"))
		return truncate_hot(dir, size ? size : 256 * FNR_MIB);
	if (!size)
		size = 64 * FNR_MIB;
	if (!strcmp(kind, "memfd"))
		return churn(FNR_CHURN_MEMFD, label ? label : "memfd", dir,
			     procs, size, seconds);
	if (!strcmp(kind, "file"))
		return churn(FNR_CHURN_FILE, label ? label : "file", dir,
			     procs, size, seconds);
	if (!strcmp(kind, "fadvise"))
		return churn(FNR_CHURN_FADVISE, label ? label : "fadvise", dir,
			     procs, size, seconds);
	bad_args();
	return 2;
}
