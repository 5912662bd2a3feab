#include "CShims.h"

#include <string.h>

#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/HTMLparser.h>

/* libxml2's varargs message callbacks, which Swift cannot implement: ignores the message. */
static void ignore_message(void *context, const char *message, ...) {
    (void)context;
    (void)message;
}

void respdecode_html_quiet_handler(void *sax_handler) {
    htmlSAXHandler *sax = sax_handler;
    sax->warning = ignore_message;
    sax->error = ignore_message;
    sax->fatalError = ignore_message;
}

void respdecode_xml_free(void *pointer) { xmlFree(pointer); }

/* The html pre-scan's search for white space to collapse (docs/html-parser.md#cost): 32 bytes at a time with AVX2,
   which Swift cannot choose at run time; byte by byte otherwise. */

/* libxml2's white space. */
static inline int is_blank(uint8_t byte) { return byte == ' ' || byte == '\n' || byte == '\t' || byte == '\r'; }

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

/* Bit i set where in[i] is a space, tab, line feed or carriage return (blank), or where it is any other byte below
   0x20 or 0xEF (control, a maybe-U+FFFE/U+FFFF lead byte). */
__attribute__((target("avx2"))) static inline void classify_avx2(const uint8_t *in, uint32_t *blank,
                                                                 uint32_t *other) {
    __m256i bytes = _mm256_loadu_si256((const __m256i *)in);
    __m256i blanks = _mm256_or_si256(
        _mm256_or_si256(_mm256_cmpeq_epi8(bytes, _mm256_set1_epi8(' ')), _mm256_cmpeq_epi8(bytes, _mm256_set1_epi8('\n'))),
        _mm256_or_si256(_mm256_cmpeq_epi8(bytes, _mm256_set1_epi8('\t')), _mm256_cmpeq_epi8(bytes, _mm256_set1_epi8('\r'))));
    /* bytes <= 0x1F (unsigned): max(bytes, 0x1F) == 0x1F. */
    __m256i low = _mm256_cmpeq_epi8(_mm256_max_epu8(bytes, _mm256_set1_epi8(0x1F)), _mm256_set1_epi8(0x1F));
    __m256i lead = _mm256_cmpeq_epi8(bytes, _mm256_set1_epi8((char)0xEF));
    *blank = (uint32_t)_mm256_movemask_epi8(blanks);
    *other = (uint32_t)_mm256_movemask_epi8(_mm256_or_si256(_mm256_andnot_si256(blanks, low), lead));
}

__attribute__((target("avx2"))) static size_t blank_pair_avx2(const uint8_t *in, size_t n) {
    size_t i = 0;
    /* A block's blanks, shifted by one and with the next block's first byte on top, tell where a blank is followed
       by a blank; the first of that or of a byte of the other class ends the search in this block. */
    for (; i + 33 <= n; i += 32) {
        uint32_t blank, other;
        classify_avx2(in + i, &blank, &other);
        uint32_t pairs = blank & ((blank >> 1) | ((uint32_t)is_blank(in[i + 32]) << 31));
        uint32_t hits = pairs | other;
        if (hits != 0) return i + (size_t)__builtin_ctz(hits);
    }
    return i;
}
#endif

size_t respdecode_html_blank_pair(const uint8_t *in, size_t n) {
    size_t i = 0;
#if defined(__x86_64__) || defined(__i386__)
    if (respdecode_cpu_has_avx2()) i = blank_pair_avx2(in, n);
#endif
    for (; i < n; i++) {
        uint8_t byte = in[i];
        if (is_blank(byte)) {
            if (i + 1 < n && is_blank(in[i + 1])) return i;
        } else if (byte < 0x20 || byte == 0xEF) {
            return i;
        }
    }
    return n;
}

/* The html decoder's test of link targets for bytes to escape (docs/html-parser.md#cost): 16 bytes at a time with
   SSE2, part of every x86-64 CPU; byte by byte elsewhere and at the end. */

/* A byte URLReference.escaped percent-encodes: a control, space, DEL or non-ASCII byte, or one of "<>\^`{|}. */
static inline int url_escapes(uint8_t byte) {
    return byte <= 0x20 || byte >= 0x7F || byte == '"' || byte == '<' || byte == '>' || byte == '\\' || byte == '^' ||
           byte == '`' || byte == '{' || byte == '|' || byte == '}';
}

