// SPDX-License-Identifier: GPL-2.0
/*
 * A FUSE server that answers reads with splice(SPLICE_F_MOVE) from a
 * backing file: the kernel may then move ("steal") the backing file's page
 * cache folio into the FUSE file's page cache instead of copying it.  With
 * filemap-noref a hot (PG_rcu_free) folio must never move, since readers
 * of the backing file may be copying it without a reference; a cold one
 * still moves, so zero copy is kept for data read once.
 *
 * Whether a backing page moved is seen with mincore(): a moved page is
 * no longer in the backing file's page cache.  The cold test is the
 * control of the hot one: it shows that the check sees a move.
 *
 * The server is a child process (FUSE's raw protocol, no libfuse), the
 * mount point and the backing file are in $FNR_DIR (default: the current
 * directory).  Skips without /dev/fuse (CONFIG_FUSE_FS).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/fuse.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "fnr_common.h"
#include "fnr_pressure.h"

#define PG	FNR_PAGE
#define NPAGES	4
#define FSIZE	(NPAGES * PG)
#define FILE_NODE	2
#define REQ_BUF	(FUSE_MIN_READ_BUFFER + 128 * 1024)

/* Reply to request @unique: a header and @len bytes of @arg. */
static int reply(int dev, uint64_t unique, int error, const void *arg,
		 size_t len)
{
	struct fuse_out_header oh = {
		.len = sizeof(oh) + (error ? 0 : len),
		.error = error,
		.unique = unique,
	};
	struct iovec iov[2] = {
		{ .iov_base = &oh, .iov_len = sizeof(oh) },
		{ .iov_base = (void *)arg, .iov_len = error ? 0 : len },
	};

	return writev(dev, iov, 2) == (ssize_t)oh.len ? 0 : -1;
}

static void file_attr(struct fuse_attr *a, uint64_t node)
{
	memset(a, 0, sizeof(*a));
	a->ino = node;
	a->nlink = node == FILE_NODE ? 1 : 2;
	a->mode = node == FILE_NODE ? S_IFREG | 0444 : S_IFDIR | 0755;
	a->size = node == FILE_NODE ? FSIZE : 0;
	a->blocks = a->size / 512;
	a->blksize = PG;
}

/*
 * Reply to a read with its data moved from @back: the header goes into the
 * pipe first, then the backing file's pages (splice() puts page cache
 * folios there), then all of it into /dev/fuse with SPLICE_F_MOVE.
 */
static int reply_read(int dev, int back, const int pfd[2],
		      struct fuse_in_header *ih, struct fuse_read_in *in)
{
	loff_t off = in->offset;
	size_t n = off < FSIZE ? FSIZE - off : 0, done;
	struct fuse_out_header oh = { .unique = ih->unique };
	ssize_t r;

	if (n > in->size)
		n = in->size;
	oh.len = sizeof(oh) + n;
	if (write(pfd[1], &oh, sizeof(oh)) != sizeof(oh))
		return -1;
	for (done = 0; done < n; done += r) {
		r = splice(back, &off, pfd[1], NULL, n - done, SPLICE_F_MOVE);
		if (r <= 0)
			return -1;
	}
	for (done = 0; done < oh.len; done += r) {
		r = splice(pfd[0], NULL, dev, NULL, oh.len - done,
			   SPLICE_F_MOVE);
		if (r <= 0)
			return -1;
	}
	return 0;
}

