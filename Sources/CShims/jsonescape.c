/* JSON string escaping with UTF-8 validation, 32 bytes at a time with AVX2 when the CPU has it
   (docs/output.md#json-strings).

   Why C: the fast path needs the position of the first byte that needs attention in a 32-byte block (a vector
   compare turned into a bit mask: `vpmovmskb`) and byte table lookups for the UTF-8 check (`vpshufb`); Swift's SIMD
   types offer neither, and Swift cannot compile one function for AVX2 and choose it at run time. Without AVX2
   (older x86 CPUs, other architectures) the Swift code of JSONEscaping.swift does the work. */
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <string.h>
#include "CShims.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define RESPDECODE_X86 1
#endif

static const uint8_t hex_digits[16] = "0123456789abcdef";

/* The second byte of the two-byte escapes; 0 for the bytes written `\u00XX`. */
static const uint8_t short_escape[0x60] = {
    ['"'] = '"', ['\\'] = '\\', ['\n'] = 'n', ['\r'] = 'r', ['\t'] = 't', ['\b'] = 'b', ['\f'] = 'f',
};

/* Writes the escape of an ASCII byte that needs one (< 0x20, `"`, `\`); returns the end of it. Without a switch:
   in HTML a quote or a line feed comes every 25 bytes or so, and which one it is is not predictable. */
static inline uint8_t *escape_byte(uint8_t c, uint8_t *out) {
    uint8_t second = short_escape[c];
    out[0] = '\\';
    if (second != 0) {
        out[1] = second;
        return out + 2;
    }
    out[1] = 'u';
    out[2] = '0';
    out[3] = '0';
    out[4] = hex_digits[c >> 4];
    out[5] = hex_digits[c & 0xF];
    return out + 6;
}

#ifdef RESPDECODE_X86

/* The UTF-8 check of Keiser and Lemire, "Validating UTF-8 In Less Than One Instruction Per Byte" (2021), written
   from the paper: each byte pair (previous byte, current byte) is classified by three 16-entry tables (the previous
   byte's high and low nibble, the current byte's high nibble), whose AND is non-zero exactly for the invalid pairs
   of its error classes; the third and fourth bytes of three- and four-byte sequences are checked to be
   continuations by a saturating subtraction. */
enum {
    TOO_SHORT = 1 << 0,    /* 11______ 0_______ or 11______ 11______ */
    TOO_LONG = 1 << 1,     /* 0_______ 10______ */
    OVERLONG_3 = 1 << 2,   /* 11100000 100_____ */
    TOO_LARGE = 1 << 3,    /* 11110100 1001____, 11110100 101_____, 11110101-11111111 1001____ or 101_____ */
    SURROGATE = 1 << 4,    /* 11101101 101_____ */
    OVERLONG_2 = 1 << 5,   /* 1100000_ 10______ */
    TOO_LARGE_1000 = 1 << 6, /* 11110101-11111111 1000____ */
    OVERLONG_4 = 1 << 6,   /* 11110000 1000____ */
    TWO_CONTS = 1 << 7,    /* 10______ 10______ (not an error when it is the 2nd/3rd or 3rd/4th byte) */
    CARRY = TOO_SHORT | TOO_LONG | TWO_CONTS,
};

/* A 16-entry table in both 128-bit lanes (vpshufb looks up within a lane). */
#define TABLE(...) _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const uint8_t[16]){__VA_ARGS__}))

__attribute__((target("avx2"))) static inline __m256i prev_bytes(__m256i input, __m256i previous, int n) {
    /* The 32 bytes ending n bytes before the end of `input`: the last n of `previous`, then `input`'s first 32-n. */
    __m256i shifted = _mm256_permute2x128_si256(previous, input, 0x21);
    switch (n) {
    case 1: return _mm256_alignr_epi8(input, shifted, 15);
    case 2: return _mm256_alignr_epi8(input, shifted, 14);
    default: return _mm256_alignr_epi8(input, shifted, 13);
    }
}

