// SPDX-License-Identifier: GPL-2.0
/*
 * Basic read(2) semantics that any correct kernel must provide.  These guard
 * the refcount-free filemap_read() fast path: every read is compared byte
 * for byte with what was written (see fnr_common.h for the data pattern).
 *
 * Files are created in $FNR_DIR (default: the current directory).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include "../kselftest_harness.h"
#include "fnr_common.h"

#define PG	FNR_PAGE
#define KB	1024UL
#define MB	(1024 * KB)

#ifndef RWF_NOWAIT
#define RWF_NOWAIT	0x00000008
#endif

/* Returns the index of the first non-zero byte, or -1 if all are zero. */
static ssize_t first_nonzero(const char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (buf[i])
			return i;
	return -1;
}

/*
 * One pread() of @len bytes at @off must return @want bytes that match
 * generation @gen.
 */
static bool read_expect(struct __test_metadata *_metadata, int fd,
			uint64_t off, size_t len, ssize_t want, uint32_t id,
			uint32_t gen)
{
	char *buf = malloc(len + 1);
	char why[512];
	bool ok = true;
	ssize_t r;

	if (!buf)
		return false;
	r = pread(fd, buf, len, off);
	if (r != want) {
		TH_LOG("pread(off %llu, len %zu) = %zd (%s), want %zd",
		       (unsigned long long)off, len, r,
		       r < 0 ? strerror(errno) : "ok", want);
		ok = false;
	} else if (fnr_check(buf, want, off, id, gen, why, sizeof(why))) {
		TH_LOG("pread(off %llu, len %zu): %s",
		       (unsigned long long)off, len, why);
		ok = false;
	}
	free(buf);
	return ok;
}

/* Like read_expect(), for a file of @size bytes. */
static bool read_sized(struct __test_metadata *_metadata, int fd,
		       uint64_t size, uint64_t off, size_t len, uint32_t id,
		       uint32_t gen)
{
	ssize_t want = off >= size ? 0 : size - off < len ? size - off : len;

	return read_expect(_metadata, fd, off, len, want, id, gen);
}

/* Shorthands for use inside TEST_F() bodies. */
#define READ_EXPECT(off, len, want, gen) \
	read_expect(_metadata, self->fd, (off), (len), (want), self->id, (gen))
/* As READ_EXPECT(), with @want derived from the local variable "size". */
#define READ_SIZED(off, len, gen) \
	read_sized(_metadata, self->fd, size, (off), (len), self->id, (gen))
/* @buf must hold the file bytes [@off, @off + @len) of generation @gen. */
#define EXPECT_DATA(buf, len, off, gen) do { \
	char __why[512]; \
	EXPECT_EQ(0, fnr_check((buf), (len), (off), self->id, (gen), \
			       __why, sizeof(__why))) \
		TH_LOG("%s", __why); \
} while (0)

FIXTURE(rs)
{
	char path[PATH_MAX];
	int fd;
	uint32_t id;
};

FIXTURE_SETUP(rs)
{
	snprintf(self->path, sizeof(self->path), "%s/fnr_rs.XXXXXX",
		 fnr_testdir());
	self->fd = mkstemp(self->path);
	ASSERT_LE(0, self->fd) TH_LOG("mkstemp(%s): %s", self->path,
				      strerror(errno));
	/* Distinct per process, so a stamp of another test file is obvious. */
	self->id = (getpid() & 0x7fff) | 0x8000;
}

/*
 * Runs in the parent so the file is also removed when an ASSERT fails (the
 * in-child teardown can be skipped after the assertion longjmp()).  The fd
 * belongs to the test child and goes away with it.
 */
FIXTURE_TEARDOWN_PARENT(rs)
{
	unlink(self->path);
}

TEST_F(rs, eof)
{
	const size_t size = 3 * PG + 100;
	char c;

	ASSERT_EQ(0, fnr_write_gen(self->fd, 0, size, self->id, 1));
	ASSERT_TRUE(READ_EXPECT(0, size, size, 1));
	EXPECT_EQ(0, pread(self->fd, &c, 1, size));
	EXPECT_EQ(0, pread(self->fd, &c, 1, size + 1));
	EXPECT_EQ(0, pread(self->fd, &c, 1, size + PG));
	EXPECT_EQ(0, pread(self->fd, &c, 1, 1ULL << 40));
	EXPECT_TRUE(READ_EXPECT(size - 50, 200, 50, 1));
	EXPECT_TRUE(READ_EXPECT(3 * PG - 10, PG, 110, 1));
	EXPECT_TRUE(READ_EXPECT(size - 1, 1, 1, 1));
	EXPECT_EQ(0, pread(self->fd, &c, 0, 0));
	EXPECT_EQ(0, pread(self->fd, &c, 0, 10));
	EXPECT_EQ(0, pread(self->fd, &c, 0, size + 10));
}

