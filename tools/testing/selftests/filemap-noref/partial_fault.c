// SPDX-License-Identifier: GPL-2.0
/*
 * Reads into user buffers that fault part way must give the same result
 * whether filemap_read() copies the data without a folio reference (hot
 * folios, PG_rcu_free, copied with page faults disabled or through a stack
 * buffer) or takes the normal path: the same byte count, errno, file
 * position and data.  Each case runs hot (after fnr_make_hot()) and cold
 * (after dropping the page cache), and both results must match each other
 * and the exact expectation.  On a kernel with the series each test
 * requires that its hot reads left the fast path at a fault
 * (/proc/vmstat noref_miss_fault grew): else the fast path's fault
 * handling was not what ran.
 *
 * Files are created in $FNR_DIR (default: the current directory).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "../kselftest_harness.h"
#include "fnr_pressure.h"

#define PG	FNR_PAGE
#define FSIZE	(8 * PG)
#define GEN	1

/*
 * x86 copy_to_user() stops exactly at the first byte that faults; other
 * architectures may stop a little earlier within the same iovec.
 */
#if defined(__x86_64__) || defined(__i386__)
#define FAULT_EXACT	true
#else
#define FAULT_EXACT	false
#endif

enum how { PREAD, READ, PREADV };

/*
 * One read into a fresh anonymous destination mapping.  Each page of the
 * mapping is 't' (touched), 'a' (absent, never touched), 'n' (PROT_NONE)
 * or 'u' (unmapped).
 */
struct rcase {
	const char *name;
	enum how how;
	uint64_t foff;
	const char *pages;
	unsigned int niov;
	struct { size_t off, len; } iov[3];
	ssize_t want;		/* expected return value; -1: EFAULT */
	bool resume;		/* then read(2) the rest into a good buffer */
};

struct res {
	ssize_t ret;
	int err;
	off_t pos;		/* file position after read(2) */
};

FIXTURE(pf)
{
	char path[PATH_MAX];
	int fd;
	uint32_t id;
};

FIXTURE_SETUP(pf)
{
	snprintf(self->path, sizeof(self->path), "%s/fnr_pf.XXXXXX",
		 fnr_testdir());
	self->fd = mkstemp(self->path);
	ASSERT_LE(0, self->fd) TH_LOG("mkstemp(%s): %s", self->path,
				      strerror(errno));
	self->id = (getpid() & 0x7fff) | 0x8000;
	ASSERT_EQ(0, fnr_write_gen(self->fd, 0, FSIZE, self->id, GEN));
}

/* In the parent, so that the file also goes when an ASSERT fails. */
FIXTURE_TEARDOWN_PARENT(pf)
{
	unlink(self->path);
}

static void run_case(struct __test_metadata *_metadata, int fd, uint32_t id,
		     const struct rcase *c, const char *label, struct res *r)
{
	size_t i, n, done, total = 0, mlen = strlen(c->pages) * PG;
	struct iovec iov[3];
	char *map, *good, why[512];
	ssize_t rr;

	map = mmap(NULL, mlen, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map) TH_LOG("mmap: %s", strerror(errno));
	/* Keep 'a' pages absent; EINVAL just means there is no THP. */
	if (madvise(map, mlen, MADV_NOHUGEPAGE))
		ASSERT_EQ(EINVAL, errno);
	for (i = 0; c->pages[i]; i++) {
		if (c->pages[i] == 't')
			memset(map + i * PG, 0x5a, PG);
		if (c->pages[i] == 'n')
			ASSERT_EQ(0, mprotect(map + i * PG, PG, PROT_NONE));
		if (c->pages[i] == 'u')
			ASSERT_EQ(0, munmap(map + i * PG, PG));
	}
	for (i = 0; i < c->niov; i++) {
		iov[i].iov_base = map + c->iov[i].off;
		iov[i].iov_len = c->iov[i].len;
		total += c->iov[i].len;
	}
	r->pos = -1;

	errno = 0;
	if (c->how == PREAD) {
		r->ret = pread(fd, iov[0].iov_base, total, c->foff);
	} else if (c->how == PREADV) {
		r->ret = preadv(fd, iov, c->niov, c->foff);
	} else {
		ASSERT_EQ((off_t)c->foff, lseek(fd, c->foff, SEEK_SET));
		r->ret = read(fd, iov[0].iov_base, total);
	}
	r->err = r->ret < 0 ? errno : 0;
	if (c->how == READ) {
		r->pos = lseek(fd, 0, SEEK_CUR);
		ASSERT_LE(0, r->pos);
	}
	/* The bytes read must be the file's, so hot and cold agree too. */
	for (i = 0, done = 0; r->ret > 0 && done < (size_t)r->ret; i++) {
		n = r->ret - done < iov[i].iov_len ? r->ret - done :
						     iov[i].iov_len;
		EXPECT_EQ(0, fnr_check(iov[i].iov_base, n, c->foff + done,
				       id, GEN, why, sizeof(why)))
			TH_LOG("%s (%s): iovec %zu: %s", c->name, label, i,
			       why);
		done += n;
	}

	/* Go on from the file position; the rest must follow exactly. */
	if (c->resume && r->ret > 0 && (size_t)r->ret < total) {
		n = total - r->ret;
		good = malloc(n);
		ASSERT_NE(NULL, good);
		rr = read(fd, good, n);
		EXPECT_EQ((ssize_t)n, rr)
			TH_LOG("%s (%s): resumed read = %zd (%s), want %zu",
			       c->name, label, rr,
			       rr < 0 ? strerror(errno) : "ok", n);
		if (rr > 0)
			EXPECT_EQ(0, fnr_check(good, rr, c->foff + r->ret,
					       id, GEN, why, sizeof(why)))
				TH_LOG("%s (%s): resumed read: %s", c->name,
				       label, why);
		free(good);
	}
	ASSERT_EQ(0, munmap(map, mlen)) TH_LOG("munmap: %s", strerror(errno));
}

