// SPDX-License-Identifier: GPL-2.0
/*
 * A reader going from one large folio to the next must not take an xarray
 * sibling entry for a folio.
 *
 * The reference-free read path steps from a folio to the next slot of the
 * xarray with xas_next(), which returns the raw slot.  If the range behind
 * the folio just copied was dropped and read back meanwhile as a larger
 * folio, that slot holds a sibling entry of the larger folio, not a folio;
 * a reader that dereferences it oopses.  xfs and ext4 build such mixed
 * folio orders in one xarray node: readahead allocates folios of growing
 * orders.
 *
 * A stamped file (see fnr_common.h) on xfs or ext4, made hot; reader
 * threads read 64 to 128 KiB at random page offsets and check every byte;
 * dropper threads drop random 16 to 128 KiB aligned ranges (a 256 KiB one would
 * empty an xarray node, which is then freed, not refilled) with
 * fadvise(DONTNEED) and read them back at once, in turn as order-0 folios
 * (fadvise(WILLNEED)) and page by page, whose readahead allocates order 2
 * and up, so that each replaces the other.  On CONFIG_DEBUG_VM kernels
 * readers stop 20 ms before each step to the next folio (debugfs
 * filemap_noref/delay_next_us): the range must be dropped and read back
 * meanwhile; and 1 ms after a folio's checks, before its copy
 * (delay_copy_us), so that a drop can free the folio under the copy.
 * Any wrong byte fails the test; the bug it guards against kills the
 * reader with an oops, which the harness reports as a failure.  There
 * too, debugfs filemap_noref/sibling_entries counts the sibling entries
 * readers met, and the test requires one or more (it races on up to
 * SIBLING_WAIT_S past FNR_SECONDS for it): a run that never met one did
 * not race; and, where debugfs counts them, one copy or more that a drop
 * overlapped (filemap_noref/overlapped_reads).
 *
 * sibling.control is its control: the same race, readers, droppers and
 * delays, with the RCU deferral off (debugfs filemap_noref/defer_free 0) on
 * a kernel booted with page_poison=1, for FNR_CONTROL_SECONDS (default
 * 30) or until a reader copies the page poison of a dropped folio, which
 * it must: else this race cannot find a folio freed under its readers.
 * Without the copy's delay it read none in 30 s: the droppers read the
 * range back at once, and the freed pages, reused, held other pages of
 * the file (61 bad reads), which a wrong lookup could give too.
 * It skips where FNR_SKIP_CONTROL is set, as in make check's main boot;
 * the control boot runs it.
 *
 * Skips unless FNR_DIR is on xfs or ext4 and the file, read page by page,
 * gets a large folio (kpageflags; ext4 has them since 6.16).  Environment:
 * FNR_DIR, FNR_SECONDS (default 4), FNR_READERS (default 2).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>
#include <pthread.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include "../kselftest_harness.h"
#include "fnr_pressure.h"

#define PG		FNR_PAGE
#define FILE_SIZE	(2 * FNR_MIB)
#define PROBE_SIZE	(256 * 1024)	/* large_folios() reads this much */
#define MIN_READ	(64 * 1024)
#define MAX_READ	(128 * 1024)
#define FILE_ID		0x51b1
#define DROPPERS	2
#define FNR_DEBUGFS	"/sys/kernel/debug/filemap_noref/"
#define DELAY_NEXT	FNR_DEBUGFS "delay_next_us"
#define DELAY_COPY	FNR_DEBUGFS "delay_copy_us"
#define SIBLINGS	FNR_DEBUGFS "sibling_entries"
#define DEFER_FREE	FNR_DEBUGFS "defer_free"
/* A sibling entry met every few seconds under QEMU TCG: wait up to this. */
#define SIBLING_WAIT_S	60

struct sibling_race {
	int fd;
	pthread_barrier_t start;
	struct fnr_stop ctl;
	unsigned long reads, drops;
	unsigned long poison;	/* reads of a freed page (control) */
	struct fnr_bad bad;
};

