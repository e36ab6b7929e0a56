// SPDX-License-Identifier: GPL-2.0
/*
 * Readers of a huge tmpfs file must not copy freed memory when the large
 * folio they read is split under them.
 *
 * The reference-free read path looks a folio up once and copies it page by
 * page.  A large folio may be split while such a reader copies it, and its
 * pages freed.  As in mm/folio_split_race_test.c upstream: a file of
 * stamped pages (see fnr_common.h) in a PMD-sized folio, reader threads and
 * one splitter, started on a barrier.  The splitter splits the folio
 * (through debugfs split_huge_pages), cuts the file at a random page of
 * its last 64, which frees the pages past the cut, reuses freed pages at
 * once (anonymous memory it faults in on the same CPU takes them from the
 * per-CPU free list) for a stamp of its own, and writes the cut pages
 * back; every few cuts it replaces the file's folio by a new huge one.
 * Readers read the last 64 pages and check every byte they get against
 * the stamps; the first bad byte is reported with the page it was read
 * from.
 *
 * Legitimately the file reads as zeros in one case only, so that a freed
 * page cleared by init_on_free shows: a read past the cut is short, but
 * tmpfs's normal path may end a read that raced with the cut in one page
 * of zeros (see zero_page_race(); a kernel without the series does it
 * too, several times a minute here), and may copy zeros in the middle of
 * a read that also raced with the file growing back, which the splitter
 * prevents (see quiesce()).  Punching a hole, or
 * cutting a folio that is still large, would zero pages in place first
 * (truncate_inode_partial_folio()), which is why the folio is split before
 * it is cut, and the cut is skipped when the page it starts at is still a
 * tail page (a reader holding a reference makes a split fail).  Since 6.14
 * tmpfs huge=always also gives the file folios of every order below PMD
 * size where a PMD folio does not fit (the tail that grows back after a
 * cut), so the check looks up that page's folio (pagemap and kpageflags),
 * not only the PMD-sized folios ShmemHugePages counts.
 *
 * The control variant turns the RCU deferral off through debugfs
 * (CONFIG_DEBUG_VM kernels) on a kernel booted with page_poison=1 and
 * passes only if a reader copies a freed page before its reuse: the page
 * poison (0xaa), not zeros (a cut reads as zeros), not the splitter's
 * stamp (reported), not any bad byte.
 *
 * The nonzero_index variant races a split at a non-zero index: a file of
 * three PMD-sized folios and a tail; readers start a few pages before the
 * end of the 2nd or 3rd folio and read past it, while the splitter splits
 * that folio, cuts the file where the folio starts and writes it back (a
 * read past the cut is short, never zeros).  While a folio is
 * split, the page after its head is rewritten (in 6.12 its index, which
 * aliases the folio's size, becomes head->index + 1: 513 pages for a
 * folio at 2 MiB), so a reader that takes the folio's size from struct
 * page copies past the folio.  At index 0 the torn size is 1, which is
 * why the other variants cannot see it.  On CONFIG_DEBUG_VM kernels the
 * window is widened through debugfs (readers stop 5 ms after checking a
 * folio, the split 20 ms before the head stops being large) and the
 * kernel's count of torn sizes it saw and refused is reported.
 *
 * The hotplug variant races as the first one does while a thread takes a
 * CPU offline and back online, and checks that the pending count drains
 * to 0 after the race.
 *
 * The collapse variant races khugepaged's collapse_file(): the splitter
 * splits the file's folio where it is, makes its pages hot, and collapses
 * them into a new PMD-sized folio with MADV_COLLAPSE, which copies them,
 * replaces them in the mapping and frees the old ones, while the readers
 * copy them (stopped 1 ms after the last check, right before the copy,
 * where debugfs allows).  It runs on plain tmpfs too (MADV_COLLAPSE
 * ignores huge=never).  A collapse counts only if it collapsed split
 * pages into a folio it allocated, and its overlapped reads are those
 * counted between two quiesce()s around it: the run requires one, not
 * one a split overlapped.
 * control_collapse is its control.  Both run on ext4 and xfs too, whose
 * page cache MADV_COLLAPSE collapses where the mapping takes PMD-sized
 * folios (7.3: no CONFIG_READ_ONLY_THP_FOR_FS any more): the file is
 * written, synced and then open only for reading, and split_huge_pages
 * splits its folio in place as on tmpfs, so that the collapse is the only
 * free.
 *
 * The others skip unless FNR_DIR is a tmpfs whose files get huge folios
 * (mounted huge=always, CONFIG_TRANSPARENT_HUGEPAGE); the collapse
 * variants need MADV_COLLAPSE on FNR_DIR's file system.
 *
 * Environment: FNR_DIR, FNR_SECONDS (default 4; nonzero_index runs
 * twice as long), FNR_CONTROL_SECONDS (default 180; the control stops at
 * the first bad read), FNR_READERS (default 2; nonzero_index 1, which
 * leaves a CPU to the splitter), FNR_SKIP_CONTROL=1, FNR_INTRUSIVE=1
 * (run the variants that take a CPU offline: they skip without it).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include "../kselftest_harness.h"
#include "fnr_hotplug.h"

#define PG		FNR_PAGE
#define MAX_READ	(128 * 1024)
#define CUTS		32		/* per folio before it is replaced */
#define TAIL		(64 * PG)	/* where the file is cut and read */
#define FILE_ID		0x5170
#define HOG_ID		0xffffU		/* never a file id */
#define HOG_PAGES	16
#define PMD_SIZE_PATH	"/sys/kernel/mm/transparent_hugepage/hpage_pmd_size"
#define SPLIT_PATH	"/sys/kernel/debug/split_huge_pages"
#define FNR_DEBUGFS	"/sys/kernel/debug/filemap_noref/"
#define DEFER_FREE	FNR_DEBUGFS "defer_free"
#define DELAY_VALIDATED	FNR_DEBUGFS "delay_validated_us"
#define DELAY_SPLIT	FNR_DEBUGFS "delay_split_us"
#define DELAY_COPY	FNR_DEBUGFS "delay_copy_us"
#define DELAY_CHECKED	FNR_DEBUGFS "delay_checked_us"
#define TORN_SIZES	FNR_DEBUGFS "torn_sizes"
#define INDEX_FOLIOS	3		/* nonzero_index: PMD folios in the file */
#define INDEX_LEAD	8		/* reads start this many pages before */
#define OVERLAP_WAIT_S	20		/* collapse: longest wait for an overlap */
#define SETUP_COLLAPSE_TRIES	5	/* collapse: the first MADV_COLLAPSE */
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE	25
#endif

