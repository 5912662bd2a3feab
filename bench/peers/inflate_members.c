/* Inflate floors of a multi-member gzip file (a .warc.gz: one member per record), for bench/inflate: every member
   inflated whole into one buffer by
     libdeflate     libdeflate_gzip_decompress_ex (what GzipMembers and Content-Encoding use today),
     isal           ISA-L's isal_inflate_stateless, crc_flag ISAL_GZIP (one inflate_state, reset per member),
     isal-stream    ISA-L's streaming isal_inflate, crc_flag ISAL_GZIP, the whole member as one input,
     isal-fresh     isal_inflate_stateless with isal_inflate_init per member on a state allocated per member (what
                    a per-body state would cost),
     zlib           inflate (windowBits 15 + 16), inflateReset per member;
   every method checks the CRC-32 and ISIZE trailer itself. The member offsets are found first by inflating the
   file once with zlib. The methods run alternately, `runs` times each; each run reports the CPU seconds
   (CLOCK_PROCESS_CPUTIME_ID) of the inflating alone, and the median is printed as MB/s of output per CPU second.
   Every method must give the same total output and the same CRC-32 of every member (checked), else it exits 1.

   `inflate_members check` prints what ISA-L (and libdeflate, zlib) do with gzip members that have FHCRC, FEXTRA,
   FNAME, FCOMMENT, two members, trailing garbage, a cut, a wrong CRC-32, a wrong ISIZE, a damaged deflate stream.

   Compiled by bench/inflate at run time:
       cc -O2 inflate_members.c -o inflate_members -ldeflate -lisal -lz
   Usage: inflate_members FILE.gz [runs]     inflate_members check */
#include <isa-l/igzip_lib.h>
#include <libdeflate.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

typedef struct { size_t offset, length, inflated; uint32_t crc; } member;

static double cpu_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint8_t *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(2); }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *data = malloc((size_t)n);
    if (!data || fread(data, 1, (size_t)n, f) != (size_t)n) { perror("read"); exit(2); }
    fclose(f);
    *size = (size_t)n;
    return data;
}

/* The members, by inflating the file with zlib member after member. */
static member *find_members(const uint8_t *data, size_t size, size_t *count, size_t *largest) {
    size_t cap = 1024, n = 0;
    member *m = malloc(cap * sizeof *m);
    static uint8_t scratch[1 << 16];
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 15 + 16) != Z_OK) exit(2);
    size_t at = 0;
    *largest = 0;
    while (at < size) {
        inflateReset(&z);
        z.next_in = (Bytef *)(data + at);
        z.avail_in = (uInt)(size - at);
        size_t out = 0;
        uLong crc = crc32(0, NULL, 0);
        int status;
        do {
            z.next_out = scratch;
            z.avail_out = sizeof scratch;
            status = inflate(&z, Z_NO_FLUSH);
            size_t got = sizeof scratch - z.avail_out;
            crc = crc32(crc, scratch, (uInt)got);
            out += got;
        } while (status == Z_OK);
        if (status != Z_STREAM_END) { fprintf(stderr, "member at %zu: zlib %d\n", at, status); exit(2); }
        size_t used = (size - at) - z.avail_in;
        if (n == cap) m = realloc(m, (cap *= 2) * sizeof *m);
        m[n++] = (member){at, used, out, (uint32_t)crc};
        if (out > *largest) *largest = out;
        at += used;
    }
    inflateEnd(&z);
    *count = n;
    return m;
}

enum { LIBDEFLATE, ISAL, ISAL_STREAM, ISAL_FRESH, ZLIB, METHODS };
static const char *names[METHODS] = {"libdeflate", "isal", "isal-stream", "isal-fresh", "zlib"};

