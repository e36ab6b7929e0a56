// SPDX-License-Identifier: GPL-2.0
/*
 * pread_bench - cached pread() benchmark for the filemap-noref series.
 *
 * Creates one file (-m same) or one file per thread (-m sep) in DIR,
 * fills it with a non-zero pattern, fsyncs it and reads it twice so that
 * the page cache is hot.  Then every thread opens its own fd and preads
 * SIZE bytes at offset 0 over and over, either a fixed number of times
 * (-n) or for a fixed duration (-T).  Threads are released together by
 * a pthread barrier.  The measurement is repeated REPS times and the
 * median repetition is reported as a single key=value line:
 *
 *   FNR-BENCH fs=ext4 size=4096 threads=1 mode=same dest=buf reps=3 ...
 *
 * Timing uses CLOCK_MONOTONIC only, and the timed regions contain only
 * the pread() calls (plus one clock read every CHECK_EVERY reads in -T
 * mode), so under "qemu -icount shift=0" ns_per_op with one thread is
 * the number of guest instructions per read.
 *
 * Destinations (-b):
 *   buf   - each thread reuses one malloc'ed, pre-touched buffer.
 *   fresh - each read lands in a not-yet-touched, page-aligned slot of a
 *           freshly mmap'ed anonymous region (THP disabled on it), so
 *           the copy to user space faults the destination in.  The
 *           mmap/munmap between batches is not timed.
 *
 * Metrics:
 *   ns_per_op  - sum of per-thread timed ns / total ops.
 *   ops_per_s  - dest=buf: total ops / wall time from barrier release to
 *                the last thread finishing.  dest=fresh: sum over the
 *                threads of ops / timed ns, i.e. mmap/munmap time between
 *                batches is excluded.
 *   The median repetition is chosen by ns_per_op in -n mode and by
 *   ops_per_s in -T mode; for an even REPS the faster of the two middle
 *   repetitions is used.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS	1024
#define MAX_REPS	1001
#define MAX_SIZE	(1ULL << 30)
#define MAX_MS		(1000ULL * 1000 * 1000)
#define CHECK_EVERY	256UL
#define FRESH_BATCH	(8UL << 20)	/* bytes mapped per fresh batch */
#define NSEC_PER_SEC	1000000000ULL
#define NSEC_PER_MSEC	1000000ULL
#define DEFAULT_ITERS	10000ULL

enum dest { DEST_BUF, DEST_FRESH };

struct opts {
	const char *dir;
	const char *label;
	size_t size;
	int threads;
	int sep;		/* one file per thread */
	enum dest dest;
	unsigned long long iters;	/* reads per thread in -n mode */
	unsigned long long ms;		/* duration, 0 means -n mode */
	int reps;
};

struct worker {
	pthread_t tid;
	int file;			/* index into file_paths[] */
	unsigned long long ops;
	unsigned long long timed_ns;
	unsigned long long start_ns;
	unsigned long long end_ns;
};

struct fresh_map {
	char *base;
	size_t len;
	char *last;			/* destination of the last read */
};

struct rep_result {
	unsigned long long ops;
	double ns_per_op;
	double ops_per_s;
};

static struct opts opt = {
	.label = "fs",
	.size = 4096,
	.threads = 1,
	.dest = DEST_BUF,
	.reps = 3,
};

static size_t page_size;
static size_t file_size;
static size_t slot_size;
static unsigned long batch_slots;
static int nr_files;
static char **file_paths;
static unsigned char **file_pat;
static pthread_barrier_t start_barrier;

static void remove_files(void)
{
	int i;

	for (i = 0; i < nr_files; i++)
		if (file_paths[i])
			unlink(file_paths[i]);
}

static void on_signal(int sig)
{
	remove_files();
	_exit(128 + sig);
}

static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	fputs("pread_bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	exit(1);
}