/* The server's loop; returns when the connection goes away. */
static void serve(int dev, int back)
{
	static char buf[REQ_BUF];
	struct fuse_in_header *ih = (void *)buf;
	void *in = buf + sizeof(*ih);
	struct fuse_init_out init = {};
	struct fuse_entry_out entry = {};
	struct fuse_attr_out attr = {};
	struct fuse_open_out open_out = {};
	int pfd[2];
	ssize_t n;

	if (pipe(pfd) || fcntl(pfd[1], F_SETPIPE_SZ, 256 * 1024) < 0)
		return;
	for (;;) {
		n = read(dev, buf, sizeof(buf));
		if (n < 0 && (errno == EINTR || errno == ENOENT))
			continue;
		if (n < (ssize_t)sizeof(*ih))
			return;
		switch (ih->opcode) {
		case FUSE_INIT: {
			struct fuse_init_in *ii = in;

			init.major = FUSE_KERNEL_VERSION;
			init.minor = ii->minor < FUSE_KERNEL_MINOR_VERSION ?
				     ii->minor : FUSE_KERNEL_MINOR_VERSION;
			init.max_readahead = ii->max_readahead;
			init.max_write = PG;
			reply(dev, ih->unique, 0, &init, sizeof(init));
			break;
		}
		case FUSE_LOOKUP:
			if (ih->nodeid != FUSE_ROOT_ID || strcmp(in, "f")) {
				reply(dev, ih->unique, -ENOENT, NULL, 0);
				break;
			}
			entry.nodeid = FILE_NODE;
			entry.generation = 1;
			file_attr(&entry.attr, FILE_NODE);
			reply(dev, ih->unique, 0, &entry, sizeof(entry));
			break;
		case FUSE_GETATTR:
			file_attr(&attr.attr, ih->nodeid);
			reply(dev, ih->unique, 0, &attr, sizeof(attr));
			break;
		case FUSE_OPEN:
		case FUSE_OPENDIR:
			open_out.fh = 1;
			reply(dev, ih->unique, 0, &open_out, sizeof(open_out));
			break;
		case FUSE_READ:
			if (!reply_read(dev, back, pfd, ih, in))
				break;
			/* What is left in the pipe would prefix the next reply. */
			close(pfd[0]);
			close(pfd[1]);
			if (pipe(pfd) || fcntl(pfd[1], F_SETPIPE_SZ, 256 * 1024) < 0)
				return;
			reply(dev, ih->unique, -EIO, NULL, 0);
			break;
		case FUSE_FLUSH:
		case FUSE_RELEASE:
		case FUSE_RELEASEDIR:
			reply(dev, ih->unique, 0, NULL, 0);
			break;
		case FUSE_FORGET:
		case FUSE_BATCH_FORGET:
		case FUSE_INTERRUPT:
			break;
		default:
			reply(dev, ih->unique, -ENOSYS, NULL, 0);
		}
	}
}

FIXTURE(fm)
{
	char back[PATH_MAX];	/* the backing file */
	char mnt[PATH_MAX];	/* the FUSE mount point */
	int bfd;
	uint32_t id;
	pid_t server;
	bool mounted;
	bool tmpfs;
};

FIXTURE_SETUP(fm)
{
	pid_t parent = getpid();
	char opts[128];
	struct statfs sfs;
	cpu_set_t cpus;
	int dev, err;

	/*
	 * Nothing is created before the checks that can skip: the harness
	 * runs no teardown after a setup that skipped or failed.  The backing
	 * file is unlinked at once; only its descriptor is used.
	 */
	dev = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (dev < 0 && (errno == ENOENT || errno == ENODEV || errno == ENXIO))
		SKIP(return, "no /dev/fuse (CONFIG_FUSE_FS): %s", strerror(errno));
	ASSERT_LE(0, dev) TH_LOG("open /dev/fuse: %s", strerror(errno));
	snprintf(self->back, PATH_MAX, "%s/fnr_fm_back.XXXXXX", fnr_testdir());
	self->bfd = mkstemp(self->back);
	ASSERT_LE(0, self->bfd) TH_LOG("mkstemp: %s", strerror(errno));
	unlink(self->back);
	ASSERT_EQ(0, fstatfs(self->bfd, &sfs));
	self->tmpfs = sfs.f_type == TMPFS_MAGIC;
	self->id = ((getpid() & 0x1fff) << 2) | 0x8000;

	/*
	 * One CPU for the test and the server: the per-CPU LRU batches that
	 * hold references to new folios are then drained by fadvise() here.
	 */
	CPU_ZERO(&cpus);
	CPU_SET(sched_getcpu(), &cpus);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpus), &cpus));

	snprintf(self->mnt, PATH_MAX, "%s/fnr_fm.XXXXXX", fnr_testdir());
	ASSERT_NE(NULL, mkdtemp(self->mnt))
		TH_LOG("mkdtemp(%s): %s", self->mnt, strerror(errno));
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0",
		 dev);
	if (mount("fnr_fm", self->mnt, "fuse", MS_NOSUID | MS_NODEV, opts)) {
		err = errno;
		close(dev);
		rmdir(self->mnt);
		ASSERT_EQ(ENODEV, err) TH_LOG("mount fuse: %s", strerror(err));
		SKIP(return, "no fuse file system (CONFIG_FUSE_FS)");
	}
	self->mounted = true;
	/* The server dies with the test process, which may be killed. */
	self->server = fork();
	ASSERT_LE(0, self->server);
	if (!self->server) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == parent)
			serve(dev, self->bfd);
		_exit(0);
	}
	close(dev);
}

