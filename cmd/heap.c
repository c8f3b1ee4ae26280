/*
 * heap.c - the command's heap on huge pages. A rewrite whose tensor bytes are
 * cloned spends most of its time building its header (the tokenizer's tens of
 * thousands of strings parsed, copied and serialized): a few megabytes of
 * fresh memory, touched once, at one page fault per 4 KiB, and on some virtual
 * machines each fault is a trap costing microseconds. The heap is therefore
 * grown in one large step and marked for transparent huge pages (where the
 * system grants them on request), and allocations up to 32 MiB come from it.
 */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cmd.h"

#define HEAP_PAD (64u << 20)        /* the heap grows by this much beyond a request */
#define HEAP_MMAP_MIN (32u << 20)   /* smaller allocations come from the heap */
#define HUGE_PAGE (2u << 20)

void cmd_heap_setup(void) {
    if (mallopt(M_TOP_PAD, HEAP_PAD) != 1 || mallopt(M_MMAP_THRESHOLD, HEAP_MMAP_MIN) != 1) return;
    /* Grow the heap now (an allocation the initial heap cannot hold), then mark it. */
    void *probe = malloc(1u << 20);
    if (probe == NULL) return;
    uintptr_t p = (uintptr_t)probe, top = (uintptr_t)sbrk(0);
    /* Only a heap of brk (not a sanitizer's allocator, which mallopt leaves alone). */
    if (p < top && top - p <= 2 * (uintptr_t)HEAP_PAD) {
        uintptr_t lo = (p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1), hi = top & ~(uintptr_t)(HUGE_PAGE - 1);
        if (lo < hi) madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
    }
    free(probe);
}