struct worker {
	struct sibling_race *r;
	pthread_t th;
	int fd;
	uint64_t rng;
	uint8_t buf[MAX_READ];
	unsigned long n;
};

static void *reader_fn(void *arg)
{
	struct worker *w = arg;
	struct sibling_race *r = w->r;
	char why[512];
	uint64_t off;
	size_t len;
	ssize_t got;

	pthread_barrier_wait(&r->start);
	while (!fnr_stopped(&r->ctl)) {
		len = MIN_READ + fnr_rnd(&w->rng) % (MAX_READ - MIN_READ + 1);
		off = fnr_rnd(&w->rng) % ((FILE_SIZE - len) / PG) * PG;
		got = pread(w->fd, w->buf, len, off);
		if (got != (ssize_t)len) {
			fnr_fail(&r->ctl, "pread (short or failed)",
				 got < 0 ? errno : EIO);
			break;
		}
		w->n++;
		if (!fnr_check(w->buf, len, off, FILE_ID, 1, why, sizeof(why)))
			continue;
		if (fnr_poison_read(w->buf, len, off))
			__atomic_add_fetch(&r->poison, 1, __ATOMIC_RELAXED);
		fnr_bad_read(&r->bad, off, got, why);
	}
	return NULL;
}

/* Drop an aligned range and read it back: new folios, of other orders. */
static void *dropper_fn(void *arg)
{
	struct worker *w = arg;
	struct sibling_race *r = w->r;
	uint64_t off;
	size_t len, done;
	ssize_t got = 0;

	pthread_barrier_wait(&r->start);
	while (!fnr_stopped(&r->ctl)) {
		/* Up to half a node: a node emptied is freed, not refilled. */
		len = (16 * 1024) << fnr_rnd(&w->rng) % 4;
		off = fnr_rnd(&w->rng) % (FILE_SIZE / len) * len;
		errno = posix_fadvise(w->fd, off, len, POSIX_FADV_DONTNEED);
		if (errno) {
			fnr_fail(&r->ctl, "fadvise", errno);
			break;
		}
		/*
		 * Read back in order-0 folios (WILLNEED), or page by page in
		 * order, so that readahead ramps up: a synchronous readahead
		 * reads order 0, the asynchronous one that its mark starts
		 * adds 2 to the order.  Each can then replace the other.
		 */
		if (w->n & 1) {
			errno = posix_fadvise(w->fd, off, len,
					      POSIX_FADV_WILLNEED);
			if (errno) {
				fnr_fail(&r->ctl, "fadvise(WILLNEED)", errno);
				break;
			}
		} else {
			for (done = 0; done < len; done += PG) {
				got = pread(w->fd, w->buf, PG, off + done);
				if (got != PG)
					break;
			}
			if (done < len) {
				fnr_fail(&r->ctl, "pread (dropper, short or failed)",
					 got < 0 ? errno : EIO);
				break;
			}
		}
		w->n++;
	}
	return NULL;
}

FIXTURE(sibling)
{
	struct sibling_race r;
	char path[PATH_MAX];
	bool delay_on;
	bool defer_off;		/* defer_free is 0: put it back to 1 */
};

/*
 * Does reading the file page by page, as the droppers do, give it a large
 * folio (a compound head among the pages read)?  1 if it does, or where
 * kpageflags cannot tell (the race's premise then decides), 0 if not, -1
 * if the drop or a read failed.
 */
static int large_folios(int fd)
{
	uint64_t off, f;
	char buf[PG];

	if (fnr_drop_cache(fd))
		return -1;
	for (off = 0; off < PROBE_SIZE; off += PG)
		if (pread(fd, buf, PG, off) != PG)
			return -1;
	for (off = 0; off < PROBE_SIZE; off += PG) {
		if (fnr_kpageflags(fd, off, &f))
			return 1;
		if (f & FNR_KPF_COMPOUND_HEAD)
			return 1;
	}
	return 0;
}

