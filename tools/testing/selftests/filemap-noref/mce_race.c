// SPDX-License-Identifier: GPL-2.0
/*
 * A handled memory error must not take a page out of the direct map while a
 * reference-free reader may still copy it.
 *
 * On x86, a memory error that memory_failure() recovers from ends with
 * set_mce_nospec(), which unmaps the page from the direct map.  A reader
 * that holds a reference makes memory_failure() fail (the extra count), so
 * the page stays mapped; a fast-path reader holds none.  If it checked the
 * page before the error and copies after the unmap, its memcpy() faults
 * with no fixup: an oops.
 *
 * The test injects an AMD deferred DRAM error at page MCE_PAGE of a hot,
 * stamped file, through the legacy /dev/mcelog injector
 * (CONFIG_X86_MCE_INJECT and CONFIG_X86_MCELOG_LEGACY), as the machine
 * check poller would report it; the kernel's decode notifier then calls
 * memory_failure() and set_mce_nospec() from a work item on CPU 0.  (Intel
 * reports such errors, SRAO, through the machine check exception, which
 * this path does not raise: the test skips there.)  Reader threads on the
 * other CPUs copy 16 bytes at a time from the other cache lines of that
 * page and check every byte.  They stop 20 ms after their last check,
 * right before the copy (debugfs filemap_noref/delay_checked_us,
 * CONFIG_DEBUG_VM), so that the error lands while they are there; the test
 * requires that some reads were delayed before the error.
 * The race needs readers that can be preempted inside rcu_read_lock():
 * preemptible RCU (CONFIG_PREEMPT_DYNAMIC, as distributions build) and a
 * preemption mode that preempts them (lazy or full; the test sets debugfs
 * sched/preempt to "full" for the race only when it is none or voluntary,
 * since a switch rewrites static call sites with int3, and QEMU's
 * multi-threaded TCG was seen executing such an int3 minutes after the
 * rewrite had finished: "Oops: int3" in a later test).  Where they cannot be,
 * memory_failure() was seen to finish only once the delayed readers had
 * left (something it waits for, lru_add_drain_all()'s work items likely,
 * runs on their CPUs), and v10 did not oops; with preemptible RCU and
 * lazy preemption it oopsed on ext4, tmpfs and huge tmpfs in one run (on
 * xfs no reader was in its window that time).
 * A read that fails with EIO (the page is poisoned) is fine, a wrong byte
 * is not, and an oops fails make check.
 *
 * Skips unless on x86-64 (AMD) as root, with the injector,
 * CONFIG_MEMORY_FAILURE, CONFIG_PREEMPT_DYNAMIC and the series' debugfs
 * delay (so never on a production kernel: each run poisons one page for
 * good).
 * It injects a memory error: it skips unless FNR_INTRUSIVE=1.
 * Environment: FNR_DIR, FNR_READERS (default 2), FNR_INTRUSIVE.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>

#include "../kselftest_harness.h"
#include "fnr_pressure.h"

#if defined(__x86_64__)
#include <asm/mce.h>
#endif

#define PG		FNR_PAGE
#define FILE_PAGES	512		/* 2 MiB: a PMD folio on huge tmpfs */
#define MCE_PAGE	5		/* not the folio's head */
#define READ_LEN	16
#define FILE_ID		0x3ce0
#define DELAY_CHECKED	"/sys/kernel/debug/filemap_noref/delay_checked_us"
#define DELAY_US	"20000"		/* 20 ms: five ticks at HZ=250 */
#define DELAYED_S	0.01
#define MCE_INJECT_DIR	"/sys/kernel/debug/mce-inject"
#define COMPACT_MEMORY	"/proc/sys/vm/compact_memory"
#define SCHED_PREEMPT	"/sys/kernel/debug/sched/preempt"

/* MCi_STATUS bits (arch/x86/include/asm/mce.h), and the injector's flag. */
#define MCI_STATUS_VAL		(1ULL << 63)
#define MCI_STATUS_ADDRV	(1ULL << 58)
#define MCI_STATUS_DEFERRED	(1ULL << 44)
#define MCJ_CTX_PROCESS		0x1

struct mce_race {
	int fd;
	long ncpus;
	pthread_barrier_t start;
	struct fnr_stop ctl;
	unsigned long reads, eio, delayed, delayed0;
	struct fnr_bad bad;
};

struct reader {
	struct mce_race *r;
	pthread_t th;
	uint64_t rng;
};