TEST_F(rs, page_boundaries)
{
	static const uint64_t bounds[] = { 16 * KB, 64 * KB, 2 * MB };
	const size_t size = 4 * MB + 123;
	uint64_t k, b;
	int pass, i;

	ASSERT_EQ(0, fnr_write_gen(self->fd, 0, size, self->id, 1));
	/* Pass 0 reads from the cache, pass 1 after dropping it. */
	for (pass = 0; pass < 2; pass++) {
		if (pass)
			fnr_drop_cache(self->fd);
		for (k = 1; k * PG < size; k++)
			ASSERT_TRUE(READ_SIZED(k * PG - 7, 14, 1));
		for (i = 0; i < 3; i++) {
			for (b = bounds[i]; b < size; b += bounds[i]) {
				ASSERT_TRUE(READ_SIZED(b - 1, 2, 1));
				ASSERT_TRUE(READ_SIZED(b - 4095, 8192, 1));
				ASSERT_TRUE(READ_SIZED(b - 3, 3 * PG + 6, 1));
			}
		}
		ASSERT_TRUE(READ_SIZED(12345, MB, 1));
		ASSERT_TRUE(READ_SIZED(2 * MB - 4095, 8192, 1));
		ASSERT_TRUE(READ_SIZED(4 * MB - 5, 200, 1));
		ASSERT_TRUE(READ_SIZED(0, size + 1, 1));
	}
}

TEST_F(rs, short_reads)
{
	const size_t size = 2 * PG + 777;
	char buf[128];
	int i;

	ASSERT_EQ(0, fnr_write_gen(self->fd, 0, size, self->id, 1));
	EXPECT_TRUE(READ_EXPECT(size - 3000, 10000, 3000, 1));
	EXPECT_TRUE(READ_EXPECT(0, 3 * PG, size, 1));
	for (i = 1; i <= 10; i++)
		EXPECT_TRUE(READ_EXPECT(size - i, 1, 1, 1));
	EXPECT_TRUE(READ_EXPECT(size - 1, 2, 1, 1));
	/* read(2) through the file position. */
	ASSERT_EQ((off_t)(size - 5), lseek(self->fd, size - 5, SEEK_SET));
	ASSERT_EQ(5, read(self->fd, buf, sizeof(buf)));
	EXPECT_DATA(buf, 5, size - 5, 1);
	EXPECT_EQ(0, read(self->fd, buf, sizeof(buf)));
}

TEST_F(rs, readv_iovecs)
{
	static const size_t sz[4] = { 1, 4095, 4097, 10000 };
	const size_t size = 8 * PG + 50;
	const uint64_t offs[] = { PG - 1, 0, 3 * PG - 1, size - 5000 };
	struct iovec iov[4];
	uint64_t off, o;
	size_t total, want, n;
	ssize_t r;
	int i, j;

	ASSERT_EQ(0, fnr_write_gen(self->fd, 0, size, self->id, 1));
	for (i = 0; i < 4; i++) {
		iov[i].iov_len = sz[i];
		iov[i].iov_base = malloc(sz[i]);
		ASSERT_NE(NULL, iov[i].iov_base);
	}
	for (j = 0; j < 4; j++) {
		off = offs[j];
		total = 1 + 4095 + 4097 + 10000;
		want = off + total > size ? size - off : total;
		if (j == 2)
			fnr_drop_cache(self->fd);
		r = preadv(self->fd, iov, 4, off);
		ASSERT_EQ((ssize_t)want, r) TH_LOG("preadv at %llu: %s",
			(unsigned long long)off, strerror(errno));
		for (i = 0, o = off; i < 4 && o < off + want; i++) {
			n = off + want - o < sz[i] ? off + want - o : sz[i];
			EXPECT_DATA(iov[i].iov_base, n, o, 1);
			o += n;
		}
	}
	for (i = 0; i < 4; i++)
		free(iov[i].iov_base);
}

TEST_F(rs, nowait_cached_and_uncached)
{
	const size_t size = 64 * KB + 300;
	char *buf = malloc(size);
	struct iovec iov = { .iov_base = buf, .iov_len = size };
	ssize_t r;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, fnr_write_gen(self->fd, 0, size, self->id, 1));
	ASSERT_TRUE(READ_EXPECT(0, size, size, 1));

	r = preadv2(self->fd, &iov, 1, 0, RWF_NOWAIT);
	if (r < 0 && errno == EOPNOTSUPP) {
		free(buf);
		SKIP(return, "RWF_NOWAIT reads not supported here");
	}
	ASSERT_EQ((ssize_t)size, r) TH_LOG("cached RWF_NOWAIT read: %s",
					   strerror(errno));
	EXPECT_DATA(buf, size, 0, 1);

	fnr_drop_cache(self->fd);
	memset(buf, 0, size);
	r = preadv2(self->fd, &iov, 1, 0, RWF_NOWAIT);
	if (r < 0) {
		EXPECT_EQ(EAGAIN, errno) TH_LOG("uncached RWF_NOWAIT: %s",
						strerror(errno));
	} else {
		EXPECT_LT(0, r) TH_LOG("uncached RWF_NOWAIT read returned 0");
		EXPECT_GE((ssize_t)size, r);
		EXPECT_DATA(buf, r, 0, 1);
	}
	free(buf);
}

