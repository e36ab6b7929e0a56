/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the deferred-free pressure tests and benchmarks: read
 * /proc/vmstat and /proc/meminfo, and churn files (write, read twice so the
 * folios become hot, truncate) in child processes.
 */
#ifndef __FNR_PRESSURE_H
#define __FNR_PRESSURE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "fnr_common.h"

#define FNR_MIB		(1024UL * 1024)
#define FNR_CHUNK	FNR_MIB
#define FNR_PENDING	"nr_rcu_free_pending"
#define FNR_EXPEDITED	"rcu_free_expedited"
#define FNR_FLUSHES	"rcu_free_flush"
#define FNR_EXPEDITE_SYSCTL "/proc/sys/vm/rcu_free_expedite_pages"

static inline double fnr_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Value of "@name value" in @file (/proc/vmstat) or "@name: value kB" in
 * /proc/meminfo; -1 if there is no such line.
 */
static inline long fnr_proc_value(const char *file, const char *name)
{
	static char buf[16384];
	size_t n = strlen(name);
	ssize_t len;
	char *p;
	int fd;

	fd = open(file, O_RDONLY);
	if (fd < 0)
		return -1;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -1;
	buf[len] = 0;
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, name, n) && (p[n] == ' ' || p[n] == ':'))
			return atol(p + n + 1 + strspn(p + n + 1, " :"));
	}
	return -1;
}

static inline long fnr_vmstat(const char *name)
{
	return fnr_proc_value("/proc/vmstat", name);
}

static inline int fnr_write_long(const char *path, long v)
{
	char s[32];

	snprintf(s, sizeof(s), "%ld", v);
	return fnr_write_str(path, s);
}

static inline long fnr_read_long(const char *path)
{
	char s[32] = "";
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, s, sizeof(s) - 1);
	close(fd);
	return n > 0 ? atol(s) : -1;
}

/* Is this a kernel with the series (nr_rcu_free_pending in /proc/vmstat)? */
static inline bool fnr_series(void)
{
	return fnr_vmstat(FNR_PENDING) >= 0;
}

#define FNR_NO_SERIES	"not a kernel with the series (no " FNR_PENDING \
			" in /proc/vmstat): no fast path to test"

/*
 * The premise of a race: its reads went through the fast path.  @copies is
 * how much the fast path's count (/proc/vmstat FNR_NOREF_READ) grew over
 * the race; it is global, so it counts the reads that set the race up
 * (making files hot) too, where those run during it.  Returns 0 if it
 * grew, else -1 with the reason in @why: on a kernel without the series
 * too, where a race test should have skipped (fnr_series()) rather than
 * run.  Logs the count.
 */
#define FNR_NOREF_READ	"noref_read"
static inline int fnr_noref_premise(long copies, char *why, size_t len)
{
	if (!fnr_series()) {
		snprintf(why, len, "%s", FNR_NO_SERIES);
		return -1;
	}
	if (fnr_vmstat(FNR_NOREF_READ) < 0) {
		snprintf(why, len, "no %s in /proc/vmstat: CONFIG_VM_EVENT_COUNTERS off?",
			 FNR_NOREF_READ);
		return -1;
	}
	printf("# fast path: %ld copies without a reference (%s)\n",
	       copies, FNR_NOREF_READ);
	if (copies > 0)
		return 0;
	snprintf(why, len, "%s did not grow: no read went through the fast path",
		 FNR_NOREF_READ);
	return -1;
}

/*
 * Copies without a reference whose folio left its slot or its mapping, or
 * lost its last reference, before the copy ended: debugfs
 * filemap_noref/overlapped_reads (CONFIG_DEBUG_VM).  -1 without it.
 */
#define FNR_OVERLAPPED	"/sys/kernel/debug/filemap_noref/overlapped_reads"
#define FNR_DEFER_FREE	"/sys/kernel/debug/filemap_noref/defer_free"
static inline long fnr_overlapped(void)
{
	return fnr_read_long(FNR_OVERLAPPED);
}

/*
 * Why a control run cannot run here, or NULL.  fnr_knob_unfit(): when
 * FNR_SKIP_CONTROL is set (make check's main boot) or there is no debugfs
 * knob @knob to switch (CONFIG_DEBUG_VM).  fnr_control_unfit(), for a
 * control with the RCU-deferred free off, so that a race must read a freed
 * page's poison: without debugfs defer_free too, and unless the kernel was
 * booted with page_poison=1.  @why holds the message where it needs one.
 */