#if defined(__SSE2__)
#include <emmintrin.h>

/* Bit i set where in[i] is a byte to escape. */
static inline uint32_t url_escapes_sse2(const uint8_t *in) {
    __m128i bytes = _mm_loadu_si128((const __m128i *)in);
    /* 0x21...0x7E as signed bytes (0x80-0xFF are negative). */
    __m128i printable = _mm_and_si128(_mm_cmpgt_epi8(bytes, _mm_set1_epi8(0x20)),
                                      _mm_cmplt_epi8(bytes, _mm_set1_epi8(0x7F)));
    __m128i marks = _mm_or_si128(
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(bytes, _mm_set1_epi8('"')), _mm_cmpeq_epi8(bytes, _mm_set1_epi8('<'))),
                     _mm_or_si128(_mm_cmpeq_epi8(bytes, _mm_set1_epi8('>')), _mm_cmpeq_epi8(bytes, _mm_set1_epi8('\\')))),
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(bytes, _mm_set1_epi8('^')), _mm_cmpeq_epi8(bytes, _mm_set1_epi8('`'))),
                     /* { | } */
                     _mm_and_si128(_mm_cmpgt_epi8(bytes, _mm_set1_epi8('z')),
                                   _mm_cmplt_epi8(bytes, _mm_set1_epi8('~')))));
    return (uint32_t)_mm_movemask_epi8(_mm_or_si128(_mm_andnot_si128(printable, _mm_set1_epi8(-1)), marks));
}
#endif

/* The offset of the first byte of in[0..<n] that `hit` holds for, n when there is none: with SSE2, 16 bytes at a
   time by `hits16` (bit i set where `hit` holds for byte i), the last 16 overlapping the block before, whose bytes
   are known not to hit; byte by byte otherwise and below 16 bytes. Both are inlined where it is called. */
static inline size_t first_hit(const uint8_t *in, size_t n, uint32_t (*hits16)(const uint8_t *), int (*hit)(uint8_t)) {
    size_t i = 0;
#if defined(__SSE2__)
    for (; i + 16 <= n; i += 16) {
        uint32_t hits = hits16(in + i);
        if (hits != 0) return i + (size_t)__builtin_ctz(hits);
    }
    if (i < n && n >= 16) {
        uint32_t hits = hits16(in + n - 16);
        return hits != 0 ? n - 16 + (size_t)__builtin_ctz(hits) : n;
    }
#else
    (void)hits16;
#endif
    for (; i < n; i++) {
        if (hit(in[i])) return i;
    }
    return n;
}

#if !defined(__SSE2__)
#define url_escapes_sse2 NULL
#endif

size_t respdecode_url_first_escaped(const uint8_t *in, size_t n) {
    return first_hit(in, n, url_escapes_sse2, url_escapes);
}

/* The html pre-scan's test of a read attribute's value (docs/html-parser.md#cost): the first byte that is not
   printable ASCII, or is `&`, `<` or `>`. 16 bytes at a time with SSE2; byte by byte elsewhere and at the end. */

static inline int value_stops(uint8_t byte) {
    return byte < 0x20 || byte >= 0x7F || byte == '&' || byte == '<' || byte == '>';
}

#if defined(__SSE2__)
/* Bit i set where in[i] stops a plain value. */
static inline uint32_t value_stops_sse2(const uint8_t *in) {
    __m128i bytes = _mm_loadu_si128((const __m128i *)in);
    /* 0x20...0x7E as signed bytes (0x80-0xFF are negative). */
    __m128i printable = _mm_and_si128(_mm_cmpgt_epi8(bytes, _mm_set1_epi8(0x1F)),
                                      _mm_cmplt_epi8(bytes, _mm_set1_epi8(0x7F)));
    __m128i marks = _mm_or_si128(_mm_cmpeq_epi8(bytes, _mm_set1_epi8('&')),
                                 _mm_or_si128(_mm_cmpeq_epi8(bytes, _mm_set1_epi8('<')),
                                              _mm_cmpeq_epi8(bytes, _mm_set1_epi8('>'))));
    return (uint32_t)_mm_movemask_epi8(_mm_or_si128(_mm_andnot_si128(printable, _mm_set1_epi8(-1)), marks));
}
#endif