TEST_F(rs, odirect_mixed)
{
	const size_t size = 64 * KB, doff = 16 * KB, dlen = 16 * KB;
	char *buf;
	ssize_t r;
	int dfd;

	dfd = open(self->path, O_RDWR | O_DIRECT);
	if (dfd < 0 && errno == EINVAL)
		SKIP(return, "O_DIRECT not supported here");
	ASSERT_LE(0, dfd) TH_LOG("open O_DIRECT: %s", strerror(errno));
	ASSERT_EQ(0, posix_memalign((void **)&buf, PG, size));

	ASSERT_EQ(0, fnr_write_gen(self->fd, 0, size, self->id, 1));
	ASSERT_EQ(0, fsync(self->fd));
	ASSERT_EQ((ssize_t)size, pread(dfd, buf, size, 0))
		TH_LOG("O_DIRECT read: %s", strerror(errno));
	EXPECT_DATA(buf, size, 0, 1);

	/* Cache gen 1, then overwrite part of it with O_DIRECT. */
	ASSERT_TRUE(READ_EXPECT(0, size, size, 1));
	fnr_fill(buf, dlen, doff, self->id, 2);
	r = pwrite(dfd, buf, dlen, doff);
	if (r < 0 && errno == EINVAL) {
		close(dfd);
		free(buf);
		SKIP(return, "aligned O_DIRECT write fails with EINVAL");
	}
	ASSERT_EQ((ssize_t)dlen, r) TH_LOG("O_DIRECT write: %s",
					   strerror(errno));
	EXPECT_TRUE(READ_EXPECT(0, doff, doff, 1));
	EXPECT_TRUE(READ_EXPECT(doff, dlen, dlen, 2));
	EXPECT_TRUE(READ_EXPECT(doff + dlen, size - doff - dlen,
				size - doff - dlen, 1));
	/* Unaligned reads straddling both edges of the O_DIRECT range. */
	ASSERT_EQ(200, pread(self->fd, buf, 200, doff - 100));
	EXPECT_DATA(buf, 100, doff - 100, 1);
	EXPECT_DATA(buf + 100, 100, doff, 2);
	ASSERT_EQ(200, pread(self->fd, buf, 200, doff + dlen - 100));
	EXPECT_DATA(buf, 100, doff + dlen - 100, 2);
	EXPECT_DATA(buf + 100, 100, doff + dlen, 1);
	ASSERT_EQ((ssize_t)dlen, pread(dfd, buf, dlen, doff));
	EXPECT_DATA(buf, dlen, doff, 2);
	close(dfd);
	free(buf);
}

TEST_F(rs, sparse_holes)
{
	const uint64_t doff = 6 * MB;
	const size_t len = 4 * MB;
	char *buf = malloc(len);
	uint64_t off;
	ssize_t r;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, ftruncate(self->fd, 8 * MB));
	ASSERT_EQ(0, fnr_write_gen(self->fd, doff, 100, self->id, 1));

	ASSERT_EQ((ssize_t)PG, pread(self->fd, buf, PG, 0));
	EXPECT_EQ(-1, first_nonzero(buf, PG));
	ASSERT_EQ((ssize_t)PG, pread(self->fd, buf, PG, doff - PG));
	EXPECT_EQ(-1, first_nonzero(buf, PG));
	/* Hole, data, hole again (the rest of the written page is zero). */
	for (off = doff - 50; off > doff - 2 * PG - 10; off -= PG - 1) {
		r = pread(self->fd, buf, len, off);
		ASSERT_EQ((ssize_t)(8 * MB - off), r);
		EXPECT_EQ(-1, first_nonzero(buf, doff - off));
		EXPECT_DATA(buf + (doff - off), 100, doff, 1);
		EXPECT_EQ(-1, first_nonzero(buf + (doff - off) + 100,
					    r - (doff - off) - 100));
	}
	ASSERT_EQ((ssize_t)PG, pread(self->fd, buf, PG, doff + 50));
	EXPECT_DATA(buf, 50, doff + 50, 1);
	EXPECT_EQ(-1, first_nonzero(buf + 50, PG - 50));
	ASSERT_EQ(10, pread(self->fd, buf, 100, 8 * MB - 10));
	EXPECT_EQ(-1, first_nonzero(buf, 10));
	free(buf);
}

