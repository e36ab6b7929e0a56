// SPDX-License-Identifier: GPL-2.0
/*
 * The init of make scale's User-Mode Linux boots: load the bench module
 * (fnr_scale.ko), make stamped hot files on tmpfs and on ext4 (/dev/ubda),
 * run every row and print one line each on the console:
 *   scale kernel=K round=R fs=F mode=M size=S threads=N total=T per_thread=P
 *         min=A max=B hot=H/F order=O
 * total: reads a second of all threads, per_thread: total / N, min and max:
 * the slowest and the fastest thread.  Modes shared, open, files, move,
 * rshared and rfiles are fnr_scale.ko's kthreads (see there); ushared and
 * ufiles are user space:
 * N processes, each bound to a CPU, pread() in a loop from one descriptor
 * opened before fork() (one struct file) or from a file each.  In UML a
 * system call from user space costs microseconds: those rows show what an
 * application sees there, not what the kernel's read costs.  A line starting "scale error:"
 * means the run is void; the host script fails on it.
 * Rows with fs=cpu cost the pieces (fnr_scale.c's atomic, contend, lfence,
 * mfence and lockadd modes: operations a second per thread).
 * The rows come from the kernel command line (init's environment):
 * scale_kernel, scale_round, scale_ms, scale_threads, scale_sizes,
 * scale_modes, scale_fs, scale_micro (comma-separated lists).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FILE_SIZE	(64 << 10)

static void poweroff(void)
{
	sync();
	reboot(RB_POWER_OFF);
	for (;;)
		pause();
}

static void fail(const char *fmt, ...)
{
	va_list ap;

	printf("scale error: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" (errno %d: %s)\n", errno, strerror(errno));
	fflush(stdout);
	poweroff();
}

static const char *param(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

static void write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0 || write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		fail("write '%s' to %s", s, path);
	close(fd);
}

/* Files PREFIX.0 .. PREFIX.(n-1), every 8 bytes stamped with file and offset. */
static void make_files(const char *prefix, int n)
{
	static uint64_t buf[FILE_SIZE / 8];
	char path[256];
	int i, j, fd, k;

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s.%d", prefix, i);
		for (j = 0; j < FILE_SIZE / 8; j++)
			buf[j] = (uint64_t)i << 32 | (uint64_t)j * 8;
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, buf, FILE_SIZE) != FILE_SIZE ||
		    fsync(fd))
			fail("create %s", path);
		close(fd);
		/* Read twice from new opens: a hot file, as fnr_make_hot(). */
		for (k = 0; k < 2; k++) {
			fd = open(path, O_RDONLY);
			if (fd < 0 || pread(fd, buf, FILE_SIZE, 0) != FILE_SIZE)
				fail("read %s", path);
			close(fd);
		}
		for (j = 0; j < FILE_SIZE / 8; j++)
			if (buf[j] != ((uint64_t)i << 32 | (uint64_t)j * 8))
				fail("%s: bad data at %d", path, j * 8);
	}
	/* Drain the per-CPU LRU batches: a folio due for activation is read
	 * the slow way.
	 */
	write_file("/proc/sys/vm/compact_memory", "1");
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/*
 * Print a row: each thread's reads a second from its @reads in @ns
 * nanoseconds; @hot and @order as fnr_scale.ko gave them ("-" and -1 for
 * the user-space rows).
 */
static void print_row(const char *fs, const char *mode, long size,
		      int threads, const double *reads, const double *ns,
		      const char *hot, int order)
{
	double r, total = 0, min = 0, max = 0;
	int i;

	for (i = 0; i < threads; i++) {
		if (!ns[i])
			fail("%s %s: thread %d ran no time", fs, mode, i);
		r = reads[i] * 1e9 / ns[i];
		total += r;
		if (!i || r < min)
			min = r;
		if (r > max)
			max = r;
	}
	printf("scale kernel=%s round=%s fs=%s mode=%s size=%ld threads=%d total=%.0f per_thread=%.0f min=%.0f max=%.0f hot=%s order=%d\n",
	       param("scale_kernel", "?"), param("scale_round", "0"), fs, mode,
	       size, threads, total, total / threads, min, max, hot, order);
	fflush(stdout);
}

