/* What Swift cannot do itself: C globals, variadic callbacks and (with the image decoders) setjmp/longjmp.
   No type of a C library appears here. */
#ifndef RESPDECODE_CSHIMS_H
#define RESPDECODE_CSHIMS_H

#include <stddef.h>
#include <stdint.h>

/* libxml2's element nesting cap (xmlParserMaxDepth, 256 in 2.9.x): a C global. */
void respdecode_xml_set_max_depth(unsigned int depth);

/* Replaces this thread's libxml2 generic error handler (per thread in 2.9.x; it prints to stderr, and encoding
   errors reach only it, whatever the parse options say) with one that keeps the text instead, and forgets what it
   kept before. A variadic C function is needed for the handler. */
void respdecode_xml_silence_this_thread(void);

/* What libxml2 sent to the generic handler on this thread since respdecode_xml_silence_this_thread() (the first
   511 bytes; empty when nothing). */
const char *respdecode_xml_last_generic_error(void);

/* The parse running on this thread (an opaque pointer), or NULL: lets the process-wide external entity loader tell
   our parses from any other libxml2 user's. */
void respdecode_xml_set_current_parse(void *parse);
void *respdecode_xml_current_parse(void);

/* Sets the three varargs message callbacks (warning, error, fatalError) of a libxml2 SAX handler (an
   `htmlSAXHandler *`, passed untyped) to one that ignores the message: the html decoder takes libxml2's errors through
   the structured callback, and nothing may reach stderr. */
void respdecode_html_quiet_handler(void *sax_handler);

/* The offset in `in[0..<n]` of the first space, tab, line feed or carriage return (libxml2's white space) that another
   follows, or of the first other byte below 0x20 or 0xEF byte, whichever comes first; n when there is none (html.c:
   the html pre-scan collapses runs of white space in text, docs/html-parser.md#cost, and leaves text with characters
   libxml2 drops as it is). */
size_t respdecode_html_blank_pair(const uint8_t *in, size_t n);

/* The offset in `in[0..<n]` of the first byte a link target's escaping percent-encodes (a control, space, DEL or
   non-ASCII byte, or one of "<>\^`{|}), n when there is none (html.c: the html decoder tests every link target,
   docs/html-parser.md#cost). */
size_t respdecode_url_first_escaped(const uint8_t *in, size_t n);

/* The offset in `in[0..<n]` of the first byte that is not printable ASCII or is `&`, `<` or `>`, n when there is none
   (html.c: the html pre-scan gives plain attribute values aside, docs/html-parser.md#cost). */
size_t respdecode_html_value_stop(const uint8_t *in, size_t n);

/* Whether libxml2 2.9.14 passes the text `in[0..<n]` on as it is, in one piece (html.c: the html pre-scan gives such
   text aside, docs/html-parser.md#cost): no `&`, no control but tab and line feed, no U+FFFE or U+FFFF, valid UTF-8,
   not white space only. */
int respdecode_html_plain_text(const uint8_t *in, size_t n);

/* libxml2's `xmlFree`, a global function pointer (which Swift 6 sees as shared mutable state). */
void respdecode_xml_free(void *pointer);

/* The last `byte` in the `count` bytes at `bytes`, or NULL: glibc's memrchr, which Swift's Glibc module does not
   export. */
const void *respdecode_memrchr(const void *bytes, int byte, size_t count);

/* The cores this process may run on: its CPU affinity (which a container's cpuset narrows), else the cores online;
   at least 1. */
int respdecode_usable_cpus(void);

/* Whether this CPU has AVX2 (x86-64; 0 elsewhere): the vector paths of jsonescape.c and pixelsums.c, chosen at run
   time. */
int respdecode_cpu_has_avx2(void);

/* Whether this CPU has AVX-512 F, BW and VBMI with the operating system saving their registers (x86-64; 0
   elsewhere): the palette path of pixelsums.c. */
int respdecode_cpu_has_avx512vbmi(void);