TEST_F(rs, truncate_down)
{
	const size_t size = 5 * PG, tsize = 2 * PG + 10;
	char *buf = malloc(size);

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, fnr_write_gen(self->fd, 0, size, self->id, 1));
	ASSERT_TRUE(READ_EXPECT(0, size, size, 1));
	ASSERT_EQ(0, ftruncate(self->fd, tsize));
	EXPECT_TRUE(READ_EXPECT(0, size, tsize, 1));
	EXPECT_TRUE(READ_EXPECT(PG + 1, size, tsize - PG - 1, 1));
	EXPECT_EQ(0, pread(self->fd, buf, size, tsize));
	EXPECT_EQ(0, pread(self->fd, buf, size, 3 * PG));
	EXPECT_EQ(0, pread(self->fd, buf, 1, 4 * PG + 100));

	/* Extend again: everything past the old cut must read as zeros. */
	ASSERT_EQ(0, ftruncate(self->fd, size));
	ASSERT_EQ((ssize_t)size, pread(self->fd, buf, size, 0));
	EXPECT_DATA(buf, tsize, 0, 1);
	EXPECT_EQ(-1, first_nonzero(buf + tsize, size - tsize))
		TH_LOG("stale data past the truncation point");
	free(buf);
}

TEST_F(rs, mmap_write_then_read)
{
	const size_t size = 3 * PG;
	char *map;

	ASSERT_EQ(0, fnr_write_gen(self->fd, 0, size, self->id, 1));
	ASSERT_TRUE(READ_EXPECT(0, size, size, 1));
	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   self->fd, 0);
	ASSERT_NE(MAP_FAILED, map);

	fnr_fill(map, size, 0, self->id, 2);
	EXPECT_TRUE(READ_EXPECT(0, size, size, 2));
	EXPECT_TRUE(READ_EXPECT(PG - 3, PG + 6, PG + 6, 2));

	fnr_fill(map + PG, PG, PG, self->id, 3);
	EXPECT_TRUE(READ_EXPECT(0, PG, PG, 2));
	EXPECT_TRUE(READ_EXPECT(PG, PG, PG, 3));
	EXPECT_TRUE(READ_EXPECT(2 * PG, PG + 10, PG, 2));
	munmap(map, size);
}

static long elapsed_ns(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000000000L +
	       (t.tv_nsec - t0->tv_nsec);
}

struct overwriter {
	int fd;
	uint32_t id;
	bool stop;	/* accessed with __atomic builtins */
	bool failed;
};

static void *overwrite_fn(void *arg)
{
	struct overwriter *w = arg;
	char a[PG], b[PG];
	unsigned long n;

	fnr_fill(a, PG, PG, w->id, 1);
	fnr_fill(b, PG, PG, w->id, 2);
	for (n = 0; !__atomic_load_n(&w->stop, __ATOMIC_RELAXED); n++) {
		if (pwrite(w->fd, n & 1 ? b : a, PG, PG) != (ssize_t)PG) {
			w->failed = true;
			break;
		}
	}
	return NULL;
}

TEST_F(rs, concurrent_overwrite)
{
	struct overwriter w = { .fd = self->fd, .id = self->id };
	struct timespec t0;
	unsigned long reads = 0;
	long bad = 0;
	char buf[PG], why[512];
	pthread_t th;
	ssize_t r;
	size_t i;

	ASSERT_EQ(0, fnr_write_gen(self->fd, 0, 3 * PG, self->id, 1));
	ASSERT_EQ(0, pthread_create(&th, NULL, overwrite_fn, &w));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (elapsed_ns(&t0) < 300000000L) {
		r = pread(self->fd, buf, PG, PG);
		reads++;
		if (r != (ssize_t)PG) {
			if (!bad++)
				TH_LOG("pread = %zd (%s)", r, strerror(errno));
			continue;
		}
		/* Cells may tear; each byte must belong to gen 1 or gen 2. */
		for (i = 0; i < PG; i++) {
			if (buf[i] == (char)fnr_byte(PG + i, self->id, 1) ||
			    buf[i] == (char)fnr_byte(PG + i, self->id, 2))
				continue;
			if (!bad++) {
				fnr_check(buf, PG, PG, self->id, 1, why,
					  sizeof(why));
				TH_LOG("read %lu, byte %zu in neither gen: %s",
				       reads, i, why);
			}
			break;
		}
	}
	__atomic_store_n(&w.stop, true, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	EXPECT_FALSE(w.failed);
	EXPECT_EQ(0, bad) TH_LOG("%ld of %lu reads bad", bad, reads);
	TH_LOG("%lu reads", reads);
}

TEST_HARNESS_MAIN