static inline const char *fnr_knob_unfit(const char *knob, char *why,
					 size_t len)
{
	const char *no = getenv("FNR_SKIP_CONTROL");

	if (no && *no && strcmp(no, "0"))
		return "FNR_SKIP_CONTROL is set";
	if (access(knob, W_OK)) {
		snprintf(why, len, "%s: %s (needs CONFIG_DEBUG_VM and debugfs)",
			 knob, strerror(errno));
		return why;
	}
	return NULL;
}

static inline const char *fnr_control_unfit(char *why, size_t len)
{
	const char *no = fnr_knob_unfit(FNR_DEFER_FREE, why, len);

	if (!no && !fnr_page_poison())
		return FNR_NO_POISON;
	return no;
}

/* How much fnr_overlapped() grew since @before; -1 if it is not counted. */
static inline long fnr_overlapped_since(long before)
{
	long now = fnr_overlapped();

	return before < 0 || now < 0 ? -1 : now - before;
}

/*
 * The premise of a race test: a reader overlapped a free, not only took
 * the fast path.  @overlapped is how much fnr_overlapped() grew over the
 * race (fnr_overlapped_since()), -1 if it is not counted.  Returns 0 if it
 * grew, or if the kernel has no debugfs test aids (logged: the race then
 * rests on noref_read alone); else -1 with the reason in @why.  Logs the
 * count.
 */
static inline int fnr_overlap_premise(long overlapped, char *why, size_t len)
{
	/* The debugfs test aids are there: the count must be too. */
	if (overlapped < 0 && !access(FNR_DEFER_FREE, F_OK)) {
		snprintf(why, len, "%s",
			 "debugfs filemap_noref/ without a readable overlapped_reads");
		return -1;
	}
	if (overlapped < 0) {
		printf("# overlapped reads: not counted (no %s: CONFIG_DEBUG_VM off?)\n",
		       FNR_OVERLAPPED);
		return 0;
	}
	printf("# overlapped reads: %ld (copies whose folio left its slot or its file under them)\n",
	       overlapped);
	if (overlapped > 0)
		return 0;
	snprintf(why, len, "%s",
		 "no copy overlapped a removal of its folio (overlapped_reads): no race");
	return -1;
}

/*
 * Print the overlapped reads of a test whose premise is another count
 * (@premise says which), for the TAP line's reader.
 */
static inline void fnr_overlap_log(long overlapped, const char *premise)
{
	if (overlapped < 0)
		printf("# overlapped reads: not counted (not required: %s)\n",
		       premise);
	else
		printf("# overlapped reads: %ld (not required: %s)\n",
		       overlapped, premise);
}

/* Fold the per-CPU vmstat deltas so that counters are exact. */
static inline int fnr_stat_refresh(void)
{
	return fnr_write_str("/proc/sys/vm/stat_refresh", "1");
}

#define FNR_DELAY_FREE	"/sys/kernel/debug/filemap_noref/delay_free_us"
#define FNR_DELAY_COPY	"/sys/kernel/debug/filemap_noref/delay_copy_us"

/* What fnr_hold_frees() changed, for fnr_release_frees() to put back. */
struct fnr_held {
	bool held;		/* FNR_DELAY_FREE is set */
	long expedite;		/* FNR_EXPEDITE_SYSCTL to restore, or -1 */
	bool no_flush;		/* FNR_FLUSH_KNOB is 0 (fnr_flush_off()) */
};

/*
 * debugfs filemap_noref/flush 0 (CONFIG_DEBUG_VM): rcu_free_flush() returns
 * at once, and its callers (CMA, memcg limits and reclaim, the OOM path) do
 * not wait for pending pages: the controls of the tests of those waits.
 */
#define FNR_FLUSH_KNOB	"/sys/kernel/debug/filemap_noref/flush"

/*
 * Why a control of a wait for pending pages cannot run here, or NULL: it
 * needs the flush knob (fnr_knob_unfit()) and FNR_DELAY_FREE, which holds
 * the pages back so that there is something to wait for.
 */
static inline const char *fnr_flush_control_unfit(char *why, size_t len)
{
	const char *no = fnr_knob_unfit(FNR_FLUSH_KNOB, why, len);

	if (!no && access(FNR_DELAY_FREE, W_OK)) {
		snprintf(why, len, "%s: %s (needs CONFIG_DEBUG_VM and debugfs)",
			 FNR_DELAY_FREE, strerror(errno));
		return why;
	}
	return no;
}