/* Raises the calling thread's nice value (lowers its priority) by `steps`, only this thread's. 0 or -1. */
int respdecode_lower_this_thread(int steps);

/* Makes SIGTERM, SIGINT and SIGUSR1 write their number (one byte) to `pipe_write_end` instead of their default
   action, with SA_RESTART, and unblocks them in the calling thread (a parent may have blocked them). Call before
   starting threads. 0 on success, -1 on failure. */
int respdecode_forward_signals(int pipe_write_end);

/* ---- Images: libpng and libjpeg report fatal errors by longjmp (their defaults abort() or exit()), and Swift
   cannot call setjmp, so each decode runs inside one C function here. Only plain structs cross. ---- */

/* Called with each decoded row of a width x height image: `count` pixels of image row `y`, pixel k at
   x = x0 + k*step (an Adam7 pass row has step > 1). 8 bits per sample; `channels` is 1 (gray), 2 (gray, alpha),
   3 (RGB), 4 (RGBA), or 0 for palette indices (one byte each; `palette` then holds the 256 RGBA entries, the same
   for every row, else it is NULL). Must not fail and must not call back into the library. */
typedef void (*respdecode_rgba_row_fn)(void *context, uint32_t width, uint32_t height, uint32_t channels,
                                       const uint8_t *pixels, uint32_t count, uint32_t y, uint32_t x0,
                                       uint32_t step, const uint8_t *palette);

/* What a decode call gives back besides its header. */
typedef struct {
    char message[200];       /* why it failed (status != 0) */
    char first_warning[200]; /* the library's first warning, if warnings > 0 */
    uint32_t warnings;
} respdecode_image_outcome;

enum {
    RESPDECODE_IMAGE_OK = 0,
    RESPDECODE_IMAGE_INVALID = 1,     /* the library rejected the data */
    RESPDECODE_IMAGE_LIMIT = 2,       /* a limit was reached (pixels, memory, scans) */
    RESPDECODE_IMAGE_UNSUPPORTED = 3, /* valid but not decodable by this library build (12-bit, lossless JPEG) */
};

typedef struct {
    uint32_t width, height;
    int bit_depth, color_type, interlace, channels;
    int has_trns;
    int has_icc;
    uint32_t icc_bytes;
    int has_phys, phys_unit;  /* unit 1 = metre */
    uint32_t phys_x, phys_y;
    uint8_t palette_rgba[256 * 4]; /* full decode of a palette image: PLTE with tRNS alpha; absent entries 0,0,0,255;
                                      given to every row callback */
    int inflated_whole;            /* full decode: the image data was inflated whole by libdeflate (png.c) */
} respdecode_png_header;

typedef struct {
    uint64_t max_pixels;        /* full decode only: width*height above this is RESPDECODE_IMAGE_LIMIT */
    size_t max_chunk_bytes;     /* png_set_chunk_malloc_max: ancillary chunks (iCCP, …) after decompression */
    size_t max_allocation;      /* any single allocation libpng asks for, and the most image data inflated whole */
    int inflate_whole;          /* full decode: inflate a clean file's image data whole with libdeflate (else zlib,
                                   inside libpng, row by row); the result is the same either way */
} respdecode_png_limits;

/* Reads a PNG from memory: the chunks up to the image data (`row` NULL), or, with `row`, the whole image decoded to
   8-bit samples (16-bit ones to their high byte, low-bit gray scaled up, tRNS as alpha, palette images as indices)
   and handed over row by row, then the chunks after it. tEXt/zTXt/iTXt are skipped (the caller reads their
   keywords itself). Returns a RESPDECODE_IMAGE_* status. */
int respdecode_png_read(const uint8_t *data, size_t size, const respdecode_png_limits *limits,
                        respdecode_png_header *header, respdecode_rgba_row_fn row, void *context,
                        respdecode_image_outcome *outcome);

