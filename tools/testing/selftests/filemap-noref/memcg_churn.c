// SPDX-License-Identifier: GPL-2.0
/*
 * A folio waiting for its RCU grace period must stay charged to its memory
 * cgroup, show in memory.stat as rcu_free_pending, and never make the
 * cgroup go OOM.
 *
 * Churners in a cgroup with a memory.max of 24 MiB write, read twice (so
 * that the pages turn hot) and truncate 16 MiB files, many times the limit
 * in total, so reclaim runs in the cgroup and frees hot folios too; a
 * second test puts 16 MiB of anonymous memory next to one churner, with
 * expedited grace periods off, so that a charge finds little but pending
 * pages.  Checks: no memcg OOM event and no process killed; the limit was
 * hit; memory.current at most 1 MiB over memory.max (forced charges);
 * rcu_free_pending rises while the first test runs (where folios are
 * deferred) and, once the processes are gone and the lists drained,
 * rcu_free_pending is 0 and memory.current is back to what it was before,
 * within 1 MiB (no charge leaked with a deferred folio).
 *
 * Two more tests truncate 32 MiB of hot page cache in the cgroup, next to
 * 8 MiB of anonymous memory, and at once lower memory.max below what the
 * truncated file still holds (max_after_truncate) or ask memory.reclaim
 * for half of it (reclaim_after_truncate): the kernel must wait for the
 * pending pages instead of OOM-killing the cgroup's task or failing with
 * EAGAIN.  On CONFIG_DEBUG_VM kernels the deferred-free worker is held
 * back for a second (debugfs filemap_noref/delay_free_us), with expedited
 * grace periods off, so that only that wait can free them in time.
 *
 * control_max_after_truncate and control_reclaim_after_truncate are their
 * controls: the same with that wait off (debugfs filemap_noref/flush 0,
 * CONFIG_DEBUG_VM), where the child must be OOM-killed or the write fail;
 * they skip where FNR_SKIP_CONTROL is set.
 *
 * The last test (high_after_truncate) keeps the cgroup over memory.high
 * with anonymous memory and has a child, in a cgroup below it whose
 * memory.min protects all it has, write 96 pages, read them twice and
 * truncate them, four times: each write must be throttled (2 s), as
 * without the series, although the flush before the throttle frees the
 * pages the last truncate left pending; each write after a truncate that
 * left pages pending must flush (the rcu_free_flush vm event).
 *
 * high_other_pending keeps the cgroup over memory.high with anonymous
 * memory while pages of another cgroup wait for their grace period (this
 * process truncated a hot file, the deferred-free worker held back): a
 * fault in the cgroup must be throttled, as the over-high path then went
 * past its flush, and must not flush (the rcu_free_flush vm event): only
 * the cgroup's own pending pages could bring its usage down, and a flush
 * is usually an expedited grace period, which interrupts every CPU.
 *
 * Needs cgroup v2 at /sys/fs/cgroup with the memory controller; skips
 * otherwise.  On a kernel without the series there is no rcu_free_pending
 * key: only the OOM, leak and throttle checks run, and
 * reclaim_after_truncate skips (the truncated file is gone at once, and
 * memory.reclaim rightly fails).  The churn tests run for FNR_SECONDS
 * (default 3, at most 60), and on slow kernels (KASAN) longer, up to 60 s,
 * until 4 x memory.max went through and a pending page was seen.
 * Environment: FNR_DIR, FNR_SECONDS.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include "../kselftest_harness.h"
#include "fnr_common.h"
#include "fnr_pressure.h"
#include "fnr_cgroup.h"

/* Below the 2 x 16 MiB being churned, so reclaim runs in the cgroup. */
#define CG_MAX		(24 * FNR_MIB)
/* tmpfs cannot be reclaimed (memory.swap.max 0): the files must fit. */
#define CG_MAX_TMPFS	(48 * FNR_MIB)
#define DRAIN_TIMEOUT	5.0
#define ENOUGH_LIMITS	4	/* churn at least 4 x memory.max */
#define MAX_SECONDS	60
/* Above MAX_SECONDS of churn, the drains and the stat flushes. */
#define TEST_SECONDS	120
#define STAT_FLUSH_US	2500000	/* memcg stats flush every 2 s */
#define FORCE_SLACK	FNR_MIB	/* 0.2 MiB seen once */
#define LEAK_SLACK	FNR_MIB	/* slab and the like: 376 KiB seen on tmpfs */
#define LIMIT_ANON	(8 * FNR_MIB)
#define LIMIT_FILE	(32 * FNR_MIB)
#define LIMIT_MARGIN	(8 * FNR_MIB)	/* page tables, slab, buffers */
/* memory.high: a cgroup twice over it with anon, throttled on each write */
#define HIGH_ANON	(8 * FNR_MIB)
#define HIGH_LIMIT	(4 * FNR_MIB)
/* The child's memory.min: all it ever uses, so that reclaim takes none. */
#define HIGH_PROTECT	(64 * FNR_MIB)
#define HIGH_PAGES	96	/* more than MEMCG_CHARGE_BATCH (64) */
#define HIGH_WRITES	4
#define HIGH_THROTTLED	1.9	/* s: the penalty sleeps 2 s less a jiffy */
/* A step: a write throttled a few times (2 s each), or a truncate. */
#define HIGH_STEP_S	30
/*
 * The child's start, two steps a write, the setup's drain, and a margin:
 * a step that runs out fails the test, and the teardown runs then.
 */
