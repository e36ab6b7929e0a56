// SPDX-License-Identifier: GPL-2.0
/*
 * fnr_scale: kthreads that read one cached file in a loop, for make scale.
 *
 * In User-Mode Linux a system call from user space costs microseconds,
 * which hides a refcount; so the read loop runs in the kernel: one kthread
 * bound to each CPU 0..N-1 calls kernel_read() on its file, the same
 * bytes each time, for a given time, and counts the reads.  Built as a
 * module against the base and the patched tree alike; never part of the
 * series.
 *
 * Write "PREFIX THREADS MSECS SIZE MODE" to /sys/kernel/debug/fnr_scale/run,
 * then read the file back.  The files are opened here, in the writer's
 * context (a kthread does not see the initramfs root).  MODE:
 *   shared  one struct file (PREFIX.0) for all threads, as a database
 *           preads one descriptor from many threads;
 *   open    PREFIX.0 opened once per thread;
 *   files   PREFIX.<thread>, a file per thread: nothing shared, the ceiling;
 *   move    one struct file, each thread reading at its own offset, which
 *           moves on by SIZE each read (wrapping at the end of the file),
 *           as a database reads its pages: each read changes the file's
 *           f_ra.prev_pos, a line all threads write.  filemap_read()
 *           writes it on every read of the base as well; the series'
 *           reads store only a change, and its tmpfs read tracks it
 *           where the base's does not.  init.c runs it only where each
 *           thread has SIZE bytes of the file of its own;
 *   rshared, rfiles  shared and files with the copy read(2) does: the
 *           kthreads adopt the writer's mm (kthread_use_mm()) and read
 *           into a user buffer of their own (ITER_UBUF) with
 *           vfs_iter_read(), where kernel_read() copies to a kernel
 *           buffer (ITER_KVEC).  In UML, copy_to_user() walks the page
 *           tables in software: these rows cost that, on both kernels.
 * Modes that read nothing, to cost the pieces (PREFIX and SIZE ignored):
 *   atomic   each thread increments its own counter (a line of its own);
 *   contend  all threads increment one counter: each increment pulls the
 *            line from the CPU that wrote it last;
 *   lfence, mfence, lockadd  a fence alone: what UML makes of smp_rmb()
 *            and smp_mb() (lfence, mfence) and what x86 makes of smp_mb()
 *            (a locked add to the stack).
 *   alu      64 additions in eight independent chains: bound by the
 *            core's throughput, not by a latency, so it slows down when
 *            another thread runs on the same core (an SMT sibling), as a
 *            fast read loop does, where the loops above, latency-bound,
 *            hardly do;
 *   memcpy16 a 16-byte memcpy() between two buffers of the thread's own,
 *            the copy of a 16 B read without the read.
 * The answer: "reads R0 R1 ... ns N0 N1 ... hot H/F order O", the reads and
 * the nanoseconds each thread ran, on a kernel with PAGECACHE_RCU_FREE how
 * many of the F files had PG_rcu_free on the first and the last folio read
 * (-1 without it), and the order of the first file's first folio.
 */
#include <linux/module.h>
#include <linux/debugfs.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/kthread.h>
#include <linux/pagemap.h>
#include <linux/slab.h>
#include <linux/delay.h>
#include <linux/wait.h>
#include <linux/mman.h>
#include <linux/sched/mm.h>
#include <linux/uio.h>

#include "alu.h"

#define FNR_MAX_THREADS	64
#define FNR_MAX_SIZE	(64 << 10)
#define FNR_MAX_PATH	256

enum fnr_op { FNR_READ, FNR_ATOMIC, FNR_CONTEND, FNR_LFENCE, FNR_MFENCE,
	      FNR_LOCKADD, FNR_ALU, FNR_MEMCPY16 };

static const char * const fnr_ops[] = { "", "atomic", "contend", "lfence",
					"mfence", "lockadd", "alu",
					"memcpy16" };