typedef struct {
    uint32_t width, height;
    int precision, components;
    int color_space;          /* 1 gray, 2 rgb, 3 ycbcr, 4 cmyk, 5 ycck, 0 unknown */
    int progressive, arithmetic;
    int h_samp[4], v_samp[4];
    int saw_jfif, density_unit; /* unit 1 = dots per inch, 2 = per cm */
    uint32_t x_density, y_density;
    int saw_adobe, adobe_transform;
} respdecode_jpeg_header;

typedef struct {
    uint64_t max_pixels;      /* full decode only */
    int max_scans;            /* full decode only: more SOS markers than this is RESPDECODE_IMAGE_LIMIT */
    uint64_t max_scan_pixels; /* full decode only: scans x width x height above this is RESPDECODE_IMAGE_LIMIT */
    long max_memory;          /* libjpeg's max_memory_to_use */
} respdecode_jpeg_limits;

/* Reads a JPEG from memory: the header (`row` NULL; corrupt-data warnings are counted), or, with `row`, the whole
   image decoded row by row (gray, RGB, or CMYK/YCCK converted to RGBA), where any corrupt-data warning is fatal. Returns a RESPDECODE_IMAGE_* status. */
int respdecode_jpeg_read(const uint8_t *data, size_t size, const respdecode_jpeg_limits *limits,
                         respdecode_jpeg_header *header, respdecode_rgba_row_fn row, void *context,
                         respdecode_image_outcome *outcome);

/* ---- Language detection: CLD2's API is C++ only, so one C function (cld2.cpp) calls it. See
   docs/decoding.md#language. ---- */

/* One of CLD2's top three languages, as CLD2 returned it (UNKNOWN_LANGUAGE included: the caller prunes). */
typedef struct {
    int language;            /* CLD2's Language number (not stable across CLD2 versions: tests only) */
    int percent;             /* share of the scored text, 0...100 */
    double normalized_score; /* CLD2's score relative to normal text in that language (near 1.0 is typical) */
    char code[16];           /* CLD2's LanguageCode: ISO 639-1 mostly ("en"), else 639-2 ("chr") or CLD2's own
                                ("zh-Hant", "un" for unknown, "xx-Latn" for a script without a language) */
    char name[40];           /* CLD2's LanguageName ("ENGLISH", "Japanese", "X_Latin") */
    char iso639_3[8];        /* the ISO 639-3 code (ICU's uloc_getISO3Language of `code`), or "" when none */
} respdecode_language;

typedef struct {
    respdecode_language languages[3];
    int text_bytes;          /* letter bytes CLD2 scored */
    int reliable;            /* CLD2's is_reliable */
    int utf8_ok;             /* 0: CLD2 still refused the (sanitized) bytes; the languages are then unknown */
    size_t examined_bytes;   /* bytes given to CLD2: the first `max_bytes` at most, cut at a UTF-8 lead byte */
    size_t replaced_bytes;   /* bytes CLD2 refuses (invalid UTF-8, controls, noncharacters) scored as spaces */
} respdecode_language_result;

/* Detects the languages of `length` bytes of UTF-8 text (plain text, or HTML when `is_plain_text` is 0: CLD2 then
   skips tags, scripts and styles, expands entities and reads `lang` attributes as hints). Examines at most
   `max_bytes` (at most INT_MAX) bytes. The hints may be NULL: `content_language_hint` is a Content-Language value
   ("en,fr"), `tld_hint` a top-level domain without its dot ("de"). Never fails; reentrant. */
void respdecode_detect_language(const uint8_t *utf8, size_t length, size_t max_bytes, int is_plain_text,
                                const char *content_language_hint, const char *tld_hint,
                                respdecode_language_result *result);

/* ---- MessagePack: msgpack-c's unpacking state machine (its unpack_template.h) with callbacks that report each
   value, not build a tree (msgpack.c says why). ---- */

/* The deepest nesting the parser's stack holds. */
#define RESPDECODE_MSGPACK_MAX_DEPTH 1024

