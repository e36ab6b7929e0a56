// SPDX-License-Identifier: GPL-2.0
/*
 * Pages waiting for an RCU grace period must not make the kernel OOM-kill.
 *
 * Run in a small guest without swap: file and memfd churners free hot page
 * cache in a loop while one process keeps touching anonymous memory sized
 * to what is left (MemAvailable at the start minus the churners' files and
 * a margin, plus -e MiB).  Counts OOM kills (oom_kill in /proc/vmstat) and
 * the minimum MemAvailable.  The test itself only fails if the workload
 * breaks.  make check finds the edge on the base and the patched kernel
 * in a 512 MiB guest: the largest -e that 3 runs in a row survive without
 * a kill, by bisection on a 16 MiB grid (scripts/guest/jobs/oom); the
 * patched edge must be at most 16 MiB below the base's.
 *
 *   oom_churn -d dir [-T seconds] [-e extra MiB]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <getopt.h>

#include "../kselftest.h"
#include "fnr_common.h"
#include "fnr_pressure.h"

#define CHURN_MIB	48	/* per churner; two file, two memfd churners */
#define MARGIN_MIB	48

static pid_t start_toucher(size_t size, int *stop)
{
	pid_t pid = fork();
	char *p;
	size_t i;

	if (pid)
		return pid;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(1);
	while (!__atomic_load_n(stop, __ATOMIC_RELAXED))
		for (i = 0; i < size; i += FNR_PAGE)
			p[i]++;
	_exit(0);
}

int main(int argc, char **argv)
{
	struct fnr_churners file, memfd;
	long avail, min_avail, v, peak = 0, kills0, kills;
	int c, seconds = 15, extra = 0, killed_f, killed_m, status;
	int bad, toucher_killed;
	const char *dir = NULL;
	int *stop;
	size_t anon;
	double t0;
	pid_t pid;

	while ((c = getopt(argc, argv, "d:T:e:")) != -1) {
		switch (c) {
		case 'd':
			dir = optarg;
			break;
		case 'T':
			seconds = atoi(optarg);
			break;
		case 'e':
			extra = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: oom_churn -d dir [-T seconds] [-e extra MiB]\n");
			return 2;
		}
	}
	if (!dir)
		dir = fnr_testdir();

	ksft_print_header();
	ksft_set_plan(1);
	kills0 = fnr_vmstat("oom_kill");
	if (kills0 < 0)
		ksft_exit_skip("no oom_kill in /proc/vmstat (CONFIG_VM_EVENT_COUNTERS off)\n");

	sync();
	fnr_write_long("/proc/sys/vm/drop_caches", 3);
	avail = fnr_proc_value("/proc/meminfo", "MemAvailable") / 1024;
	anon = (avail - 4 * CHURN_MIB - MARGIN_MIB + extra) * FNR_MIB;
	ksft_print_msg("MemAvailable %ld MiB: 4 churners of %d MiB, %zu MiB anonymous\n",
		       avail, CHURN_MIB, anon / FNR_MIB);

	stop = mmap(NULL, sizeof(*stop), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (stop == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	*stop = 0;
	if (fnr_churn_start(&file, 2, FNR_CHURN_FILE, dir, CHURN_MIB * FNR_MIB) ||
	    fnr_churn_start(&memfd, 2, FNR_CHURN_MEMFD, dir, CHURN_MIB * FNR_MIB))
		ksft_exit_fail_msg("starting churners: %s\n", strerror(errno));
	pid = start_toucher(anon, stop);
	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));

	min_avail = avail;
	t0 = fnr_now();
	while (fnr_now() - t0 < seconds) {
		v = fnr_proc_value("/proc/meminfo", "MemAvailable") / 1024;
		if (v < min_avail)
			min_avail = v;
		v = fnr_vmstat(FNR_PENDING);
		if (v > peak)
			peak = v;
		usleep(5000);
	}
	__atomic_store_n(stop, 1, __ATOMIC_RELAXED);
	bad = fnr_churn_stop(&file, &killed_f) + fnr_churn_stop(&memfd, &killed_m);
	toucher_killed = 0;
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		toucher_killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
		bad++;
	}
	kills = fnr_vmstat("oom_kill") - kills0;

	printf("FNR-OOM extra=%d kills=%ld killed=%d min_avail_mib=%ld "
	       "peak_pending_mib=%.1f churn_mib=%.0f\n", extra, kills,
	       killed_f + killed_m + toucher_killed, min_avail,
	       (double)peak * FNR_PAGE / FNR_MIB,
	       (double)(file.shared->bytes + memfd.shared->bytes) / FNR_MIB);
	/* Processes killed by the OOM killer are the result, not a failure. */
	if (bad > killed_f + killed_m + toucher_killed)
		ksft_test_result_fail("oom_churn: a worker failed\n");
	else
		ksft_test_result_pass("oom_churn extra=%d\n", extra);
	ksft_finished();
}