static void *reader_fn(void *arg)
{
	struct reader *rd = arg;
	struct mce_race *r = rd->r;
	uint8_t buf[READ_LEN];
	char why[512];
	uint64_t off;
	ssize_t got;
	double t;

	/*
	 * Not on CPU 0, where the error is raised: its work item runs
	 * memory_failure() there, while readers copy on the other CPUs.
	 */
	if (r->ncpus > 1) {
		cpu_set_t set;
		long cpu;

		CPU_ZERO(&set);
		for (cpu = 1; cpu < r->ncpus && cpu < CPU_SETSIZE; cpu++)
			CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			fnr_fail(&r->ctl, "sched_setaffinity", errno);
	}
	pthread_barrier_wait(&r->start);
	while (!fnr_stopped(&r->ctl)) {
		/* Any 16 bytes of the page but its first cache line. */
		off = MCE_PAGE * PG + 64 +
		      (fnr_rnd(&rd->rng) % ((PG - 64) / READ_LEN)) * READ_LEN;
		t = fnr_now();
		got = fnr_pread_eio(&r->ctl, r->fd, buf, READ_LEN, off,
				    &r->reads, &r->eio);
		/* Half the delay or more: a fast-path read that was delayed. */
		if (fnr_now() - t >= DELAYED_S)
			__atomic_add_fetch(&r->delayed, 1, __ATOMIC_RELAXED);
		if (got == -1)
			continue;
		if (got < 0)
			break;
		if (fnr_check(buf, got, off, FILE_ID, 1, why, sizeof(why)) ||
		    got != READ_LEN)
			fnr_bad_read(&r->bad, off, got,
				     got != READ_LEN ? "short read" : why);
	}
	return NULL;
}

/* The physical address of byte @off of @fd's page cache; 0 if unknown. */
static uint64_t page_cache_paddr(int fd, uint64_t off)
{
	char *p = mmap(NULL, PG, PROT_READ, MAP_SHARED | MAP_POPULATE, fd,
		       off & ~(PG - 1));
	uint64_t ent = 0;
	int pm;

	if (p == MAP_FAILED)
		return 0;
	pm = open("/proc/self/pagemap", O_RDONLY);
	if (pm >= 0) {
		if (pread(pm, &ent, 8, (uintptr_t)p / PG * 8) != 8)
			ent = 0;
		close(pm);
	}
	/* Unmapped again: memory_failure() has no process to kill. */
	munmap(p, PG);
	if (!(ent & (1ULL << 63)) || !(ent & ((1ULL << 55) - 1)))
		return 0;
	return (ent & ((1ULL << 55) - 1)) * PG + off % PG;
}

/* Which memory error this CPU's vendor reports with an address. */
enum mce_kind { MCE_NONE, MCE_AMD_DEFERRED };

static enum mce_kind mce_kind(char *why, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	enum mce_kind kind = MCE_NONE;
	bool smca = false;
	char line[4096];

	snprintf(why, len, "no vendor_id in /proc/cpuinfo");
	if (!f)
		return MCE_NONE;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "vendor_id", 9) && kind == MCE_NONE) {
			if (strstr(line, "AuthenticAMD"))
				kind = MCE_AMD_DEFERRED;
			else
				snprintf(why, len, "CPU vendor not handled: %.64s",
					 line + 9);
		}
		if (!strncmp(line, "flags", 5) && strstr(line, " smca"))
			smca = true;
	}
	fclose(f);
	if (kind == MCE_AMD_DEFERRED && smca) {
		snprintf(why, len, "AMD with SMCA: its error banks are not handled");
		return MCE_NONE;
	}
	return kind;
}

#if defined(__x86_64__)
/*
 * Report a memory error at @paddr as the poller would find it in a bank,
 * on CPU 0 (the injector raises it on the CPU the writer runs on).
 */
static int inject_mce(enum mce_kind kind, uint64_t paddr)
{
	struct mce m = { 0 };
	cpu_set_t set;
	ssize_t n;
	int fd, cpu = 0;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return -1;
	m.addr = paddr & ~63ULL;
	m.extcpu = cpu;
	m.inject_flags = MCJ_CTX_PROCESS;
	if (kind == MCE_AMD_DEFERRED) {
		/* Northbridge bank, extended error code 8: DRAM ECC. */
		m.bank = 4;
		m.status = MCI_STATUS_VAL | MCI_STATUS_ADDRV |
			   MCI_STATUS_DEFERRED | (8ULL << 16);
	}
	fd = open("/dev/mcelog", O_WRONLY);
	if (fd < 0)
		return -1;
	n = write(fd, &m, sizeof(m));
	close(fd);
	CPU_ZERO(&set);
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	return n == sizeof(m) ? 0 : -1;
}
#else
static int inject_mce(enum mce_kind kind, uint64_t paddr)
{
	errno = EOPNOTSUPP;
	return -1;
}
#endif