static void check_res(struct __test_metadata *_metadata,
		      const struct rcase *c, const char *label,
		      const struct res *r)
{
	off_t want_pos = c->foff + (r->ret > 0 ? r->ret : 0);
	/* A single iovec ends at the fault: not exact on every arch. */
	bool at_fault = c->niov == 1 && c->want > 0 &&
			(size_t)c->want < c->iov[0].len;

	if (c->want < 0) {
		EXPECT_TRUE(r->ret == -1 && r->err == EFAULT)
			TH_LOG("%s (%s): returned %zd (%s), want EFAULT",
			       c->name, label, r->ret, strerror(r->err));
	} else if (!at_fault || FAULT_EXACT) {
		EXPECT_EQ(c->want, r->ret)
			TH_LOG("%s (%s): returned %zd (%s), want %zd", c->name,
			       label, r->ret, strerror(r->err), c->want);
	} else {
		EXPECT_TRUE(r->ret > 0 && r->ret <= c->want)
			TH_LOG("%s (%s): returned %zd (%s), want 1..%zd",
			       c->name, label, r->ret, strerror(r->err),
			       c->want);
	}
	if (c->how == READ)
		EXPECT_EQ(want_pos, r->pos)
			TH_LOG("%s (%s): file position %lld after read = %zd from %llu",
			       c->name, label, (long long)r->pos, r->ret,
			       (unsigned long long)c->foff);
}

/* Run @c hot and cold: each must be right, and the two must agree. */
static void hot_and_cold(struct __test_metadata *_metadata, int fd,
			 uint32_t id, const struct rcase *c)
{
	struct res hot, cold;

	ASSERT_EQ(0, fnr_make_hot(fd, 0, FSIZE))
		TH_LOG("make_hot: %s", strerror(errno));
	run_case(_metadata, fd, id, c, "hot", &hot);
	ASSERT_EQ(0, fnr_drop_cache(fd))
		TH_LOG("drop_cache: %s", strerror(errno));
	run_case(_metadata, fd, id, c, "cold", &cold);

	check_res(_metadata, c, "hot", &hot);
	check_res(_metadata, c, "cold", &cold);
	EXPECT_TRUE(hot.ret == cold.ret && hot.err == cold.err &&
		    hot.pos == cold.pos)
		TH_LOG("%s: hot %zd (errno %d, pos %lld), cold %zd (errno %d, pos %lld)",
		       c->name, hot.ret, hot.err, (long long)hot.pos, cold.ret,
		       cold.err, (long long)cold.pos);
}

/* Small reads (100 bytes in one file page) take the stack buffer. */
#define SMALL(n, h, p, w) { .name = n, .how = h, .foff = 2 * PG + 1000, \
	.pages = p, .niov = 1, .iov = { { PG - 40, 100 } }, .want = w }
/* Large reads (3 pages) start in the middle of a file page. */
#define LARGE(n, h, p, w) { .name = n, .how = h, .foff = PG + 300, \
	.pages = p, .niov = 1, .iov = { { PG - 1000, 3 * PG } }, .want = w }

