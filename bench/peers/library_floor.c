/* The library floor of bench/crawl's peers' job: every call into a C library that respdecode's peers' job
   (`--chain json,xml,plist,image`, digests checked) must make on a .warc.gz with one gzip member per record, made
   one after another with the least code around them, and the output dropped. Nothing else: no JSON, plist or
   output, no limits, no error lines. What respdecode spends beyond this is its own code and the kernel's.
     - libdeflate_gzip_decompress_ex: every member (as bench/crawl's libdeflate floor, gzip_members.c);
     - libcrypto's SHA-1 (EVP_Digest with a fetched SHA1): a response's payload as stored, when it has a
       WARC-Payload-Digest;
     - libdeflate (gzip, zlib, raw deflate) and brotli (BrotliDecoderDecompressStream): the body's Content-Encoding,
       after Transfer-Encoding chunked is undone;
     - libxml2: an XML body (application/xml, text/xml, the +xml types), parsed by SAX with no callbacks (a lower
       bound of respdecode's SAX parse: the tokenizer and the well-formedness checks alone);
     - libpng (png_read_info) and libjpeg-turbo (jpeg_read_header): an image/png or image/jpeg body's header, as
       respdecode reads it without --inflate.
   The WARC and HTTP heads are found by the simplest scan that works on bench/crawl's files (canonical header names,
   CRLF line ends): this program is a measuring stick for that workload, not a reader.
   The file is mapped (no copy into a buffer: a lower bound of reading it). Compiled by the bench at run time:
       cc -O2 library_floor.c -o library_floor -ldeflate -lcrypto -lbrotlidec -lxml2 -lpng -ljpeg \
          -I/usr/include/libxml2
   Usage: library_floor FILE.warc.gz   prints the counts of each kind of call on standard output; exit 1 on a member
   libdeflate cannot inflate. */
#define _GNU_SOURCE /* memmem */
#include <stdio.h> /* before jpeglib.h, which needs FILE */

#include <brotli/decode.h>
#include <fcntl.h>
#include <jpeglib.h>
#include <libdeflate.h>
#include <libxml/parser.h>
#include <openssl/evp.h>
#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct buffer {
    unsigned char *bytes;
    size_t capacity;
};

static void reserve(struct buffer *b, size_t n) {
    if (b->capacity >= n) return;
    while (b->capacity < n) b->capacity = b->capacity ? b->capacity * 2 : 1 << 20;
    free(b->bytes);
    b->bytes = malloc(b->capacity);
    if (!b->bytes) exit(2);
}

/* The value of header `name` (with its colon) in the head [p, end), or NULL; *length gets its length. */
static const unsigned char *header(const unsigned char *p, const unsigned char *end, const char *name,
                                   size_t *length) {
    size_t n = strlen(name);
    while (p < end) {
        const unsigned char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol) eol = end;
        if ((size_t)(eol - p) > n && strncasecmp((const char *)p, name, n) == 0) {
            const unsigned char *v = p + n, *e = eol;
            while (v < e && (*v == ' ' || *v == '\t')) v++;
            while (e > v && (e[-1] == '\r' || e[-1] == ' ')) e--;
            *length = (size_t)(e - v);
            return v;
        }
        p = eol + 1;
    }
    return NULL;
}

static int has(const unsigned char *v, size_t n, const char *word) {
    size_t w = strlen(word);
    for (size_t i = 0; i + w <= n; i++)
        if (strncasecmp((const char *)v + i, word, w) == 0) return 1;
    return 0;
}

/* Transfer-Encoding chunked undone into `out`; returns the length (what could be read of a broken body). */
static size_t dechunk(const unsigned char *p, size_t n, struct buffer *out) {
    reserve(out, n);
    size_t at = 0, length = 0;
    while (at < n) {
        size_t size = 0;
        while (at < n && p[at] != '\r' && p[at] != '\n' && p[at] != ';') {
            unsigned char c = p[at++];
            size = size * 16 + (c <= '9' ? c - '0' : (c | 32) - 'a' + 10);
        }
        const unsigned char *eol = memchr(p + at, '\n', n - at);
        if (!eol || size == 0) break;
        at = (size_t)(eol - p) + 1;
        if (size > n - at) size = n - at;
        memcpy(out->bytes + length, p + at, size);
        length += size;
        at += size + 2;
    }
    return length;
}