struct reader;

/* What a bad read found at its first bad byte. */
enum bad_kind {
	BAD_POISON,	/* a freed page, poisoned (page_poison=1) */
	BAD_ZEROS,	/* a freed page, cleared by init_on_free */
	BAD_REUSED,	/* a freed page, reused by the splitter */
	BAD_FOREIGN,	/* anything else */
	NR_BAD_KINDS
};

static const char * const bad_kind_name[NR_BAD_KINDS] = {
	[BAD_POISON] = "page poison (0xaa): a freed page (page_poison=1)",
	[BAD_ZEROS] = "zeros: freed page cleared by init_on_free?",
	[BAD_REUSED] = "splitter's stamp: freed page reused",
	[BAD_FOREIGN] = "foreign data",
};

struct split_race {
	const char *path;
	int fd;
	size_t size;			/* the file: one PMD-sized folio */
	size_t pmd;			/* PMD size */
	bool at_index;			/* nonzero_index: see above */
	bool collapse;			/* collapse: see above */
	bool disk;			/* collapse: ext4 or xfs, not tmpfs */
	char *map;			/* collapse: the file, PMD-aligned */
	bool mthp;			/* tmpfs gives folios below PMD size */
	unsigned int split_k;		/* nonzero_index: the folio split next */
	struct reader *readers;
	long nr_readers;
	unsigned long cut_seq;		/* odd while cutting */
	unsigned long cut_zeros;	/* see zero_page_race() */
	uint8_t *image;			/* what the file holds */
	pthread_barrier_t start;
	struct fnr_stop ctl;
	unsigned long reads, kib, cuts, refreshes, not_split;
	unsigned long no_alloc;		/* collapse: MADV_COLLAPSE allocated nothing */
	unsigned long collapses, collapse_busy, collapse_overlaps;
	bool small;			/* collapse: the file is split */
	double ran;			/* seconds the race ran */
	unsigned long bad_of[NR_BAD_KINDS];
	bool have_why;
	char why[1024];
};

struct reader {
	struct split_race *r;
	pthread_t th;
	int fd;
	uint64_t rng;
	uint8_t buf[MAX_READ];
	unsigned long reads, kib;
	unsigned long started;		/* preads started */
};

/*
 * Wait until every reader has started a pread since the file was cut: the
 * preads that began before the cut are over.  Only then may the file grow
 * back.  Otherwise tmpfs could legitimately return zeros: its normal read
 * path checks i_size (still the old size), finds the page cut away, and
 * copies the zero page for it if i_size covers the page again by the time
 * it checks once more, which the growing makes true.
 */
static void quiesce(struct split_race *r)
{
	long i;

	for (i = 0; i < r->nr_readers; i++) {
		struct reader *rd = &r->readers[i];
		unsigned long s = __atomic_load_n(&rd->started, __ATOMIC_ACQUIRE);

		while (__atomic_load_n(&rd->started, __ATOMIC_ACQUIRE) == s &&
		       !fnr_stopped(&r->ctl))
			usleep(20);
	}
}

/* Cut the file at @off: the pages past it are freed. */
static int cut(struct split_race *r, uint64_t off)
{
	int ret;

	__atomic_add_fetch(&r->cut_seq, 1, __ATOMIC_SEQ_CST);
	ret = ftruncate(r->fd, off);
	__atomic_add_fetch(&r->cut_seq, 1, __ATOMIC_SEQ_CST);
	return ret;
}

