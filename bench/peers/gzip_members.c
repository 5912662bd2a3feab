/* The libdeflate inflate floor of bench/crawl: every gzip member of a file (a .warc.gz holds one per record) inflated
   one after another with libdeflate_gzip_decompress_ex, which says where each member ends; the output is dropped.
   The file is read into memory first (as a reader with the file in the page cache sees it). Compiled by the bench at
   run time against Debian's libdeflate-dev:
       cc -O2 gzip_members.c -o gzip_members -ldeflate
   Usage: gzip_members FILE.gz    prints "members N bytes M" (M: the inflated bytes) on standard output; exit 1 on a
   member libdeflate cannot inflate. */
#include <libdeflate.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: gzip_members FILE.gz\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    size_t size = 0, capacity = 1 << 24;
    unsigned char *in = malloc(capacity);
    for (size_t n; in && (n = fread(in + size, 1, capacity - size, f)) > 0;) {
        size += n;
        if (size == capacity) in = realloc(in, capacity *= 2);
    }
    fclose(f);
    size_t out_capacity = 1 << 22;
    unsigned char *out = malloc(out_capacity);
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    if (!in || !out || !d) return 2;
    unsigned long long members = 0, bytes = 0;
    for (size_t at = 0; at < size;) {
        size_t used_in = 0, produced = 0;
        enum libdeflate_result r =
            libdeflate_gzip_decompress_ex(d, in + at, size - at, out, out_capacity, &used_in, &produced);
        if (r == LIBDEFLATE_INSUFFICIENT_SPACE) { /* a member larger than the buffer: grow it and inflate again */
            free(out);
            out = malloc(out_capacity *= 2);
            if (!out) return 2;
            continue;
        }
        if (r != LIBDEFLATE_SUCCESS) {
            fprintf(stderr, "gzip_members: libdeflate failed (%d) on the member at byte %zu\n", (int)r, at);
            return 1;
        }
        members++;
        bytes += produced;
        at += used_in;
    }
    printf("members %llu bytes %llu\n", members, bytes);
    libdeflate_free_decompressor(d);
    free(in);
    free(out);
    return 0;
}