struct fnr_thread {
	enum fnr_op op;
	atomic_long_t counter;
	struct file *file;
	char *buf;
	char __user *ubuf;		/* rshared, rfiles: in @mm */
	struct mm_struct *mm;
	bool move;			/* move: the offset moves on */
	loff_t next;
	size_t size;
	u64 deadline_ns;
	u64 reads;
	u64 ns;
	u64 alu[8];
	char src[32], dst[32];
	long err;
	struct completion done;
	struct task_struct *task;
} ____cacheline_aligned;

static DECLARE_WAIT_QUEUE_HEAD(fnr_wq);
static DEFINE_MUTEX(fnr_lock);
static atomic_t fnr_ready;
static bool fnr_go;
static char fnr_result[2048];
static struct {
	atomic_long_t v;
} fnr_shared ____cacheline_aligned;

/* 64 of operation @op that is not a read. */
static void fnr_op64(struct fnr_thread *t)
{
	u64 a0, a1, a2, a3, a4, a5, a6, a7;
	int i;

	if (t->op == FNR_ALU) {
		a0 = t->alu[0], a1 = t->alu[1], a2 = t->alu[2];
		a3 = t->alu[3], a4 = t->alu[4], a5 = t->alu[5];
		a6 = t->alu[6], a7 = t->alu[7];
		for (i = 0; i < 64 * 8; i++)
			FNR_ALU8(a0, a1, a2, a3, a4, a5, a6, a7);
		t->alu[0] = a0, t->alu[1] = a1, t->alu[2] = a2;
		t->alu[3] = a3, t->alu[4] = a4, t->alu[5] = a5;
		t->alu[6] = a6, t->alu[7] = a7;
		return;
	}
	for (i = 0; i < 64; i++) {
		switch (t->op) {
		case FNR_ATOMIC:
			atomic_long_inc(&t->counter);
			break;
		case FNR_CONTEND:
			atomic_long_inc(&fnr_shared.v);
			break;
		case FNR_LFENCE:
			asm volatile("lfence" ::: "memory");
			break;
		case FNR_MFENCE:
			asm volatile("mfence" ::: "memory");
			break;
		case FNR_MEMCPY16:
			/* The offset varies, so the copy is not hoisted. */
			memcpy(t->dst, t->src + (i & 15), 16);
			barrier_data(t->dst);
			break;
		default:
			asm volatile("lock addl $0,-4(%%rsp)" ::: "memory", "cc");
			break;
		}
	}
}

static int fnr_thread_fn(void *arg)
{
	struct fnr_thread *t = arg;
	u64 start;
	loff_t pos;
	ssize_t n;
	int i;

	struct iov_iter iter;

	if (t->mm)
		kthread_use_mm(t->mm);
	atomic_inc(&fnr_ready);
	wait_event(fnr_wq, READ_ONCE(fnr_go));
	start = ktime_get_ns();
	for (;;) {
		if (t->op != FNR_READ)
			fnr_op64(t);
		for (i = 0; t->op == FNR_READ && i < 64; i++) {
			pos = t->next;
			if (t->move) {
				t->next += t->size;
				if (t->next + t->size > i_size_read(file_inode(t->file)))
					t->next = 0;
			}
			if (t->mm) {
				iov_iter_ubuf(&iter, ITER_DEST, t->ubuf, t->size);
				n = vfs_iter_read(t->file, &iter, &pos, 0);
			} else {
				n = kernel_read(t->file, t->buf, t->size, &pos);
			}
			if (n != t->size) {
				t->err = n < 0 ? n : -EIO;
				goto out;
			}
		}
		t->reads += 64;
		t->ns = ktime_get_ns() - start;
		if (t->ns >= t->deadline_ns)
			break;
		cond_resched();
	}
out:
	if (t->mm)
		kthread_unuse_mm(t->mm);
	complete(&t->done);
	while (!kthread_should_stop()) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (!kthread_should_stop())
			schedule();
		__set_current_state(TASK_RUNNING);
	}
	return 0;
}