/* User-space rows: @threads processes pread() @size bytes at offset 0. */
static void run_urow(const char *fs, const char *prefix, int threads,
		     const char *ms, long size, const char *mode)
{
	struct shm {
		volatile int ready, go;
		struct { double reads, ns; } t[64];
	} *shm;
	bool shared = !strcmp(mode, "ushared");
	double reads[64], ns[64], t0, end;
	char path[256], buf[FILE_SIZE];
	int i, fd = -1, status;
	cpu_set_t cpus;
	pid_t pid;

	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED)
		fail("mmap");
	memset(shm, 0, sizeof(*shm));
	snprintf(path, sizeof(path), "%s.0", prefix);
	if (shared && (fd = open(path, O_RDONLY)) < 0)
		fail("open %s", path);
	for (i = 0; i < threads; i++) {
		pid = fork();
		if (pid < 0)
			fail("fork");
		if (pid)
			continue;
		CPU_ZERO(&cpus);
		CPU_SET(i, &cpus);
		if (sched_setaffinity(0, sizeof(cpus), &cpus))
			fail("bind to CPU %d", i);
		snprintf(path, sizeof(path), "%s.%d", prefix, i);
		if (!shared && (fd = open(path, O_RDONLY)) < 0)
			fail("open %s", path);
		__atomic_add_fetch(&shm->ready, 1, __ATOMIC_SEQ_CST);
		while (!shm->go)
			sched_yield();
		t0 = now_ns();
		end = t0 + atol(ms) * 1e6;
		for (;;) {
			for (int k = 0; k < 64; k++)
				if (pread(fd, buf, size, 0) != size)
					_exit(1);
			shm->t[i].reads += 64;
			shm->t[i].ns = now_ns() - t0;
			if (t0 + shm->t[i].ns >= end)
				break;
		}
		_exit(0);
	}
	while (shm->ready < threads)
		usleep(1000);
	shm->go = 1;
	for (i = 0; i < threads; i++)
		if (wait(&status) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			fail("%s %s: a reader failed", fs, mode);
	if (fd >= 0)
		close(fd);
	for (i = 0; i < threads; i++) {
		reads[i] = shm->t[i].reads;
		ns[i] = shm->t[i].ns;
	}
	munmap(shm, sizeof(*shm));
	print_row(fs, mode, size, threads, reads, ns, "-", -1);
}

/*
 * Read @n numbers after @key in fnr_scale.ko's answer @p into @out; return
 * where they end.
 */
static char *parse_list(char *p, const char *key, double *out, int n)
{
	char *start = p;
	int i;

	p = strstr(p, key);
	if (!p)
		fail("fnr_scale: no '%s' in '%s'", key, start);
	p += strlen(key);
	for (i = 0; i < n; i++)
		out[i] = strtod(p, &p);
	return p;
}

static void run_row(const char *fs, const char *prefix, int threads,
		    const char *ms, long size, const char *mode)
{
	char cmd[512], res[2048], hot[32], *p;
	int order;
	double reads[64], ns[64];
	int fd, h, f;
	ssize_t n;

	if (threads < 1 || threads > 64)
		fail("%d threads: 1 to 64", threads);
	if (mode[0] == 'u')
		return run_urow(fs, prefix, threads, ms, size, mode);
	/* move needs SIZE bytes of the file a thread, or it reads at 0. */
	if (!strcmp(mode, "move") && size * threads > FILE_SIZE)
		return;
	snprintf(cmd, sizeof(cmd), "%s %d %s %ld %s", prefix, threads, ms,
		 size, mode);
	fd = open("/sys/kernel/debug/fnr_scale/run", O_RDWR);
	if (fd < 0 || write(fd, cmd, strlen(cmd)) != (ssize_t)strlen(cmd))
		fail("fnr_scale: '%s'", cmd);
	n = pread(fd, res, sizeof(res) - 1, 0);
	if (n <= 0)
		fail("fnr_scale: no result for '%s'", cmd);
	close(fd);
	res[n] = 0;
	p = parse_list(res, "reads ", reads, threads);
	p = parse_list(p, "ns ", ns, threads);
	p = strstr(p, "hot ");
	if (!p || sscanf(p, "hot %31s order %d", hot, &order) != 2)
		fail("fnr_scale: bad result '%s'", res);
	print_row(fs, mode, size, threads, reads, ns, hot, order);
	/* Each opened file's folios must be hot on a kernel with the series. */
	if (sscanf(hot, "%d/%d", &h, &f) != 2 || (h >= 0 && h != f))
		fail("%s %s: only %s files hot: the premise of the row fails",
		     fs, mode, hot);
}

