// SPDX-License-Identifier: GPL-2.0
/*
 * The page->flags layout of the tree this is built against, the widths
 * that mminit_verify_pageflags_layout() prints.  Each is emitted as the
 * string "->NAME VALUE" into a section of its own (the asm-offsets way of
 * getting a constant out of the compiler); scripts/check-distro.sh reads
 * them with strings(1).  Built, never loaded.
 */
#include <linux/mm.h>
#include <linux/module.h>

#define FNR_WIDTH(name, val)						\
	asm volatile(".pushsection .fnr_layout, \"a\"\n"		\
		     ".ascii \"->" #name " %c0\\n\"\n"			\
		     ".popsection" : : "i" (val))

#ifdef LAST_CPUPID_NOT_IN_PAGE_FLAGS
#define FNR_CPUPID_IN_FLAGS	0
#else
#define FNR_CPUPID_IN_FLAGS	1
#endif

void fnr_layout(void);
void fnr_layout(void)
{
	FNR_WIDTH(Section, SECTIONS_WIDTH);
	FNR_WIDTH(Node, NODES_WIDTH);
	FNR_WIDTH(Zone, ZONES_WIDTH);
	FNR_WIDTH(Lastcpupid, LAST_CPUPID_WIDTH);
	FNR_WIDTH(LastcpupidInFlags, FNR_CPUPID_IN_FLAGS);
	FNR_WIDTH(Kasantag, KASAN_TAG_WIDTH);
	FNR_WIDTH(Gen, LRU_GEN_WIDTH);
	FNR_WIDTH(Tier, LRU_REFS_WIDTH);
	FNR_WIDTH(Flags, NR_PAGEFLAGS);
}
EXPORT_SYMBOL_GPL(fnr_layout);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("filemap-noref: page->flags layout probe, never loaded");
