/* libpng's classic API behind one setjmp. libpng reports a fatal error by calling the error function, which must
   not return: without a jmp_buf libpng abort()s (docs/contributing.md#c-libraries-behind-a-c-shim). */
#include "CShims.h"

#include <libdeflate.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The image data inflated whole by libdeflate, for a full decode (see prepare_inflated). libpng is then given the
   file with its IDAT chunks replaced by one whose zlib stream holds the same bytes in stored blocks, which zlib
   copies instead of inflating. */
struct inflated {
    size_t idat_start, idat_end; /* the original IDAT chunks: from the first one's length to the last one's CRC */
    uint8_t *raw;                /* the filtered scanlines, as libpng would have inflated them */
    size_t raw_size;
    size_t stream_size; /* the stored zlib stream: header, blocks, Adler-32 */
    uint32_t adler;
};

struct png_state {
    const uint8_t *data;
    size_t size, offset;
    size_t max_allocation;
    int allocation_refused;
    respdecode_image_outcome *outcome;
    uint8_t *row;
    struct inflated *inflated; /* non-NULL: `offset` is in the file as rewritten (read_rewritten) */
};

static void copy_message(char *to, size_t capacity, const char *message) {
    if (message == NULL) message = "unknown error";
    strncpy(to, message, capacity - 1);
    to[capacity - 1] = 0;
}

static void on_error(png_structp png, png_const_charp message) {
    struct png_state *state = png_get_error_ptr(png);
    copy_message(state->outcome->message, sizeof state->outcome->message, message);
    png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp message) {
    struct png_state *state = png_get_error_ptr(png);
    if (state->outcome->warnings++ == 0)
        copy_message(state->outcome->first_warning, sizeof state->outcome->first_warning, message);
}

static void read_memory(png_structp png, png_bytep out, size_t length) {
    struct png_state *state = png_get_io_ptr(png);
    if (length > state->size - state->offset) png_error(png, "read beyond end of data");
    memcpy(out, state->data + state->offset, length);
    state->offset += length;
}

static uint32_t be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

enum { STORED_BLOCK = 65535, STORED_HEADER = 5 };

/* Byte `at` of the stored zlib stream, with up to `length` bytes from there copied to `out`; returns how many. */
static size_t copy_stream(const struct inflated *in, size_t at, uint8_t *out, size_t length) {
    if (at < 2) {
        static const uint8_t header[2] = {0x78, 0x01}; /* deflate, 32 KiB window, no dictionary; CMF*256+FLG % 31 = 0 */
        out[0] = header[at];
        return 1;
    }
    if (at >= in->stream_size - 4) {
        size_t k = at - (in->stream_size - 4);
        out[0] = (uint8_t)(in->adler >> (24 - 8 * k));
        return 1;
    }
    size_t q = at - 2, block = q / (STORED_BLOCK + STORED_HEADER), within = q % (STORED_BLOCK + STORED_HEADER);
    size_t start = block * STORED_BLOCK, count = in->raw_size - start;
    if (count > STORED_BLOCK) count = STORED_BLOCK;
    if (within < STORED_HEADER) {
        uint16_t len = (uint16_t)count, nlen = (uint16_t)~len;
        uint8_t header[STORED_HEADER] = {start + count == in->raw_size ? 1 : 0, (uint8_t)len, (uint8_t)(len >> 8),
                                         (uint8_t)nlen, (uint8_t)(nlen >> 8)};
        out[0] = header[within];
        return 1;
    }
    size_t from = within - STORED_HEADER, n = count - from;
    if (n > length) n = length;
    memcpy(out, in->raw + start + from, n);
    return n;
}

/* The file as libpng reads it after prepare_inflated: the original bytes before the first IDAT chunk, one IDAT chunk
   holding the stored stream (its CRC not computed: every chunk's CRC was checked before, and libpng is told not to),
   then the original bytes after the last IDAT chunk. */