#define FNR_MISS_FAULT	"noref_miss_fault"

/*
 * The premise of a test: on a kernel with the series, some hot read left
 * the fast path at a fault.  @faults0 is /proc/vmstat noref_miss_fault
 * from before the test.
 */
static void fault_premise(struct __test_metadata *_metadata, long faults0)
{
	long faults = fnr_vmstat(FNR_MISS_FAULT);

	if (!fnr_series()) {
		printf("# %s; the reads ran the normal path\n",
		       FNR_NO_SERIES);
		return;
	}
	ASSERT_LE(0, faults)
		TH_LOG("no %s in /proc/vmstat: CONFIG_VM_EVENT_COUNTERS off?",
		       FNR_MISS_FAULT);
	printf("# fast path: %ld reads left it at a fault (%s)\n",
	       faults - faults0, FNR_MISS_FAULT);
	ASSERT_LT(0, faults - faults0)
		TH_LOG("no hot read left the fast path at a fault: its fault handling was not tested");
}

#define RUN_ALL(cases) do { \
	long __faults0 = fnr_vmstat(FNR_MISS_FAULT); \
	size_t __i; \
	for (__i = 0; __i < ARRAY_SIZE(cases); __i++) \
		hot_and_cold(_metadata, self->fd, self->id, &(cases)[__i]); \
	fault_premise(_metadata, __faults0); \
} while (0)

TEST_F(pf, present_then_absent)
{
	static const struct rcase c[] = {
		SMALL("small", PREAD, "ta", 100),
		SMALL("small, all absent", PREAD, "aa", 100),
		LARGE("large", PREAD, "taaa", 3 * PG),
	};

	RUN_ALL(c);
}

/* Also checks that read(2) moves the file position by the count. */
TEST_F(pf, prot_none_tail)
{
	static const struct rcase c[] = {
		SMALL("small pread", PREAD, "tn", 40),
		SMALL("small read", READ, "tn", 40),
		LARGE("large pread", PREAD, "tnnn", 1000),
		LARGE("large read", READ, "tnnn", 1000),
	};

	RUN_ALL(c);
}

TEST_F(pf, unmapped_tail)
{
	static const struct rcase c[] = {
		SMALL("small pread", PREAD, "tu", 40),
		SMALL("small read", READ, "tu", 40),
		LARGE("large pread", PREAD, "tuuu", 1000),
		LARGE("large read", READ, "tuuu", 1000),
	};

	RUN_ALL(c);
}

TEST_F(pf, all_prot_none)
{
	static const struct rcase c[] = {
		SMALL("small pread", PREAD, "nn", -1),
		SMALL("small read", READ, "nn", -1),
		LARGE("large pread", PREAD, "nnnn", -1),
		LARGE("large read", READ, "nnnn", -1),
	};

	RUN_ALL(c);
}

/* The kernel stops at the fault: the count is the first iovec's length. */
TEST_F(pf, readv_mixed)
{
	static const struct rcase c[] = {
		{ .name = "small", .how = PREADV, .foff = 2 * PG + 1000,
		  .pages = "tnt", .niov = 3,
		  .iov = { { 100, 60 }, { PG + 8, 20 }, { 2 * PG, 20 } },
		  .want = 60 },
		{ .name = "large", .how = PREADV, .foff = PG + 300,
		  .pages = "ttnt", .niov = 3,
		  .iov = { { 100, PG + 500 }, { 2 * PG, PG }, { 3 * PG, PG } },
		  .want = PG + 500 },
	};

	RUN_ALL(c);
}

/*
 * A 4-page read(2) whose buffer faults in its third page: the count must
 * end exactly at the fault, and the file position with it, so that a
 * second read(2) into a good buffer returns exactly the rest.
 */
#define MIDDLE(n, f, p, bo, w) { .name = n, .how = READ, .foff = f, \
	.pages = p, .niov = 1, .iov = { { bo, 4 * PG } }, .want = w, \
	.resume = true }

TEST_F(pf, fault_in_middle_of_large_read)
{
	static const struct rcase c[] = {
		MIDDLE("aligned buffer", PG + 1234, "ttnt", 0, 2 * PG),
		MIDDLE("unaligned buffer", PG + 1234, "tttnt", 700,
		       2 * PG + (PG - 700)),
		MIDDLE("aligned file", 2 * PG, "tttnt", 700,
		       2 * PG + (PG - 700)),
	};

	RUN_ALL(c);
}

TEST_HARNESS_MAIN