/* Whether the folios at the first and the last byte read are PG_rcu_free. */
static int fnr_hot(struct file *file, size_t size)
{
#ifdef CONFIG_PAGECACHE_RCU_FREE
	pgoff_t index[2] = { 0, (size - 1) >> PAGE_SHIFT };
	struct folio *folio;
	int i, hot = 1;

	for (i = 0; i < 2; i++) {
		folio = filemap_get_folio(file->f_mapping, index[i]);
		if (IS_ERR(folio))
			return 0;
		if (!folio_test_rcu_free(folio))
			hot = 0;
		folio_put(folio);
	}
	return hot;
#else
	return -1;
#endif
}

static int fnr_run(const char *prefix, int threads, int msecs, size_t size,
		   const char *mode)
{
	struct fnr_thread *t[FNR_MAX_THREADS] = {};
	int i, files = 0, hot = 0, order = -1, len, ret = 0;
	struct folio *folio;
	char path[FNR_MAX_PATH + 8];
	bool move = !strcmp(mode, "move"), user = mode[0] == 'r';
	bool shared = move || !strcmp(mode + user, "shared");
	bool per_file = !strcmp(mode + user, "files");
	enum fnr_op op = FNR_READ;
	unsigned long ubuf = 0, stride = PAGE_ALIGN(size);
	struct mm_struct *mm = NULL;

	for (i = FNR_ATOMIC; i < ARRAY_SIZE(fnr_ops); i++)
		if (!strcmp(mode, fnr_ops[i]))
			op = i;
	if (op == FNR_READ && !shared && !per_file && strcmp(mode, "open"))
		return -EINVAL;
	if (threads < 1 || threads > FNR_MAX_THREADS ||
	    threads > num_online_cpus() || msecs < 1 || !size ||
	    size > FNR_MAX_SIZE)
		return -EINVAL;
	/* A user buffer a thread, a page apart, in the writer's mm. */
	if (op == FNR_READ && user) {
		if (!current->mm)
			return -EINVAL;
		ubuf = vm_mmap(NULL, 0, threads * stride, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, 0);
		if (IS_ERR_VALUE(ubuf))
			return ubuf;
		mm = current->mm;
		mmget(mm);
	}

	for (i = 0; i < threads; i++) {
		t[i] = kzalloc(sizeof(*t[i]), GFP_KERNEL);
		if (!t[i]) {
			ret = -ENOMEM;
			goto out;
		}
		t[i]->buf = kmalloc(size, GFP_KERNEL);
		if (!t[i]->buf) {
			ret = -ENOMEM;
			goto out;
		}
		t[i]->size = size;
		t[i]->op = op;
		t[i]->move = move;
		t[i]->mm = mm;
		if (mm)
			t[i]->ubuf = (char __user *)(ubuf + i * stride);
		t[i]->deadline_ns = (u64)msecs * NSEC_PER_MSEC;
		init_completion(&t[i]->done);
		if (op != FNR_READ)
			continue;
		if (shared && i) {
			t[i]->file = t[0]->file;
			continue;
		}
		snprintf(path, sizeof(path), "%s.%d", prefix, per_file ? i : 0);
		t[i]->file = filp_open(path, O_RDONLY, 0);
		if (IS_ERR(t[i]->file)) {
			ret = PTR_ERR(t[i]->file);
			t[i]->file = NULL;
			goto out;
		}
		files++;
		if (fnr_hot(t[i]->file, move ? i_size_read(file_inode(t[i]->file)) : size) > 0)
			hot++;
		folio = filemap_get_folio(t[i]->file->f_mapping, 0);
		if (!IS_ERR(folio)) {
			if (!i)
				order = folio_order(folio);
			folio_put(folio);
		}
	}
	if (!IS_ENABLED(CONFIG_PAGECACHE_RCU_FREE) || op != FNR_READ)
		hot = -1;
	/* move: the threads start spread over the file. */
	for (i = 0; move && i < threads; i++)
		t[i]->next = rounddown(i * i_size_read(file_inode(t[0]->file)) /
				       threads, size);

	atomic_set(&fnr_ready, 0);
	WRITE_ONCE(fnr_go, false);
	for (i = 0; i < threads; i++) {
		t[i]->task = kthread_create_on_cpu(fnr_thread_fn, t[i], i,
						   "fnr_scale/%u");
		if (IS_ERR(t[i]->task)) {
			ret = PTR_ERR(t[i]->task);
			t[i]->task = NULL;
			break;
		}
		wake_up_process(t[i]->task);
	}
	while (atomic_read(&fnr_ready) < i)
		msleep(1);
	WRITE_ONCE(fnr_go, true);
	wake_up_all(&fnr_wq);
	for (i = 0; i < threads && t[i]->task; i++) {
		wait_for_completion(&t[i]->done);
		kthread_stop(t[i]->task);
		if (t[i]->err && !ret)
			ret = t[i]->err;
	}
	if (ret)
		goto out;

	len = scnprintf(fnr_result, sizeof(fnr_result), "reads");
	for (i = 0; i < threads; i++)
		len += scnprintf(fnr_result + len, sizeof(fnr_result) - len,
				 " %llu", t[i]->reads);
	len += scnprintf(fnr_result + len, sizeof(fnr_result) - len, " ns");
	for (i = 0; i < threads; i++)
		len += scnprintf(fnr_result + len, sizeof(fnr_result) - len,
				 " %llu", t[i]->ns);
	scnprintf(fnr_result + len, sizeof(fnr_result) - len,
		  " hot %d/%d order %d\n", hot, files, order);
out:
	for (i = 0; i < threads && t[i]; i++) {
		if (t[i]->file && (!shared || !i))
			fput(t[i]->file);
		kfree(t[i]->buf);
		kfree(t[i]);
	}
	if (mm) {
		vm_munmap(ubuf, threads * stride);
		mmput(mm);
	}
	return ret;
}