static void __attribute__((noreturn, noinline, cold))
read_failed(ssize_t ret)
{
	if (ret < 0)
		die("pread: %s\n", strerror(errno));
	die("pread: short read, %zd of %zu bytes\n", ret, opt.size);
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts))
		die("clock_gettime: %s\n", strerror(errno));
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* The timed work: @n preads of SIZE bytes at offset 0 into @dst. */
static inline void read_chunk(int fd, char *dst, size_t stride,
			      unsigned long n)
{
	size_t size = opt.size;
	ssize_t ret;

	for (; n; n--, dst += stride) {
		ret = pread(fd, dst, size, 0);
		if (ret != (ssize_t)size)
			read_failed(ret);
	}
}

static unsigned char pattern_byte(int file, size_t off)
{
	return (off * 131 + file * 29 + 7) % 251 + 1;	/* never zero */
}

static void verify(const char *buf, int file)
{
	const unsigned char *pat = file_pat[file];
	size_t i;

	if (!memcmp(buf, pat, opt.size))
		return;
	for (i = 0; i < opt.size; i++)
		if ((unsigned char)buf[i] != pat[i])
			break;
	die("data mismatch in file %d at offset %zu: got 0x%02x want 0x%02x\n",
	    file, i, (unsigned char)buf[i], pat[i]);
}

/* ---- file setup ---- */

static void warm_file(int fd, int file)
{
	char *buf = malloc(file_size);
	ssize_t ret;
	int pass;

	if (!buf)
		die("malloc: out of memory\n");
	for (pass = 0; pass < 2; pass++) {
		ret = pread(fd, buf, file_size, 0);
		if (ret < 0)
			die("warm pread: %s\n", strerror(errno));
		if ((size_t)ret != file_size)
			die("warm pread: short read, %zd of %zu bytes\n",
			    ret, file_size);
		if (memcmp(buf, file_pat[file], file_size))
			die("warm pread: file %d content mismatch\n", file);
	}
	free(buf);
}