__attribute__((target("avx2"))) static inline __m256i utf8_errors(__m256i input, __m256i previous) {
    const __m256i low_nibble = _mm256_set1_epi8(0x0F);
    __m256i prev1 = prev_bytes(input, previous, 1);
    const __m256i byte_1_high_table = TABLE(
        TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, /* 0_______ */
        TWO_CONTS, TWO_CONTS, TWO_CONTS, TWO_CONTS,                                       /* 10______ */
        TOO_SHORT | OVERLONG_2,                                                           /* 1100____ */
        TOO_SHORT,                                                                        /* 1101____ */
        TOO_SHORT | OVERLONG_3 | SURROGATE,                                               /* 1110____ */
        TOO_SHORT | TOO_LARGE | TOO_LARGE_1000 | OVERLONG_4);                             /* 1111____ */
    const __m256i byte_1_low_table = TABLE(
        CARRY | OVERLONG_3 | OVERLONG_2 | OVERLONG_4, /* ____0000 */
        CARRY | OVERLONG_2,                           /* ____0001 */
        CARRY, CARRY,                                 /* ____001_ */
        CARRY | TOO_LARGE,                            /* ____0100 */
        CARRY | TOO_LARGE | TOO_LARGE_1000,           /* ____0101 */
        CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000, /* ____011_ */
        CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000, /* ____1000, ____1001 */
        CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000, /* ____1010, ____1011 */
        CARRY | TOO_LARGE | TOO_LARGE_1000,                                     /* ____1100 */
        CARRY | TOO_LARGE | TOO_LARGE_1000 | SURROGATE,                         /* ____1101 */
        CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000); /* ____111_ */
    const __m256i byte_2_high_table = TABLE(
        TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, /* 0_______ */
        TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE_1000 | OVERLONG_4,          /* 1000____ */
        TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE,                             /* 1001____ */
        TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE,                              /* 1010____ */
        TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE,                              /* 1011____ */
        TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT);                                            /* 11______ */
    __m256i byte_1_high =
        _mm256_shuffle_epi8(byte_1_high_table, _mm256_and_si256(_mm256_srli_epi16(prev1, 4), low_nibble));
    __m256i byte_1_low = _mm256_shuffle_epi8(byte_1_low_table, _mm256_and_si256(prev1, low_nibble));
    __m256i byte_2_high =
        _mm256_shuffle_epi8(byte_2_high_table, _mm256_and_si256(_mm256_srli_epi16(input, 4), low_nibble));
    __m256i special = _mm256_and_si256(_mm256_and_si256(byte_1_high, byte_1_low), byte_2_high);
    /* A third byte (two after a 111_____ lead) or fourth byte (three after a 1111____ lead) must be a continuation:
       there TWO_CONTS is expected, elsewhere it is an error. */
    __m256i prev2 = prev_bytes(input, previous, 2);
    __m256i prev3 = prev_bytes(input, previous, 3);
    __m256i third = _mm256_subs_epu8(prev2, _mm256_set1_epi8((char)(0xE0 - 0x80)));
    __m256i fourth = _mm256_subs_epu8(prev3, _mm256_set1_epi8((char)(0xF0 - 0x80)));
    __m256i must_be_continuation = _mm256_and_si256(_mm256_or_si256(third, fourth), _mm256_set1_epi8((char)0x80));
    return _mm256_xor_si256(must_be_continuation, special);
}

/* Bytes in the last three positions that begin a sequence the block does not finish. */
__attribute__((target("avx2"))) static inline __m256i incomplete_at_end(__m256i input) {
    const __m256i max = _mm256_setr_epi8(
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        -1, -1, (char)(0xF0 - 1), (char)(0xE0 - 1), (char)(0xC0 - 1));
    return _mm256_subs_epu8(input, max);
}

/* The UTF-8 check's state between blocks: the previous block, the errors so far, and the bytes at the end of the
   last block with non-ASCII bytes that begin a sequence it does not finish. */
typedef struct {
    __m256i previous, error, incomplete;
} utf8_check;

/* Checks the next 32 bytes of the input (consecutive blocks, in order). */
__attribute__((target("avx2"))) static inline void utf8_check_block(utf8_check *c, __m256i input) {
    if (_mm256_movemask_epi8(input) == 0) {
        /* All ASCII: only a sequence left open by the previous block is an error. */
        c->error = _mm256_or_si256(c->error, c->incomplete);
    } else {
        c->error = _mm256_or_si256(c->error, utf8_errors(input, c->previous));
        c->incomplete = incomplete_at_end(input);
    }
    c->previous = input;
}