static void read_rewritten(png_structp png, png_bytep out, size_t length) {
    struct png_state *state = png_get_io_ptr(png);
    const struct inflated *in = state->inflated;
    size_t chunk_start = in->idat_start, stream_start = chunk_start + 8, crc_start = stream_start + in->stream_size;
    size_t rest_start = crc_start + 4, total = rest_start + (state->size - in->idat_end);
    if (length > total - state->offset) png_error(png, "read beyond end of data");
    while (length > 0) {
        size_t at = state->offset, n;
        if (at < chunk_start) {
            n = chunk_start - at < length ? chunk_start - at : length;
            memcpy(out, state->data + at, n);
        } else if (at < stream_start) {
            uint8_t head[8] = {(uint8_t)(in->stream_size >> 24), (uint8_t)(in->stream_size >> 16),
                               (uint8_t)(in->stream_size >> 8), (uint8_t)in->stream_size, 'I', 'D', 'A', 'T'};
            out[0] = head[at - chunk_start];
            n = 1;
        } else if (at < crc_start) {
            n = copy_stream(in, at - stream_start, out, length);
        } else if (at < rest_start) {
            out[0] = 0;
            n = 1;
        } else {
            n = length;
            memcpy(out, state->data + in->idat_end + (at - rest_start), n);
        }
        out += n;
        length -= n;
        state->offset += n;
    }
}

/* The longest IDAT chunk libpng (1.6.39, Debian 12's) reads without the warning "IDAT: chunk data is too large": the
   larger of the chunk limit and a bound it derives from IHDR. Per row that bound counts width x channels bytes
   (twice as many at 16 bits), a filter byte, and 6 more bytes when interlaced; over all rows it adds 6 bytes, and
   5 for each run of min(row, 32,566) bytes and one more run (zlib's and deflate's framing). Neither is over
   2^31 - 1. The whole image data is held to it, so no chunk is over it. Longer data (padding, or a stream larger
   than the scanlines it holds) is left to libpng rather than copied and inflated here. */
static uint64_t idat_limit(uint32_t width, uint32_t height, int channels, int depth, int interlace,
                           size_t max_chunk_bytes) {
    const uint64_t most = 0x7fffffff;
    uint64_t chunk = max_chunk_bytes > 0 && max_chunk_bytes < most ? max_chunk_bytes : most;
    uint64_t row = (uint64_t)width * (uint64_t)channels * (depth > 8 ? 2 : 1) + 1 + (interlace ? 6 : 0);
    uint64_t all = height > 0xffffffffu / row ? most : (uint64_t)height * row;
    all += 6 + 5 * (all / (row < 32566 ? row : 32566) + 1);
    if (all > most) all = most;
    return all > chunk ? all : chunk;
}

/* zlib inflates IDAT at about a third of libdeflate's speed (111 against 38 ms for bench/small's 60 palette PNGs),
   and inflating was nearly 80 % of the CPU of their full decode (BENCHMARKS.md, 2026-12-07). libpng takes its image data only through zlib, so for a full decode of a clean
   file the image data is inflated here, whole, by libdeflate, and libpng reads it back in stored blocks. Clean
   means: chunks whole and in order from IHDR to IEND, every CRC right (checked here, libdeflate's CRC-32), no
   unknown critical chunk, the IDAT chunks consecutive, a valid IHDR, and a zlib stream that uses all of the image
   data, checks its Adler-32 and inflates to exactly the scanlines IHDR calls for, at most `max_raw` bytes, and
   image data no longer than libpng takes in one IDAT chunk (idat_limit). Anything else returns 0 and the file goes
   to libpng as it is, so that every problem is found and worded as before. Returns 1 with `in` filled (the caller
   frees in->raw). */
