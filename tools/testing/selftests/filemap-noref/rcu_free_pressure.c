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
 * A reader that stalls the grace periods must not take the page cache freed
 * meanwhile with it: past the limit no folio is marked hot (stalled_reader_*).
 *
 * They skip on kernels without the counter; cpu_offline_drains skips
 * unless FNR_INTRUSIVE=1.  Environment: FNR_DIR, FNR_SECONDS (default 3,
 * at most 60), FNR_INTRUSIVE.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <signal.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include "../kselftest_harness.h"
#include "fnr_common.h"
#include "fnr_pressure.h"

#define HOT_SIZE	(16 * FNR_MIB)	/* 4096 pages, 4x the limit expedite_limit sets */
#define DRAIN_TIMEOUT	5.0		/* seconds; TCG guests are slow */
#define CPU1_ONLINE	"/sys/devices/system/cpu/cpu1/online"
#define PREEMPT_MODE	"/sys/kernel/debug/sched/preempt"
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
	char path[4096], rpath[4096];
	long expedite_pages;	/* sysctl value to restore, -1 if none */
	bool offlined;		/* CPU 1 may need to come back online */
	bool delayed;		/* FNR_DELAY_FREE to put back to 0 */
	bool copy_delayed;	/* FNR_DELAY_COPY to put back to 0 */
	char preempt[16];	/* the preemption mode to put back, or "" */
	pid_t stall[2];		/* the stalled reader and the CPU hog */
};

static void stall_stop(FIXTURE_DATA(pressure) *self);

FIXTURE_SETUP(pressure)
{
	self->expedite_pages = -1;
	snprintf(self->path, sizeof(self->path), "%s/fnr_pressure.%d",
		 fnr_testdir(), getpid());
	snprintf(self->rpath, sizeof(self->rpath), "%s/fnr_stalled.%d",
		 fnr_testdir(), getpid());
	if (fnr_vmstat(FNR_PENDING) < 0)
		SKIP(return, "no pending counter: kernel without CONFIG_PAGECACHE_RCU_FREE");
	self->expedite_pages = fnr_read_long(FNR_EXPEDITE_SYSCTL);
	/* A run killed at its timeout (no teardown) may have left it set. */
	if (!access(FNR_DELAY_COPY, W_OK))
		ASSERT_EQ(0, fnr_write_str(FNR_DELAY_COPY, "0\n"));
	ASSERT_LE(0, fnr_wait_drained(DRAIN_TIMEOUT));
}

FIXTURE_TEARDOWN(pressure)
{
	stall_stop(self);
	if (self->copy_delayed)
		fnr_write_str(FNR_DELAY_COPY, "0\n");
	if (self->preempt[0])
		fnr_write_str(PREEMPT_MODE, self->preempt);
	if (self->expedite_pages >= 0)
		fnr_write_long(FNR_EXPEDITE_SYSCTL, self->expedite_pages);
	unlink(self->path);
	if (self->delayed)
		fnr_write_str(FNR_DELAY_FREE, "0\n");
	if (self->offlined)
		fnr_write_long(CPU1_ONLINE, 1);
	unlink(self->rpath);
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

	if (!fnr_intrusive())
		SKIP(return, "%s", FNR_NOT_ASKED);
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

/*
 * A reader preempted inside rcu_read_lock() and not scheduled again holds
 * up every grace period, and with it every hot folio freed meanwhile.
 * Stall one: a SCHED_IDLE process on CPU 1 reads a hot page over and over,
 * stopped for STALL_DELAY_US inside the fast path's RCU read section
 * (debugfs delay_copy_us), next to a busy loop on CPU 1 that takes all but
 * a sliver of the CPU from it: each of its reads holds grace periods up for
 * seconds.  Meanwhile this process churns hot STALL_FILE files on CPU 0
 * (write, read to make hot, truncate) and samples the pages pending.  A run
 * stops early once the peak passes twice STALL_BOUND; it goes on for up to
 * 12 s more until the stall was met (the control: until that peak).
 */
#define STALL_LIMIT	4096		/* pages: 16 MiB */
#define STALL_FILE	(4 * FNR_MIB)	/* 1024 pages */
#define STALL_DELAY_US	"10000\n"	/* inside rcu_read_lock() */
#define STALL_SECONDS	8		/* and on, up to 12 s more, until: */
#define STALL_MET	1.0		/* s: the pages stayed up this long */
#define STALL_PAGES(b)	((long)((b) / getpagesize()))
/* The limit, a file marked before it was reached, and the count's lag. */
#define STALL_BOUND	(STALL_LIMIT + STALL_PAGES(2 * STALL_FILE) + 1024)

struct stall_run {
	long peak;		/* most pages pending seen */
	long pages;		/* pages truncated */
	double over;		/* longest time at half STALL_BOUND or more */
	long in_stall;		/* most pages truncated within such a time */
};

/*
 * Did a grace period stall while enough was churned that a kernel without
 * the bound would have passed it?  The pages stayed at half the bound or
 * more for STALL_MET, and more than the other half (and a file) was
 * truncated meanwhile: unbounded, all of it would have been waiting.
 */
static bool stall_met(const struct stall_run *sr)
{
	return sr->over >= STALL_MET &&
	       sr->in_stall >= STALL_BOUND / 2 + STALL_PAGES(STALL_FILE);
}

static pid_t stall_child(int cpu, const char *rpath)
{
	struct sched_param sp = { 0 };
	pid_t parent = getpid(), pid;
	char buf[4096];
	int fd;

	pid = fork();
	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent || !pin_to(cpu))
		_exit(1);
	if (!rpath)
		for (;;)
			;
	fd = open(rpath, O_RDONLY);
	if (fd < 0 || sched_setscheduler(0, SCHED_IDLE, &sp))
		_exit(1);
	for (;;)
		if (pread(fd, buf, sizeof(buf), 0) != sizeof(buf))
			_exit(1);
}