#define HIGH_TEST_SECONDS	((2 * HIGH_WRITES + 1) * HIGH_STEP_S + 60)

static int seconds(void)
{
	const char *s = getenv("FNR_SECONDS");

	if (!s || atoi(s) <= 0)
		return 3;
	return atoi(s) < MAX_SECONDS ? atoi(s) : MAX_SECONDS;
}

FIXTURE(memcg) {
	char cg[256];
	unsigned long max;
	long expedite_pages;	/* sysctl value to restore, -1 if none */
	bool tmpfs;
	bool created;
	struct fnr_held held;	/* frees held back, to release */
	pid_t child;		/* to kill if a test ends early */
	char leaf[300];		/* a child cgroup to remove, or "" */
};

FIXTURE_SETUP(memcg)
{
	struct statfs sfs;
	int ret;

	self->held.expedite = -1;
	self->expedite_pages = fnr_read_long(FNR_EXPEDITE_SYSCTL);
	ASSERT_EQ(0, statfs(fnr_testdir(), &sfs));
	self->tmpfs = sfs.f_type == TMPFS_MAGIC;
	self->max = self->tmpfs ? CG_MAX_TMPFS : CG_MAX;
	snprintf(self->cg, sizeof(self->cg), FNR_CG_ROOT "/fnr_memcg.%d",
		 getpid());
	ret = fnr_cg_create(self->cg, self->max);
	if (ret == -1)
		SKIP(return, "no cgroup v2 memory controller at " FNR_CG_ROOT);
	ASSERT_EQ(0, ret);
	self->created = true;
	ASSERT_LE(0, fnr_wait_drained(DRAIN_TIMEOUT));
}

/*
 * No memory.max, no expedited grace periods, and on CONFIG_DEBUG_VM kernels
 * the deferred-free worker held back a second: pending pages stay charged
 * until something waits for them.  Returns whether the worker is held back.
 */
static bool hold_back_frees(struct __test_metadata *_metadata,
			    FIXTURE_DATA(memcg) *self)
{
	char path[512];
	int held;

	snprintf(path, sizeof(path), "%s/memory.max", self->cg);
	ASSERT_EQ(0, fnr_write_str(path, "max\n"));
	held = fnr_hold_frees(&self->held);
	ASSERT_LE(0, held) TH_LOG("holding frees back: %s", strerror(errno));
	return held;
}