static int prepare_inflated(const uint8_t *data, size_t size, size_t max_raw, uint64_t max_pixels,
                            size_t max_chunk_bytes, struct inflated *in) {
    static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    if (size < 8 || memcmp(data, signature, 8) != 0) return 0;
    size_t offset = 8, idat_start = 0, idat_end = 0, idat_bytes = 0, idat_chunks = 0;
    const uint8_t *stream = NULL; /* the first byte of image data: the zlib header, in the first IDAT not empty */
    int ended = 0;
    uint32_t width = 0, height = 0;
    int depth = 0, color = 0, interlace = 0;
    for (;;) {
        if (size - offset < 12) return 0;
        uint32_t length = be32(data + offset);
        if (length > 0x7fffffff || length > size - offset - 12) return 0;
        const uint8_t *type = data + offset + 4;
        for (int i = 0; i < 4; i++)
            if (!((type[i] | 0x20) >= 'a' && (type[i] | 0x20) <= 'z')) return 0;
        if ((uint32_t)libdeflate_crc32(0, type, (size_t)length + 4) != be32(type + 4 + length)) return 0;
        int is_ihdr = memcmp(type, "IHDR", 4) == 0, is_idat = memcmp(type, "IDAT", 4) == 0;
        if ((offset == 8) != is_ihdr) return 0;
        if (is_ihdr) {
            if (length != 13) return 0;
            const uint8_t *h = type + 4;
            width = be32(h);
            height = be32(h + 4);
            depth = h[8];
            color = h[9];
            interlace = h[12];
            if (h[10] != 0 || h[11] != 0 || interlace > 1) return 0;
        } else if (is_idat) {
            if (ended) return 0;
            if (idat_chunks++ == 0) idat_start = offset;
            if (stream == NULL && length > 0) stream = type + 4;
            idat_bytes += length;
        } else {
            if (idat_chunks > 0 && !ended) {
                ended = 1;
                idat_end = offset;
            }
            if ((type[0] & 0x20) == 0 && memcmp(type, "PLTE", 4) != 0 && memcmp(type, "IEND", 4) != 0) return 0;
            if (memcmp(type, "IEND", 4) == 0) break;
        }
        offset += 12 + (size_t)length;
    }
    if (!ended) return 0;
    if (width == 0 || height == 0 || width > 0x7fffffff || height > 0x7fffffff) return 0;
    if ((uint64_t)(width < 64 ? 64 : width) * height > max_pixels) return 0;
    int channels;
    switch (color) {
    case 0: channels = 1; if (depth != 1 && depth != 2 && depth != 4 && depth != 8 && depth != 16) return 0; break;
    case 3: channels = 1; if (depth != 1 && depth != 2 && depth != 4 && depth != 8) return 0; break;
    case 2: channels = 3; if (depth != 8 && depth != 16) return 0; break;
    case 4: channels = 2; if (depth != 8 && depth != 16) return 0; break;
    case 6: channels = 4; if (depth != 8 && depth != 16) return 0; break;
    default: return 0;
    }
    uint64_t bits = (uint64_t)channels * (uint64_t)depth, raw = 0;
    for (int pass = 0; pass < (interlace ? 7 : 1); pass++) {
        uint64_t columns = interlace ? PNG_PASS_COLS(width, pass) : width;
        uint64_t rows = interlace ? PNG_PASS_ROWS(height, pass) : height;
        if (columns == 0 || rows == 0) continue;
        raw += rows * (1 + (columns * bits + 7) / 8);
        if (raw > max_raw) return 0;
    }
    if (stream == NULL || idat_bytes > idat_limit(width, height, channels, depth, interlace, max_chunk_bytes)) return 0;
    size_t stream_size = 2 + ((raw + STORED_BLOCK - 1) / STORED_BLOCK) * STORED_HEADER + raw + 4;
    if (stream_size > 0x7fffffff) return 0;
    /* zlib decodes with the window the stream's header declares and rejects a distance beyond it; libdeflate always
       allows 32 KiB. A smaller declared window is taken here only when all the data fits in it (libpng's own
       encoder declares one for small images), so no distance can reach past it. */
    unsigned window_bits = (stream[0] >> 4) + 8;
    if (window_bits > 15 || (window_bits < 15 && raw > ((uint64_t)1 << window_bits))) return 0;
    const uint8_t *compressed = stream;
    uint8_t *joined = NULL;
    if (idat_chunks > 1) {
        joined = malloc(idat_bytes);
        if (joined == NULL) return 0;
        size_t at = 0;
        for (size_t o = idat_start; o < idat_end;) {
            uint32_t length = be32(data + o);
            memcpy(joined + at, data + o + 8, length);
            at += length;
            o += 12 + (size_t)length;
        }
        compressed = joined;
    }
    uint8_t *out = malloc(raw);
    struct libdeflate_decompressor *decompressor = out ? libdeflate_alloc_decompressor() : NULL;
    size_t used = 0, produced = 0;
    enum libdeflate_result result =
        decompressor ? libdeflate_zlib_decompress_ex(decompressor, compressed, idat_bytes, out, raw, &used, &produced)
                     : LIBDEFLATE_BAD_DATA;
    if (decompressor) libdeflate_free_decompressor(decompressor);
    free(joined);
    if (result != LIBDEFLATE_SUCCESS || used != idat_bytes || produced != raw) {
        free(out);
        return 0;
    }
    in->idat_start = idat_start;
    in->idat_end = idat_end;
    in->raw = out;
    in->raw_size = raw;
    in->stream_size = stream_size;
    in->adler = (uint32_t)libdeflate_adler32(1, out, raw);
    return 1;
}

