/* The per-channel sums of four-byte pixels behind `--inflate`'s mean colour and difference hash (PixelSummary.swift,
   docs/output.md#image), 32 bytes at a time with AVX2 when the CPU has it.

   Why C: on issue 22's baseline JPEGs the Swift sums (SIMD16<UInt16>, which Swift compiles for the baseline
   x86-64's 16-byte vectors, and their lane-by-lane reductions) took 15 % of the instructions of a full decode, a
   fifth of libjpeg-turbo's own; Swift cannot compile one function for AVX2 and choose it at run time. Without AVX2
   (older x86 CPUs, other architectures) the Swift code does the work. */
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