/* Let the deferred-free worker run again. */
static void release_frees(FIXTURE_DATA(memcg) *self)
{
	if (fnr_release_frees(&self->held))
		printf("# could not put back %s or %s: %s\n", FNR_DELAY_FREE,
		       FNR_EXPEDITE_SYSCTL, strerror(errno));
}

FIXTURE_TEARDOWN(memcg)
{
	int status;

	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, &status, 0);
	}
	release_frees(self);
	if (self->expedite_pages >= 0)
		fnr_write_long(FNR_EXPEDITE_SYSCTL, self->expedite_pages);
	if (self->leaf[0] && rmdir(self->leaf))
		TH_LOG("rmdir %s: %s", self->leaf, strerror(errno));
	if (self->created && rmdir(self->cg))
		TH_LOG("rmdir %s: %s", self->cg, strerror(errno));
}

/*
 * Run @nr churners of @size files in the cgroup, next to a hog of @hog
 * bytes of anonymous memory if @hog, for FNR_SECONDS, and check the cgroup
 * as the header says.
 */
static void run_churners(struct __test_metadata *_metadata,
			 FIXTURE_DATA(memcg) *self, int nr, size_t size,
			 size_t hog, bool expect_pending)
{
	long cur, before, pending, peak_pending = 0, peak_cur = 0;
	bool has_pending;
	struct fnr_churners c;
	int killed, bad, status;
	pid_t hog_pid = 0;
	double t0;

	has_pending = fnr_cg_value(self->cg, "memory.stat", "rcu_free_pending") >= 0;
	before = fnr_cg_value(self->cg, "memory.current", NULL);
	ASSERT_LE(0, before);

	/* The children inherit the cgroup; the test itself goes back. */
	ASSERT_EQ(0, fnr_cg_enter(self->cg));
	if (hog)
		hog_pid = fnr_start_hog(hog);
	ASSERT_EQ(0, fnr_churn_start(&c, nr, FNR_CHURN_FILE, fnr_testdir(),
				     size));
	ASSERT_EQ(0, fnr_cg_enter(FNR_CG_ROOT));
	ASSERT_LE(0, hog_pid);

	/*
	 * At least FNR_SECONDS, and on slow (debug) kernels until enough went
	 * through the cgroup and a pending page was seen, up to MAX_SECONDS.
	 */
	t0 = fnr_now();
	while (fnr_now() - t0 < seconds() ||
	       ((__atomic_load_n(&c.shared->bytes, __ATOMIC_RELAXED) <
		 ENOUGH_LIMITS * self->max ||
		 (has_pending && expect_pending && !peak_pending)) &&
		fnr_now() - t0 < MAX_SECONDS)) {
		cur = fnr_cg_value(self->cg, "memory.current", NULL);
		if (cur > peak_cur)
			peak_cur = cur;
		if (has_pending) {
			pending = fnr_cg_value(self->cg, "memory.stat",
					       "rcu_free_pending");
			if (pending > peak_pending)
				peak_pending = pending;
		}
		usleep(2000);
	}
	bad = fnr_churn_stop(&c, &killed);
	if (hog_pid) {
		/* Killed by the OOM killer already if it is not running. */
		if (waitpid(hog_pid, &status, WNOHANG) == 0) {
			kill(hog_pid, SIGKILL);
			waitpid(hog_pid, &status, 0);
		} else {
			killed++;
		}
	}
	ASSERT_LE(0, fnr_wait_drained(DRAIN_TIMEOUT));
	usleep(STAT_FLUSH_US);

	TH_LOG(
	"%.0f MiB written and read in a %lu MiB cgroup (%zu MiB anon); peak memory.current %.1f MiB, peak rcu_free_pending %.1f MiB",
	       (double)c.shared->bytes / FNR_MIB, self->max / FNR_MIB,
	       hog / FNR_MIB, (double)peak_cur / FNR_MIB,
	       (double)peak_pending / FNR_MIB);
	EXPECT_EQ(0, killed) TH_LOG("%d processes OOM-killed", killed);
	EXPECT_EQ(0, bad) TH_LOG("%d churners failed", bad);
	EXPECT_EQ(0, fnr_cg_value(self->cg, "memory.events", "oom"));
	EXPECT_EQ(0, fnr_cg_value(self->cg, "memory.events", "oom_kill"));
	/* Reclaim ran: the charges hit the limit (tmpfs's files fit). */
	if (!self->tmpfs)
		EXPECT_LT(0, fnr_cg_value(self->cg, "memory.events", "max"));
	/* Charges from reclaim or with __GFP_NOFAIL may go a little over. */
	EXPECT_GE((long)(self->max + FORCE_SLACK), peak_cur);
	/* Several times the limit went through the cgroup. */
	EXPECT_LE(ENOUGH_LIMITS * self->max, c.shared->bytes);
	if (has_pending && expect_pending)
		EXPECT_LT(0, peak_pending)
			TH_LOG(
			"no pending page charged to the cgroup: are deferred folios uncharged early?");
	if (has_pending)
		EXPECT_EQ(0, fnr_cg_value(self->cg, "memory.stat", "rcu_free_pending"));
	/* The files are gone: no charge may stay behind. */
	cur = fnr_cg_value(self->cg, "memory.current", NULL);
	EXPECT_GE(before + (long)LEAK_SLACK, cur)
		TH_LOG("memory.current %ld bytes afterwards, %ld before",
		       cur, before);
}

