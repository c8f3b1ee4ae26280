/*
 * cpu.h - what the processor offers the vector kernels, and which level runs.
 *
 * One probe (CPUID and XGETBV, asked once) serves every caller: the kernel
 * dispatch of the type table and the UTF-8 check. A level counts as supported
 * only when the processor has its instructions and the operating system saves
 * its registers.
 */
#ifndef GK_TYPES_CPU_H
#define GK_TYPES_CPU_H

#include <stdbool.h>

/* Kernel levels, each including the ones before it. */
typedef enum gk_isa {
    GK_ISA_SCALAR,   /* portable C, the reference */
    GK_ISA_AVX2,     /* AVX2 and F16C */
    GK_ISA_AVX512,   /* AVX-512 F, BW, DQ and VL (plus the AVX2 level) */
} gk_isa;

/** gk_isa_supported() : @return : the best level this processor and OS run. */
gk_isa gk_isa_supported(void);

/** gk_isa_active() : the level the kernels use: GGUFKIT_KERNELS=scalar|avx2|avx512
 *  (case-insensitive) when set, capped at gk_isa_supported() (asking for more than
 *  the processor has gives the best it has). Unset, empty or unrecognised values
 *  mean the best supported level; gk_kernels_name() says when a value was capped
 *  or not understood. Read once, on first call. */
gk_isa gk_isa_active(void);

/** gk_isa_name() : @return : "scalar", "avx2" or "avx512". */
const char *gk_isa_name(gk_isa isa);

/** gk_cpu_has_ssse3() : @return : whether SSSE3 is there (the UTF-8 check). */
bool gk_cpu_has_ssse3(void);

#endif
