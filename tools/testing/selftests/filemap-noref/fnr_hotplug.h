/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CPU hotplug during a race: a thread takes one CPU offline and brings it
 * back, in a loop, while readers, evictors and splitters run.  Pages a CPU
 * queued for an RCU grace period stay on its lists when it goes offline
 * (RCU migrates its callbacks, the unbound worker frees them); after the
 * race the pending count must still drain to 0.
 */
#ifndef __FNR_HOTPLUG_H
#define __FNR_HOTPLUG_H

#include <pthread.h>

#include "../kselftest_harness.h"
#include "fnr_pressure.h"

#define FNR_CPU_SYS	"/sys/devices/system/cpu"
#define FNR_HP_DRAIN	10.0	/* seconds the pending count may take */

struct fnr_hotplug {
	char path[64];		/* FNR_CPU_SYS/cpuN/online; "" if unused */
	bool offline;		/* the CPU is offline now */
	struct fnr_stop *stop;
	pthread_t th;
	unsigned long cycles;	/* offline and back online */
	unsigned long busy;	/* offlining refused (EBUSY), retried */
	long peak;		/* most pages pending seen while offline */
	int err;		/* errno of the write that failed */
};

/* Pick the highest-numbered online CPU that can go offline: 0, or -1. */
static inline int fnr_hotplug_pick(struct fnr_hotplug *h)
{
	int cpu;

	for (cpu = 63; cpu > 0; cpu--) {
		snprintf(h->path, sizeof(h->path), FNR_CPU_SYS "/cpu%d/online",
			 cpu);
		if (!access(h->path, W_OK) && fnr_read_long(h->path) == 1)
			return 0;
	}
	h->path[0] = 0;
	return -1;
}

static inline void *fnr_hotplug_fn(void *arg)
{
	struct fnr_hotplug *h = arg;
	long pending;

	while (!fnr_stopped(h->stop)) {
		if (fnr_write_str(h->path, "0\n")) {
			if (errno == EBUSY) {
				h->busy++;
				usleep(10000);
				continue;
			}
			h->err = errno;
			break;
		}
		h->offline = true;
		pending = fnr_vmstat(FNR_PENDING);
		if (pending > h->peak)
			h->peak = pending;
		usleep(20000);
		if (fnr_write_str(h->path, "1\n")) {
			h->err = errno;
			break;
		}
		h->offline = false;
		h->cycles++;
		usleep(20000);
	}
	return NULL;
}

static inline int fnr_hotplug_start(struct fnr_hotplug *h,
				    struct fnr_stop *stop)
{
	h->stop = stop;
	errno = pthread_create(&h->th, NULL, fnr_hotplug_fn, h);
	return errno ? -1 : 0;
}

/* Join the thread and bring the CPU back if it is still offline. */
static inline int fnr_hotplug_stop(struct fnr_hotplug *h)
{
	errno = pthread_join(h->th, NULL);
	if (errno)
		return -1;
	if (h->offline && fnr_write_str(h->path, "1\n"))
		return -1;
	h->offline = false;
	return 0;
}

/* After the race: report the cycles, and check the pending count drains. */
static inline void fnr_hotplug_check(struct __test_metadata *_metadata,
				     struct fnr_hotplug *h)
{
	double drained = fnr_wait_drained(FNR_HP_DRAIN);

	TH_LOG(
	"%s: %lu times offline and back (%lu refused), up to %ld pages pending while offline; drained %.3f s after the race",
	       h->path, h->cycles, h->busy, h->peak, drained);
	EXPECT_EQ(0, h->err) TH_LOG("writing %s: %s", h->path, strerror(h->err));
	EXPECT_LT(0, h->cycles) TH_LOG("the CPU never went offline");
	EXPECT_LE(0, drained)
		TH_LOG("%ld pages still pending %.0f s after the race",
		       fnr_pending_exact(), FNR_HP_DRAIN);
}

/* For teardown: the CPU online again whatever happened; 0 on success. */
static inline int fnr_hotplug_restore(struct fnr_hotplug *h)
{
	if (!h->path[0] || fnr_read_long(h->path) == 1)
		return 0;
	return fnr_write_str(h->path, "1\n");
}

#endif /* __FNR_HOTPLUG_H */
