/* libpng's classic API behind one setjmp. libpng reports a fatal error by calling the error function, which must
   not return: without a jmp_buf libpng abort()s (docs/contributing.md#c-libraries-behind-a-c-shim). */
#include "CShims.h"

#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct png_state {
    const uint8_t *data;
    size_t size, offset;
    size_t max_allocation;
    int allocation_refused;
    respdecode_image_outcome *outcome;
    uint8_t *row;
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

int respdecode_png_read(const uint8_t *data, size_t size, const respdecode_png_limits *limits,
                        respdecode_png_header *header, respdecode_rgba_row_fn row, void *context,
                        respdecode_image_outcome *outcome) {
    struct png_state state = {data, size, 0, limits->max_allocation, 0, outcome, NULL};
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
    png_set_read_fn(png, &state, read_memory);
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