static void stall_stop(FIXTURE_DATA(pressure) *self)
{
	int i;

	/* Both first: the reader ends its read only once the hog is gone. */
	for (i = 0; i < 2; i++)
		if (self->stall[i] > 0)
			kill(self->stall[i], SIGKILL);
	for (i = 0; i < 2; i++)
		if (self->stall[i] > 0) {
			waitpid(self->stall[i], NULL, 0);
			self->stall[i] = 0;
		}
}

static void stalled_churn(struct __test_metadata *_metadata,
			  FIXTURE_DATA(pressure) *self, long limit,
			  struct stall_run *sr)
{
	char *buf = malloc(FNR_CHUNK);
	double t0, since = -1;
	long v, since_pages = 0;
	int fd, i;

	ASSERT_NE(NULL, buf);
	memset(buf, 0x3c, FNR_CHUNK);
	memset(sr, 0, sizeof(*sr));
	fd = fnr_hot_file(self->rpath, FNR_CHUNK);
	ASSERT_LE(0, fd);
	close(fd);
	ASSERT_TRUE(pin_to(0));
	ASSERT_EQ(0, fnr_write_long(FNR_EXPEDITE_SYSCTL, limit));
	ASSERT_EQ(0, fnr_write_str(FNR_DELAY_COPY, STALL_DELAY_US));
	self->copy_delayed = true;
	self->stall[0] = stall_child(1, self->rpath);
	self->stall[1] = stall_child(1, NULL);
	ASSERT_LT(0, self->stall[0]);
	ASSERT_LT(0, self->stall[1]);

	t0 = fnr_now();
	while ((fnr_now() - t0 < STALL_SECONDS ||
		((!stall_met(sr) || !limit) &&
		 fnr_now() - t0 < STALL_SECONDS + 12)) &&
	       sr->peak < 2 * STALL_BOUND) {
		fd = open(self->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, fnr_write_all(fd, STALL_FILE, buf, NULL));
		ASSERT_EQ(0, fsync(fd));
		ASSERT_EQ(0, fnr_make_written_hot(fd, 0, STALL_FILE));
		ASSERT_EQ(0, ftruncate(fd, 0));
		close(fd);
		sr->pages += STALL_PAGES(STALL_FILE);
		for (i = 0; i < 10; i++) {
			v = fnr_vmstat(FNR_PENDING);
			if (v > sr->peak)
				sr->peak = v;
			if (v < STALL_BOUND / 2) {
				since = -1;
			} else if (since < 0) {
				since = fnr_now();
				since_pages = sr->pages;
			} else {
				if (fnr_now() - since > sr->over)
					sr->over = fnr_now() - since;
				if (sr->pages - since_pages > sr->in_stall)
					sr->in_stall = sr->pages - since_pages;
			}
			usleep(1000);
		}
	}
	stall_stop(self);
	ASSERT_EQ(0, fnr_write_str(FNR_DELAY_COPY, "0\n"));
	self->copy_delayed = false;
	free(buf);
}

