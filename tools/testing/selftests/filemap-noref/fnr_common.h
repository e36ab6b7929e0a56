/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers for the filemap-noref selftests.
 *
 * Test files are filled with self-describing content: every 8-byte cell of
 * every 4096-byte page holds a 64-bit little-endian "stamp" that encodes
 * which file, page, generation and cell it belongs to.  A mismatch can then
 * be decoded into "where did these bytes come from" (zeroed page, stale
 * generation, other page, other file, garbage).
 *
 * Stamp layout (plain bitfield):
 *
 *	bits 63..48	file id (16 bits)
 *	bits 47..24	page index (24 bits, i.e. files up to 64 GiB)
 *	bits 23..12	generation (12 bits)
 *	bits 11..9	marker, always 0b101 (FNR_MARK)
 *	bits  8..0	cell index within the page (0..511)
 *
 * The marker keeps a stamp from ever being zero and lets fnr_stamp_decode()
 * tell a stamp from random data.
 */
#ifndef __FNR_COMMON_H
#define __FNR_COMMON_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#define FNR_PAGE	4096UL
#define FNR_CELLS	(FNR_PAGE / 8)
#define FNR_MARK	0x5U

/*
 * What a freed page holds on a kernel booted with page_poison=1
 * (CONFIG_PAGE_POISONING; it takes precedence over init_on_free): every
 * byte PAGE_POISON, 0xaa.  It reads as the stamp of file 0xaaaa, an id
 * no test gives a file, so a control run that reads it copied a freed
 * page, where zeros could also be a hole and another file's stamp a
 * wrong lookup.  The control boots use it (scripts/guest/jobs/control).
 */
#define FNR_POISON	0xaaaaaaaaaaaaaaaaULL

static inline uint64_t fnr_stamp(uint32_t file_id, uint64_t page_index,
				 uint32_t gen, uint32_t cell)
{
	return ((uint64_t)(file_id & 0xffff) << 48) |
	       ((page_index & 0xffffff) << 24) |
	       ((uint64_t)(gen & 0xfff) << 12) |
	       ((uint64_t)FNR_MARK << 9) |
	       (cell & 0x1ff);
}

/* Write a human readable decoding of stamp @v into @s. */
static inline void fnr_stamp_decode(uint64_t v, char *s, size_t len)
{
	if (v == 0xaaaaaaaaaaaaaaaaULL) {
		snprintf(s, len, "0x%016llx (page poison)",
			 (unsigned long long)v);
		return;
	}
	if (((v >> 9) & 0x7) != FNR_MARK) {
		snprintf(s, len, "0x%016llx (not a stamp)",
			 (unsigned long long)v);
		return;
	}
	snprintf(s, len, "0x%016llx (file 0x%04x page %llu gen %u cell %u)",
		 (unsigned long long)v, (unsigned int)(v >> 48),
		 (unsigned long long)((v >> 24) & 0xffffff),
		 (unsigned int)((v >> 12) & 0xfff), (unsigned int)(v & 0x1ff));
}

/* Expected content of the byte at file offset @o. */
static inline uint8_t fnr_byte(uint64_t o, uint32_t file_id, uint32_t gen)
{
	uint64_t v = fnr_stamp(file_id, o / FNR_PAGE, gen,
			       (o % FNR_PAGE) / 8);

	return (uint8_t)(v >> (8 * (o % 8)));
}

/* Fill @buf as the bytes [@file_off, @file_off + @len) of the file. */
static inline void fnr_fill(void *buf, size_t len, uint64_t file_off,
			    uint32_t file_id, uint32_t gen)
{
	uint8_t *p = buf;
	size_t i = 0;

	while (i < len) {
		uint64_t o = file_off + i;
		uint64_t v = fnr_stamp(file_id, o / FNR_PAGE, gen,
				       (o % FNR_PAGE) / 8);
		unsigned int b;

		for (b = o % 8; b < 8 && i < len; b++, i++)
			p[i] = (uint8_t)(v >> (8 * b));
	}
}

/*
 * Check that @buf holds the bytes [@file_off, @file_off + @len) of the file
 * written with fnr_fill(@file_id, @gen).  Returns 0 on match; otherwise -1,
 * with a description of the first bad byte in @why.
 */
