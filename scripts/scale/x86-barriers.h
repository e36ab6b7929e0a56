/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x86's SMP barriers for a User-Mode Linux kernel on an x86-64 host, forced
 * into every file of make scale's UML builds (KCFLAGS=-include), base and
 * patched alike.  arch/x86/um/asm/barrier.h defines only mb(), rmb() and
 * wmb() (mfence, lfence, sfence), and asm-generic/barrier.h builds every
 * SMP barrier from them: smp_rmb() is an lfence, smp_load_acquire() (so
 * i_size_read()) and smp_mb__after_atomic() an mfence.  UML runs on the
 * host CPU, whose memory model (x86-TSO) is the one these definitions,
 * copied from arch/x86/include/asm/barrier.h, are made for; without them a
 * UML read pays fences a bare-metal x86 kernel does not (make scale's
 * fs=cpu rows give their cost).  SCALE_BARRIERS=uml builds without this.
 */
#ifndef __UM_HOST__
#define __smp_mb()	asm volatile("lock addl $0,-4(%%rsp)" ::: "memory", "cc")
#define __smp_rmb()	barrier()
#define __smp_wmb()	barrier()
#define __smp_store_mb(var, value) do { (void)xchg(&var, value); } while (0)
#define __smp_store_release(p, v)					\
do {									\
	compiletime_assert_atomic_type(*p);				\
	barrier();							\
	WRITE_ONCE(*p, v);						\
} while (0)
#define __smp_load_acquire(p)						\
({									\
	typeof(*p) ___p1 = READ_ONCE(*p);				\
	compiletime_assert_atomic_type(*p);				\
	barrier();							\
	___p1;								\
})
#define __smp_mb__before_atomic()	do { } while (0)
#define __smp_mb__after_atomic()	do { } while (0)
#endif
