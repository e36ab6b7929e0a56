// SPDX-License-Identifier: GPL-2.0
/*
 * splice(), tee() and vmsplice() with SPLICE_F_MOVE and SPLICE_F_GIFT must
 * move the right data (see fnr_common.h) and leave the source's page cache
 * intact.  filemap-noref reads hot folios without a reference, so file
 * splices no longer steal page cache folios and gifted pages that are
 * flagged page cache folios cannot be stolen.
 *
 * Files are created in $FNR_DIR (default: the current directory).  Pipes
 * belong to the test child and go away with it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "../kselftest_harness.h"
#include "fnr_common.h"

#define PG	FNR_PAGE
#define NFILES	3
#define ASIZE	(16 * PG)
#define ROUNDS	200
#define CHUNK	(3 * PG + 100)	/* tee test: splice unaligned chunks */

/* Splice @len bytes from the pipe to @fd at @off, moving: 0 or -errno. */
static int drain_to(const int pfd[2], int fd, loff_t off, size_t len)
{
	ssize_t m;

	while (len) {
		m = splice(pfd[0], NULL, fd, &off, len, SPLICE_F_MOVE);
		if (m <= 0)
			return m ? -errno : -ENODATA;
		len -= m;
	}
	return 0;
}

/* Move @len bytes of @in at @ioff to @out at @ooff via @pfd: 0 or -errno. */
static int move_range(int in, loff_t ioff, int out, loff_t ooff, size_t len,
		      const int pfd[2])
{
	ssize_t n;
	int r = 0;

	for (; len && !r; ooff += n, len -= n) {
		n = splice(in, &ioff, pfd[1], NULL, len, SPLICE_F_MOVE);
		if (n <= 0)
			return n ? -errno : -ENODATA;
		r = drain_to(pfd, out, ooff, n);
	}
	return r;
}

FIXTURE(sm)
{
	char path[NFILES][PATH_MAX];
	int fd[NFILES];
	uint32_t id[NFILES];
};

FIXTURE_SETUP(sm)
{
	int i;

	for (i = 0; i < NFILES; i++) {
		snprintf(self->path[i], PATH_MAX, "%s/fnr_sm.XXXXXX",
			 fnr_testdir());
		self->fd[i] = mkstemp(self->path[i]);
		/* No teardown after a failed setup: remove the others here. */
		ASSERT_LE(0, self->fd[i]) {
			TH_LOG("mkstemp(%s): %s", self->path[i],
			       strerror(errno));
			while (i--)
				unlink(self->path[i]);
		}
		self->id[i] = ((getpid() & 0x1fff) << 2 | i) | 0x8000;
	}
}

/* In the parent, so that the files also go when an ASSERT fails. */
FIXTURE_TEARDOWN_PARENT(sm)
{
	int i;

	for (i = 0; i < NFILES; i++)
		unlink(self->path[i]);
}

/* @fd holds at 0 [@soff, @soff + @len <= ASIZE) of @id, generation @gen. */
static bool check_at(struct __test_metadata *_metadata, int fd,
		     const char *what, size_t len, uint64_t soff, uint32_t id,
		     uint32_t gen)
{
	char buf[ASIZE], why[512];
	ssize_t r = pread(fd, buf, len, 0);

	if (r != (ssize_t)len)
		TH_LOG("%s: pread(len %zu) = %zd (%s)", what, len, r,
		       r < 0 ? strerror(errno) : "short");
	else if (fnr_check(buf, len, soff, id, gen, why, sizeof(why)))
		TH_LOG("%s: %s", what, why);
	else
		return true;
	return false;
}

/* File @f holds [@soff, @soff + @len) of file @src, generation @gen. */
#define CHECK(f, what, len, soff, src, gen) \
	EXPECT_TRUE(check_at(_metadata, self->fd[f], what, len, soff, \
			     self->id[src], gen))

/* CHECK() from the page cache, then again after dropping it. */
#define CHECK_TWICE(f, what, len, soff, src, gen) do { \
	CHECK(f, what, len, soff, src, gen); \
	ASSERT_EQ(0, fnr_drop_cache(self->fd[f])) TH_LOG("%s", strerror(errno)); \
	CHECK(f, what " reread", len, soff, src, gen); \
} while (0)