/* Switch the flush off until fnr_release_frees(); 0, or -1 with errno. */
static inline int fnr_flush_off(struct fnr_held *h)
{
	if (fnr_write_str(FNR_FLUSH_KNOB, "0\n"))
		return -1;
	h->no_flush = true;
	return 0;
}

/*
 * Keep pages freed from now on waiting: no expedited grace periods and,
 * on CONFIG_DEBUG_VM kernels, the deferred-free worker held back a second
 * after each grace period.  1 if the worker is held back, 0 if it cannot
 * be (no debugfs knob), -1 with errno on error.
 */
static inline int fnr_hold_frees(struct fnr_held *h)
{
	h->held = false;
	h->expedite = fnr_read_long(FNR_EXPEDITE_SYSCTL);
	if (h->expedite >= 0 && fnr_write_long(FNR_EXPEDITE_SYSCTL, 0))
		return -1;
	if (access(FNR_DELAY_FREE, W_OK))
		return 0;
	if (fnr_write_str(FNR_DELAY_FREE, "1000000\n"))
		return -1;
	h->held = true;
	return 1;
}

/*
 * Undo fnr_hold_frees() and fnr_flush_off() (again: a no-op); 0, or -1
 * with errno.
 */
static inline int fnr_release_frees(struct fnr_held *h)
{
	int ret = 0;

	if (h->held && fnr_write_str(FNR_DELAY_FREE, "0\n"))
		ret = -1;
	h->held = false;
	if (h->no_flush && fnr_write_str(FNR_FLUSH_KNOB, "1\n"))
		ret = -1;
	h->no_flush = false;
	if (h->expedite >= 0 &&
	    fnr_write_long(FNR_EXPEDITE_SYSCTL, h->expedite))
		ret = -1;
	h->expedite = -1;
	return ret;
}

/* Pages waiting for a grace period, exact; -1 without the counter. */
static inline long fnr_pending_exact(void)
{
	fnr_stat_refresh();
	return fnr_vmstat(FNR_PENDING);
}

/*
 * Wait until no page waits for a grace period any more, up to @timeout
 * seconds: until an exact read of the counter (stat_refresh first) is 0.
 * Returns the seconds it took, or -1 on timeout.
 */
static inline double fnr_wait_drained(double timeout)
{
	double t0 = fnr_now();

	while (fnr_pending_exact() > 0) {
		if (fnr_now() - t0 > timeout)
			return -1;
		usleep(1000);
	}
	return fnr_now() - t0;
}

/*
 * Start a child that holds @bytes of anonymous memory, populated writable
 * (real pages, not the zero page), until it is killed.  Returns its pid,
 * or -1.
 */