int main(void)
{
	const char *ms = param("scale_ms", "1000");
	char fslist[64], tlist[64], slist[64], mlist[128], prefix[64], *fs, *t,
	     *s, *m, *sp1, *sp2, *sp3, *sp4;
	int fd, maxthreads = 1;

	mkdir("/dev", 0755);
	mkdir("/proc", 0755);
	mkdir("/sys", 0755);
	mkdir("/mnt", 0755);
	if (mount("devtmpfs", "/dev", "devtmpfs", 0, NULL) ||
	    mount("proc", "/proc", "proc", 0, NULL) ||
	    mount("sysfs", "/sys", "sysfs", 0, NULL) ||
	    mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL))
		fail("mount /dev, /proc, /sys or debugfs");
	fd = open("/fnr_scale.ko", O_RDONLY);
	if (fd < 0 || syscall(SYS_finit_module, fd, "", 0))
		fail("load /fnr_scale.ko");
	close(fd);
	printf("scale boot: %ld CPUs online\n", sysconf(_SC_NPROCESSORS_ONLN));

	snprintf(tlist, sizeof(tlist), "%s", param("scale_threads", "1"));
	for (t = strtok_r(tlist, ",", &sp1); t; t = strtok_r(NULL, ",", &sp1))
		if (atoi(t) > maxthreads)
			maxthreads = atoi(t);

	snprintf(mlist, sizeof(mlist), "%s", param("scale_micro", ""));
	for (m = strtok_r(mlist, ",", &sp1); m; m = strtok_r(NULL, ",", &sp1)) {
		snprintf(tlist, sizeof(tlist), "%s",
			 param("scale_threads", "1"));
		for (t = strtok_r(tlist, ",", &sp2); t;
		     t = strtok_r(NULL, ",", &sp2))
			run_row("cpu", "-", atoi(t), ms, 8, m);
	}

	snprintf(fslist, sizeof(fslist), "%s", param("scale_fs", "tmpfs"));
	for (fs = strtok_r(fslist, ",", &sp1); fs;
	     fs = strtok_r(NULL, ",", &sp1)) {
		snprintf(prefix, sizeof(prefix), "/mnt/%s", fs);
		mkdir(prefix, 0755);
		if (!strcmp(fs, "tmpfs")) {
			if (mount("tmpfs", prefix, "tmpfs", 0, "size=64m"))
				fail("mount tmpfs");
		} else if (!strcmp(fs, "ext4")) {
			if (mount("/dev/ubda", prefix, "ext4", 0, NULL))
				fail("mount /dev/ubda (ext4)");
		} else {
			fail("unknown scale_fs '%s'", fs);
		}
		strcat(prefix, "/f");
		make_files(prefix, maxthreads);
		snprintf(slist, sizeof(slist), "%s",
			 param("scale_sizes", "16"));
		for (s = strtok_r(slist, ",", &sp2); s;
		     s = strtok_r(NULL, ",", &sp2)) {
			snprintf(tlist, sizeof(tlist), "%s",
				 param("scale_threads", "1"));
			for (t = strtok_r(tlist, ",", &sp3); t;
			     t = strtok_r(NULL, ",", &sp3)) {
				snprintf(mlist, sizeof(mlist), "%s",
					 param("scale_modes", "shared"));
				for (m = strtok_r(mlist, ",", &sp4); m;
				     m = strtok_r(NULL, ",", &sp4))
					run_row(fs, prefix, atoi(t), ms,
						atol(s), m);
			}
		}
		prefix[strlen(prefix) - 2] = 0;
		if (umount(prefix))
			fail("umount %s", prefix);
	}
	printf("scale done\n");
	fflush(stdout);
	poweroff();
	return 0;
}