static size_t brotli(const unsigned char *p, size_t n, struct buffer *out) {
    BrotliDecoderState *s = BrotliDecoderCreateInstance(NULL, NULL, NULL);
    size_t length = 0;
    reserve(out, 4 * n + 65536);
    for (;;) {
        size_t available_out = out->capacity - length;
        unsigned char *next_out = out->bytes + length;
        BrotliDecoderResult r = BrotliDecoderDecompressStream(s, &n, &p, &available_out, &next_out, NULL);
        length = (size_t)(next_out - out->bytes);
        if (r != BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT) break;
        struct buffer bigger = {NULL, 0};
        reserve(&bigger, out->capacity * 2);
        memcpy(bigger.bytes, out->bytes, length);
        free(out->bytes);
        *out = bigger;
    }
    BrotliDecoderDestroyInstance(s);
    return length;
}

static size_t inflate_body(struct libdeflate_decompressor *d, int kind, const unsigned char *p, size_t n,
                           struct buffer *out) {
    reserve(out, 4 * n + 65536);
    for (;;) {
        size_t produced = 0;
        enum libdeflate_result r =
            kind == 0   ? libdeflate_gzip_decompress(d, p, n, out->bytes, out->capacity, &produced)
            : kind == 1 ? libdeflate_zlib_decompress(d, p, n, out->bytes, out->capacity, &produced)
                        : libdeflate_deflate_decompress(d, p, n, out->bytes, out->capacity, &produced);
        if (r != LIBDEFLATE_INSUFFICIENT_SPACE) return r == LIBDEFLATE_SUCCESS ? produced : 0;
        reserve(out, out->capacity * 2);
    }
}

struct memory_reader {
    const unsigned char *p;
    size_t n, at;
};

static void png_from_memory(png_structp png, png_bytep out, size_t length) {
    struct memory_reader *r = png_get_io_ptr(png);
    if (length > r->n - r->at) png_error(png, "cut");
    memcpy(out, r->p + r->at, length);
    r->at += length;
}

static int png_header(const unsigned char *p, size_t n) {
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    struct memory_reader reader = {p, n, 0};
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        return 0;
    }
    png_set_read_fn(png, &reader, png_from_memory);
    png_read_info(png, info);
    int ok = png_get_image_width(png, info) > 0;
    png_destroy_read_struct(&png, &info, NULL);
    return ok;
}

struct jpeg_failure {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
};

static void jpeg_fail(j_common_ptr common) { longjmp(((struct jpeg_failure *)common->err)->jump, 1); }

static int jpeg_header(const unsigned char *p, size_t n) {
    struct jpeg_decompress_struct cinfo;
    struct jpeg_failure failure;
    cinfo.err = jpeg_std_error(&failure.manager);
    failure.manager.error_exit = jpeg_fail;
    if (setjmp(failure.jump)) {
        jpeg_destroy_decompress(&cinfo);
        return 0;
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, p, (unsigned long)n);
    jpeg_read_header(&cinfo, TRUE);
    int ok = cinfo.image_width > 0;
    jpeg_destroy_decompress(&cinfo);
    return ok;
}

static void xml_quiet(void *context, const char *message, ...) { (void)context, (void)message; }

static int xml_parse(const unsigned char *p, size_t n) {
    xmlSAXHandler sax;
    memset(&sax, 0, sizeof sax);
    sax.initialized = XML_SAX2_MAGIC;
    sax.error = xml_quiet;
    sax.warning = xml_quiet;
    return xmlSAXUserParseMemory(&sax, NULL, (const char *)p, (int)n) == 0;
}

