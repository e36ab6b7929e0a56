// SPDX-License-Identifier: GPL-2.0
/*
 * Pages waiting for an RCU grace period must be counted, bounded and never
 * lost.
 *
 * A hot page cache folio freed under filemap-noref waits for a grace period
 * on a per-CPU list, counted in nr_rcu_free_pending (/proc/vmstat) and
 * RcuFreePending (/proc/meminfo).  These tests check that the counter rises
 * when hot files are truncated and comes back to exactly 0 (no queued page
 * leaked), that vm.rcu_free_expedite_pages starts expedited grace periods
 * (and 0 stops them), and that the lists of a CPU taken offline still drain.
 *
 * They skip on kernels without the counter.  Environment: FNR_DIR,
 * FNR_SECONDS (default 3, at most 60).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>

#include "../kselftest_harness.h"
#include "fnr_common.h"
#include "fnr_pressure.h"

#define HOT_SIZE	(16 * FNR_MIB)	/* 4096 pages, 4x the limit expedite_limit sets */
#define DRAIN_TIMEOUT	5.0		/* seconds; TCG guests are slow */
#define CPU1_ONLINE	"/sys/devices/system/cpu/cpu1/online"
/* Above 60 s of churn, or five CPU offlines with their drains. */
#define TEST_SECONDS	120

static int seconds(void)
{
	const char *s = getenv("FNR_SECONDS");

	if (!s || atoi(s) <= 0)
		return 3;
	return atoi(s) < 60 ? atoi(s) : 60;
}

static bool pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return !sched_setaffinity(0, sizeof(set), &set);
}

FIXTURE(pressure) {
	char path[4096];
	long expedite_pages;	/* sysctl value to restore, -1 if none */
	bool offlined;		/* CPU 1 may need to come back online */
	bool delayed;		/* FNR_DELAY_FREE to put back to 0 */
};

FIXTURE_SETUP(pressure)
{
	self->expedite_pages = -1;
	snprintf(self->path, sizeof(self->path), "%s/fnr_pressure.%d",
		 fnr_testdir(), getpid());
	if (fnr_vmstat(FNR_PENDING) < 0)
		SKIP(return, "no pending counter: kernel without CONFIG_PAGECACHE_RCU_FREE");
	self->expedite_pages = fnr_read_long(FNR_EXPEDITE_SYSCTL);
	ASSERT_LE(0, fnr_wait_drained(DRAIN_TIMEOUT));
}

FIXTURE_TEARDOWN(pressure)
{
	if (self->expedite_pages >= 0)
		fnr_write_long(FNR_EXPEDITE_SYSCTL, self->expedite_pages);
	unlink(self->path);
	if (self->delayed)
		fnr_write_str(FNR_DELAY_FREE, "0\n");
	if (self->offlined)
		fnr_write_long(CPU1_ONLINE, 1);
}

/*
 * Create a hot HOT_SIZE file, truncate it and return the pending pages seen
 * right after the truncate (-1 on error).
 */
static long truncate_hot(const char *path)
{
	long pending = -1;
	int fd = fnr_hot_file(path, HOT_SIZE);

	if (fd < 0)
		return -1;
	if (!ftruncate(fd, 0))
		pending = fnr_pending_exact();
	close(fd);
	return pending;
}

/*
 * With vm.rcu_free_expedite_pages at @limit, truncate a hot file, wait
 * until it is freed and return how many expedited grace periods started
 * (-1 on error).
 */
static long expedites_for_truncate(const char *path, long limit)
{
	long before, pending;

	if (fnr_write_long(FNR_EXPEDITE_SYSCTL, limit))
		return -1;
	before = fnr_vmstat(FNR_EXPEDITED);
	pending = truncate_hot(path);
	if (pending < 0 || fnr_wait_drained(DRAIN_TIMEOUT) < 0)
		return -1;
	printf("# limit %ld: %ld expedited grace periods, %ld pages pending after truncate\n",
	       limit, fnr_vmstat(FNR_EXPEDITED) - before, pending);
	return fnr_vmstat(FNR_EXPEDITED) - before;
}