/*
 * A reader is preempted inside rcu_read_lock() only with preemptible RCU
 * and a preemption mode that preempts kernel code: with
 * CONFIG_PREEMPT_DYNAMIC, switch "none" or "voluntary" to "full" for the
 * test (the teardown switches back).  "" if the kernel can, or why not.
 */
static const char *stall_preemptible(FIXTURE_DATA(pressure) *self)
{
	char mode[128], *open, *close;

	if (fnr_read_str(PREEMPT_MODE, mode, sizeof(mode)) < 0)
		return "no " PREEMPT_MODE
		       ": cannot tell whether a reader can be preempted inside rcu_read_lock()";
	open = strchr(mode, '(');
	close = open ? strchr(open, ')') : NULL;
	if (!close || close - open > (long)sizeof(self->preempt) - 2)
		return "cannot parse " PREEMPT_MODE;
	*close = '\0';
	if (!strcmp(open + 1, "full") || !strcmp(open + 1, "lazy"))
		return "";
	snprintf(self->preempt, sizeof(self->preempt), "%s\n", open + 1);
	if (fnr_write_str(PREEMPT_MODE, "full\n")) {
		self->preempt[0] = '\0';
		return "preemption mode is not full, and " PREEMPT_MODE " cannot switch it";
	}
	return "";
}

static const char *stall_unfit(FIXTURE_DATA(pressure) *self)
{
	const char *why;

	if (self->expedite_pages < 0)
		return "no " FNR_EXPEDITE_SYSCTL;
	if (access(FNR_DELAY_COPY, W_OK))
		return "no " FNR_DELAY_COPY
		       " (CONFIG_DEBUG_VM): nothing holds a reader inside rcu_read_lock()";
	if (!pin_to(1))
		return "no CPU 1";
	why = stall_preemptible(self);
	return *why ? why : NULL;
}

/*
 * Stall a reader with the limit at @limit (stalled_churn()), then wait for
 * the pages to drain and report.  False if it skipped: the test cannot
 * run here, or no stall was met.
 */
static bool stall_test(struct __test_metadata *_metadata,
		       FIXTURE_DATA(pressure) *self, long limit,
		       struct stall_run *sr)
{
	const char *why = stall_unfit(self);
	double drain;

	if (why)
		SKIP(return false, "%s", why);
	stalled_churn(_metadata, self, limit, sr);
	drain = fnr_wait_drained(DRAIN_TIMEOUT + 10);
	printf("# limit %ld: %ld pages churned, peak %ld pending (bound %ld), %.1f s at half the bound or more with %ld pages churned, drained %.0f ms after the stall\n",
	       limit, sr->pages, sr->peak, STALL_BOUND, sr->over,
	       sr->in_stall, drain * 1000);
	ASSERT_LE(0, drain) TH_LOG("pending pages did not drain after the stall");
	/* A slow kernel may not churn enough within a stall. */
	if (sr->peak <= STALL_BOUND && !stall_met(sr))
		SKIP(return false, "no grace period stalled %.1f s while enough was churned to pass the bound: the test raced nothing",
		     STALL_MET);
	return true;
}

/*
 * With the limit at 16 MiB, the pages waiting while a reader stalls the
 * grace periods stay under the limit plus two churned files and the
 * count's lag: past the limit no folio is marked hot, and the churned files
 * are freed at once.  The stall must have happened (pages at half the
 * bound or more for a second while more than the other half was churned,
 * stall_met(); it skips otherwise, as on a kernel too slow to churn that
 * much within a stall), and the pages drain once it ends.
 */
TEST_F_TIMEOUT(pressure, stalled_reader_bounds_pending, TEST_SECONDS)
{
	struct stall_run sr;

	if (!stall_test(_metadata, self, STALL_LIMIT, &sr))
		return;
	EXPECT_GE(STALL_BOUND, sr.peak)
		TH_LOG("pending pages went past the limit while a grace period stalled");
}

/*
 * The same with the limit at 0, which marks folios whatever is pending: the
 * pages waiting must go past the bound, or the test above could not tell
 * a bounded kernel from one that is not.
 */
TEST_F_TIMEOUT(pressure, stalled_reader_control, TEST_SECONDS)
{
	struct stall_run sr;

	if (!stall_test(_metadata, self, 0, &sr))
		return;
	EXPECT_LT(STALL_BOUND, sr.peak)
		TH_LOG("without the limit the pending pages stayed within the bound: the test cannot see a stall pin memory");
}

TEST_HARNESS_MAIN