enum {
    RESPDECODE_MSGPACK_NIL, RESPDECODE_MSGPACK_FALSE, RESPDECODE_MSGPACK_TRUE,
    RESPDECODE_MSGPACK_UINT,  /* value: the integer */
    RESPDECODE_MSGPACK_INT,   /* value: the signed integer's bits (int8 to int64 formats) */
    RESPDECODE_MSGPACK_FLOAT, /* value: the bits of the double (a float 32 widened exactly) */
    RESPDECODE_MSGPACK_STR, RESPDECODE_MSGPACK_BIN, /* bytes, length */
    RESPDECODE_MSGPACK_EXT,   /* value: the type (-128...127, sign-extended); bytes, length: the data */
    RESPDECODE_MSGPACK_ARRAY, RESPDECODE_MSGPACK_MAP /* value: the element or pair count its header claims */
};

/* Called with each value in document order (a container before its elements); returns 0 to go on, or a negative
   number to stop the parse (which then returns it). `bytes` points into the parsed buffer. */
typedef int (*respdecode_msgpack_event)(void *sink, int kind, uint64_t value, const char *bytes, size_t length);

/* Parses the one MessagePack value at the start of data[0..<length], calling `event` for each value in it. Returns 1
   when the value is complete (*end: the offset after it), 0 when the data ends inside it, -1 on a byte that starts
   no value (*end: its offset), -2 for nesting deeper than RESPDECODE_MSGPACK_MAX_DEPTH, or what `event` returned to
   stop it (*end: the offset of the value's last byte read). */
int respdecode_msgpack_parse(const uint8_t *data, size_t length, size_t *end, respdecode_msgpack_event event,
                             void *sink);

/* JSON string escaping (jsonescape.c, docs/output.md#json-strings). Whether this CPU takes the vector path (AVX2);
   when it does not, respdecode_json_escape returns -2 and does nothing. */
int respdecode_json_escape_vectorized(void);

/* Writes the escaped content of the JSON string `in[0..<n]` (no quotes) to `out`, which has room for 6 * n + 32
   bytes, and returns the bytes written; with `validate`, -1 (and nothing meaningful written) when `in` is not UTF-8. -2
   when the CPU has no vector path. */
long respdecode_json_escape(const uint8_t *in, size_t n, uint8_t *out, int validate);

/* Whether `in[0..<n]` is UTF-8 (1) or not (0), checked 32 bytes at a time with the validation of
   respdecode_json_escape; -2 when the CPU has no vector path (the caller checks it itself). */
int respdecode_utf8_valid(const uint8_t *in, size_t n);

/* R, G, B and A, each summed over `count` four-byte pixels, into sums[0..<4] (pixelsums.c). 0 when done; -2, with
   nothing done, when the CPU has no vector path (the caller sums them itself). */
int respdecode_rgba_sums(const uint8_t *pixels, size_t count, uint64_t *sums);

/* For each of `segments` runs of four-byte pixels, `pixels[4 * bounds[2k] ..< 4 * bounds[2k + 1]]` (an empty run when
   the end is not above the start), R, G, B and A summed into sums[4k ..< 4k + 4] (pixelsums.c): a whole row's cell
   columns in one call. 0 when done; -2, with nothing done, when the CPU has no vector path (the caller sums them
   itself). */
int respdecode_rgba_row_sums(const uint8_t *pixels, const intptr_t *bounds, size_t segments, uint64_t *sums);

/* For each of `segments` runs of palette indices, `indices[bounds[2k] ..< bounds[2k + 1]]` (an empty run when the end
   is not above the start), R, G, B and A of the indices' palette entries summed into sums[4k ..< 4k + 4] (pixelsums.c).
   `planes` holds the palette as four planes of 256 bytes, R, G, B and A; `opaque` non-zero says every A is 255.
   0 when done; -2, with nothing done, when the CPU has no vector path (the caller sums them itself). */
int respdecode_palette_sums(const uint8_t *indices, const intptr_t *bounds, size_t segments, const uint8_t *planes,
                            int opaque, uint64_t *sums);

#endif