/* Every allocation libpng makes goes through here: one that asks for more than the cap is refused (libpng then
   fails with "Out of memory", reported as a limit). */
static png_voidp capped_malloc(png_structp png, png_alloc_size_t size) {
    struct png_state *state = png_get_mem_ptr(png);
    if (size > state->max_allocation) {
        state->allocation_refused = 1;
        return NULL;
    }
    return malloc(size);
}

static void plain_free(png_structp png, png_voidp pointer) {
    (void)png;
    free(pointer);
}

static int read_png(const uint8_t *data, size_t size, const respdecode_png_limits *limits,
                    respdecode_png_header *header, respdecode_rgba_row_fn row, void *context,
                    respdecode_image_outcome *outcome, struct inflated *inflated) {
    struct png_state state = {data, size, 0, limits->max_allocation, 0, outcome, NULL, inflated};
    struct png_state *volatile shared = &state;
    memset(header, 0, sizeof *header);
    outcome->message[0] = outcome->first_warning[0] = 0;
    outcome->warnings = 0;

    png_structp png = png_create_read_struct_2(PNG_LIBPNG_VER_STRING, &state, on_error, on_warning, &state,
                                               capped_malloc, plain_free);
    if (png == NULL) {
        copy_message(outcome->message, sizeof outcome->message, "libpng could not start");
        return RESPDECODE_IMAGE_LIMIT;
    }
    png_infop info = png_create_info_struct(png);
    if (info == NULL) {
        png_destroy_read_struct(&png, NULL, NULL);
        copy_message(outcome->message, sizeof outcome->message, "libpng could not start");
        return RESPDECODE_IMAGE_LIMIT;
    }
    if (setjmp(png_jmpbuf(png))) {
        int status = shared->allocation_refused ? RESPDECODE_IMAGE_LIMIT : RESPDECODE_IMAGE_INVALID;
        free(shared->row);
        png_destroy_read_struct(&png, &info, NULL);
        return status;
    }
    png_set_read_fn(png, &state, inflated ? read_rewritten : read_memory);
    /* Rewritten, the file's CRCs were all checked by prepare_inflated, and its IDAT chunk has none. */
    if (inflated) png_set_crc_action(png, PNG_CRC_QUIET_USE, PNG_CRC_QUIET_USE);
    png_set_chunk_malloc_max(png, limits->max_chunk_bytes);
    /* libpng's own 1,000,000 x 1,000,000 default is no budget and rejects valid wide or tall images: take PNG's
       maximum and let the 64-bit pixel budget decide. */
    png_set_user_limits(png, 0x7fffffff, 0x7fffffff);
    /* Text chunks are the caller's: their keywords are read without libpng, and compressed text is checked there
       against the same limit. */
    static const png_byte text_chunks[] = {'t', 'E', 'X', 't', 0, 'z', 'T', 'X', 't', 0, 'i', 'T', 'X', 't', 0};
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, text_chunks, 3);
    png_read_info(png, info);

    png_uint_32 width, height;
    int bit_depth, color_type, interlace;
    png_get_IHDR(png, info, &width, &height, &bit_depth, &color_type, &interlace, NULL, NULL);
    header->width = width;
    header->height = height;
    header->bit_depth = bit_depth;
    header->color_type = color_type;
    header->interlace = interlace != PNG_INTERLACE_NONE;
    header->channels = png_get_channels(png, info);
    header->has_trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
    png_charp icc_name;
    int icc_compression;
    png_bytep icc_profile;
    png_uint_32 icc_length;
    if (png_get_iCCP(png, info, &icc_name, &icc_compression, &icc_profile, &icc_length)) {
        header->has_icc = 1;
        header->icc_bytes = icc_length;
    }
    png_uint_32 phys_x, phys_y;
    int phys_unit;
    if (png_get_pHYs(png, info, &phys_x, &phys_y, &phys_unit)) {
        header->has_phys = 1;
        header->phys_unit = phys_unit;
        header->phys_x = phys_x;
        header->phys_y = phys_y;
    }
    if (row == NULL) {
        png_destroy_read_struct(&png, &info, NULL);
        return RESPDECODE_IMAGE_OK;
    }

    /* The pixel budget, in 64-bit arithmetic before anything is allocated (PNG_IMAGE_SIZE overflows 32 bits). A row
       counts as at least 64 pixels: each costs a call through libpng, so a 1 x 100,000,000 image is no cheaper than
       its pixel count says. */
    if ((uint64_t)(width < 64 ? 64 : width) * (uint64_t)height > limits->max_pixels) {
        snprintf(outcome->message, sizeof outcome->message,
                 "%u x %u pixels is over the pixel budget of %llu (--max-image-pixels; a row counts as at least 64)",
                 (unsigned)width, (unsigned)height, (unsigned long long)limits->max_pixels);
        png_destroy_read_struct(&png, &info, NULL);
        return RESPDECODE_IMAGE_LIMIT;
    }
    /* To 8-bit samples, as stored (no gamma, no background): 16 bits to their high byte, low-bit gray scaled to 8
       bits, tRNS to alpha. Palette images stay indices (unpacked to a byte each); their RGBA table goes with every row,
       so the caller reads RGBA8 pixels without libpng writing four bytes for each one. */
    if (color_type == PNG_COLOR_TYPE_PALETTE) {
        if (bit_depth < 8) png_set_packing(png);
        for (int i = 0; i < 256; i++) {
            header->palette_rgba[4 * i] = header->palette_rgba[4 * i + 1] = header->palette_rgba[4 * i + 2] = 0;
            header->palette_rgba[4 * i + 3] = 255;
        }
        png_colorp palette;
        int entries = 0;
        if (png_get_PLTE(png, info, &palette, &entries)) {
            for (int i = 0; i < entries && i < 256; i++) {
                header->palette_rgba[4 * i] = palette[i].red;
                header->palette_rgba[4 * i + 1] = palette[i].green;
                header->palette_rgba[4 * i + 2] = palette[i].blue;
            }
        }
        png_bytep alpha;
        int alphas = 0;
        png_color_16p ignored;
        if (png_get_tRNS(png, info, &alpha, &alphas, &ignored) && alpha != NULL) {
            for (int i = 0; i < alphas && i < 256; i++) header->palette_rgba[4 * i + 3] = alpha[i];
        }
    } else {
        if (bit_depth == 16) png_set_strip_16(png);
        if (bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
        if (header->has_trns) png_set_tRNS_to_alpha(png);
        /* RGB gets a filler byte: four-byte pixels are summed four times faster than three-byte ones. */
        else if (color_type == PNG_COLOR_TYPE_RGB) png_set_filler(png, 0xFF, PNG_FILLER_AFTER);
    }
    /* Interlaced images are taken pass by pass (no png_set_interlace_handling), so no whole-image buffer is needed. */
#if defined(PNG_SET_OPTION_SUPPORTED) && defined(PNG_IGNORE_ADLER32)
    /* zlib's Adler-32 of the inflated image data is not computed; every chunk's CRC-32 still is. The PNG
       specification says the Adler-32 is "useful mainly as a cross-check that the deflate and inflate algorithms are
       implemented correctly" and that the chunk CRCs give "adequate confidence that the PNG file has been
       transmitted undamaged"; the Rust png crate skips it by default for the same reason. Adler-32 was 7 % of the
       CPU of a full palette-PNG decode (BENCHMARKS.md). Set only now, after png_read_info, so that it covers IDAT
       alone: libpng identifies the known sRGB ICC profiles by the Adler-32 of the iCCP stream, and without it says
       that an unedited one "has been edited". A libpng built without the option returns PNG_OPTION_INVALID and goes
       on checking. */
    png_set_option(png, PNG_IGNORE_ADLER32, PNG_OPTION_ON);
#endif
    png_read_update_info(png, info);
    uint32_t channels = color_type == PNG_COLOR_TYPE_PALETTE ? 0 : png_get_channels(png, info);
    const uint8_t *palette = channels == 0 ? header->palette_rgba : NULL;
    size_t pixel_bytes = channels == 0 ? 1 : channels;
    size_t row_bytes = png_get_rowbytes(png, info);
    if (png_get_bit_depth(png, info) != 8 || row_bytes < (size_t)width * pixel_bytes ||
        row_bytes > limits->max_allocation) {
        int layout = png_get_bit_depth(png, info) != 8 || row_bytes < (size_t)width * pixel_bytes;
        copy_message(outcome->message, sizeof outcome->message, layout ? "unexpected row layout" : "row too large");
        png_destroy_read_struct(&png, &info, NULL);
        return layout ? RESPDECODE_IMAGE_INVALID : RESPDECODE_IMAGE_LIMIT;
    }
    state.row = malloc(row_bytes);
    if (state.row == NULL) {
        copy_message(outcome->message, sizeof outcome->message, "out of memory for a row");
        png_destroy_read_struct(&png, &info, NULL);
        return RESPDECODE_IMAGE_LIMIT;
    }
    if (interlace == PNG_INTERLACE_NONE) {
        for (png_uint_32 y = 0; y < height; y++) {
            png_read_row(png, state.row, NULL);
            row(context, width, height, channels, state.row, width, y, 0, 1, palette);
        }
    } else {
        /* libpng skips the passes that are empty for this size; so does this loop. */
        for (int pass = 0; pass < 7; pass++) {
            png_uint_32 columns = PNG_PASS_COLS(width, pass), rows = PNG_PASS_ROWS(height, pass);
            if (columns == 0 || rows == 0) continue;
            for (png_uint_32 r = 0; r < rows; r++) {
                png_read_row(png, state.row, NULL);
                row(context, width, height, channels, state.row, columns, PNG_ROW_FROM_PASS_ROW(r, pass), PNG_PASS_START_COL(pass),
                    PNG_PASS_COL_OFFSET(pass), palette);
            }
        }
    }
    png_read_end(png, NULL);
    free(state.row);
    state.row = NULL;
    png_destroy_read_struct(&png, &info, NULL);
    return RESPDECODE_IMAGE_OK;
}

int respdecode_png_read(const uint8_t *data, size_t size, const respdecode_png_limits *limits,
                        respdecode_png_header *header, respdecode_rgba_row_fn row, void *context,
                        respdecode_image_outcome *outcome) {
    struct inflated inflated;
    if (row == NULL || !limits->inflate_whole ||
        !prepare_inflated(data, size, limits->max_allocation, limits->max_pixels, limits->max_chunk_bytes,
                          &inflated))
        return read_png(data, size, limits, header, row, context, outcome, NULL);
    int status = read_png(data, size, limits, header, row, context, outcome, &inflated);
    header->inflated_whole = 1;
    free(inflated.raw);
    return status;
}