/* Grow the file from @off back to its full size, from the image. */
static int grow(struct split_race *r, uint64_t off)
{
	ssize_t n = pwrite(r->fd, r->image + off, r->size - off, off);

	if (n == (ssize_t)(r->size - off))
		return 0;
	if (n >= 0)
		errno = EIO;
	return -1;
}

/* Fault in fresh anonymous pages and stamp them, so freed pages get reused. */
static int hog(uint64_t *m, unsigned long pass)
{
	uint64_t c;

	if (madvise(m, HOG_PAGES * PG, MADV_DONTNEED))
		return -1;
	for (c = 0; c < HOG_PAGES * FNR_CELLS; c++)
		m[c] = fnr_stamp(HOG_ID, c / FNR_CELLS, pass, c % FNR_CELLS);
	return 0;
}

/* Replace the folio by a new one and make it hot. */
static int refresh(struct split_race *r)
{
	if (cut(r, 0))
		return -1;
	quiesce(r);
	if (grow(r, 0))
		return -1;
	return fnr_make_hot(r->fd, 0, r->size);
}

/* Split the folios in [@from, @to) where they are: their pages stay. */
static int split(struct split_race *r, uint64_t from, uint64_t to)
{
	char cmd[PATH_MAX + 64];

	snprintf(cmd, sizeof(cmd), "%s,0x%llx,0x%llx", r->path,
		 (unsigned long long)(from / PG), (unsigned long long)(to / PG));
	return fnr_write_str(SPLIT_PATH, cmd);
}

/*
 * nonzero_index: split folio @k (1 or 2), then cut the file where the
 * folio starts and write it back from there (a huge folio again), and make
 * it hot.  Readers past the cut meanwhile get short reads, never zeros.
 */
static int split_at_index(struct split_race *r, unsigned int k,
			  const char **what)
{
	uint64_t from = (uint64_t)k * r->pmd;

	*what = "split";
	if (split(r, from, from + r->pmd))
		return -1;
	*what = "cut and grow";
	if (cut(r, from))
		return -1;
	quiesce(r);
	if (grow(r, from))
		return -1;
	return fnr_make_hot(r->fd, from, r->size - from);
}

/*
 * Would cutting the file at @at zero part of a large folio in place: is the
 * page at @at the tail page of a folio of any order (kpageflags)?  Without
 * pagemap or kpageflags, fall back to the PMD-sized folios of
 * ShmemHugePages (this test's file is the only one).
 */
static bool large_at(struct split_race *r, uint64_t at)
{
	int large = -1;
	uint64_t f;

	/* The mapping costs the readers TLB flushes: only where needed. */
	if (r->mthp && !fnr_kpageflags(r->fd, at, &f))
		large = !!(f & FNR_KPF_COMPOUND_TAIL);
	if (large < 0)
		return fnr_proc_value("/proc/meminfo", "ShmemHugePages") != 0;
	return large;
}

/*
 * Does tmpfs give files folios below PMD size (huge=always, 6.14 and
 * later)?  Where it does not, the PMD-sized folios of ShmemHugePages are
 * all there is to check, without mapping the file.
 */
static bool tmpfs_mthp(void)
{
	struct utsname u;
	int major, minor;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return true;
	return major > 6 || (major == 6 && minor >= 14);
}

/*
 * Map the file at a PMD-aligned address, as MADV_COLLAPSE needs; 0 on
 * success.
 */