/* Two churners of 16 MiB files: reclaim in the cgroup frees hot folios. */
TEST_F_TIMEOUT(memcg, churn, TEST_SECONDS)
{
	run_churners(_metadata, self, 2, 16 * FNR_MIB, 0, true);
}

/*
 * Two thirds of the cgroup are anonymous memory that cannot be reclaimed
 * (memory.swap.max 0), and one churner frees 8 MiB of hot page cache then
 * charges it again at once, with expedited grace periods off: the charge
 * finds little on the LRU but pending pages, and must wait for them, not go
 * OOM.  Most of the file is reclaimed before its second read here, so few
 * folios get hot: rcu_free_pending may stay 0.
 */
TEST_F_TIMEOUT(memcg, churn_next_to_anon, TEST_SECONDS)
{
	if (self->tmpfs)
		SKIP(return, "no swap in the cgroup: tmpfs cannot be reclaimed next to anon");
	if (self->expedite_pages >= 0)
		ASSERT_EQ(0, fnr_write_long(FNR_EXPEDITE_SYSCTL, 0));
	run_churners(_metadata, self, 1, 8 * FNR_MIB, self->max * 2 / 3, false);
}

/* A child in the cgroup: anon memory, then a hot file it truncates. */
static pid_t start_truncator(const char *cg, const char *dir, int *rfd)
{
	char path[512], c;
	int p[2], fd;
	pid_t pid;
	char *m;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid) {
		close(p[1]);
		*rfd = p[0];
		return pid;
	}
	close(p[0]);
	if (fnr_cg_enter(cg))
		_exit(1);
	m = mmap(NULL, LIMIT_ANON, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (m == MAP_FAILED || write(p[1], "a", 1) != 1)
		_exit(1);
	snprintf(path, sizeof(path), "%s/fnr_limit.%d", dir, getpid());
	fd = fnr_hot_file(path, LIMIT_FILE);
	unlink(path);
	if (fd < 0 || ftruncate(fd, 0))
		_exit(1);
	close(fd);
	c = 't';
	if (write(p[1], &c, 1) != 1)
		_exit(1);
	pause();
	_exit(0);
}

/*
 * The child truncates LIMIT_FILE of hot page cache, and at once memory.max
 * is set to what the child had before the file, plus a margin (@what
 * "max"), or LIMIT_FILE / 2 is asked of memory.reclaim (@what "reclaim").
 * The truncated file's folios still wait for their grace period, charged:
 * reclaim finds nothing else (memory.swap.max 0), so the kernel must wait
 * for them rather than OOM-kill the child (memory.max) or fail with EAGAIN
 * (memory.reclaim).  On CONFIG_DEBUG_VM kernels the deferred-free worker
 * is held back by debugfs filemap_noref/delay_free_us and expedited grace
 * periods are off, so that nothing but that wait can free the folios in
 * time.  With @control, the control run: the same with that wait off
 * (debugfs filemap_noref/flush 0, CONFIG_DEBUG_VM), where the child must
 * be OOM-killed or the write fail.
 */