TEST_F(sm, file_to_pipe_to_file_move)
{
	int pfd[2], a = 0, b = 1, r;

	ASSERT_EQ(0, fnr_write_gen(self->fd[a], 0, ASIZE, self->id[a], 1));
	ASSERT_EQ(0, fnr_make_hot(self->fd[a], 0, ASIZE));
	ASSERT_EQ(0, pipe2(pfd, O_NONBLOCK));

	r = move_range(self->fd[a], 0, self->fd[b], 0, ASIZE, pfd);
	if (r == -EINVAL)
		SKIP(return, "splice() gives EINVAL on %s", fnr_testdir());
	ASSERT_EQ(0, r) TH_LOG("splice: %s", strerror(-r));
	/* Once more, unaligned, over the same range of B. */
	r = move_range(self->fd[a], 3 * PG + 100, self->fd[b], 3 * PG + 100,
		       5 * PG + 7, pfd);
	ASSERT_EQ(0, r) TH_LOG("splice: %s", strerror(-r));

	CHECK_TWICE(b, "B", ASIZE, 0, a, 1);
	CHECK_TWICE(a, "A", ASIZE, 0, a, 1);
	ASSERT_EQ(0, fnr_make_hot(self->fd[a], 0, ASIZE));
	CHECK(a, "A hot again", ASIZE, 0, a, 1);
}

TEST_F(sm, file_to_pipe_to_pipe_tee)
{
	char b1[CHUNK], b2[CHUNK], why[512];
	int p1[2], p2[2], a = 0;
	loff_t off = 0;
	ssize_t n;

	ASSERT_EQ(0, fnr_write_gen(self->fd[a], 0, ASIZE, self->id[a], 1));
	ASSERT_EQ(0, fnr_make_hot(self->fd[a], 0, ASIZE));
	ASSERT_EQ(0, pipe2(p1, O_NONBLOCK));
	ASSERT_EQ(0, pipe2(p2, O_NONBLOCK));

	while (off < (loff_t)ASIZE) {
		uint64_t at = off;

		n = splice(self->fd[a], &off, p1[1], NULL,
			   ASIZE - at < CHUNK ? ASIZE - at : CHUNK,
			   SPLICE_F_MOVE);
		if (n < 0 && errno == EINVAL)
			SKIP(return, "splice() gives EINVAL on %s",
			     fnr_testdir());
		ASSERT_LT(0, n) TH_LOG("splice at %llu: %s",
				       (unsigned long long)at, strerror(errno));
		ASSERT_EQ(n, tee(p1[0], p2[1], n, 0))
			TH_LOG("tee: %s", strerror(errno));
		/* A pipe read returns all there is, up to @n. */
		ASSERT_EQ(n, read(p1[0], b1, n)) TH_LOG("%s", strerror(errno));
		ASSERT_EQ(n, read(p2[0], b2, n)) TH_LOG("%s", strerror(errno));
		EXPECT_EQ(0, fnr_check(b1, n, at, self->id[a], 1, why,
				       sizeof(why)))
			TH_LOG("pipe 1: %s", why);
		EXPECT_EQ(0, memcmp(b1, b2, n)) TH_LOG("tee'd pipe differs");
	}
	CHECK_TWICE(a, "A", ASIZE, 0, a, 1);
}

TEST_F(sm, vmsplice_gift_anon)
{
	const size_t len = 4 * PG;
	int pfd[2], c = 0, r;
	struct iovec iov;
	char *buf;

	buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, buf) TH_LOG("mmap: %s", strerror(errno));
	fnr_fill(buf, len, 0, self->id[c], 1);
	ASSERT_EQ(0, pipe2(pfd, O_NONBLOCK));

	iov = (struct iovec){ .iov_base = buf, .iov_len = len };
	ASSERT_EQ((ssize_t)len, vmsplice(pfd[1], &iov, 1, SPLICE_F_GIFT))
		TH_LOG("vmsplice: %s", strerror(errno));
	r = drain_to(pfd, self->fd[c], 0, len);
	if (r == -EINVAL)
		SKIP(return, "splice() gives EINVAL on %s", fnr_testdir());
	ASSERT_EQ(0, r) TH_LOG("splice: %s", strerror(-r));
	/* The gifted pages are the pipe's now: unmap, do not touch. */
	ASSERT_EQ(0, munmap(buf, len));

	CHECK_TWICE(c, "C", len, 0, c, 1);
}

/*
 * Gift two pages of a MAP_SHARED mapping of a hot file, then truncate the
 * file: the pipe holds the last references to folios that have left the
 * page cache but may still be flagged PG_rcu_free.  They must not be
 * stolen, must deliver their data and must be freed without harm.
 */