static int collapse_map(struct split_race *r)
{
	char *m = mmap(NULL, 2 * r->pmd, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd = open(r->path, O_RDONLY);
	uintptr_t a;

	if (m == MAP_FAILED || fd < 0)
		return -1;
	/* Read-only: a writable shared mapping turns the fast path off. */
	a = ((uintptr_t)m + r->pmd - 1) & ~(uintptr_t)(r->pmd - 1);
	r->map = mmap((void *)a, r->pmd, PROT_READ, MAP_SHARED | MAP_FIXED,
		      fd, 0);
	close(fd);
	if (r->map == MAP_FAILED) {
		r->map = NULL;
		munmap(m, 2 * r->pmd);
		return -1;
	}
	if (a > (uintptr_t)m)
		munmap(m, a - (uintptr_t)m);
	munmap((void *)(a + r->pmd), (uintptr_t)m + r->pmd - a);
	return 0;
}

/*
 * Make the file's folio hot, split it where it is, make its pages hot, and
 * collapse them into a new folio: collapse_file() frees them.  A split
 * that did not split (a reader held a reference) leaves nothing to
 * collapse.  A collapse that meets a folio in use (a reader's reference,
 * a per-CPU LRU batch) fails with EAGAIN, one without a huge page with
 * ENOMEM: counted, not errors; the file stays split, and the next call
 * collapses it without a split.  A collapse counts only if it allocated
 * its folio (thp_collapse_alloc grew): MADV_COLLAPSE of a file that is
 * already huge (khugepaged got there first) succeeds and frees nothing.
 * The overlapped reads counted between the end of the reads that
 * overlapped the split and the end of those that overlapped the collapse
 * are the collapse's own.
 */
static int collapse_once(struct split_race *r, const char **what)
{
	long splits, allocs, o0, o;

	if (!r->small) {
		/* Hot: readers then hold no reference that makes it fail. */
		*what = "make hot";
		if (fnr_make_hot(r->fd, 0, r->size))
			return -1;
		splits = fnr_vmstat("thp_split_page");
		*what = "split";
		if (split(r, 0, r->size))
			return -1;
		if (fnr_vmstat("thp_split_page") == splits) {
			r->not_split++;
			return 0;
		}
		r->small = true;
	}
	*what = "make hot";
	if (fnr_make_hot(r->fd, 0, r->size))
		return -1;
	quiesce(r);
	o0 = fnr_overlapped();
	allocs = fnr_vmstat("thp_collapse_alloc");
	*what = "MADV_COLLAPSE";
	if (madvise(r->map, r->pmd, MADV_COLLAPSE)) {
		if (errno != EAGAIN && errno != EBUSY && errno != ENOMEM)
			return -1;
		r->collapse_busy++;
		return 0;
	}
	r->small = false;
	if (fnr_vmstat("thp_collapse_alloc") == allocs) {
		r->no_alloc++;
	} else {
		r->collapses++;
		quiesce(r);
		o = fnr_overlapped_since(o0);
		if (o > 0)
			__atomic_add_fetch(&r->collapse_overlaps, o,
					   __ATOMIC_RELAXED);
	}
	/* Unmap the huge folio: the next split need not. */
	*what = "MADV_DONTNEED";
	return madvise(r->map, r->pmd, MADV_DONTNEED);
}

static void *splitter_fn(void *arg)
{
	struct split_race *r = arg;
	uint64_t rng = 0x9e3779b97f4a7c15ULL ^ getpid(), at;
	const char *what = "mmap";
	unsigned long n;
	uint64_t *m;

	m = mmap(NULL, HOG_PAGES * PG, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pthread_barrier_wait(&r->start);
	for (n = 0; m != MAP_FAILED && !fnr_stopped(&r->ctl); n++) {
		if (r->collapse) {
			if (collapse_once(r, &what) || hog(m, n))
				break;
			continue;
		}
		if (r->at_index) {
			__atomic_store_n(&r->split_k, 1 + n % 2,
					 __ATOMIC_RELAXED);
			usleep(10000);
			if (split_at_index(r, r->split_k, &what))
				break;
			r->cuts++;
			usleep(500);
			continue;
		}
		if (!(n % CUTS)) {
			what = "replace the folio";
			if (refresh(r))
				break;
			r->refreshes++;
			continue;
		}
		what = "split";
		if (split(r, 0, r->size))
			break;
		at = r->size - (1 + fnr_rnd(&rng) % (TAIL / PG)) * PG;
		if (large_at(r, at)) {
			r->not_split++;
			continue;
		}
		what = "truncate";
		if (cut(r, at))
			break;
		what = "hog";
		if (hog(m, n))
			break;
		quiesce(r);
		what = "grow";
		if (grow(r, at))
			break;
		r->cuts++;
		/* Let the readers get going on the whole file again. */
		usleep(500);
	}
	if (!fnr_stopped(&r->ctl))
		fnr_fail(&r->ctl, what, errno);
	if (m != MAP_FAILED)
		munmap(m, HOG_PAGES * PG);
	return NULL;
}

/*
 * Count a bad read by what its first bad byte, at buffer index @i of a
 * read at @off, shows, and describe the first one.
 */
static void report_bad(struct split_race *r, struct reader *rd, uint64_t off,
		       size_t got, size_t i)
{
	uint64_t o = off + i, cell = o & ~7ULL, v = 0, want;
	char ws[96], fs[96];
	enum bad_kind kind;
	bool zeros;
	int b;

	/* A cell the read holds in part is judged by its first bad byte. */
	if (cell >= off && cell + 8 <= off + got) {
		memcpy(&want, r->image + cell, 8);
		memcpy(&v, rd->buf + (cell - off), 8);
	} else {
		want = r->image[o];
		v = rd->buf[i];
	}
	for (b = 0, zeros = true; b < 64; b += 8)
		if ((v >> b & 0xff) && (v >> b & 0xff) != (want >> b & 0xff))
			zeros = false;
	if (cell >= off && cell + 8 <= off + got && v == FNR_POISON)
		kind = BAD_POISON;
	else if (zeros)
		kind = BAD_ZEROS;
	else if ((v >> 48) == HOG_ID && ((v >> 9) & 7) == FNR_MARK)
		kind = BAD_REUSED;
	else
		kind = BAD_FOREIGN;
	__atomic_add_fetch(&r->bad_of[kind], 1, __ATOMIC_RELAXED);
	if (__atomic_exchange_n(&r->have_why, true, __ATOMIC_SEQ_CST))
		return;
	fnr_stamp_decode(want, ws, sizeof(ws));
	fnr_stamp_decode(v, fs, sizeof(fs));
	snprintf(r->why, sizeof(r->why),
		 "offset %llu (page %llu of the folio, cell %llu), pread(off %llu) returned %zu bytes: expected %s, found %s [%s]",
		 (unsigned long long)o, (unsigned long long)(o / PG),
		 (unsigned long long)(o % PG / 8), (unsigned long long)off,
		 got, ws, fs, bad_kind_name[kind]);
}

/*
 * Is the first bad byte, at @i of a read of @len at @off that returned
 * @got, the start of the zero page that tmpfs's normal path may copy while
 * the file is cut?  It checks i_size, looks the page up, finds it cut
 * away, checks i_size again but only stops if the page is the one i_size
 * ends in, so a page past the new end of file comes back as zeros, and
 * the read stops there.  Even a kernel without the series does that.  So
 * one trailing page of zeros is allowed in a read that overlapped a cut:
 * from the start of a page (or of the read) to the end of the data
 * returned, which ends at the end of that page (or of the read).  Freed
 * pages copied by the reference-free path show otherwise: in several
 * pages, in the middle of a read, or with the splitter's stamp.
 */
static bool zero_page_race(const uint8_t *buf, uint64_t off, size_t len,
			   size_t got, size_t i)
{
	uint64_t page = (off + i) / PG * PG;
	size_t j, z = page > off ? page - off : 0;

	/* The zeros start where that page (or the read) does. */
	if (got - z > PG || ((off + got) % PG && got != len))
		return false;
	for (j = z; j < got; j++)
		if (buf[j])
			return false;
	return true;
}

/* Report the read unless its bytes are the image's, or zero_page_race(). */
static void check_read(struct split_race *r, struct reader *rd, uint64_t off,
		       size_t len, size_t got, bool cut_overlap)
{
	size_t i;

	if (!memcmp(rd->buf, r->image + off, got))
		return;
	for (i = 0; rd->buf[i] == r->image[off + i]; i++)
		;
	if (cut_overlap && zero_page_race(rd->buf, off, len, got, i)) {
		__atomic_add_fetch(&r->cut_zeros, 1, __ATOMIC_RELAXED);
		return;
	}
	report_bad(r, rd, off, got, i);
}

/* Bad reads of every kind: report_bad() counts each read once. */
static unsigned long bad_reads(struct split_race *r)
{
	unsigned long n = 0;
	int k;

	for (k = 0; k < NR_BAD_KINDS; k++)
		n += __atomic_load_n(&r->bad_of[k], __ATOMIC_RELAXED);
	return n;
}

static void *reader_fn(void *arg)
{
	struct reader *rd = arg;
	struct split_race *r = rd->r;
	unsigned long c0, c1;
	uint64_t off, end;
	size_t len;
	ssize_t got;

	pthread_barrier_wait(&r->start);
	while (!fnr_stopped(&r->ctl)) {
		if (r->at_index) {
			/* From a few pages before the end of the folio split. */
			end = (1 + __atomic_load_n(&r->split_k,
						   __ATOMIC_RELAXED)) * r->pmd;

			off = end - PG * (1 + fnr_rnd(&rd->rng) % INDEX_LEAD) +
			      fnr_rnd(&rd->rng) % PG;
			len = end - off + 1 +
			      fnr_rnd(&rd->rng) % (MAX_READ - (end - off));
		} else {
			len = 16 + fnr_rnd(&rd->rng) % (MAX_READ - 15);
			off = r->size - TAIL +
			      fnr_rnd(&rd->rng) % (TAIL - len);
		}
		/* Short past the cut; never more than asked for. */
		__atomic_add_fetch(&rd->started, 1, __ATOMIC_RELEASE);
		c0 = __atomic_load_n(&r->cut_seq, __ATOMIC_SEQ_CST);
		got = pread(rd->fd, rd->buf, len, off);
		c1 = __atomic_load_n(&r->cut_seq, __ATOMIC_SEQ_CST);
		if (got < 0) {
			fnr_fail(&r->ctl, "pread", errno);
			break;
		}
		rd->reads++;
		rd->kib += got >> 10;
		check_read(r, rd, off, len, got, c0 != c1 || (c0 & 1));
	}
	return NULL;
}

FIXTURE(split)
{
	struct split_race r;
	char path[PATH_MAX];
	bool defer_off, delays_on;
	const char *copy_delay;		/* set to 1 ms, reset it */
	struct fnr_hotplug hp;
};

FIXTURE_VARIANT(split)
{
	bool control;		/* run with the RCU-deferred free off */
	bool at_index;		/* four folios, split at a non-zero index */
	bool hotplug;		/* a CPU goes offline and back meanwhile */
	bool collapse;		/* the folio is collapsed again and again */
};

FIXTURE_VARIANT_ADD(split, deferred) { };
FIXTURE_VARIANT_ADD(split, control) { .control = true };
FIXTURE_VARIANT_ADD(split, nonzero_index) { .at_index = true };
FIXTURE_VARIANT_ADD(split, hotplug) { .hotplug = true };
FIXTURE_VARIANT_ADD(split, collapse) { .collapse = true };
FIXTURE_VARIANT_ADD(split, control_collapse) {
	.collapse = true, .control = true
};

FIXTURE_SETUP(split)
{
	struct split_race *r = &self->r;
	const char *copy_delay, *no;
	long before, after, i;
	struct statfs sfs;
	char why[256];

	if (!fnr_series())
		SKIP(return, "%s", FNR_NO_SERIES);

	r->fd = -1;
	no = variant->control ? fnr_control_unfit(why, sizeof(why)) : NULL;
	if (no)
		SKIP(return, "%s", no);
	ASSERT_EQ(0, statfs(fnr_testdir(), &sfs));
	r->disk = sfs.f_type != TMPFS_MAGIC;
	if (r->disk && !variant->collapse)
		SKIP(return, "%s is not a tmpfs", fnr_testdir());
	if (access(SPLIT_PATH, W_OK))
		SKIP(return, "%s: %s (needs CONFIG_TRANSPARENT_HUGEPAGE and debugfs)",
		     SPLIT_PATH, strerror(errno));
	if (variant->hotplug && !fnr_intrusive())
		SKIP(return, "%s", FNR_NOT_ASKED);
	if (variant->hotplug && fnr_hotplug_pick(&self->hp))
		SKIP(return, "no CPU can go offline (CONFIG_HOTPLUG_CPU, 2 CPUs)");
	r->pmd = fnr_read_long(PMD_SIZE_PATH);
	if ((long)r->pmd <= 0)
		SKIP(return, "no %s: CONFIG_TRANSPARENT_HUGEPAGE off?",
		     PMD_SIZE_PATH);
	r->at_index = variant->at_index;
	r->collapse = variant->collapse;
	r->mthp = tmpfs_mthp();
	r->split_k = 1;
	r->size = r->at_index ? INDEX_FOLIOS * r->pmd + TAIL : r->pmd;

	snprintf(self->path, sizeof(self->path), "%s/fnr_split.XXXXXX",
		 fnr_testdir());
	r->fd = mkstemp(self->path);
	r->path = self->path;
	ASSERT_LE(0, r->fd) TH_LOG("mkstemp(%s): %s", self->path,
				   strerror(errno));
	r->image = malloc(r->size);
	ASSERT_NE(NULL, r->image);
	fnr_fill(r->image, r->size, 0, FILE_ID, 1);

	before = fnr_proc_value("/proc/meminfo", "ShmemHugePages");
	ASSERT_EQ(0, grow(r, 0))
		TH_LOG("write %s: %s", self->path, strerror(errno));
	after = fnr_proc_value("/proc/meminfo", "ShmemHugePages");
	if (r->disk) {
		/*
		 * Clean, and open only for reading: 6.12's collapse of file
		 * page cache (CONFIG_READ_ONLY_THP_FOR_FS) wants no writer.
		 */
		ASSERT_EQ(0, fsync(r->fd));
		close(r->fd);
		r->fd = open(self->path, O_RDONLY);
		ASSERT_LE(0, r->fd) TH_LOG("open %s: %s", self->path,
					   strerror(errno));
	}
	if (r->collapse) {
		/*
		 * On plain tmpfs, ext4, xfs: a collapse first makes it huge,
		 * else the splits that the race starts from find nothing to
		 * split.  A busy folio (EAGAIN) gets a few more tries.
		 */
		ASSERT_EQ(0, collapse_map(r))
			TH_LOG("mmap %s: %s", self->path, strerror(errno));
		for (i = 0; madvise(r->map, r->pmd, MADV_COLLAPSE); i++) {
			if (errno == EINVAL) {
				/* A skipped setup gets no teardown. */
				unlink(self->path);
				self->path[0] = 0;
				SKIP(return, "no MADV_COLLAPSE on %s: %s",
				     fnr_testdir(), strerror(errno));
			}
			ASSERT_GT(SETUP_COLLAPSE_TRIES, i + 1)
				TH_LOG("MADV_COLLAPSE of %s: %s", self->path,
				       strerror(errno));
			usleep(100000);
		}
	} else if (before < 0 ||
		   after - before < (long)((r->size / r->pmd * r->pmd) >> 10)) {
		unlink(self->path);
		self->path[0] = 0;
		SKIP(return, "no huge folios on %s (ShmemHugePages %ld -> %ld kB)",
		     fnr_testdir(), before, after);
	}
	ASSERT_EQ(0, fnr_make_hot(r->fd, 0, r->size));
	/* Widen the window where it can be (CONFIG_DEBUG_VM). */
	/*
	 * The control must find the injected bug every time, not by luck:
	 * readers stop 1 ms between checking a folio and copying it.  A
	 * collapse run and its control stop them after the last check, right
	 * before the copy: collapse_file() clears PG_active of the folios it
	 * frees, so a reader stopped before the activation check mostly took
	 * the slow path after the collapse (NOREF_MISS_ACTIVATE), not the copy
	 * of a folio removed under it (seen on 6.12: 1 run in 10 with no
	 * overlapped read in 13 collapses).
	 */
	copy_delay = r->collapse ? DELAY_CHECKED : DELAY_COPY;
	if ((variant->control || r->collapse) && !access(copy_delay, W_OK)) {
		self->copy_delay = copy_delay;
		ASSERT_EQ(0, fnr_write_str(copy_delay, "1000\n"));
	}
	if (r->at_index && !access(DELAY_VALIDATED, W_OK)) {
		self->delays_on = true;
		ASSERT_EQ(0, fnr_write_str(DELAY_VALIDATED, "5000\n"));
		ASSERT_EQ(0, fnr_write_str(DELAY_SPLIT, "20000\n"));
	}
}

/* In the parent, so this also happens when the test dies. */
FIXTURE_TEARDOWN_PARENT(split)
{
	if (self->defer_off && fnr_write_str(DEFER_FREE, "1\n"))
		TH_LOG("could not restore %s: %s", DEFER_FREE, strerror(errno));
	if (self->copy_delay && fnr_write_str(self->copy_delay, "0\n"))
		TH_LOG("could not restore %s: %s", self->copy_delay,
		       strerror(errno));
	if (self->delays_on && (fnr_write_str(DELAY_VALIDATED, "0\n") ||
				fnr_write_str(DELAY_SPLIT, "0\n")))
		TH_LOG("could not reset the delays in %s: %s", FNR_DEBUGFS,
		       strerror(errno));
	if (fnr_hotplug_restore(&self->hp))
		TH_LOG("could not bring %s back to 1: %s", self->hp.path,
		       strerror(errno));
	if (self->r.map)
		munmap(self->r.map, self->r.pmd);
	if (self->path[0])
		unlink(self->path);
}

/*
 * Let the race run for @seconds; a control run stops at a read of a freed
 * page (the verdict it is built for, see report_bad()).  A collapse run
 * goes on for up to OVERLAP_WAIT_S seconds more until a copy overlapped a
 * collapse (32 copies in 25 collapses over 10 runs on 6.12).
 */
static void race_wait(struct split_race *r, long seconds, bool control)
{
	double start = fnr_now(), end = start + seconds;

	while (!fnr_stopped(&r->ctl) &&
	       (fnr_now() < end ||
		(r->collapse && !control && fnr_now() < end + OVERLAP_WAIT_S &&
		 !__atomic_load_n(&r->collapse_overlaps, __ATOMIC_RELAXED) &&
		 fnr_overlapped() >= 0))) {
		usleep(10000);
		if (control &&
		    __atomic_load_n(&r->bad_of[BAD_POISON], __ATOMIC_RELAXED))
			break;
	}
	fnr_set_stop(&r->ctl);
	r->ran = fnr_now() - start;
}

/* Above the longest race: 180 s (a control run, or nonzero_index). */
TEST_F_TIMEOUT(split, race, 240)
{
	long secs = variant->control ?
		    fnr_env_long("FNR_CONTROL_SECONDS", 180, 1, 180) :
		    fnr_env_long("FNR_SECONDS", 4, 1, 90) *
		    (variant->at_index ? 2 : 1);
	/* nonzero_index: one reader leaves a CPU to the splitter. */
	long i, nr = fnr_env_long("FNR_READERS", variant->at_index ? 1 : 2,
				  1, 64);
	struct reader *rd = calloc(nr, sizeof(*rd));
	struct split_race *r = &self->r;
	long splits, failed, noref, overlapped, torn = fnr_read_long(TORN_SIZES);
	unsigned long bad;
	char why[128];
	pthread_t sp;

	ASSERT_NE(NULL, rd);
	r->readers = rd;
	r->nr_readers = nr;
	if (variant->control) {
		ASSERT_EQ(0, fnr_write_str(DEFER_FREE, "0\n"))
			TH_LOG("write 0 to %s: %s", DEFER_FREE, strerror(errno));
		self->defer_off = true;
	}
	splits = fnr_vmstat("thp_split_page");
	failed = fnr_vmstat("thp_split_page_failed");
	noref = fnr_vmstat(FNR_NOREF_READ);
	overlapped = fnr_overlapped();
	ASSERT_EQ(0, pthread_barrier_init(&r->start, NULL, nr + 2));
	for (i = 0; i < nr; i++) {
		rd[i].r = r;
		rd[i].rng = 0x2545f4914f6cdd1dULL * (i + 1) ^ getpid();
		rd[i].fd = open(self->path, O_RDONLY);
		ASSERT_LE(0, rd[i].fd) TH_LOG("open: %s", strerror(errno));
		ASSERT_EQ(0, pthread_create(&rd[i].th, NULL, reader_fn, &rd[i]));
	}
	ASSERT_EQ(0, pthread_create(&sp, NULL, splitter_fn, r));
	if (variant->hotplug)
		ASSERT_EQ(0, fnr_hotplug_start(&self->hp, &r->ctl))
			TH_LOG("pthread_create: %s", strerror(errno));
	pthread_barrier_wait(&r->start);
	race_wait(r, secs, variant->control);
	ASSERT_EQ(0, pthread_join(sp, NULL));
	if (variant->hotplug)
		ASSERT_EQ(0, fnr_hotplug_stop(&self->hp))
			TH_LOG("%s back to 1: %s", self->hp.path, strerror(errno));
	for (i = 0; i < nr; i++) {
		ASSERT_EQ(0, pthread_join(rd[i].th, NULL));
		r->reads += rd[i].reads;
		r->kib += rd[i].kib;
		close(rd[i].fd);
	}
	free(rd);
	splits = fnr_vmstat("thp_split_page") - splits;
	failed = fnr_vmstat("thp_split_page_failed") - failed;
	noref = fnr_vmstat(FNR_NOREF_READ) - noref;
	if (variant->control) {
		ASSERT_EQ(0, fnr_write_str(DEFER_FREE, "1\n"))
			TH_LOG("restore %s: %s", DEFER_FREE, strerror(errno));
		self->defer_off = false;
	}

	bad = bad_reads(r);
	if (r->collapse) {
		TH_LOG("%lu reads in %.1f s (%lu MiB), %lu bad; %lu collapses, %lu refused (EAGAIN, ENOMEM), %lu allocated nothing, %lu reads overlapped one; %ld splits, %ld failed (%lu left nothing to collapse)",
		       r->reads, r->ran, r->kib >> 10, bad, r->collapses,
		       r->collapse_busy, r->no_alloc, r->collapse_overlaps,
		       splits, failed, r->not_split);
	} else if (r->at_index) {
		TH_LOG(
	"%lu reads in %.1f s (%lu MiB), %lu bad; %lu splits at a non-zero index (%ld split, %ld failed); torn folio sizes refused: %ld%s",
		       r->reads, r->ran, r->kib >> 10, bad, r->cuts, splits, failed,
		       torn >= 0 ? fnr_read_long(TORN_SIZES) - torn : -1,
		       self->delays_on ? " (windows widened)" : "");
	} else {
		TH_LOG(
	"%lu reads in %.1f s (%lu MiB), %lu bad; %lu cuts, %lu folios replaced; %ld splits, %ld failed (%lu cuts skipped)",
		       r->reads, r->ran, r->kib >> 10, bad, r->cuts, r->refreshes,
		       splits, failed, r->not_split);
	}
	TH_LOG("%lu reads ended in the zero page of a cut (allowed, see zero_page_race())",
	       r->cut_zeros);
	if (bad)
		TH_LOG("bad reads: %lu page poison, %lu zeros, %lu with the splitter's stamp, %lu foreign",
		       r->bad_of[BAD_POISON], r->bad_of[BAD_ZEROS],
		       r->bad_of[BAD_REUSED], r->bad_of[BAD_FOREIGN]);
	if (r->have_why)
		TH_LOG("first bad read: %s", r->why);
	ASSERT_FALSE(r->ctl.have_err) TH_LOG("%s", r->ctl.err);
	ASSERT_LT(0, r->reads);
	ASSERT_EQ(0, fnr_noref_premise(noref, why, sizeof(why)))
		TH_LOG("%s", why);
	/*
	 * nonzero_index's race is a torn size, which readers refuse: no copy
	 * then overlaps the split.  collapse's is a copy that a collapse
	 * overlapped, the others' one that a cut or a split overlapped.
	 */
	if (r->at_index && torn >= 0) {
		ASSERT_LT(0, fnr_read_long(TORN_SIZES) - torn)
			TH_LOG("no reader met a torn folio size: the race did not happen");
	} else if (r->collapse && !(variant->control && bad)) {
		/*
		 * A control run stops at its first bad read, maybe before the
		 * collapse's overlaps are counted: its premise is that read.
		 */
		ASSERT_EQ(0, fnr_overlap_premise(overlapped < 0 ? -1 :
						 (long)r->collapse_overlaps,
						 why, sizeof(why)))
			TH_LOG("%s", why);
	} else if (!r->collapse) {
		ASSERT_EQ(0, fnr_overlap_premise(fnr_overlapped_since(overlapped),
						 why, sizeof(why)))
			TH_LOG("%s", why);
	}
	/*
	 * Without splits there was no race to lose, unless a bad read shows
	 * that one was lost (a control run can find one in the folio that
	 * a replacement freed before the first split).
	 */
	if (!bad)
		ASSERT_LT(0, splits) TH_LOG("no huge folio was split");
	if (!bad && r->collapse)
		ASSERT_LT(0, r->collapses) TH_LOG("no collapse succeeded");
	if (variant->hotplug)
		fnr_hotplug_check(_metadata, &self->hp);
	if (variant->control) {
		/* The bug it is built for: a freed page copied. */
		EXPECT_LT(0, r->bad_of[BAD_POISON])
			TH_LOG("defer_free=0 but no page poison read: %s",
			       "the test could not detect the injected bug");
	} else {
		EXPECT_EQ(0, bad)
			TH_LOG("readers copied freed or foreign memory");
	}
}

TEST_HARNESS_MAIN