static void limit_after_truncate(struct __test_metadata *_metadata,
				 FIXTURE_DATA(memcg) *self, const char *what,
				 bool control)
{
	char path[512], c, v[32], why[256];
	long cur_anon, cur_file, cur, events, pending;
	int rfd, status, ret;
	const char *no;
	bool delay_on;
	pid_t pid;

	no = control ? fnr_flush_control_unfit(why, sizeof(why)) : NULL;
	if (no)
		SKIP(return, "%s", no);
	/* Without deferred frees the file is gone at once: EAGAIN is right. */
	if (!strcmp(what, "reclaim") &&
	    fnr_cg_value(self->cg, "memory.stat", "rcu_free_pending") < 0)
		SKIP(return, "no rcu_free_pending in memory.stat: nothing to wait for");
	delay_on = hold_back_frees(_metadata, self);
	if (control)
		ASSERT_EQ(0, fnr_flush_off(&self->held))
			TH_LOG("write 0 to %s: %s", FNR_FLUSH_KNOB, strerror(errno));

	pid = start_truncator(self->cg, fnr_testdir(), &rfd);
	ASSERT_LT(0, pid);
	self->child = pid;
	ASSERT_EQ(1, read(rfd, &c, 1));
	cur_anon = fnr_cg_value(self->cg, "memory.current", NULL);
	ASSERT_EQ(1, read(rfd, &c, 1)) TH_LOG("the child could not make its file");
	cur_file = fnr_cg_value(self->cg, "memory.current", NULL);
	pending = fnr_cg_value(self->cg, "memory.stat", "rcu_free_pending");
	if (!strcmp(what, "max")) {
		snprintf(path, sizeof(path), "%s/memory.max", self->cg);
		ret = fnr_write_long(path, cur_anon + LIMIT_MARGIN);
	} else {
		snprintf(path, sizeof(path), "%s/memory.reclaim", self->cg);
		snprintf(v, sizeof(v), "%lu\n", LIMIT_FILE / 2);
		ret = fnr_write_str(path, v);
	}
	ret = ret ? errno : 0;
	cur = fnr_cg_value(self->cg, "memory.current", NULL);
	events = fnr_cg_value(self->cg, "memory.events", "oom_kill");
	release_frees(self);
	if (waitpid(pid, &status, WNOHANG) == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		status = 0;
	}
	self->child = 0;
	close(rfd);

	TH_LOG(
	"memory.%s after truncating %lu MiB of hot page cache: memory.current %.1f MiB with anon, %.1f with the file (%.1f pending), %.1f after; write: %s; oom_kill %ld%s%s",
	       what, LIMIT_FILE / FNR_MIB, (double)cur_anon / FNR_MIB,
	       (double)cur_file / FNR_MIB, (double)pending / FNR_MIB,
	       (double)cur / FNR_MIB,
	       ret ? strerror(ret) : "ok", events,
	       delay_on ? " (deferred-free worker held back 1 s)" : "",
	       control ? " (rcu_free_flush() off)" : "");
	/* With the worker held back, the truncated file must be pending. */
	if (delay_on && pending >= 0)
		EXPECT_LT(0, pending)
			TH_LOG("no page of the truncated file was pending: nothing to wait for");
	if (control) {
		EXPECT_TRUE(ret || events > 0)
			TH_LOG("control run: no OOM kill and no failure without rcu_free_flush(): the test cannot see a missing wait");
		return;
	}
	EXPECT_EQ(0, ret);
	EXPECT_EQ(0, events) TH_LOG("the child was OOM-killed");
	EXPECT_FALSE(WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL);
}

