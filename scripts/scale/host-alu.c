// SPDX-License-Identifier: GPL-2.0
/*
 * host-alu: fnr_scale.c's "alu" loop run on the host itself, one thread
 * bound to each of the first N CPUs it may run on, for make scale: if
 * two threads run it at half the rate of one, the host's CPUs share
 * cores (SMT siblings) or time, and any throughput-bound loop in UML
 * halves with them.  Prints make scale's raw line with kernel=host:
 *   host-alu ROUND THREADS MSECS   (mode=host-alu)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "alu.h"

#define MAX_THREADS	64

struct thr {
	int cpu;
	long msecs;
	uint64_t ops;
	double s;
} __attribute__((aligned(64)));

static pthread_barrier_t start;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void *fn(void *arg)
{
	struct thr *t = arg;
	uint64_t a0 = 0, a1 = 1, a2 = 2, a3 = 3, a4 = 4, a5 = 5, a6 = 6, a7 = 7;
	cpu_set_t set;
	double t0;
	int i;

	CPU_ZERO(&set);
	CPU_SET(t->cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set)) {
		fprintf(stderr, "host-alu: cannot bind a thread to CPU %d\n", t->cpu);
		exit(1);
	}
	pthread_barrier_wait(&start);
	t0 = now();
	do {
		for (i = 0; i < 64 * 8; i++)
			FNR_ALU8(a0, a1, a2, a3, a4, a5, a6, a7);
		t->ops += 64;
		t->s = now() - t0;
	} while (t->s * 1000 < t->msecs);
	t->ops += (a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7) & 0;
	return NULL;
}

int main(int argc, char **argv)
{
	static struct thr t[MAX_THREADS];
	pthread_t th[MAX_THREADS];
	double rate, total = 0, min = 0, max = 0;
	cpu_set_t mine;
	int i, n, cpu = -1;

	if (argc != 4 || (n = atoi(argv[2])) < 1 || n > MAX_THREADS) {
		fprintf(stderr, "usage: host-alu ROUND THREADS MSECS\n");
		return 2;
	}
	if (sched_getaffinity(0, sizeof(mine), &mine)) {
		perror("host-alu: sched_getaffinity");
		return 1;
	}
	pthread_barrier_init(&start, NULL, n);
	for (i = 0; i < n; i++) {
		while (++cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &mine))
			;
		if (cpu == CPU_SETSIZE) {
			fprintf(stderr, "host-alu: fewer than %d CPUs to run on\n", n);
			return 1;
		}
		t[i].cpu = cpu;
		t[i].msecs = atol(argv[3]);
		pthread_create(&th[i], NULL, fn, &t[i]);
	}
	for (i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		rate = t[i].ops / t[i].s;
		total += rate;
		min = !i || rate < min ? rate : min;
		max = rate > max ? rate : max;
	}
	printf("scale kernel=host round=%s fs=cpu mode=host-alu size=8 threads=%d total=%.0f per_thread=%.0f min=%.0f max=%.0f hot=- order=-1\n",
	       argv[1], n, total, total / n, min, max);
	return 0;
}