/* Both interfaces show the counter. */
TEST_F_TIMEOUT(pressure, counter_visible, TEST_SECONDS)
{
	long kb = fnr_proc_value("/proc/meminfo", "RcuFreePending");

	ASSERT_LE(0, kb) TH_LOG("no RcuFreePending line in /proc/meminfo");
	ASSERT_LE(0, fnr_vmstat(FNR_PENDING));
}

/*
 * Churn hot files from two processes, sampling the counter; it must rise
 * (otherwise this test checks nothing) and come back to exactly 0.  With
 * no expedited grace period (the teardown restores the limit): with them
 * a truncate's pages were gone within milliseconds, and one run on the
 * debug kernel, sampling every 2 ms for 3 s, saw none pending.
 */
TEST_F_TIMEOUT(pressure, counter_returns_to_zero, TEST_SECONDS)
{
	struct fnr_churners c;
	long v, peak = 0;
	double t0, drain;

	if (self->expedite_pages >= 0)
		ASSERT_EQ(0, fnr_write_long(FNR_EXPEDITE_SYSCTL, 0))
			TH_LOG("write 0 to %s: %s", FNR_EXPEDITE_SYSCTL,
			       strerror(errno));
	ASSERT_EQ(0, fnr_churn_start(&c, 2, FNR_CHURN_FILE, fnr_testdir(),
				     16 * FNR_MIB));
	t0 = fnr_now();
	while (fnr_now() - t0 < seconds()) {
		v = fnr_vmstat(FNR_PENDING);
		if (v > peak)
			peak = v;
		usleep(2000);
	}
	ASSERT_EQ(0, fnr_churn_stop(&c, NULL));
	drain = fnr_wait_drained(DRAIN_TIMEOUT);
	TH_LOG("%.1f MiB written and read, peak %ld pages pending, drained in %.0f ms",
	       (double)c.shared->bytes / FNR_MIB, peak, drain * 1000);
	ASSERT_LT(0, c.shared->bytes);
	EXPECT_LT(0, peak) TH_LOG("no page ever pending: is deferral off?");
	/*
	 * fnr_wait_drained() returns once an exact read (stat_refresh) says
	 * 0: that is the counter back at exactly 0.  A second read would
	 * also count whatever else in the system freed a hot folio since.
	 */
	ASSERT_LE(0, drain) TH_LOG("%ld pages still pending after %.0f s",
				   fnr_pending_exact(), DRAIN_TIMEOUT);
}

/*
 * Truncating 4096 hot pages on one CPU crosses a limit of 1024 and starts
 * an expedited grace period; with the limit at 0 none starts.
 */
TEST_F_TIMEOUT(pressure, expedite_limit, TEST_SECONDS)
{
	long n;

	if (self->expedite_pages < 0)
		SKIP(return, "no " FNR_EXPEDITE_SYSCTL);
	if (fnr_vmstat(FNR_EXPEDITED) < 0)
		SKIP(return, "no " FNR_EXPEDITED " in /proc/vmstat (CONFIG_VM_EVENT_COUNTERS off)");
	ASSERT_TRUE(pin_to(0));

	n = expedites_for_truncate(self->path, 1024);
	ASSERT_LE(0, n);
	EXPECT_LT(0, n);
	n = expedites_for_truncate(self->path, 0);
	ASSERT_LE(0, n);
	EXPECT_EQ(0, n);
}

/*
 * The limit counts the pages waiting on all CPUs: 2048 hot pages truncated
 * on CPU 0 and 2048 on CPU 1, the worker held back a second after each
 * grace period so that the first ones still wait, cross a limit of 3072
 * together and start an expedited grace period.  8 MiB files: whole huge
 * pages on huge tmpfs, where a 3 MiB file takes two (1024 pages).
 */