__attribute__((target("avx2"))) static inline int utf8_check_failed(const utf8_check *c) {
    return !_mm256_testz_si256(c->error, c->error);
}

/* Checks the input's last `n` bytes (n > 0) from `in`, which starts a block (`at` bytes into the input), after the
   blocks before it; returns whether the whole input is valid. */
__attribute__((target("avx2"))) static int utf8_check_rest(utf8_check *c, const uint8_t *in, size_t n, size_t at) {
    size_t i = 0;
    for (;;) {
        __m256i input;
        if (n - i >= 32) {
            input = _mm256_loadu_si256((const __m256i *)(in + i));
        } else {
            /* The tail, padded with ASCII (which ends any sequence still open, as the end of the input must). */
            uint8_t block[32];
            memset(block, 0x20, sizeof block);
            memcpy(block, in + i, n - i);
            input = _mm256_loadu_si256((const __m256i *)block);
        }
        utf8_check_block(c, input);
        if (n - i <= 32) break;
        i += 32;
        /* Give up early on a bad block now and then (a binary body). */
        if (((at + i) & 1023) == 0 && utf8_check_failed(c)) return 0;
    }
    /* The padded tail closes every sequence; an input that is a whole number of blocks may end in an open one. */
    if (n % 32 == 0) c->error = _mm256_or_si256(c->error, c->incomplete);
    return !utf8_check_failed(c);
}

__attribute__((target("avx2"))) static int validate_avx2(const uint8_t *in, size_t n) {
    utf8_check c = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256()};
    return utf8_check_rest(&c, in, n, 0);
}

/* Bit i set when byte i of `v` needs an escape (< 0x20, `"`, `\`); `control` gets the bytes < 0x20. */
__attribute__((target("avx2"))) static inline uint32_t special_mask(__m256i v, __m256i *control) {
    *control = _mm256_cmpeq_epi8(_mm256_min_epu8(v, _mm256_set1_epi8(0x1F)), v);
    __m256i special = _mm256_or_si256(*control, _mm256_or_si256(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('"')),
                                                                 _mm256_cmpeq_epi8(v, _mm256_set1_epi8('\\'))));
    return (uint32_t)_mm256_movemask_epi8(special);
}

/* For each mask of 8 bits (the special bytes among 8), the shuffle that writes those 8 bytes escaped: from a source
   of the 8 bytes (each special one replaced by its escape's second byte) and 8 backslashes, byte i, preceded by a
   backslash (index 8) when bit i is set; the rest zeros. Built once (expansion_tables_once). */
static uint8_t expansion_shuffle[256][16];
static uint8_t expansion_length[256];
static pthread_once_t expansion_tables_once = PTHREAD_ONCE_INIT;

static void build_expansion_tables(void) {
    for (int mask = 0; mask < 256; mask++) {
        int k = 0;
        for (int i = 0; i < 8; i++) {
            if ((mask >> i) & 1) expansion_shuffle[mask][k++] = 8;
            expansion_shuffle[mask][k++] = (uint8_t)i;
        }
        for (; k < 16; k++) expansion_shuffle[mask][k] = 0x80;
        expansion_length[mask] = (uint8_t)(8 + __builtin_popcount((unsigned)mask));
    }
}

/* Writes 8 bytes escaped: `source` holds them (specials replaced) and then 8 backslashes; `mask` flags the specials. */
__attribute__((target("avx2"))) static inline uint8_t *expand8(__m128i source, uint32_t mask, uint8_t *o) {
    __m128i shuffle = _mm_loadu_si128((const __m128i *)expansion_shuffle[mask]);
    _mm_storeu_si128((__m128i *)o, _mm_shuffle_epi8(source, shuffle));
    return o + expansion_length[mask];
}

/* Writes a block of 32 bytes escaped when each of its special bytes has a two-byte escape (`\"`, `\\`, `\n`, `\r`,
   `\t`, `\b`, `\f`), eight bytes at a time without a branch; returns NULL, having written nothing, when one is a
   control written `\u00XX`. */