static void setup_file(int i)
{
	unsigned char *pat;
	ssize_t ret;
	size_t off;
	int fd;

	if (asprintf(&file_paths[i], "%s/fnr-bench.%d.%d",
		     opt.dir, (int)getpid(), i) < 0)
		die("asprintf: out of memory\n");
	nr_files = i + 1;

	pat = malloc(file_size);
	if (!pat)
		die("malloc: out of memory\n");
	for (off = 0; off < file_size; off++)
		pat[off] = pattern_byte(i, off);
	file_pat[i] = pat;

	fd = open(file_paths[i], O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		die("open %s: %s\n", file_paths[i], strerror(errno));
	ret = pwrite(fd, pat, file_size, 0);
	if (ret < 0)
		die("pwrite %s: %s\n", file_paths[i], strerror(errno));
	if ((size_t)ret != file_size)
		die("pwrite %s: short write, %zd of %zu bytes\n",
		    file_paths[i], ret, file_size);
	if (fsync(fd))
		die("fsync %s: %s\n", file_paths[i], strerror(errno));
	warm_file(fd, i);
	if (close(fd))
		die("close %s: %s\n", file_paths[i], strerror(errno));
}

static void setup_files(void)
{
	int i;

	nr_files = 0;
	file_paths = calloc(opt.threads, sizeof(*file_paths));
	file_pat = calloc(opt.threads, sizeof(*file_pat));
	if (!file_paths || !file_pat)
		die("calloc: out of memory\n");
	if (atexit(remove_files))
		die("atexit failed\n");
	for (i = 0; i < (opt.sep ? opt.threads : 1); i++)
		setup_file(i);
}

static void setup_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* ---- dest=buf ---- */

static void run_buf(struct worker *w, int fd, char *buf)
{
	unsigned long long t0, t1, deadline;

	t0 = now_ns();
	if (!opt.ms) {
		read_chunk(fd, buf, 0, opt.iters);
		t1 = now_ns();
		w->ops = opt.iters;
	} else {
		deadline = t0 + opt.ms * NSEC_PER_MSEC;
		do {
			read_chunk(fd, buf, 0, CHECK_EVERY);
			w->ops += CHECK_EVERY;
			t1 = now_ns();
		} while (t1 < deadline);
	}
	w->start_ns = t0;
	w->end_ns = t1;
	w->timed_ns = t1 - t0;
}

/* ---- dest=fresh ---- */

static void map_batch(struct fresh_map *m, unsigned long slots)
{
	if (m->base && munmap(m->base, m->len))
		die("munmap: %s\n", strerror(errno));
	m->len = slots * slot_size;
	m->base = mmap(NULL, m->len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m->base == MAP_FAILED)
		die("mmap %zu bytes: %s\n", m->len, strerror(errno));
	/* Every slot must fault in its own small page, so no THP here. */
	if (madvise(m->base, m->len, MADV_NOHUGEPAGE) && errno != EINVAL)
		die("madvise: %s\n", strerror(errno));
}

/* Read into up to @slots untouched slots; returns non-zero when done. */
static int fresh_batch(struct worker *w, int fd, struct fresh_map *m,
		       unsigned long slots)
{
	unsigned long long budget = opt.ms * NSEC_PER_MSEC;
	unsigned long long t0, t1;
	unsigned long done = 0, n;

	t0 = now_ns();
	if (!opt.ms) {
		read_chunk(fd, m->base, slot_size, slots);
		t1 = now_ns();
		done = slots;
	} else {
		do {
			n = slots - done;
			if (n > CHECK_EVERY)
				n = CHECK_EVERY;
			read_chunk(fd, m->base + done * slot_size,
				   slot_size, n);
			done += n;
			t1 = now_ns();
		} while (done < slots && w->timed_ns + (t1 - t0) < budget);
	}
	w->timed_ns += t1 - t0;
	w->ops += done;
	w->end_ns = t1;
	m->last = m->base + (done - 1) * slot_size;
	if (opt.ms)
		return w->timed_ns >= budget;
	return w->ops >= opt.iters;
}

static void run_fresh(struct worker *w, int fd, struct fresh_map *m)
{
	unsigned long slots;

	w->start_ns = now_ns();
	do {
		slots = batch_slots;
		if (!opt.ms && opt.iters - w->ops < slots)
			slots = opt.iters - w->ops;
		map_batch(m, slots);
	} while (!fresh_batch(w, fd, m, slots));
}

/* ---- threads and repetitions ---- */

static void barrier_wait(void)
{
	int ret = pthread_barrier_wait(&start_barrier);

	if (ret && ret != PTHREAD_BARRIER_SERIAL_THREAD)
		die("pthread_barrier_wait: %s\n", strerror(ret));
}

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	struct fresh_map m = { NULL, 0, NULL };
	char *buf = NULL;
	int fd;

	fd = open(file_paths[w->file], O_RDONLY);
	if (fd < 0)
		die("open %s: %s\n", file_paths[w->file], strerror(errno));
	if (opt.dest == DEST_BUF) {
		buf = malloc(opt.size);
		if (!buf)
			die("malloc: out of memory\n");
		memset(buf, 0, opt.size);
	}

	barrier_wait();
	if (opt.dest == DEST_BUF) {
		run_buf(w, fd, buf);
		verify(buf, w->file);
	} else {
		run_fresh(w, fd, &m);
		verify(m.last, w->file);
		munmap(m.base, m.len);
	}

	free(buf);
	if (close(fd))
		die("close: %s\n", strerror(errno));
	return NULL;
}

static void start_workers(struct worker *ws)
{
	int i, ret;

	ret = pthread_barrier_init(&start_barrier, NULL, opt.threads + 1);
	if (ret)
		die("pthread_barrier_init: %s\n", strerror(ret));
	for (i = 0; i < opt.threads; i++) {
		memset(&ws[i], 0, sizeof(ws[i]));
		ws[i].file = opt.sep ? i : 0;
		ret = pthread_create(&ws[i].tid, NULL, worker_fn, &ws[i]);
		if (ret)
			die("pthread_create: %s\n", strerror(ret));
	}
}