/*
 * In the parent, so that the mount also goes when an ASSERT fails.  The
 * server has died with the test process by now, or goes when the
 * connection does.
 */
FIXTURE_TEARDOWN_PARENT(fm)
{
	if (self->mounted && umount2(self->mnt, 0))
		umount2(self->mnt, MNT_DETACH);
	rmdir(self->mnt);
}

/* Write the backing file a page at a time (small folios), written back. */
static int write_back(int fd, uint32_t id)
{
	uint64_t off;

	for (off = 0; off < FSIZE; off += PG) {
		if (fnr_write_gen(fd, off, PG, id, 1))
			return -1;
	}
	return fsync(fd);
}

/* Drain this CPU's LRU batches: fadvise() beyond EOF drops nothing. */
static int drain_lru(int fd)
{
	return posix_fadvise(fd, FSIZE, PG, POSIX_FADV_DONTNEED);
}

/* Pages of the backing file still in its page cache; -1 on error. */
static int resident(int fd)
{
	unsigned char vec[NPAGES];
	int i, n = 0;
	void *map;

	map = mmap(NULL, FSIZE, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return -1;
	if (mincore(map, FSIZE, vec))
		n = -1;
	for (i = 0; i < NPAGES && n >= 0; i++)
		n += vec[i] & 1;
	munmap(map, FSIZE);
	return n;
}

/* Read the whole of @path (the FUSE file) or @fd, and check it. */
static bool read_check(struct __test_metadata *_metadata, const char *what,
		       const char *path, int fd, uint32_t id)
{
	char buf[FSIZE], why[512];
	ssize_t r;
	int rfd = path ? open(path, O_RDONLY) : fd;

	if (rfd < 0) {
		TH_LOG("%s: open %s: %s", what, path, strerror(errno));
		return false;
	}
	r = pread(rfd, buf, FSIZE, 0);
	if (path)
		close(rfd);
	if (r != FSIZE)
		TH_LOG("%s: pread = %zd (%s)", what, r,
		       r < 0 ? strerror(errno) : "short");
	else if (fnr_check(buf, FSIZE, 0, id, 1, why, sizeof(why)))
		TH_LOG("%s: %s", what, why);
	else
		return true;
	return false;
}

/*
 * Read the FUSE file (the server moves or copies the backing pages), then
 * the backing file; return how many backing pages left its page cache.
 */
static int read_moved(struct __test_metadata *_metadata,
		      FIXTURE_DATA(fm) *self)
{
	char path[PATH_MAX + 8];
	int left;

	snprintf(path, sizeof(path), "%s/f", self->mnt);
	EXPECT_TRUE(read_check(_metadata, "FUSE file", path, -1, self->id));
	left = resident(self->bfd);
	EXPECT_TRUE(read_check(_metadata, "backing file", NULL, self->bfd,
			       self->id));
	return left < 0 ? -1 : NPAGES - left;
}

/* Data read once: the server's splice moves its folios (zero copy). */
TEST_F(fm, cold_folio_moves)
{
	int moved;

	if (self->tmpfs)
		SKIP(return, "tmpfs folios stay dirty: splice never moves them");
	ASSERT_EQ(0, write_back(self->bfd, self->id));
	ASSERT_EQ(0, drain_lru(self->bfd));
	ASSERT_EQ(NPAGES, resident(self->bfd));
	moved = read_moved(_metadata, self);
	printf("# %d of %d cold backing pages moved into the FUSE file\n",
	       moved, NPAGES);
	EXPECT_LT(0, moved) TH_LOG("no cold folio moved: zero copy is lost");
}

/* Hot data: its folios must stay, and the FUSE file gets a copy. */
TEST_F(fm, hot_folio_stays)
{
	bool series = fnr_vmstat(FNR_PENDING) >= 0;
	int moved;

	if (self->tmpfs)
		SKIP(return, "tmpfs folios stay dirty: splice never moves them");
	ASSERT_EQ(0, write_back(self->bfd, self->id));
	ASSERT_EQ(0, fnr_make_hot(self->bfd, 0, FSIZE));
	ASSERT_EQ(0, drain_lru(self->bfd));
	ASSERT_EQ(NPAGES, resident(self->bfd));
	moved = read_moved(_metadata, self);
	printf("# %d of %d hot backing pages moved into the FUSE file%s\n",
	       moved, NPAGES, series ? "" : " (no series: allowed)");
	ASSERT_LE(0, moved);
	if (series)
		EXPECT_EQ(0, moved)
			TH_LOG("a PG_rcu_free folio was stolen from its page cache");
}

TEST_HARNESS_MAIN