#define SPLIT_LIMIT	3072
TEST_F_TIMEOUT(pressure, expedite_limit_counts_all_cpus, TEST_SECONDS)
{
	char path2[sizeof(self->path) + 8];
	long before, n, pending;
	int fd0, fd1;

	if (self->expedite_pages < 0)
		SKIP(return, "no " FNR_EXPEDITE_SYSCTL);
	if (fnr_vmstat(FNR_EXPEDITED) < 0)
		SKIP(return, "no " FNR_EXPEDITED " in /proc/vmstat (CONFIG_VM_EVENT_COUNTERS off)");
	if (access(FNR_DELAY_FREE, W_OK))
		SKIP(return, "no %s (CONFIG_DEBUG_VM): the first pages would drain before the others come",
		     FNR_DELAY_FREE);
	if (!pin_to(1))
		SKIP(return, "no CPU 1");
	snprintf(path2, sizeof(path2), "%s.2", self->path);
	fd1 = fnr_hot_file(path2, 8 * FNR_MIB);
	ASSERT_LE(0, fd1);
	unlink(path2);
	ASSERT_TRUE(pin_to(0));
	fd0 = fnr_hot_file(self->path, 8 * FNR_MIB);
	ASSERT_LE(0, fd0);

	ASSERT_EQ(0, fnr_write_long(FNR_EXPEDITE_SYSCTL, SPLIT_LIMIT));
	ASSERT_EQ(0, fnr_write_str(FNR_DELAY_FREE, "1000000\n"));
	self->delayed = true;
	before = fnr_vmstat(FNR_EXPEDITED);
	ASSERT_EQ(0, ftruncate(fd0, 0));
	pending = fnr_pending_exact();
	ASSERT_TRUE(pin_to(1));
	ASSERT_EQ(0, ftruncate(fd1, 0));
	ASSERT_LE(0, fnr_wait_drained(DRAIN_TIMEOUT + 2));
	n = fnr_vmstat(FNR_EXPEDITED) - before;
	close(fd0);
	close(fd1);
	printf("# %ld pages waiting after the truncate on CPU 0; %ld expedited grace periods after the one on CPU 1\n",
	       pending, n);
	ASSERT_LT(0, pending) TH_LOG("nothing waited after the first truncate");
	ASSERT_GT(SPLIT_LIMIT, pending) TH_LOG("the first truncate alone reached the limit");
	EXPECT_LT(0, n);
}

/*
 * The default limit is for bursts (an eighth of memory):
 * truncating a hot file smaller than that starts no expedited grace
 * period, which interrupts every CPU.
 */
TEST_F_TIMEOUT(pressure, default_limit_lets_truncate_wait, TEST_SECONDS)
{
	long n;

	if (self->expedite_pages < 0)
		SKIP(return, "no " FNR_EXPEDITE_SYSCTL);
	if (fnr_vmstat(FNR_EXPEDITED) < 0)
		SKIP(return, "no " FNR_EXPEDITED " in /proc/vmstat (CONFIG_VM_EVENT_COUNTERS off)");
	if (self->expedite_pages < 2 * HOT_SIZE / getpagesize())
		SKIP(return, "default limit %ld pages: memory too small for this file",
		     self->expedite_pages);
	ASSERT_TRUE(pin_to(0));

	n = expedites_for_truncate(self->path, self->expedite_pages);
	ASSERT_LE(0, n);
	EXPECT_EQ(0, n);
}

/*
 * Queue pages on CPU 1 (no expediting, so they wait for a normal grace
 * period), take CPU 1 offline at once: its lists must still drain and the
 * counter come back to exactly 0.
 */
TEST_F_TIMEOUT(pressure, cpu_offline_drains, TEST_SECONDS)
{
	long pending = 0;
	int try;

	if (access(CPU1_ONLINE, W_OK) || fnr_read_long(CPU1_ONLINE) != 1)
		SKIP(return, "CPU 1 cannot be taken offline here");
	if (self->expedite_pages >= 0)
		ASSERT_EQ(0, fnr_write_long(FNR_EXPEDITE_SYSCTL, 0));

	for (try = 0; try < 5 && pending <= 0; try++) {
		ASSERT_TRUE(pin_to(1));
		pending = truncate_hot(self->path);
		ASSERT_TRUE(pin_to(0));
		self->offlined = true;
		ASSERT_EQ(0, fnr_write_long(CPU1_ONLINE, 0));
		ASSERT_LE(0, fnr_wait_drained(DRAIN_TIMEOUT))
			TH_LOG("%ld pages still pending %.0f s after CPU 1 went offline",
			       fnr_pending_exact(), DRAIN_TIMEOUT);
		ASSERT_EQ(0, fnr_write_long(CPU1_ONLINE, 1));
	}
	TH_LOG("%ld pages were pending when CPU 1 went offline (try %d)",
	       pending, try);
	ASSERT_LT(0, pending) TH_LOG("never caught pages pending on CPU 1");
}

TEST_HARNESS_MAIN