FIXTURE_SETUP(sibling)
{
	struct sibling_race *r = &self->r;
	struct statfs sfs;
	int large;

	if (!fnr_series())
		SKIP(return, "%s", FNR_NO_SERIES);

	r->fd = -1;
	ASSERT_EQ(0, statfs(fnr_testdir(), &sfs));
	if (sfs.f_type != XFS_SUPER_MAGIC && sfs.f_type != EXT4_SUPER_MAGIC)
		SKIP(return, "%s is not xfs or ext4 (large folios of mixed orders)",
		     fnr_testdir());
	snprintf(self->path, sizeof(self->path), "%s/fnr_sibling.XXXXXX",
		 fnr_testdir());
	r->fd = mkstemp(self->path);
	ASSERT_LE(0, r->fd) TH_LOG("mkstemp(%s): %s", self->path,
				   strerror(errno));
	ASSERT_EQ(0, fnr_write_gen(r->fd, 0, FILE_SIZE, FILE_ID, 1));
	/* ext4 gives large folios since 6.16 (and not with encryption). */
	large = large_folios(r->fd);
	ASSERT_LE(0, large) TH_LOG("read %s back page by page: %s",
				   self->path, strerror(errno));
	if (!large) {
		/* A skipped setup gets no teardown. */
		unlink(self->path);
		self->path[0] = 0;
		SKIP(return, "no large folio in a file on %s read page by page",
		     fnr_testdir());
	}
	/* Read back from disk, so that readahead builds the folios. */
	ASSERT_EQ(0, fnr_drop_cache(r->fd));
	ASSERT_EQ(0, fnr_make_hot(r->fd, 0, FILE_SIZE));
	if (!access(DELAY_NEXT, W_OK)) {
		self->delay_on = true;
		ASSERT_EQ(0, fnr_write_str(DELAY_NEXT, "20000\n"));
		ASSERT_EQ(0, fnr_write_str(DELAY_COPY, "1000\n"));
	}
}

/* In the parent, so this also happens when the test dies. */
FIXTURE_TEARDOWN_PARENT(sibling)
{
	if (self->defer_off && fnr_write_str(DEFER_FREE, "1\n"))
		TH_LOG("could not restore %s: %s", DEFER_FREE, strerror(errno));
	if (self->delay_on && fnr_write_str(DELAY_NEXT, "0\n"))
		TH_LOG("could not reset %s: %s", DELAY_NEXT, strerror(errno));
	if (self->delay_on && fnr_write_str(DELAY_COPY, "0\n"))
		TH_LOG("could not reset %s: %s", DELAY_COPY, strerror(errno));
	if (self->path[0])
		unlink(self->path);
}

/*
 * Race readers against droppers for @secs; a main run goes on until a
 * reader met a sibling entry and a copy overlapped a drop (where they are
 * counted), a control run stops at the first read of a freed page.
 */
