/* The per-channel sums of four-byte pixels behind `--inflate`'s mean colour and difference hash (PixelSummary.swift,
   docs/output.md#image), 32 bytes at a time with AVX2 when the CPU has it.

   Why C: on issue 22's baseline JPEGs the Swift sums (SIMD16<UInt16>, which Swift compiles for the baseline
   x86-64's 16-byte vectors, and their lane-by-lane reductions) took 15 % of the instructions of a full decode, a
   fifth of libjpeg-turbo's own; Swift cannot compile one function for AVX2 and choose it at run time. Without AVX2
   (older x86 CPUs, other architectures) the Swift code does the work.

   Palette indices go through AVX-512 VBMI's byte permutes when the CPU has them: the Swift loop looks each index up
   in a table of 256 words, about a cycle per pixel, and on bench/small's 60 palette PNGs (1024 x 768) that was 9 %
   of a full decode's CPU, beside libpng and zlib's 76 %. Here 64 indices at a time pick their R, G, B and A bytes
   from the palette's four 256-byte planes (two two-register permutes and a blend by the index's high bit per
   channel), and the bytes are summed eight at a time against zero (VPSADBW). A whole row's nine cell columns go in
   one call, so the planes are loaded once per row: 2.3 times as fast as the word lookups in C on the same rows.

   Whole rows of four-byte pixels go in one call too (respdecode_rgba_row_sums): on bench/small's baseline JPEGs the
   nine calls per row, one per cell column, and the Swift around each cost 3.6 % of a full decode's samples beside
   the sums' own 5.6 %. (A 512-bit version of the sums was no faster on Zen 4, which splits such work in two halves
   of 256 bits: BENCHMARKS.md, 2026-11-28.) */
#include <stddef.h>
#include <stdint.h>
#include "CShims.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define RESPDECODE_X86 1
#endif

#ifdef RESPDECODE_X86
/* Bytes are read as sixteen 16-bit lanes and split by mask and shift into their even bytes (R, B) and odd bytes
   (G, A), added in 16-bit lanes for at most 256 steps (256 x 255 fits); seen as 32-bit lanes, each then holds one
   channel in its low half and another in its high half. Three horizontal adds bring the four channels' block sums
   into four 32-bit lanes (8 x 65,280 fits), which are widened and added to 64-bit totals. */
__attribute__((target("avx2"))) static void rgba_sums_avx2(const uint8_t *pixels, size_t count, uint64_t *sums) {
    const __m256i low_byte = _mm256_set1_epi16(0x00FF);
    const __m256i low_half = _mm256_set1_epi32(0xFFFF);
    __m256i totals = _mm256_setzero_si256();
    size_t bytes = count * 4, i = 0;
    while (bytes - i >= 32) {
        size_t steps = (bytes - i) / 32;
        if (steps > 256) steps = 256;
        __m256i even = _mm256_setzero_si256(), odd = _mm256_setzero_si256();
        for (size_t k = 0; k < steps; k++, i += 32) {
            __m256i v = _mm256_loadu_si256((const __m256i *)(pixels + i));
            even = _mm256_add_epi16(even, _mm256_and_si256(v, low_byte));
            odd = _mm256_add_epi16(odd, _mm256_srli_epi16(v, 8));
        }
        __m256i r = _mm256_and_si256(even, low_half), b = _mm256_srli_epi32(even, 16);
        __m256i g = _mm256_and_si256(odd, low_half), a = _mm256_srli_epi32(odd, 16);
        /* hadd works within each 128-bit half: after three, each half holds [R, G, B, A] of its four pixels' lanes. */
        __m256i rgba = _mm256_hadd_epi32(_mm256_hadd_epi32(r, g), _mm256_hadd_epi32(b, a));
        __m128i both = _mm_add_epi32(_mm256_castsi256_si128(rgba), _mm256_extracti128_si256(rgba, 1));
        totals = _mm256_add_epi64(totals, _mm256_cvtepu32_epi64(both));
    }
    uint64_t t[4];
    _mm256_storeu_si256((__m256i *)t, totals);
    for (; i + 4 <= bytes; i += 4) {
        t[0] += pixels[i];
        t[1] += pixels[i + 1];
        t[2] += pixels[i + 2];
        t[3] += pixels[i + 3];
    }
    for (int c = 0; c < 4; c++) sums[c] = t[c];
}
#endif