/* memory.max lowered below the pending pages of a truncated hot file. */
TEST_F_TIMEOUT(memcg, max_after_truncate, TEST_SECONDS)
{
	limit_after_truncate(_metadata, self, "max", false);
}

/* memory.reclaim asked for pages that are only pending. */
TEST_F_TIMEOUT(memcg, reclaim_after_truncate, TEST_SECONDS)
{
	limit_after_truncate(_metadata, self, "reclaim", false);
}

/* Their controls: the same without the wait, which must OOM-kill or fail. */
TEST_F_TIMEOUT(memcg, control_max_after_truncate, TEST_SECONDS)
{
	limit_after_truncate(_metadata, self, "max", true);
}

TEST_F_TIMEOUT(memcg, control_reclaim_after_truncate, TEST_SECONDS)
{
	limit_after_truncate(_metadata, self, "reclaim", true);
}

struct high_run {
	int step, ack;		/* the child's step, the parent's answer */
	double write_s[HIGH_WRITES];
	long pending[HIGH_WRITES];	/* pages each truncate left pending */
};

/* Wait until *@v is @want, for at most HIGH_STEP_S. */
static bool high_wait(int *v, int want)
{
	double t0 = fnr_now();

	while (__atomic_load_n(v, __ATOMIC_ACQUIRE) != want) {
		if (fnr_now() - t0 > HIGH_STEP_S)
			return false;
		sched_yield();
	}
	return true;
}

/*
 * A child in the cgroup: HIGH_ANON of anonymous memory, then HIGH_WRITES
 * times: write HIGH_PAGES to a file, read them twice, each time through a
 * new open file (fnr_read_twice(): so that they turn hot, where a file
 * that read the folio before would not count the read), and truncate the
 * file.  Between the truncate and the next write no system call charges
 * the cgroup: the child and the parent meet in shared memory, not through
 * a pipe.
 */