static inline pid_t fnr_start_hog(size_t bytes)
{
	int ready[2];
	pid_t pid;
	char c;

	if (pipe(ready))
		return -1;
	pid = fork();
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
			 -1, 0) == MAP_FAILED || write(ready[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	if (pid > 0 && read(ready[0], &c, 1) != 1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(ready[0]);
	return pid;
}

enum fnr_churn_kind {
	FNR_CHURN_MEMFD,	/* memfd: write, read twice, truncate */
	FNR_CHURN_FILE,		/* file in a directory: the same */
	FNR_CHURN_FADVISE,	/* written once; read twice, fadvise DONTNEED */
};

/*
 * Read [0, @size) of @fd twice, each time through a fresh open file (the
 * second read of a folio through another file makes it hot), FNR_CHUNK at
 * a time into @buf.  Adds the bytes read to *@bytes as it goes, if @bytes
 * is not NULL.
 */
static inline int fnr_read_twice(int fd, size_t size, char *buf,
				 uint64_t *bytes)
{
	size_t off, len;
	char path[64];
	int i, rfd;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	for (i = 0; i < 2; i++) {
		rfd = open(path, O_RDONLY);
		if (rfd < 0)
			return -1;
		for (off = 0; off < size; off += len) {
			len = size - off < FNR_CHUNK ? size - off : FNR_CHUNK;
			if (pread(rfd, buf, len, off) != (ssize_t)len) {
				close(rfd);
				return -1;
			}
			if (bytes)
				__atomic_add_fetch(bytes, len, __ATOMIC_RELAXED);
		}
		close(rfd);
	}
	return 0;
}

/* Write [0, @size) of @fd; adds the bytes written to *@bytes if not NULL. */
static inline int fnr_write_all(int fd, size_t size, char *buf,
				uint64_t *bytes)
{
	size_t off;

	for (off = 0; off < size; off += FNR_CHUNK) {
		if (pwrite(fd, buf, FNR_CHUNK, off) != (ssize_t)FNR_CHUNK)
			return -1;
		if (bytes)
			__atomic_add_fetch(bytes, FNR_CHUNK, __ATOMIC_RELAXED);
	}
	return 0;
}

/*
 * Create (or truncate) @path, write @size bytes (a multiple of FNR_CHUNK),
 * fsync and read them twice so that its folios are hot.  Returns the open
 * file, or -1 with errno set.
 */
static inline int fnr_hot_file(const char *path, size_t size)
{
	char *buf = malloc(FNR_CHUNK);
	int fd = -1, err;

	if (!buf)
		return -1;
	memset(buf, 0xa5, FNR_CHUNK);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0 && (fnr_write_all(fd, size, buf, NULL) || fsync(fd) ||
			fnr_read_twice(fd, size, buf, NULL))) {
		err = errno;
		close(fd);
		fd = -1;
		errno = err;
	}
	free(buf);
	return fd;
}

/*
 * One churner: cycle a @size file of @kind (in @dir unless memfd) until
 * *@stop, adding the bytes written and read to *@bytes as it goes.  Runs
 * in a child process; returns its exit status.
 */
static inline int fnr_churn(enum fnr_churn_kind kind, const char *dir,
			    int id, size_t size, int *stop, uint64_t *bytes)
{
	char path[4096], *buf = malloc(FNR_CHUNK);
	const char *what = "malloc";
	int fd = -1;

	if (!buf)
		goto fail;
	memset(buf, 0x5a ^ id, FNR_CHUNK);
	if (kind == FNR_CHURN_MEMFD) {
		what = "memfd_create";
		fd = memfd_create("fnr_churn", 0);
	} else {
		snprintf(path, sizeof(path), "%s/fnr_churn.%d", dir, id);
		what = path;
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0)
			unlink(path);
	}
	if (fd < 0)
		goto fail;
	what = "writing the file";
	if (kind == FNR_CHURN_FADVISE &&
	    (fnr_write_all(fd, size, buf, NULL) || fsync(fd)))
		goto fail;
	while (!__atomic_load_n(stop, __ATOMIC_RELAXED)) {
		what = "write";
		if (kind != FNR_CHURN_FADVISE &&
		    fnr_write_all(fd, size, buf, bytes))
			goto fail;
		what = "read";
		if (fnr_read_twice(fd, size, buf, bytes))
			goto fail;
		what = kind == FNR_CHURN_FADVISE ? "fadvise" : "ftruncate";
		if (kind == FNR_CHURN_FADVISE) {
			errno = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
			if (errno)
				goto fail;
		} else if (ftruncate(fd, 0)) {
			goto fail;
		}
	}
	close(fd);
	return 0;
fail:
	fprintf(stderr, "churner %d: %s: %s\n", id, what, strerror(errno));
	return 1;
}

struct fnr_churners {
	int n;
	pid_t pid[64];
	struct {
		int stop;		/* __atomic_*: shared with the children */
		uint64_t bytes;
	} *shared;
};

/* Start @n churners; 0 on success. */
static inline int fnr_churn_start(struct fnr_churners *c, int n,
				  enum fnr_churn_kind kind, const char *dir,
				  size_t size)
{
	int i;

	if (n > 64)
		return -1;
	c->n = 0;
	c->shared = mmap(NULL, sizeof(*c->shared), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (c->shared == MAP_FAILED)
		return -1;
	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return -1;
		if (!pid)
			_exit(fnr_churn(kind, dir, i, size, &c->shared->stop,
					&c->shared->bytes));
		c->pid[c->n++] = pid;
	}
	return 0;
}

/*
 * Stop the churners and reap them.  Returns how many did not exit with
 * status 0; *@killed (if not NULL) gets how many were killed by SIGKILL.
 */
static inline int fnr_churn_stop(struct fnr_churners *c, int *killed)
{
	int i, status, bad = 0;

	__atomic_store_n(&c->shared->stop, 1, __ATOMIC_RELAXED);
	if (killed)
		*killed = 0;
	for (i = 0; i < c->n; i++) {
		if (waitpid(c->pid[i], &status, 0) < 0 ||
		    !WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
		if (killed && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
			(*killed)++;
	}
	return bad;
}

#endif /* __FNR_PRESSURE_H */
