/* SPDX-License-Identifier: GPL-2.0 */
/*
 * make scale's "alu" piece, shared by fnr_scale.c (in UML) and
 * host-alu.c (on the host), so that both run the same loop: eight
 * additions in eight independent chains, bound by the core's throughput.
 */
#ifndef FNR_SCALE_ALU_H
#define FNR_SCALE_ALU_H

#define FNR_ALU8(a0, a1, a2, a3, a4, a5, a6, a7)				\
	asm volatile("add $1,%0; add $1,%1; add $1,%2; add $1,%3;"		\
		     "add $1,%4; add $1,%5; add $1,%6; add $1,%7"		\
		     : "+r" (a0), "+r" (a1), "+r" (a2), "+r" (a3),		\
		       "+r" (a4), "+r" (a5), "+r" (a6), "+r" (a7))

#endif