__attribute__((target("avx2"))) static inline uint8_t *expand32(__m256i v, __m256i control, uint32_t mask, uint8_t *o) {
    const __m256i letters_table = TABLE(0, 0, 0, 0, 0, 0, 0, 0, 'b', 't', 'n', 0, 'f', 'r', 0, 0);
    const __m128i backslashes = _mm_set1_epi8('\\');
    /* The table is looked up by the low nibble: right for the bytes < 0x10 only. */
    __m256i below_16 = _mm256_cmpeq_epi8(_mm256_min_epu8(v, _mm256_set1_epi8(0x0F)), v);
    __m256i letters = _mm256_and_si256(_mm256_shuffle_epi8(letters_table, v), below_16);
    __m256i no_letter = _mm256_cmpeq_epi8(letters, _mm256_setzero_si256());
    if (!_mm256_testz_si256(no_letter, control)) return NULL;
    /* `"` and `\` are their own escape's second byte. */
    __m256i second = _mm256_blendv_epi8(v, letters, control);
    __m128i low = _mm256_castsi256_si128(second);
    __m128i high = _mm256_extracti128_si256(second, 1);
    o = expand8(_mm_unpacklo_epi64(low, backslashes), mask & 0xFF, o);
    o = expand8(_mm_unpackhi_epi64(low, backslashes), (mask >> 8) & 0xFF, o);
    o = expand8(_mm_unpacklo_epi64(high, backslashes), (mask >> 16) & 0xFF, o);
    return expand8(_mm_unpackhi_epi64(high, backslashes), mask >> 24, o);
}

/* Writes a block of 32 bytes escaped, one special byte (from `mask`) at a time: the plain stretch before it copied
   with one 32-byte load and store from where the stretch starts, then the byte escaped. Reads up to 64 bytes from
   `block`. */
__attribute__((target("avx2"))) static inline uint8_t *escape_each(const uint8_t *block, uint32_t mask, uint8_t *o) {
    size_t from = 0; /* the first byte of the block not written yet; `o` is where it goes */
    do {
        size_t at = (size_t)__builtin_ctz(mask);
        _mm256_storeu_si256((__m256i *)o, _mm256_loadu_si256((const __m256i *)(block + from)));
        o = escape_byte(block[at], o + (at - from));
        from = at + 1;
        mask &= mask - 1;
    } while (mask != 0);
    _mm256_storeu_si256((__m256i *)o, _mm256_loadu_si256((const __m256i *)(block + from)));
    return o + 32 - from;
}

/* Writes the block of 32 bytes at `block` (`v`, with its `control` bytes and special `mask`) escaped: by the
   shuffles when it can, else one special byte at a time. */
__attribute__((target("avx2"))) static inline uint8_t *escape_block(const uint8_t *block, __m256i v, __m256i control,
                                                                     uint32_t mask, uint8_t *o) {
    uint8_t *expanded = expand32(v, control, mask, o);
    return expanded != NULL ? expanded : escape_each(block, mask, o);
}

/* 64 bytes at a time: two blocks of 32 without a byte to escape are stored whole (long plain runs: minified text,
   prose). Otherwise each block is expanded eight bytes at a time by table shuffles (expand32), whatever the number
   of special bytes. HTML and JSON have a quote or a line feed every 25 bytes or so, at places no branch predicts:
   taking them one at a time (escape_each, which stays for blocks holding a `\u00XX` control, as in binary-ish text)
   cost a branch miss per block and work per special byte. With the shuffles, the escaper's share of the peers' job
   on issue 22's crawl fell from 6.8 % to 4.9 % of the profile samples (BENCHMARKS.md), for 8 % more instructions.
   escape_each's way had itself replaced loading and testing the block after each special byte anew, which on that
   crawl took a third more time (960 profile samples against 713). `out` has room for 6 * n + 32 bytes. */