static void join_workers(struct worker *ws)
{
	int i, ret;

	for (i = 0; i < opt.threads; i++) {
		ret = pthread_join(ws[i].tid, NULL);
		if (ret)
			die("pthread_join: %s\n", strerror(ret));
	}
	pthread_barrier_destroy(&start_barrier);
}

static void run_rep(struct worker *ws, struct rep_result *res)
{
	unsigned long long start, end = 0, ops = 0, timed = 0;
	double rate = 0;
	int i;

	start_workers(ws);
	barrier_wait();
	start = now_ns();
	join_workers(ws);

	for (i = 0; i < opt.threads; i++) {
		if (ws[i].start_ns < start)
			start = ws[i].start_ns;
		if (ws[i].end_ns > end)
			end = ws[i].end_ns;
		ops += ws[i].ops;
		timed += ws[i].timed_ns;
		rate += ws[i].ops * 1e9 / (ws[i].timed_ns ? ws[i].timed_ns : 1);
	}
	res->ops = ops;
	res->ns_per_op = (double)timed / ops;
	if (opt.dest == DEST_BUF)
		res->ops_per_s = ops * 1e9 / (end > start ? end - start : 1);
	else
		res->ops_per_s = rate;
}

/* Sort best first: lowest ns/op in -n mode, highest ops/s in -T mode. */
static int cmp_result(const void *a, const void *b)
{
	const struct rep_result *x = a, *y = b;

	if (!opt.ms)
		return (x->ns_per_op > y->ns_per_op) -
		       (x->ns_per_op < y->ns_per_op);
	return (x->ops_per_s < y->ops_per_s) - (x->ops_per_s > y->ops_per_s);
}

static void report(struct rep_result *res)
{
	const struct rep_result *med;
	double min = res[0].ops_per_s, max = res[0].ops_per_s;
	int i;

	for (i = 1; i < opt.reps; i++) {
		if (res[i].ops_per_s < min)
			min = res[i].ops_per_s;
		if (res[i].ops_per_s > max)
			max = res[i].ops_per_s;
	}
	qsort(res, opt.reps, sizeof(*res), cmp_result);
	med = &res[(opt.reps - 1) / 2];

	printf("FNR-BENCH fs=%s size=%zu threads=%d mode=%s dest=%s reps=%d "
	       "ops=%llu ns_per_op=%.2f ops_per_s=%.0f "
	       "per_thread_ops_per_s=%.0f min_ops_per_s=%.0f "
	       "max_ops_per_s=%.0f\n",
	       opt.label, opt.size, opt.threads, opt.sep ? "sep" : "same",
	       opt.dest == DEST_BUF ? "buf" : "fresh", opt.reps,
	       med->ops, med->ns_per_op, med->ops_per_s,
	       med->ops_per_s / opt.threads, min, max);
	if (fflush(stdout))
		die("stdout: %s\n", strerror(errno));
}

/* ---- command line ---- */

static void __attribute__((noreturn)) usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: pread_bench -d DIR [-l LABEL] [-s SIZE] [-t N] [-m same|sep]\n"
		"                   [-b buf|fresh] [-n ITERS | -T MS] [-r REPS]\n"
		"  -d DIR    directory to create the files in (required)\n"
		"  -l LABEL  filesystem label for the output (default fs)\n"
		"  -s SIZE   bytes per pread, K/M/G suffix allowed (default 4096)\n"
		"  -t N      threads (default 1)\n"
		"  -m MODE   same: one shared file, sep: one file per thread\n"
		"  -b DEST   buf: reused buffer, fresh: untouched mmap page\n"
		"  -n ITERS  reads per thread (default %llu)\n"
		"  -T MS     read for about MS milliseconds per thread\n"
		"  -r REPS   repetitions, the median is reported (default 3)\n",
		DEFAULT_ITERS);
	exit(status);
}