static int is_xml(const unsigned char *v, size_t n) {
    size_t m = 0;
    while (m < n && v[m] != ';' && v[m] != ' ') m++;
    return (m == 15 && strncasecmp((const char *)v, "application/xml", m) == 0) ||
           (m == 8 && strncasecmp((const char *)v, "text/xml", m) == 0) ||
           (m > 4 && strncasecmp((const char *)v + m - 4, "+xml", 4) == 0);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: library_floor FILE.warc.gz\n");
        return 2;
    }
    int fd = open(argv[1], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        perror(argv[1]);
        return 2;
    }
    size_t size = (size_t)st.st_size;
    const unsigned char *in = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    if (size && in == MAP_FAILED) return 2;
    madvise((void *)in, size, MADV_SEQUENTIAL);
    xmlInitParser();
    EVP_MD *sha1 = EVP_MD_fetch(NULL, "SHA1", NULL);
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    struct buffer record = {NULL, 0}, chunks = {NULL, 0}, body = {NULL, 0};
    reserve(&record, 4 << 20);
    unsigned long long members = 0, bytes = 0, digests = 0, gzip = 0, br = 0, xml = 0, png = 0, jpeg = 0, bad = 0;
    for (size_t at = 0; at < size;) {
        size_t used_in = 0, produced = 0;
        enum libdeflate_result r =
            libdeflate_gzip_decompress_ex(d, in + at, size - at, record.bytes, record.capacity, &used_in, &produced);
        if (r == LIBDEFLATE_INSUFFICIENT_SPACE) {
            reserve(&record, record.capacity * 2);
            continue;
        }
        if (r != LIBDEFLATE_SUCCESS) {
            fprintf(stderr, "library_floor: libdeflate failed (%d) on the member at byte %zu\n", (int)r, at);
            return 1;
        }
        members++;
        bytes += produced;
        at += used_in;

        const unsigned char *w = record.bytes, *wend = w + produced;
        const unsigned char *head_end = memmem(w, produced, "\r\n\r\n", 4);
        size_t n;
        const unsigned char *type = header(w, head_end ? head_end : wend, "WARC-Type:", &n);
        if (!head_end || !type || n != 8 || memcmp(type, "response", 8) != 0) continue;
        const unsigned char *cl = header(w, head_end, "Content-Length:", &n);
        size_t block_length = cl ? strtoull((const char *)cl, NULL, 10) : 0;
        const unsigned char *block = head_end + 4;
        if (block_length > (size_t)(wend - block)) block_length = (size_t)(wend - block);
        const unsigned char *http_end = memmem(block, block_length, "\r\n\r\n", 4);
        if (!http_end) continue;
        const unsigned char *payload = http_end + 4;
        size_t payload_length = (size_t)(block + block_length - payload);
        if (header(w, head_end, "WARC-Payload-Digest:", &n)) {
            unsigned char digest[EVP_MAX_MD_SIZE];
            unsigned int digest_length = 0;
            EVP_Digest(payload, payload_length, digest, &digest_length, sha1, NULL);
            digests++;
        }
        const unsigned char *te = header(block, http_end, "Transfer-Encoding:", &n);
        if (te && has(te, n, "chunked")) {
            payload_length = dechunk(payload, payload_length, &chunks);
            payload = chunks.bytes;
        }
        const unsigned char *ce = header(block, http_end, "Content-Encoding:", &n);
        if (ce && (has(ce, n, "gzip") || has(ce, n, "deflate"))) {
            int kind = has(ce, n, "gzip") ? 0 : (payload_length && (payload[0] & 0x0F) == 8 ? 1 : 2);
            payload_length = inflate_body(d, kind, payload, payload_length, &body);
            payload = body.bytes;
            gzip++;
        } else if (ce && has(ce, n, "br")) {
            payload_length = brotli(payload, payload_length, &body);
            payload = body.bytes;
            br++;
        }
        const unsigned char *ct = header(block, http_end, "Content-Type:", &n);
        if (!ct || payload_length == 0) continue;
        if (is_xml(ct, n)) {
            xml++;
            bad += !xml_parse(payload, payload_length);
        } else if (n >= 9 && strncasecmp((const char *)ct, "image/png", 9) == 0) {
            png++;
            bad += !png_header(payload, payload_length);
        } else if (n >= 10 && strncasecmp((const char *)ct, "image/jpeg", 10) == 0) {
            jpeg++;
            bad += !jpeg_header(payload, payload_length);
        }
    }
    printf("members %llu bytes %llu digests %llu gzip/deflate bodies %llu br bodies %llu xml %llu png %llu jpeg %llu "
           "failed %llu\n",
           members, bytes, digests, gzip, br, xml, png, jpeg, bad);
    return 0;
}