__attribute__((target("avx2"), always_inline)) static inline long escape_core(const uint8_t *in, size_t n,
                                                                               uint8_t *out, const int validate) {
    uint8_t *o = out;
    size_t i = 0;
    utf8_check check = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256()};
    /* While 96 bytes remain, escape_each's loads from any byte of the second block stay inside the input. */
    while (n - i >= 96) {
        __m256i control0, control1;
        __m256i v0 = _mm256_loadu_si256((const __m256i *)(in + i));
        __m256i v1 = _mm256_loadu_si256((const __m256i *)(in + i + 32));
        if (validate) {
            utf8_check_block(&check, v0);
            utf8_check_block(&check, v1);
            /* Give up early on a bad block now and then (a binary body). */
            if (((i + 64) & 1023) == 0 && utf8_check_failed(&check)) return -1;
        }
        uint32_t mask0 = special_mask(v0, &control0);
        uint32_t mask1 = special_mask(v1, &control1);
        if ((mask0 | mask1) == 0) {
            _mm256_storeu_si256((__m256i *)o, v0);
            _mm256_storeu_si256((__m256i *)(o + 32), v1);
            i += 64;
            o += 64;
            continue;
        }
        o = escape_block(in + i, v0, control0, mask0, o);
        o = escape_block(in + i + 32, v1, control1, mask1, o);
        i += 64;
    }
    /* The last 95 bytes or fewer: a block at a time while escape_each may read 64 bytes; then, for the last block,
       one special byte at a time, and the tail. */
    while (n - i >= 64) {
        __m256i control;
        __m256i v = _mm256_loadu_si256((const __m256i *)(in + i));
        if (validate) utf8_check_block(&check, v);
        uint32_t mask = special_mask(v, &control);
        if (mask == 0) {
            _mm256_storeu_si256((__m256i *)o, v);
            o += 32;
        } else {
            o = escape_block(in + i, v, control, mask, o);
        }
        i += 32;
    }
    /* The blocks so far were checked as they were escaped; the last 32-63 bytes, a block and a padded tail, here. */
    if (validate && !utf8_check_rest(&check, in + i, n - i, i)) return -1;
    while (n - i >= 32) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(in + i));
        _mm256_storeu_si256((__m256i *)o, v);
        __m256i control;
        uint32_t mask = special_mask(v, &control);
        if (mask == 0) {
            i += 32;
            o += 32;
            continue;
        }
        size_t at = (size_t)__builtin_ctz(mask);
        o = escape_byte(in[i + at], o + at);
        i += at + 1;
    }
    if (i < n) {
        /* The last 1-31 bytes, from a copy that can be read 32 bytes at a time; bits past the end are dropped. */
        uint8_t block[64];
        size_t rest = n - i;
        memset(block, 0, sizeof block);
        memcpy(block, in + i, rest);
        size_t j = 0;
        while (j < rest) {
            __m256i v = _mm256_loadu_si256((const __m256i *)(block + j));
            _mm256_storeu_si256((__m256i *)o, v);
            __m256i control;
            uint32_t mask = special_mask(v, &control) & ((1u << (rest - j)) - 1);
            if (mask == 0) {
                o += rest - j;
                break;
            }
            size_t at = (size_t)__builtin_ctz(mask);
            o = escape_byte(block[j + at], o + at);
            j += at + 1;
        }
    }
    return (long)(o - out);
}

__attribute__((target("avx2"))) static long escape_avx2(const uint8_t *in, size_t n, uint8_t *out) {
    return escape_core(in, n, out, 0);
}

/* escape_avx2 with the UTF-8 check of each block as it is loaded (one pass over the input, not two): -1, with
   `out` written in part, when the input is not UTF-8. */
__attribute__((target("avx2"))) static long escape_validating_avx2(const uint8_t *in, size_t n, uint8_t *out) {
    return escape_core(in, n, out, 1);
}

#endif

int respdecode_json_escape_vectorized(void) {
#ifdef RESPDECODE_X86
    return respdecode_cpu_has_avx2();
#else
    return 0;
#endif
}

int respdecode_utf8_valid(const uint8_t *in, size_t n) {
#ifdef RESPDECODE_X86
    if (respdecode_cpu_has_avx2()) return n == 0 ? 1 : validate_avx2(in, n);
#endif
    (void)in;
    (void)n;
    return -2;
}

long respdecode_json_escape(const uint8_t *in, size_t n, uint8_t *out, int validate) {
#ifdef RESPDECODE_X86
    if (respdecode_cpu_has_avx2()) {
        if (n == 0) return 0; /* (the UTF-8 check's padded tail would copy from a null pointer) */
        pthread_once(&expansion_tables_once, build_expansion_tables);
        return validate ? escape_validating_avx2(in, n, out) : escape_avx2(in, n, out);
    }
#endif
    (void)validate;
    return -2;
}