/* Inflates every member with `method` into `out`; returns the bytes written, or (size_t)-1 on any failure. */
static size_t run(int method, const uint8_t *data, const member *m, size_t n, uint8_t *out, size_t cap) {
    size_t total = 0;
    struct libdeflate_decompressor *d = NULL;
    struct inflate_state *s = NULL;
    z_stream z;
    if (method == LIBDEFLATE) d = libdeflate_alloc_decompressor();
    if (method == ISAL || method == ISAL_STREAM) s = malloc(sizeof *s);
    if (method == ZLIB) {
        memset(&z, 0, sizeof z);
        if (inflateInit2(&z, 15 + 16) != Z_OK) return (size_t)-1;
    }
    for (size_t i = 0; i < n; i++) {
        const uint8_t *in = data + m[i].offset;
        size_t got = 0;
        switch (method) {
        case LIBDEFLATE: {
            size_t used = 0;
            if (libdeflate_gzip_decompress_ex(d, in, m[i].length, out, cap, &used, &got) != LIBDEFLATE_SUCCESS
                || used != m[i].length)
                return (size_t)-1;
            break;
        }
        case ISAL:
        case ISAL_STREAM:
        case ISAL_FRESH: {
            struct inflate_state *st = s;
            if (method == ISAL_FRESH) st = malloc(sizeof *st);
            isal_inflate_init(st);
            st->next_in = (uint8_t *)in;
            st->avail_in = (uint32_t)m[i].length;
            st->next_out = out;
            st->avail_out = (uint32_t)cap;
            st->crc_flag = ISAL_GZIP;
            int r = method == ISAL_STREAM ? isal_inflate(st) : isal_inflate_stateless(st);
            int done = st->block_state == ISAL_BLOCK_FINISH;
            got = st->total_out;
            size_t left = st->avail_in;
            if (method == ISAL_FRESH) free(st);
            if (r != ISAL_DECOMP_OK || !done || left != 0) return (size_t)-1;
            break;
        }
        case ZLIB: {
            inflateReset(&z);
            z.next_in = (Bytef *)in;
            z.avail_in = (uInt)m[i].length;
            z.next_out = out;
            z.avail_out = (uInt)cap;
            if (inflate(&z, Z_FINISH) != Z_STREAM_END || z.avail_in != 0) return (size_t)-1;
            got = cap - z.avail_out;
            break;
        }
        }
        if (got != m[i].inflated) return (size_t)-1;
        total += got;
    }
    if (d) libdeflate_free_decompressor(d);
    free(s);
    if (method == ZLIB) inflateEnd(&z);
    return total;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Checks once, outside the timing, that each method gives every member's exact bytes (by their CRC-32). */
static void verify(int method, const uint8_t *data, const member *m, size_t n, uint8_t *out, size_t cap) {
    for (size_t i = 0; i < n; i++) {
        if (run(method, data, m + i, 1, out, cap) != m[i].inflated
            || (uint32_t)crc32(0, out, (uInt)m[i].inflated) != m[i].crc) {
            fprintf(stderr, "%s: member %zu at %zu differs\n", names[method], i, m[i].offset);
            exit(1);
        }
    }
}

/* --- check: what each library does with unusual or damaged members --- */

static size_t gzip_member(const char *text, int extra, int name, int comment, int hcrc, uint8_t *out, size_t cap) {
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) exit(2);
    gz_header h;
    memset(&h, 0, sizeof h);
    static Bytef extra_field[] = {'A', 'B', 4, 0, 1, 2, 3, 4};
    if (extra) { h.extra = extra_field; h.extra_len = sizeof extra_field; }
    if (name) h.name = (Bytef *)"name.txt";
    if (comment) h.comment = (Bytef *)"a comment";
    h.hcrc = hcrc;
    h.os = 3;
    if (extra || name || comment || hcrc) deflateSetHeader(&z, &h);
    z.next_in = (Bytef *)text;
    z.avail_in = (uInt)strlen(text);
    z.next_out = out;
    z.avail_out = (uInt)cap;
    if (deflate(&z, Z_FINISH) != Z_STREAM_END) exit(2);
    size_t n = cap - z.avail_out;
    deflateEnd(&z);
    return n;
}

static void report(const char *label, const uint8_t *in, size_t n) {
    static uint8_t out[1 << 16];
    struct inflate_state s;
    isal_inflate_init(&s);
    s.next_in = (uint8_t *)in;
    s.avail_in = (uint32_t)n;
    s.next_out = out;
    s.avail_out = sizeof out;
    s.crc_flag = ISAL_GZIP;
    int r = isal_inflate_stateless(&s);
    printf("%-34s isal stateless: %2d, finished %d, out %5u, in left %3u", label, r,
           s.block_state == ISAL_BLOCK_FINISH, s.total_out, s.avail_in);
    isal_inflate_init(&s);
    s.next_in = (uint8_t *)in;
    s.avail_in = (uint32_t)n;
    s.next_out = out;
    s.avail_out = sizeof out;
    s.crc_flag = ISAL_GZIP;
    r = isal_inflate(&s);
    printf(" | stream: %2d, finished %d, out %5u, in left %3u", r, s.block_state == ISAL_BLOCK_FINISH, s.total_out,
           s.avail_in);
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    size_t used = 0, got = 0;
    int ld = libdeflate_gzip_decompress_ex(d, in, n, out, sizeof out, &used, &got);
    libdeflate_free_decompressor(d);
    printf(" | libdeflate: %d, in used %3zu", ld, used);
    z_stream z;
    memset(&z, 0, sizeof z);
    inflateInit2(&z, 15 + 16);
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = sizeof out;
    int zr = inflate(&z, Z_FINISH);
    printf(" | zlib: %d%s%s\n", zr, z.msg ? " " : "", z.msg ? z.msg : "");
    inflateEnd(&z);
}