static void sibling_run(struct __test_metadata *_metadata,
			FIXTURE_DATA(sibling) *self, long secs, bool control)
{
	long i, nr = fnr_env_long("FNR_READERS", 2, 1, 64);
	struct worker *w = calloc(nr + DROPPERS, sizeof(*w));
	struct sibling_race *r = &self->r;
	long siblings = fnr_read_long(SIBLINGS);
	char why[128], met[32] = "n/a";
	double start, end, ran;
	long noref, overlapped, now;

	ASSERT_NE(NULL, w);
	ASSERT_EQ(0, pthread_barrier_init(&r->start, NULL, nr + DROPPERS + 1));
	for (i = 0; i < nr + DROPPERS; i++) {
		w[i].r = r;
		w[i].rng = 0x2545f4914f6cdd1dULL * (i + 1) ^ getpid();
		w[i].fd = open(self->path, O_RDONLY);
		ASSERT_LE(0, w[i].fd) TH_LOG("open: %s", strerror(errno));
		ASSERT_EQ(0, pthread_create(&w[i].th, NULL,
					    i < nr ? reader_fn : dropper_fn,
					    &w[i]));
	}
	noref = fnr_vmstat(FNR_NOREF_READ);
	overlapped = fnr_overlapped();
	pthread_barrier_wait(&r->start);
	start = fnr_now();
	end = start + secs;
	/*
	 * Where they are counted, go on until one sibling entry was met and
	 * one copy overlapped a drop.
	 */
	while (!fnr_stopped(&r->ctl) &&
	       !(control && __atomic_load_n(&r->poison, __ATOMIC_RELAXED)) &&
	       (fnr_now() < end ||
		(!control && fnr_now() < end + SIBLING_WAIT_S &&
		 ((siblings >= 0 && fnr_read_long(SIBLINGS) == siblings) ||
		  !fnr_overlapped_since(overlapped)))))
		usleep(10000);
	fnr_set_stop(&r->ctl);
	ran = fnr_now() - start;
	for (i = 0; i < nr + DROPPERS; i++) {
		ASSERT_EQ(0, pthread_join(w[i].th, NULL));
		if (i < nr)
			r->reads += w[i].n;
		else
			r->drops += w[i].n;
		close(w[i].fd);
	}
	free(w);
	noref = fnr_vmstat(FNR_NOREF_READ) - noref;
	if (siblings >= 0) {
		now = fnr_read_long(SIBLINGS);
		ASSERT_LE(0, now) TH_LOG("read %s: %s", SIBLINGS, strerror(errno));
		siblings = now - siblings;
		snprintf(met, sizeof(met), "%ld", siblings);
	}

	TH_LOG("%lu reads in %.1f s, %lu bad (%lu of a freed page); %lu ranges dropped and read back; sibling entries met: %s%s%s",
	       r->reads, ran, r->bad.n, r->poison, r->drops, met,
	       self->delay_on ? " (readers delayed between folios)" : "",
	       control ? "; control: defer_free=0" : "");
	if (r->bad.have_why)
		TH_LOG("first bad read: %s", r->bad.why);
	ASSERT_FALSE(r->ctl.have_err) TH_LOG("%s", r->ctl.err);
	ASSERT_LT(0, r->reads);
	ASSERT_LT(0, r->drops);
	if (control) {
		/* Its premise is the poison it read, nothing else. */
		EXPECT_LT(0, r->poison)
			TH_LOG("defer_free=0 but no page poison read: %s",
			       "the test could not detect the injected bug");
		return;
	}
	ASSERT_EQ(0, fnr_noref_premise(noref, why, sizeof(why)))
		TH_LOG("%s", why);
	/*
	 * Two races: the sibling entry, which readers refuse, and a drop
	 * under a copy, which the copy's delay makes likely (13 overlapped
	 * reads in 4 s; without the delay, none in one run of 64 s).
	 */
	ASSERT_EQ(0, fnr_overlap_premise(fnr_overlapped_since(overlapped),
					 why, sizeof(why)))
		TH_LOG("%s", why);
	/* -1: no CONFIG_DEBUG_VM, nothing counts them. */
	if (siblings >= 0)
		ASSERT_LT(0, siblings)
			TH_LOG("no reader met a sibling entry: the race did not happen");
	EXPECT_EQ(0, r->bad.n);
}

/* Above the longest race: FNR_SECONDS at most 90, then SIBLING_WAIT_S. */
TEST_F_TIMEOUT(sibling, race, 210)
{
	sibling_run(_metadata, self, fnr_env_long("FNR_SECONDS", 4, 1, 90),
		    false);
}

TEST_F_TIMEOUT(sibling, control, 210)
{
	char why[256];
	const char *no = fnr_control_unfit(why, sizeof(why));

	if (no)
		SKIP(return, "%s", no);
	ASSERT_EQ(0, fnr_write_str(DEFER_FREE, "0\n"))
		TH_LOG("write 0 to %s: %s", DEFER_FREE, strerror(errno));
	self->defer_off = true;
	sibling_run(_metadata, self,
		    fnr_env_long("FNR_CONTROL_SECONDS", 30, 1, 90), true);
	ASSERT_EQ(0, fnr_write_str(DEFER_FREE, "1\n"))
		TH_LOG("restore %s: %s", DEFER_FREE, strerror(errno));
	self->defer_off = false;
}

TEST_HARNESS_MAIN