#ifdef RESPDECODE_X86
/* One channel's bytes of 64 indices, looked up in its plane (t0..t3: entries 0-63, 64-127, 128-191, 192-255): the
   low seven bits pick within a pair of registers, the high bit picks the pair; lanes outside `live` are zero. */
#define RESPDECODE_PLANE_BYTES(v, high, live, t0, t1, t2, t3)                                                         \
    _mm512_maskz_mov_epi8((live), _mm512_mask_blend_epi8((high), _mm512_permutex2var_epi8((t0), (v), (t1)),           \
                                                         _mm512_permutex2var_epi8((t2), (v), (t3))))

__attribute__((target("avx512f,avx512bw,avx512vbmi"))) static void palette_sums_vbmi(
    const uint8_t *indices, const intptr_t *bounds, size_t segments, const uint8_t *planes, int opaque,
    uint64_t *sums) {
    __m512i t[16];
    for (int k = 0; k < 16; k++) t[k] = _mm512_loadu_si512((const void *)(planes + 64 * k));
    const __m512i zero = _mm512_setzero_si512();
    for (size_t s = 0; s < segments; s++) {
        intptr_t start = bounds[2 * s], end = bounds[2 * s + 1];
        __m512i r = zero, g = zero, b = zero, a = zero;
        for (intptr_t i = start; i < end; i += 64) {
            intptr_t left = end - i;
            /* A masked load reads nothing outside the mask, so the last block never reads past the run. */
            __mmask64 live = left >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << left) - 1);
            __m512i v = _mm512_maskz_loadu_epi8(live, indices + i);
            __mmask64 high = _mm512_movepi8_mask(v);
            r = _mm512_add_epi64(r, _mm512_sad_epu8(RESPDECODE_PLANE_BYTES(v, high, live, t[0], t[1], t[2], t[3]), zero));
            g = _mm512_add_epi64(g, _mm512_sad_epu8(RESPDECODE_PLANE_BYTES(v, high, live, t[4], t[5], t[6], t[7]), zero));
            b = _mm512_add_epi64(b, _mm512_sad_epu8(RESPDECODE_PLANE_BYTES(v, high, live, t[8], t[9], t[10], t[11]), zero));
            if (!opaque)
                a = _mm512_add_epi64(
                    a, _mm512_sad_epu8(RESPDECODE_PLANE_BYTES(v, high, live, t[12], t[13], t[14], t[15]), zero));
        }
        uint64_t count = end > start ? (uint64_t)(end - start) : 0;
        sums[4 * s] = (uint64_t)_mm512_reduce_add_epi64(r);
        sums[4 * s + 1] = (uint64_t)_mm512_reduce_add_epi64(g);
        sums[4 * s + 2] = (uint64_t)_mm512_reduce_add_epi64(b);
        sums[4 * s + 3] = opaque ? 255 * count : (uint64_t)_mm512_reduce_add_epi64(a);
    }
}
#endif

int respdecode_palette_sums(const uint8_t *indices, const intptr_t *bounds, size_t segments, const uint8_t *planes,
                            int opaque, uint64_t *sums) {
#ifdef RESPDECODE_X86
    if (respdecode_cpu_has_avx512vbmi()) {
        palette_sums_vbmi(indices, bounds, segments, planes, opaque, sums);
        return 0;
    }
#endif
    (void)indices;
    (void)bounds;
    (void)segments;
    (void)planes;
    (void)opaque;
    (void)sums;
    return -2;
}

int respdecode_rgba_row_sums(const uint8_t *pixels, const intptr_t *bounds, size_t segments, uint64_t *sums) {
#ifdef RESPDECODE_X86
    if (respdecode_cpu_has_avx2()) {
        for (size_t s = 0; s < segments; s++) {
            intptr_t start = bounds[2 * s], end = bounds[2 * s + 1];
            if (end > start) {
                rgba_sums_avx2(pixels + 4 * start, (size_t)(end - start), sums + 4 * s);
            } else {
                for (int c = 0; c < 4; c++) sums[4 * s + c] = 0;
            }
        }
        return 0;
    }
#endif
    (void)pixels;
    (void)bounds;
    (void)segments;
    (void)sums;
    return -2;
}

int respdecode_rgba_sums(const uint8_t *pixels, size_t count, uint64_t *sums) {
#ifdef RESPDECODE_X86
    if (respdecode_cpu_has_avx2()) {
        rgba_sums_avx2(pixels, count, sums);
        return 0;
    }
#endif
    (void)pixels;
    (void)count;
    (void)sums;
    return -2;
}