static inline int fnr_check(const void *buf, size_t len, uint64_t file_off,
			    uint32_t file_id, uint32_t gen,
			    char *why, size_t whylen)
{
	const uint8_t *p = buf;
	size_t i, first = 0, nbad = 0;
	uint64_t o, cell_off, want, found = 0;
	char ws[96], fs[96];
	const char *kind;
	bool zeros;
	int b;

	for (i = 0; i < len; i++) {
		if (p[i] != fnr_byte(file_off + i, file_id, gen) && !nbad++)
			first = i;
	}
	if (!nbad)
		return 0;

	o = file_off + first;
	want = fnr_stamp(file_id, o / FNR_PAGE, gen, (o % FNR_PAGE) / 8);
	fnr_stamp_decode(want, ws, sizeof(ws));

	cell_off = o & ~7ULL;
	if (cell_off < file_off || cell_off + 8 > file_off + len) {
		snprintf(why, whylen,
			 "%zu/%zu bytes bad, first at file offset %llu: expected byte 0x%02x of cell %s, found 0x%02x (cell not wholly in buffer)",
			 nbad, len, (unsigned long long)o,
			 fnr_byte(o, file_id, gen), ws, p[first]);
		return -1;
	}

	zeros = true;
	for (b = 7; b >= 0; b--) {
		uint8_t c = p[cell_off - file_off + b];

		if (c && c != fnr_byte(cell_off + b, file_id, gen))
			zeros = false;
		found = (found << 8) | c;
	}
	fnr_stamp_decode(found, fs, sizeof(fs));
	/* Every wrong byte of the cell is zero (the cell may be partial). */
	if (zeros)
		kind = "zeros: hole/truncated tail, or a freed page with init_on_free?";
	else if (found == FNR_POISON)	/* its mark bits are FNR_MARK's */
		kind = "page poison: a freed page (page_poison=1)";
	else if (((found >> 9) & 0x7) != FNR_MARK)
		kind = "garbage";
	else if ((found >> 48) != (file_id & 0xffff))
		kind = "foreign stamp: other file";
	else if (((found >> 24) & 0xffffff) != ((o / FNR_PAGE) & 0xffffff))
		kind = "foreign stamp: other page of this file";
	else if (((found >> 12) & 0xfff) != (gen & 0xfff))
		kind = "foreign stamp: stale/other generation";
	else
		kind = "foreign stamp: other cell";

	snprintf(why, whylen,
		 "%zu/%zu bytes bad, first at file offset %llu: expected byte 0x%02x of cell %s, found cell %s [%s]",
		 nbad, len, (unsigned long long)o, fnr_byte(o, file_id, gen),
		 ws, fs, kind);
	return -1;
}

/* Write @s to the file @path (sysfs, procfs, debugfs); 0 on success. */
static inline int fnr_write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	if (close(fd) || n != (ssize_t)strlen(s))
		return -1;
	return 0;
}