static void high_child(const char *dir, struct high_run *r)
{
	size_t size = HIGH_PAGES * getpagesize();
	char path[512];
	char *m, *buf;
	int fd, i;
	double t;

	m = mmap(NULL, HIGH_ANON, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	buf = malloc(size);
	if (m == MAP_FAILED || !buf)
		_exit(1);
	memset(buf, 0xa5, size);
	snprintf(path, sizeof(path), "%s/fnr_high.%d", dir, getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	unlink(path);
	if (fd < 0)
		_exit(1);
	__atomic_store_n(&r->step, 1, __ATOMIC_RELEASE);
	if (!high_wait(&r->ack, 1))
		_exit(1);
	for (i = 0; i < HIGH_WRITES; i++) {
		t = fnr_now();
		if (pwrite(fd, buf, size, 0) != (ssize_t)size)
			_exit(1);
		r->write_s[i] = fnr_now() - t;
		if (fnr_read_twice(fd, size, buf, NULL))
			_exit(1);
		__atomic_store_n(&r->step, 2 * i + 2, __ATOMIC_RELEASE);
		if (!high_wait(&r->ack, 2 * i + 2) || ftruncate(fd, 0))
			_exit(1);
		__atomic_store_n(&r->step, 2 * i + 3, __ATOMIC_RELEASE);
		if (!high_wait(&r->ack, 2 * i + 3))
			_exit(1);
	}
	_exit(0);
}

/*
 * memory.high below the child's anonymous memory, set on the cgroup above
 * the child's, whose memory.min keeps reclaim from all the child has: the
 * anon (memory.swap.max 0 too) and the file's pages, which must stay
 * cached to turn hot when read again (on 6.12, reclaim took them, and the
 * re-reads charged and were throttled again).  Each write the child makes
 * charges more than a charge batch (MEMCG_CHARGE_BATCH pages, so at least
 * one charge misses the per-CPU stock and sees memory.high) and must be
 * throttled, in the write or on its return to user space, for
 * MEMCG_MAX_HIGH_DELAY_JIFFIES (2 s), as on a kernel without the series.
 * Before each write but the first the child truncated a hot file, whose
 * folios wait for their grace period, charged (on CONFIG_DEBUG_VM kernels
 * the deferred-free worker is held back a second, so that they still wait
 * then): the flush that frees them brings the usage down, but not below
 * memory.high, and must not let the write go unthrottled.
 */
TEST_F_TIMEOUT(memcg, high_after_truncate, HIGH_TEST_SECONDS)
{
	double slowest = 0, fastest = 1e9;
	int i, throttled = 0, met = 0;
	long flushes;
	char leaf[sizeof(self->leaf)];
	struct high_run *r;
	char path[512];
	bool delay_on;
	long before;
	int status;

	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", self->cg);
	ASSERT_EQ(0, fnr_write_str(path, "+memory"));
	snprintf(leaf, sizeof(leaf), "%s/leaf", self->cg);
	ASSERT_EQ(0, mkdir(leaf, 0755));
	memcpy(self->leaf, leaf, sizeof(leaf));	/* for the teardown */
	snprintf(path, sizeof(path), "%s/memory.min", self->leaf);
	ASSERT_EQ(0, fnr_write_long(path, HIGH_PROTECT));
	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, r);
	/* Charged to this process's cgroup, not to the child's. */
	memset(r, 0, sizeof(*r));
	delay_on = hold_back_frees(_metadata, self);

	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child) {
		if (fnr_cg_enter(self->leaf))
			_exit(1);
		high_child(fnr_testdir(), r);
	}
	ASSERT_TRUE(high_wait(&r->step, 1)) TH_LOG("the child did not start");
	snprintf(path, sizeof(path), "%s/memory.high", self->cg);
	ASSERT_EQ(0, fnr_write_long(path, HIGH_LIMIT));
	flushes = fnr_vmstat("rcu_free_flush");
	__atomic_store_n(&r->ack, 1, __ATOMIC_RELEASE);
	for (i = 0; i < HIGH_WRITES; i++) {
		ASSERT_TRUE(high_wait(&r->step, 2 * i + 2))
			TH_LOG("write %d did not end in %d s", i, HIGH_STEP_S);
		before = fnr_pending_exact();
		__atomic_store_n(&r->ack, 2 * i + 2, __ATOMIC_RELEASE);
		ASSERT_TRUE(high_wait(&r->step, 2 * i + 3))
			TH_LOG("truncate %d did not end in %d s", i, HIGH_STEP_S);
		r->pending[i] = fnr_pending_exact() - before;
		__atomic_store_n(&r->ack, 2 * i + 3, __ATOMIC_RELEASE);
	}
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = 0;
	if (flushes >= 0)
		flushes = fnr_vmstat("rcu_free_flush") - flushes;
	release_frees(self);

	for (i = 0; i < HIGH_WRITES; i++) {
		if (i)
			TH_LOG("write %d: %.3f s; %ld pages pending before it (a %d-page file)",
			       i, r->write_s[i], r->pending[i - 1], HIGH_PAGES);
		else
			TH_LOG("write 0: %.3f s", r->write_s[0]);
		if (r->write_s[i] >= HIGH_THROTTLED)
			throttled++;
		if (i && r->pending[i - 1] >= HIGH_PAGES / 2)
			met++;
		if (r->write_s[i] > slowest)
			slowest = r->write_s[i];
		if (r->write_s[i] < fastest)
			fastest = r->write_s[i];
	}
	TH_LOG(
	"memory.high %lu MiB under %lu MiB of anon: %d of %d writes throttled (%.3f to %.3f s); %d of %d truncates before a write left the file pending%s",
	       HIGH_LIMIT / FNR_MIB, HIGH_ANON / FNR_MIB, throttled, HIGH_WRITES,
	       fastest, slowest, met, HIGH_WRITES - 1,
	       delay_on ? " (deferred-free worker held back 1 s)" :
	       " (no delay_free_us: a grace period may free them before the write)");
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("the child failed: status %#x", status);
	EXPECT_EQ(HIGH_WRITES, throttled)
		TH_LOG("a write over memory.high went unthrottled");
	/* The premise: before each write but the first, a flush had pages to free. */
	if (delay_on)
		EXPECT_EQ(HIGH_WRITES - 1, met)
			TH_LOG("a truncated hot file was not pending: nothing to flush");
	/*
	 * The cgroup's own pending pages are flushed: the count that gates
	 * the flush (see high_other_pending) must not read 0 for them.
	 */
	if (flushes >= 0) {
		TH_LOG("rcu_free_flush grew by %ld", flushes);
		if (delay_on)
			EXPECT_LE(met, flushes)
				TH_LOG("a write over memory.high did not flush the cgroup's own pending pages");
	}
	munmap(r, sizeof(*r));
}