FIXTURE(mce)
{
	struct mce_race r;
	char path[PATH_MAX];
	enum mce_kind kind;
	char preempt[16];	/* the preemption mode to restore */
};

/* The current mode in debugfs sched/preempt: "none (voluntary) full". */
static int preempt_mode(char *mode, size_t len)
{
	char line[128], *open_, *close_;
	FILE *f = fopen(SCHED_PREEMPT, "r");
	bool ok;

	if (!f)
		return -1;
	ok = fgets(line, sizeof(line), f);
	fclose(f);
	open_ = ok ? strchr(line, '(') : NULL;
	close_ = open_ ? strchr(open_, ')') : NULL;
	if (!close_ || (size_t)(close_ - open_) >= len)
		return -1;
	snprintf(mode, len, "%.*s", (int)(close_ - open_ - 1), open_ + 1);
	return 0;
}

FIXTURE_SETUP(mce)
{
	char why[256], mode[16];

	if (!fnr_series())
		SKIP(return, "%s", FNR_NO_SERIES);
	if (!fnr_intrusive())
		SKIP(return, "%s", FNR_NOT_ASKED);

#if !defined(__x86_64__)
	SKIP(return, "x86-64 only (set_mce_nospec())");
#endif
	if (geteuid())
		SKIP(return, "not root");
	if (access("/dev/mcelog", W_OK))
		SKIP(return, "no /dev/mcelog: CONFIG_X86_MCELOG_LEGACY off?");
	if (access(MCE_INJECT_DIR, F_OK))
		SKIP(return, "no %s: CONFIG_X86_MCE_INJECT off?", MCE_INJECT_DIR);
	if (fnr_proc_value("/proc/meminfo", "HardwareCorrupted") < 0)
		SKIP(return, "no HardwareCorrupted in /proc/meminfo: CONFIG_MEMORY_FAILURE off?");
	self->kind = mce_kind(why, sizeof(why));
	if (self->kind == MCE_NONE)
		SKIP(return, "%s", why);
	/*
	 * The error poisons a page for good: only on a test kernel (the
	 * series with CONFIG_DEBUG_VM), never on the host of a make check.
	 */
	if (access(DELAY_CHECKED, W_OK))
		SKIP(return, "no %s: not a CONFIG_DEBUG_VM kernel with the series",
		     DELAY_CHECKED);
	/* Readers preempted inside rcu_read_lock(): see above. */
	if (preempt_mode(mode, sizeof(mode)))
		SKIP(return, "no %s: CONFIG_PREEMPT_DYNAMIC off?", SCHED_PREEMPT);
	/* After the last skip: a skipped setup gets no teardown. */
	ASSERT_EQ(0, fnr_write_str(DELAY_CHECKED, DELAY_US "\n"));
	if (strcmp(mode, "lazy") && strcmp(mode, "full")) {
		ASSERT_EQ(0, fnr_write_str(SCHED_PREEMPT, "full\n"));
		strcpy(self->preempt, mode);
	}
}

FIXTURE_TEARDOWN_PARENT(mce)
{
	if (fnr_write_str(DELAY_CHECKED, "0\n") && errno != ENOENT)
		TH_LOG("could not reset %s: %s", DELAY_CHECKED,
		       strerror(errno));
	if (self->preempt[0] && fnr_write_str(SCHED_PREEMPT, self->preempt))
		TH_LOG("could not set %s back to %s: %s", SCHED_PREEMPT,
		       self->preempt, strerror(errno));
	if (self->path[0])
		unlink(self->path);
}