/* Read a sysfs file into @buf without its newline; 0 on success. */
static inline int fnr_read_str(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* xorshift64*: a cheap pseudo-random sequence from a non-zero seed. */
static inline uint64_t fnr_rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

/* Environment variable @name as a number, @def if unset, within bounds. */
static inline long fnr_env_long(const char *name, long def, long min, long max)
{
	const char *s = getenv(name);
	long v = s && *s ? strtol(s, NULL, 0) : def;

	return v < min ? min : v > max ? max : v;
}

/* Threads racing in a test: when to stop, and the first error. */
struct fnr_stop {
	bool stop, have_err;
	char err[256];
};

static inline bool fnr_stopped(struct fnr_stop *s)
{
	return __atomic_load_n(&s->stop, __ATOMIC_RELAXED);
}

static inline void fnr_set_stop(struct fnr_stop *s)
{
	__atomic_store_n(&s->stop, true, __ATOMIC_RELAXED);
}

/* Record the first thread error and stop the race. */
static inline void fnr_fail(struct fnr_stop *s, const char *what, int err)
{
	if (!__atomic_exchange_n(&s->have_err, true, __ATOMIC_SEQ_CST))
		snprintf(s->err, sizeof(s->err), "%s: %s", what, strerror(err));
	fnr_set_stop(s);
}

/*
 * A reader's pread() in a race with memory errors: the bytes read, each
 * read counted in *@reads; -1 on EIO (a poisoned page, which the normal
 * path refuses), counted in *@eio; -2 on any other error, which fails and
 * stops the race (@s).
 */
static inline ssize_t fnr_pread_eio(struct fnr_stop *s, int fd, void *buf,
				    size_t len, off_t off,
				    unsigned long *reads, unsigned long *eio)
{
	ssize_t got = pread(fd, buf, len, off);

	if (got < 0 && errno == EIO) {
		__atomic_add_fetch(eio, 1, __ATOMIC_RELAXED);
		return -1;
	}
	if (got < 0) {
		fnr_fail(s, "pread", errno);
		return -2;
	}
	__atomic_add_fetch(reads, 1, __ATOMIC_RELAXED);
	return got;
}

/* Bad reads in a race: how many, and a description of the first. */
struct fnr_bad {
	unsigned long n;
	bool have_why;
	char why[640];
};

/* Count a bad read at @off that returned @got; keep the first's @why. */
static inline void fnr_bad_read(struct fnr_bad *b, uint64_t off, ssize_t got,
				const char *why)
{
	__atomic_add_fetch(&b->n, 1, __ATOMIC_RELAXED);
	if (!__atomic_exchange_n(&b->have_why, true, __ATOMIC_SEQ_CST))
		snprintf(b->why, sizeof(b->why), "pread(off %llu) returned %zd: %s",
			 (unsigned long long)off, got, why);
}

/* Directory the tests create their files in. */
static inline const char *fnr_testdir(void)
{
	const char *d = getenv("FNR_DIR");

	return d && *d ? d : ".";
}

/* Write bytes [@off, @off + @len) of file @id, generation @gen, to @fd. */
static inline int fnr_write_gen(int fd, uint64_t off, size_t len,
				uint32_t id, uint32_t gen)
{
	char *buf = malloc(len ? len : 1);
	size_t done = 0;
	ssize_t r;

	if (!buf)
		return -1;
	fnr_fill(buf, len, off, id, gen);
	while (done < len) {
		r = pwrite(fd, buf + done, len - done, off + done);
		if (r <= 0)
			break;
		done += r;
	}
	free(buf);
	return done == len ? 0 : -1;
}

/*
 * Read [@off, @off + @len) of @fd @times times, each time through a freshly
 * opened file: a repeated read of the same folio through one file is not
 * counted as a new access.
 */
static inline int fnr_read_fresh(int fd, uint64_t off, size_t len, int times)
{
	char path[64], *buf = malloc(len);
	bool ok = buf;
	int i, rfd;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	for (i = 0; i < times && ok; i++) {
		rfd = open(path, O_RDONLY);
		ok = rfd >= 0 && pread(rfd, buf, len, off) == (ssize_t)len;
		if (rfd >= 0)
			close(rfd);
	}
	free(buf);
	return ok ? 0 : -1;
}

/* Make the folios of [@off, @off + @len) hot: read them twice. */
static inline int fnr_make_hot(int fd, uint64_t off, size_t len)
{
	return fnr_read_fresh(fd, off, len, 2);
}

/*
 * Make the folios that a write just filled hot.  On tmpfs the write left
 * each folio referenced (shmem_get_folio_gfp(), SGP_WRITE), so one read
 * does; a second would take the fast path, and any delay a test set there,
 * once a folio.  Elsewhere two reads.
 */
static inline int fnr_make_written_hot(int fd, uint64_t off, size_t len)
{
	struct statfs sfs;

	if (fstatfs(fd, &sfs))
		return -1;
	return fnr_read_fresh(fd, off, len, sfs.f_type == TMPFS_MAGIC ? 1 : 2);
}

#define FNR_KPF_COMPOUND_HEAD	(1ULL << 15)
#define FNR_KPF_COMPOUND_TAIL	(1ULL << 16)

/*
 * The /proc/kpageflags word of the page of @fd at @off, faulted in through
 * a read-only mapping (which leaves the reference-free read on); 0, or -1
 * without pagemap or kpageflags (not root, CONFIG_PROC_PAGE_MONITOR off).
 */
static inline int fnr_kpageflags(int fd, uint64_t off, uint64_t *flags)
{
	int pm = open("/proc/self/pagemap", O_RDONLY);
	int kf = open("/proc/kpageflags", O_RDONLY), ret = -1;
	uint8_t *m = mmap(NULL, FNR_PAGE, PROT_READ, MAP_SHARED, fd, off);
	uint64_t e, pfn;

	if (pm >= 0 && kf >= 0 && m != MAP_FAILED) {
		(void)__atomic_load_n(m, __ATOMIC_RELAXED);
		if (pread(pm, &e, 8, (uintptr_t)m / FNR_PAGE * 8) == 8 &&
		    (e >> 63)) {
			pfn = e & ((1ULL << 55) - 1);
			if (pfn && pread(kf, flags, 8, pfn * 8) == 8)
				ret = 0;
		}
	}
	if (m != MAP_FAILED)
		munmap(m, FNR_PAGE);
	if (pm >= 0)
		close(pm);
	if (kf >= 0)
		close(kf);
	return ret;
}

/* Drop the clean page cache of @fd (a no-op on tmpfs). */
static inline int fnr_drop_cache(int fd)
{
	if (fsync(fd))
		return -1;
	errno = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	return errno ? -1 : 0;
}

/* Is @dir on a tmpfs mounted huge=always (its longest /proc/mounts match)? */
static inline bool fnr_huge_tmpfs(const char *dir)
{
	char line[PATH_MAX + 256], mnt[PATH_MAX], type[32], opts[256];
	FILE *fp = fopen("/proc/mounts", "r");
	size_t best = 0, n;
	bool huge = false;

	while (fp && fgets(line, sizeof(line), fp)) {
		if (sscanf(line, "%*s %4095s %31s %255s", mnt, type, opts) != 3)
			continue;
		n = strlen(mnt);
		if (strncmp(dir, mnt, n) || (dir[n] && dir[n] != '/' && n > 1) ||
		    n < best)
			continue;
		best = n;
		huge = !strcmp(type, "tmpfs") && strstr(opts, "huge=always");
	}
	if (fp)
		fclose(fp);
	return huge;
}

/* Are the bytes of @v in @mask, two or more, all the page poison? */
static inline bool fnr_poisoned(uint64_t v, uint64_t mask)
{
	return __builtin_popcountll(mask) >= 16 && !((v ^ FNR_POISON) & mask);
}

/*
 * Does @buf, the bytes [@file_off, @file_off + @len) of a file, hold page
 * poison in a whole cell: a freed page read (page_poison=1)?
 */
static inline bool fnr_poison_read(const void *buf, size_t len,
				   uint64_t file_off)
{
	size_t i = (8 - file_off % 8) % 8;
	uint64_t v;

	for (; i + 8 <= len; i += 8) {
		memcpy(&v, (const char *)buf + i, 8);
		if (v == FNR_POISON)
			return true;
	}
	return false;
}

/* Was this kernel booted with page_poison=1 (or on, y)? */
static inline bool fnr_page_poison(void)
{
	char line[4096], *p;
	bool on = false;
	FILE *fp = fopen("/proc/cmdline", "r");

	if (!fp)
		return false;
	if (fgets(line, sizeof(line), fp))
		for (p = strtok(line, "\n "); p; p = strtok(NULL, "\n "))
			on = !strcmp(p, "page_poison=1") ||
			     !strcmp(p, "page_poison=on") ||
			     !strcmp(p, "page_poison=y") ? true :
			     !strncmp(p, "page_poison=", 12) ? false : on;
	fclose(fp);
	return on;
}

#define FNR_NO_POISON	"control run: boot with page_poison=1 (CONFIG_PAGE_POISONING), so that a freed page reads as 0xaa"

/*
 * Tests that take a CPU or memory offline, inject memory errors or switch
 * the preemption mode run only when asked: with FNR_INTRUSIVE set (not to
 * 0), as make check's guests set it.  Else they skip with this reason.
 */
#define FNR_NOT_ASKED	"takes CPUs or memory offline or injects memory errors: set FNR_INTRUSIVE=1 to run it"
static inline bool fnr_intrusive(void)
{
	const char *v = getenv("FNR_INTRUSIVE");

	return v && *v && strcmp(v, "0");
}

#endif /* __FNR_COMMON_H */