static ssize_t fnr_write(struct file *file, const char __user *ubuf,
			 size_t count, loff_t *ppos)
{
	char cmd[FNR_MAX_PATH + 64], prefix[FNR_MAX_PATH], mode[16];
	int threads, msecs, ret;
	size_t size;

	if (count >= sizeof(cmd))
		return -EINVAL;
	if (copy_from_user(cmd, ubuf, count))
		return -EFAULT;
	cmd[count] = 0;
	if (sscanf(cmd, "%255s %d %d %zu %15s", prefix, &threads, &msecs,
		   &size, mode) != 5)
		return -EINVAL;
	mutex_lock(&fnr_lock);
	fnr_result[0] = 0;
	ret = fnr_run(prefix, threads, msecs, size, mode);
	mutex_unlock(&fnr_lock);
	return ret ? ret : count;
}

static ssize_t fnr_read(struct file *file, char __user *ubuf, size_t count,
			loff_t *ppos)
{
	ssize_t ret;

	mutex_lock(&fnr_lock);
	ret = simple_read_from_buffer(ubuf, count, ppos, fnr_result,
				      strlen(fnr_result));
	mutex_unlock(&fnr_lock);
	return ret;
}

static const struct file_operations fnr_fops = {
	.owner = THIS_MODULE,
	.read = fnr_read,
	.write = fnr_write,
};

static struct dentry *fnr_dir;

static int __init fnr_scale_init(void)
{
	fnr_dir = debugfs_create_dir("fnr_scale", NULL);
	debugfs_create_file("run", 0600, fnr_dir, NULL, &fnr_fops);
	return 0;
}

static void __exit fnr_scale_exit(void)
{
	debugfs_remove(fnr_dir);
}

module_init(fnr_scale_init);
module_exit(fnr_scale_exit);
MODULE_DESCRIPTION("filemap-noref scaling bench: kthreads reading one file");
MODULE_LICENSE("GPL");