#if !defined(__SSE2__)
#define value_stops_sse2 NULL
#endif

size_t respdecode_html_value_stop(const uint8_t *in, size_t n) {
    return first_hit(in, n, value_stops_sse2, value_stops);
}

/* The html pre-scan's test of a run of text (docs/html-parser.md#cost): whether libxml2 2.9.14 hands it on as it is,
   in one piece to `characters` (`htmlParseCharDataInternal`) when its piece starts where the run does (the pre-scan
   sees to that): no `&` (a reference), no control but tab and line feed
   (libxml2 drops the others, and a carriage return may be read as a line end), not U+FFFE or U+FFFF (dropped too),
   valid UTF-8 (at an invalid byte libxml2 would change the input's encoding), and not white space only (which
   libxml2 may pass to `ignorableWhitespace` or use to decide where text belongs). Without AVX2 (for the UTF-8 check)
   only ASCII text passes. */
#if defined(__SSE2__)
/* For 16 bytes: bit i of *stop set where in[i] is `&` or a control other than tab and line feed; of *word where it is
   not white space (space, tab, line feed); of *lead where it is 0xEF (which U+FFFE and U+FFFF begin with); and
   *high non-zero when a byte is not ASCII. */
static inline void text_classes_sse2(const uint8_t *in, uint32_t *stop, uint32_t *word, uint32_t *lead,
                                     uint32_t *high) {
    __m128i bytes = _mm_loadu_si128((const __m128i *)in);
    __m128i tab = _mm_cmpeq_epi8(bytes, _mm_set1_epi8('\t'));
    __m128i line = _mm_cmpeq_epi8(bytes, _mm_set1_epi8('\n'));
    __m128i space = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(' '));
    /* 0x00...0x1F as signed bytes: 0 <= b < 0x20 (0x80-0xFF are negative). */
    __m128i control = _mm_and_si128(_mm_cmpgt_epi8(bytes, _mm_set1_epi8(-1)), _mm_cmplt_epi8(bytes, _mm_set1_epi8(0x20)));
    __m128i bad = _mm_or_si128(_mm_andnot_si128(_mm_or_si128(tab, line), control),
                               _mm_cmpeq_epi8(bytes, _mm_set1_epi8('&')));
    *stop = (uint32_t)_mm_movemask_epi8(bad);
    *word = (uint32_t)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(tab, line), space)) ^ 0xFFFF;
    *lead = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, _mm_set1_epi8((char)0xEF)));
    *high = (uint32_t)_mm_movemask_epi8(bytes);
}
#endif

int respdecode_html_plain_text(const uint8_t *in, size_t n) {
    int blank_only = 1;
    int ascii = 1;
    size_t i = 0;
#if defined(__SSE2__)
    for (; i + 16 <= n; i += 16) {
        uint32_t stop, word, lead, high;
        text_classes_sse2(in + i, &stop, &word, &lead, &high);
        if (stop != 0) return 0;
        if (word != 0) blank_only = 0;
        if (high != 0) ascii = 0;
        for (; lead != 0; lead &= lead - 1) {
            /* U+FFFE and U+FFFF (also one running into the next block). */
            size_t j = i + (size_t)__builtin_ctz(lead);
            if (j + 2 < n && in[j + 1] == 0xBF && (in[j + 2] & 0xFE) == 0xBE) return 0;
        }
    }
#endif
    for (; i < n; i++) {
        uint8_t byte = in[i];
        if (byte < 0x20) {
            if (byte != '\t' && byte != '\n') return 0;
            continue;
        }
        if (byte == '&') return 0;
        if (byte != ' ') blank_only = 0;
        if (byte >= 0x80) {
            ascii = 0;
            if (byte == 0xEF && i + 2 < n && in[i + 1] == 0xBF && (in[i + 2] & 0xFE) == 0xBE) return 0;
        }
    }
    if (blank_only) return 0;
    return ascii || respdecode_utf8_valid(in, n) == 1;
}
