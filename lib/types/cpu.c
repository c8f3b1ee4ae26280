/*
 * cpu.c - the one processor probe, and the GGUFKIT_KERNELS selector.
 *
 * CPUID leaves 1 and 7 plus XGETBV, asked once (each CPUID is a costly exit
 * under a hypervisor, so only the leaves needed). Other processors than x86-64
 * report the scalar level.
 */
#include "types/cpu.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "ggufkit.h"

static gk_isa supported = GK_ISA_SCALAR;
static bool ssse3;
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>

/* The register state the OS saves (XCR0); only valid when OSXSAVE is set. */
static unsigned long long read_xcr0(void) {
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((unsigned long long)hi << 32) | lo;
}

static void probe(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return;
    ssse3 = (c & bit_SSSE3) != 0;
    const bool avx = (c & bit_AVX) != 0, f16c = (c & bit_F16C) != 0;
    const bool osxsave = (c & bit_OSXSAVE) != 0;
    if (!avx || !f16c || !osxsave) return;
    const unsigned long long xcr0 = read_xcr0();
    if ((xcr0 & 0x6) != 0x6) return;   /* XMM and YMM state */
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return;
    if (!(b & bit_AVX2)) return;
    supported = GK_ISA_AVX2;
    const unsigned want512 = bit_AVX512F | bit_AVX512BW | bit_AVX512DQ | bit_AVX512VL;
    if ((b & want512) == want512 && (xcr0 & 0xE6) == 0xE6)   /* opmask, ZMM hi256, hi16 ZMM */
        supported = GK_ISA_AVX512;
}
#else
static void probe(void) {}
#endif

static void probe_once_fn(void) { probe(); }

gk_isa gk_isa_supported(void) {
    pthread_once(&probe_once, probe_once_fn);
    return supported;
}

bool gk_cpu_has_ssse3(void) {
    pthread_once(&probe_once, probe_once_fn);
    return ssse3;
}

const char *gk_isa_name(gk_isa isa) {
    switch (isa) {
    case GK_ISA_AVX2: return "avx2";
    case GK_ISA_AVX512: return "avx512";
    default: return "scalar";
    }
}

static gk_isa active;
static char active_name[128];
static pthread_once_t select_once = PTHREAD_ONCE_INIT;

static void select_level(void) {
    const gk_isa best = gk_isa_supported();
    const char *env = getenv("GGUFKIT_KERNELS");
    active = best;
    snprintf(active_name, sizeof active_name, "%s", gk_isa_name(best));
    if (env == NULL || env[0] == '\0') return;
    gk_isa want;
    if (strcasecmp(env, "scalar") == 0) want = GK_ISA_SCALAR;
    else if (strcasecmp(env, "avx2") == 0) want = GK_ISA_AVX2;
    else if (strcasecmp(env, "avx512") == 0) want = GK_ISA_AVX512;
    else {
        snprintf(active_name, sizeof active_name, "%s (GGUFKIT_KERNELS value not recognised)",
                 gk_isa_name(best));
        return;
    }
    if (want > best) {
        snprintf(active_name, sizeof active_name, "%s (GGUFKIT_KERNELS=%s: not on this processor)",
                 gk_isa_name(best), gk_isa_name(want));
        return;
    }
    active = want;
    snprintf(active_name, sizeof active_name, "%s", gk_isa_name(want));
}

gk_isa gk_isa_active(void) {
    pthread_once(&select_once, select_level);
    return active;
}

const char *gk_kernels_name(void) {
    pthread_once(&select_once, select_level);
    return active_name;
}