TEST_F_TIMEOUT(mce, unmap_under_reader, 120)
{
	long i, nr = fnr_env_long("FNR_READERS", 2, 1, 64);
	struct reader *rd = calloc(nr, sizeof(*rd));
	struct mce_race *r = &self->r;
	uint64_t off = MCE_PAGE * PG, paddr;
	long hw0, hw1 = -1, ov0;
	uint8_t buf[PG];
	char why[512];
	double t0;
	ssize_t got;

	ASSERT_NE(NULL, rd);
	r->ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	snprintf(self->path, sizeof(self->path), "%s/fnr_mce.XXXXXX",
		 fnr_testdir());
	r->fd = mkstemp(self->path);
	ASSERT_LE(0, r->fd) TH_LOG("mkstemp: %s", strerror(errno));
	ASSERT_EQ(0, fnr_write_gen(r->fd, 0, FILE_PAGES * PG, FILE_ID, 1));
	/* memory_failure() drops a clean page cache page. */
	ASSERT_EQ(0, fsync(r->fd));
	ASSERT_EQ(0, fnr_make_hot(r->fd, 0, FILE_PAGES * PG));
	/*
	 * The second read queued the folios for activation in a per-CPU
	 * batch; until it drains, every read finds a folio due for
	 * activation and leaves the fast path.  Compaction drains them.
	 */
	if (!access(COMPACT_MEMORY, W_OK))
		ASSERT_EQ(0, fnr_write_str(COMPACT_MEMORY, "1\n"));
	paddr = page_cache_paddr(r->fd, off);
	if (!paddr)
		SKIP(return, "no physical address in /proc/self/pagemap");

	ASSERT_EQ(0, pthread_barrier_init(&r->start, NULL, nr + 1));
	for (i = 0; i < nr; i++) {
		rd[i].r = r;
		rd[i].rng = 0x9e3779b97f4a7c15ULL * (i + 1) ^ getpid();
		ASSERT_EQ(0, pthread_create(&rd[i].th, NULL, reader_fn, &rd[i]));
	}
	ov0 = fnr_overlapped();
	pthread_barrier_wait(&r->start);
	usleep(100000);
	hw0 = fnr_proc_value("/proc/meminfo", "HardwareCorrupted");
	r->delayed0 = __atomic_load_n(&r->delayed, __ATOMIC_RELAXED);
	ASSERT_EQ(0, inject_mce(self->kind, paddr))
		TH_LOG("writing the error to /dev/mcelog: %s", strerror(errno));
	/* The notifier runs from a work item: wait for the poison. */
	for (t0 = fnr_now(); fnr_now() - t0 < 10; usleep(1000)) {
		hw1 = fnr_proc_value("/proc/meminfo", "HardwareCorrupted");
		if (hw1 > hw0)
			break;
	}
	t0 = fnr_now() - t0;
	usleep(200000);
	fnr_set_stop(&r->ctl);
	for (i = 0; i < nr; i++)
		ASSERT_EQ(0, pthread_join(rd[i].th, NULL));
	pthread_barrier_destroy(&r->start);
	ASSERT_FALSE(r->ctl.have_err) TH_LOG("%s", r->ctl.err);

	/* After the error the page reads back right, or fails with EIO. */
	got = pread(r->fd, buf, PG, off);
	TH_LOG(
	       "error at %#llx (%s): HardwareCorrupted %ld -> %ld kB after %.3f s; %lu reads (%lu delayed before the error, %lu after), %lu EIO, %lu bad; read back: %s",
	       (unsigned long long)paddr,
	       "AMD deferred",
	       hw0, hw1, t0, r->reads, r->delayed0, r->delayed - r->delayed0,
	       r->eio, r->bad.n,
	       got == PG ? "the page" : got < 0 ? strerror(errno) : "short");
	if (r->bad.have_why)
		TH_LOG("first bad read: %s", r->bad.why);
	ASSERT_LT(hw0, hw1) TH_LOG("the injected error poisoned nothing");
	ASSERT_LT(0, r->reads) TH_LOG("no read copied anything");
	/* A delayed read went through the fast path: the race happened. */
	ASSERT_LT(0, r->delayed0)
		TH_LOG(
		       "no read was delayed before the error: no fast-path reader to race with");
	/*
	 * Whether a copy also spanned the page's removal from the file is
	 * logged, not required: the debug kernel saw none on ext4 in one run
	 * (memory_failure() took 0.13 s there), and a shmem folio stays in
	 * the file.
	 */
	fnr_overlap_log(fnr_overlapped_since(ov0),
			"a read delayed before the error");
	EXPECT_EQ(0, r->bad.n) TH_LOG("readers copied wrong bytes");
	if (got >= 0) {
		EXPECT_EQ(0, fnr_check(buf, got, off, FILE_ID, 1, why,
				       sizeof(why))) TH_LOG("%s", why);
	} else {
		EXPECT_EQ(EIO, errno);
	}
	close(r->fd);
	free(rd);
}

TEST_HARNESS_MAIN