/* The child of high_other_pending: over memory.high, then a fault. */
static void other_child(struct high_run *r)
{
	size_t more = HIGH_PAGES * getpagesize();
	double t;
	char *m;

	m = mmap(NULL, HIGH_ANON, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (m == MAP_FAILED)
		_exit(1);
	__atomic_store_n(&r->step, 1, __ATOMIC_RELEASE);
	if (!high_wait(&r->ack, 1))
		_exit(1);
	t = fnr_now();
	m = mmap(NULL, more, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	/* The throttle sleeps on the way back to user space. */
	r->write_s[0] = fnr_now() - t;
	_exit(m == MAP_FAILED);
}

/* See the header: memory.high flushes only the cgroup's own pages. */
TEST_F_TIMEOUT(memcg, high_other_pending, TEST_SECONDS)
{
	long flush0, flush1, pending;
	struct high_run *r;
	char path[512];
	int status, fd;

	if (fnr_vmstat("rcu_free_flush") < 0)
		SKIP(return, "no rcu_free_flush in /proc/vmstat (the series, CONFIG_VM_EVENT_COUNTERS)");
	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, r);
	memset(r, 0, sizeof(*r));
	if (!hold_back_frees(_metadata, self))
		SKIP(return, "no debugfs %s: pending pages would not stay",
		     FNR_DELAY_FREE);
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child) {
		if (fnr_cg_enter(self->cg))
			_exit(1);
		other_child(r);
	}
	ASSERT_TRUE(high_wait(&r->step, 1)) TH_LOG("the child did not start");
	snprintf(path, sizeof(path), "%s/memory.high", self->cg);
	ASSERT_EQ(0, fnr_write_long(path, HIGH_LIMIT));
	/* Pending pages of this process's cgroup, not the child's. */
	snprintf(path, sizeof(path), "%s/fnr_other.%d", fnr_testdir(), getpid());
	fd = fnr_hot_file(path, LIMIT_FILE);
	unlink(path);
	ASSERT_LE(0, fd) TH_LOG("hot file %s: %s", path, strerror(errno));
	ASSERT_EQ(0, ftruncate(fd, 0));
	close(fd);
	pending = fnr_pending_exact();
	flush0 = fnr_vmstat("rcu_free_flush");
	__atomic_store_n(&r->ack, 1, __ATOMIC_RELEASE);
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = 0;
	flush1 = fnr_vmstat("rcu_free_flush");
	release_frees(self);
	TH_LOG("%ld pages pending elsewhere; the fault over memory.high took %.3f s; rcu_free_flush %ld -> %ld",
	       pending, r->write_s[0], flush0, flush1);
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("the child failed: status %#x", status);
	/* The premises: pages were pending, the over-high path ran through. */
	ASSERT_LT(0, pending) TH_LOG("no page of the truncated file was pending");
	ASSERT_LE(HIGH_THROTTLED, r->write_s[0])
		TH_LOG("the fault over memory.high was not throttled");
	EXPECT_EQ(flush0, flush1)
		TH_LOG("a cgroup with nothing pending flushed the others' pages");
	munmap(r, sizeof(*r));
}

TEST_HARNESS_MAIN