TEST_F(sm, vmsplice_gift_shared_file_page)
{
	const size_t len = 4 * PG;
	int pfd[2], d = 0, e = 1, f = 2, r;
	struct iovec iov;
	char *map, c;

	ASSERT_EQ(0, fnr_write_gen(self->fd[d], 0, len, self->id[d], 1));
	ASSERT_EQ(0, fnr_make_hot(self->fd[d], 0, len));
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		   self->fd[d], 0);
	ASSERT_NE(MAP_FAILED, map) TH_LOG("mmap: %s", strerror(errno));
	ASSERT_EQ(0, pipe2(pfd, O_NONBLOCK));

	/* vmsplice() faults the pages in and takes references to them. */
	iov = (struct iovec){ .iov_base = map + PG, .iov_len = 2 * PG };
	ASSERT_EQ((ssize_t)(2 * PG), vmsplice(pfd[1], &iov, 1, SPLICE_F_GIFT))
		TH_LOG("vmsplice: %s", strerror(errno));
	ASSERT_EQ(0, ftruncate(self->fd[d], 0));
	ASSERT_EQ(0, munmap(map, len));
	r = drain_to(pfd, self->fd[e], 0, 2 * PG);
	if (r == -EINVAL)
		SKIP(return, "splice() gives EINVAL on %s", fnr_testdir());
	ASSERT_EQ(0, r) TH_LOG("splice: %s", strerror(-r));

	/* E holds D's old pages 1 and 2. */
	CHECK_TWICE(e, "E", 2 * PG, PG, d, 1);
	EXPECT_EQ(0, pread(self->fd[d], &c, 1, 0)) TH_LOG("D not empty");

	/* Fresh data elsewhere, and in D, must read back right. */
	ASSERT_EQ(0, fnr_write_gen(self->fd[f], 0, len, self->id[f], 2));
	CHECK(f, "F", len, 0, f, 2);
	ASSERT_EQ(0, fnr_write_gen(self->fd[d], 0, len, self->id[d], 2));
	CHECK(d, "D gen 2", len, 0, d, 2);
	CHECK(d, "D gen 2, read again", len, 0, d, 2);
	ASSERT_EQ(0, fnr_make_hot(self->fd[d], 0, len));
	CHECK(d, "D gen 2, hot", len, 0, d, 2);
	CHECK(e, "E again", 2 * PG, PG, d, 1);
}

struct reader {
	int fd;
	uint32_t id;
	bool stop;		/* accessed with __atomic builtins */
	unsigned long reads;	/* likewise */
	unsigned long bad;
	char why[512];		/* the first bad read */
};

static void *reader_fn(void *arg)
{
	static const size_t lens[] = { 100, PG + 14, 3 * PG + 5, 2 * PG };
	struct reader *rd = arg;
	char buf[4 * PG], why[512];
	unsigned long n;
	uint64_t off;
	size_t len;
	ssize_t r;

	for (n = 0; !__atomic_load_n(&rd->stop, __ATOMIC_RELAXED); n++) {
		__atomic_store_n(&rd->reads, n + 1, __ATOMIC_RELAXED);
		len = lens[n % 4];
		off = (n * 1237) % (ASIZE - len + 1);
		r = pread(rd->fd, buf, len, off);
		if (r != (ssize_t)len)
			snprintf(why, sizeof(why), "pread(off %llu, len %zu) = %zd",
				 (unsigned long long)off, len, r);
		else if (!fnr_check(buf, len, off, rd->id, 1, why, sizeof(why)))
			continue;
		if (!rd->bad++)
			snprintf(rd->why, sizeof(rd->why), "%s", why);
	}
	return NULL;
}

TEST_F(sm, loop_while_reading)
{
	struct reader rd = { .fd = self->fd[0], .id = self->id[0] };
	int pfd[2], a = 0, b = 1, r = 0, i;
	pthread_t th;
	loff_t off;

	ASSERT_EQ(0, fnr_write_gen(self->fd[a], 0, ASIZE, self->id[a], 1));
	ASSERT_EQ(0, fnr_make_hot(self->fd[a], 0, ASIZE));
	ASSERT_EQ(0, pipe2(pfd, O_NONBLOCK));
	ASSERT_EQ(0, pthread_create(&th, NULL, reader_fn, &rd));
	while (!__atomic_load_n(&rd.reads, __ATOMIC_RELAXED))
		sched_yield();

	for (i = 0; i < ROUNDS && !r; i++) {
		off = i ? (i * 1237) % (8 * PG) : 0;
		r = move_range(self->fd[a], off, self->fd[b], off,
			       ASIZE - off, pfd);
		if (!r && !(i % 8) && !check_at(_metadata, self->fd[b], "B",
						ASIZE, 0, self->id[a], 1))
			r = -EIO;
	}
	__atomic_store_n(&rd.stop, true, __ATOMIC_RELAXED);
	ASSERT_EQ(0, pthread_join(th, NULL));
	if (r == -EINVAL && i == 1)
		SKIP(return, "splice() gives EINVAL on %s", fnr_testdir());
	EXPECT_EQ(0, r) TH_LOG("round %d: %s", i - 1, strerror(-r));
	CHECK(b, "B after the rounds", ASIZE, 0, a, 1);
	EXPECT_LT(0UL, rd.reads);
	EXPECT_EQ(0UL, rd.bad) TH_LOG("%lu of %lu reads bad, first: %s", rd.bad,
				    rd.reads, rd.why);
	CHECK_TWICE(a, "A", ASIZE, 0, a, 1);
	TH_LOG("%d rounds, %lu reads", i, rd.reads);
}

TEST_HARNESS_MAIN