static int check(void) {
    const char *text = "WARC/1.1\r\nWARC-Type: response\r\n\r\nHTTP/1.1 200 OK\r\n\r\nhello hello hello hello hello\n";
    uint8_t a[4096], b[8192];
    size_t n;
    n = gzip_member(text, 0, 0, 0, 0, a, sizeof a);
    report("plain member", a, n);
    n = gzip_member(text, 1, 1, 1, 0, a, sizeof a);
    report("FEXTRA FNAME FCOMMENT", a, n);
    n = gzip_member(text, 0, 1, 0, 1, a, sizeof a);
    report("FNAME FHCRC (right)", a, n);
    memcpy(b, a, n);
    /* The header CRC is the two bytes after the name's NUL: 10-byte header + "name.txt\0". */
    b[10 + 9] ^= 0xFF;
    report("FNAME FHCRC (wrong header CRC)", b, n);
    n = gzip_member(text, 0, 0, 0, 0, a, sizeof a);
    memcpy(b, a, n);
    memcpy(b + n, a, n);
    report("two members", b, 2 * n);
    memcpy(b, a, n);
    memcpy(b + n, "garbage!", 8);
    report("member + trailing garbage", b, n + 8);
    report("member cut 1 byte short", a, n - 1);
    report("member cut in the deflate data", a, n / 2);
    memcpy(b, a, n);
    b[n - 8] ^= 1;
    report("wrong CRC-32", b, n);
    memcpy(b, a, n);
    b[n - 4] ^= 1;
    report("wrong ISIZE", b, n);
    memcpy(b, a, n);
    b[12] ^= 0x55;
    report("damaged deflate data", b, n);
    memcpy(b, a, n);
    b[2] = 7;
    report("method 7 (not deflate)", b, n);
    memcpy(b, a, n);
    b[3] |= 0xE0;
    report("reserved flag bits set", b, n);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "check") == 0) return check();
    if (argc < 2) { fprintf(stderr, "usage: inflate_members FILE.gz [runs] | check\n"); return 2; }
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    size_t size, n, largest;
    uint8_t *data = read_file(argv[1], &size);
    member *m = find_members(data, size, &n, &largest);
    size_t whole = 0, under = 0;
    for (size_t i = 0; i < n; i++) {
        whole += m[i].inflated;
        if (m[i].inflated <= 512 * 1024) under++;
    }
    uint8_t *out = malloc(largest + 64);
    printf("%zu members, %.1f MB compressed, %.1f MB inflated, largest %zu bytes, %zu of them <= 512 KiB\n", n,
           size / 1e6, whole / 1e6, largest, under);
    for (int k = 0; k < METHODS; k++) verify(k, data, m, n, out, largest);
    double *t = malloc(sizeof(double) * METHODS * (size_t)runs);
    for (int r = 0; r < runs; r++) {
        for (int j = 0; j < METHODS; j++) {
            int k = (j + r) % METHODS; /* a different method goes first in each round */
            double start = cpu_now();
            size_t got = run(k, data, m, n, out, largest);
            t[k * runs + r] = cpu_now() - start;
            if (got != whole) { fprintf(stderr, "%s: %zu bytes, not %zu\n", names[k], got, whole); return 1; }
        }
    }
    double median[METHODS];
    for (int k = 0; k < METHODS; k++) {
        qsort(t + k * runs, (size_t)runs, sizeof(double), by_value);
        median[k] = runs % 2 ? t[k * runs + runs / 2] : (t[k * runs + runs / 2 - 1] + t[k * runs + runs / 2]) / 2;
    }
    for (int k = 0; k < METHODS; k++) {
        printf("%-12s %7.4f s CPU (median of %d; min %.4f max %.4f)  %7.1f MB/s  %.2fx libdeflate  %.2fx zlib\n",
               names[k], median[k], runs, t[k * runs], t[k * runs + runs - 1], whole / 1e6 / median[k],
               median[LIBDEFLATE] / median[k], median[ZLIB] / median[k]);
    }
    return 0;
}