/* Parse a positive number with optional K/M/G suffix; 0 on error. */
static unsigned long long parse_num(const char *s, int suffix,
				    unsigned long long max)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return 0;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return 0;
	if (suffix && *end) {
		const char *sfx = strchr("kKmMgG", *end);
		int shift = sfx ? 10 * (1 + (sfx - "kKmMgG") / 2) : 0;

		if (!shift || end[1] || v > (max >> shift))
			return 0;
		v <<= shift;
		end++;
	}
	if (*end || v > max)
		return 0;
	return v;
}

static unsigned long long num_arg(int c, const char *s, int suffix,
				  unsigned long long max)
{
	unsigned long long v = parse_num(s, suffix, max);

	if (!v) {
		fprintf(stderr, "pread_bench: bad -%c '%s' (want 1..%llu)\n",
			c, s, max);
		usage(2);
	}
	return v;
}

static enum dest parse_dest(const char *s)
{
	if (!strcmp(s, "buf"))
		return DEST_BUF;
	if (!strcmp(s, "fresh"))
		return DEST_FRESH;
	fprintf(stderr, "pread_bench: bad -b '%s'\n", s);
	usage(2);
}

static int parse_mode(const char *s)
{
	if (!strcmp(s, "same"))
		return 0;
	if (!strcmp(s, "sep"))
		return 1;
	fprintf(stderr, "pread_bench: bad -m '%s'\n", s);
	usage(2);
}

static void check_label(const char *s)
{
	if (*s && !strpbrk(s, " \t\n=\"'"))
		return;
	fprintf(stderr, "pread_bench: bad -l '%s' (no blanks, quotes or '=')\n",
		s);
	usage(2);
}

static void parse_args(int argc, char **argv)
{
	int c, have_n = 0;

	while ((c = getopt(argc, argv, "d:l:s:t:m:b:n:T:r:h")) != -1) {
		switch (c) {
		case 'd':
			opt.dir = optarg;
			break;
		case 'l':
			check_label(optarg);
			opt.label = optarg;
			break;
		case 's':
			opt.size = num_arg(c, optarg, 1, MAX_SIZE);
			break;
		case 't':
			opt.threads = num_arg(c, optarg, 0, MAX_THREADS);
			break;
		case 'm':
			opt.sep = parse_mode(optarg);
			break;
		case 'b':
			opt.dest = parse_dest(optarg);
			break;
		case 'n':
			opt.iters = num_arg(c, optarg, 1, ~0ULL >> 8);
			have_n = 1;
			break;
		case 'T':
			opt.ms = num_arg(c, optarg, 0, MAX_MS);
			break;
		case 'r':
			opt.reps = num_arg(c, optarg, 0, MAX_REPS);
			break;
		case 'h':
			usage(0);
		default:
			usage(2);
		}
	}
	if (optind != argc || !opt.dir) {
		fprintf(stderr, "pread_bench: %s\n", opt.dir ?
			"unexpected argument" : "-d DIR is required");
		usage(2);
	}
	if (have_n && opt.ms) {
		fprintf(stderr, "pread_bench: -n and -T are exclusive\n");
		usage(2);
	}
	if (!have_n)
		opt.iters = DEFAULT_ITERS;
}

static void setup_sizes(void)
{
	long ps = sysconf(_SC_PAGESIZE);

	page_size = ps > 0 ? ps : 4096;
	slot_size = (opt.size + page_size - 1) / page_size * page_size;
	file_size = slot_size < 4096 ? 4096 : slot_size;
	batch_slots = FRESH_BATCH / slot_size;
	if (!batch_slots)
		batch_slots = 1;
}

int main(int argc, char **argv)
{
	struct rep_result *res;
	struct worker *ws;
	int i;

	parse_args(argc, argv);
	setup_sizes();
	setup_signals();

	ws = calloc(opt.threads, sizeof(*ws));
	res = calloc(opt.reps, sizeof(*res));
	if (!ws || !res)
		die("calloc: out of memory\n");

	setup_files();
	for (i = 0; i < opt.reps; i++)
		run_rep(ws, &res[i]);
	report(res);
	return 0;
}
