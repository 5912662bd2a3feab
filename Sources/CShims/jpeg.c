/* libjpeg(-turbo)'s API behind one setjmp. libjpeg's default error_exit prints and calls exit(); corrupt-data
   warnings only go to emit_message; progressive scans are unbounded (docs/reliability.md#jpeg-images). */
#include "CShims.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

struct jpeg_state {
    struct jpeg_error_mgr error;   /* first: libjpeg's err pointer is cast back to this struct */
    struct jpeg_progress_mgr progress;
    jmp_buf jump;
    respdecode_image_outcome *outcome;
    int warnings_fatal;
    int max_scans;
    uint64_t max_scan_pixels;
    int status;                    /* what a longjmp back reports */
    uint8_t *rows;
};

static void on_error_exit(j_common_ptr common) {
    struct jpeg_state *state = (struct jpeg_state *)common->err;
    (*common->err->format_message)(common, state->outcome->message);
    int code = common->err->msg_code;
    /* Valid files past what this libjpeg does: 12-bit or lossless data, dimensions over 65500. */
    if (code == JERR_BAD_PRECISION || code == JERR_SOF_UNSUPPORTED || code == JERR_NOT_COMPILED ||
        code == JERR_IMAGE_TOO_BIG)
        state->status = RESPDECODE_IMAGE_UNSUPPORTED;
    else if (code == JERR_OUT_OF_MEMORY || code == JERR_NO_BACKING_STORE || code == JERR_WIDTH_OVERFLOW)
        state->status = RESPDECODE_IMAGE_LIMIT;
    longjmp(state->jump, 1);
}

/* Level -1 is a warning. In a full decode those about the data (corrupt, missing or extraneous bytes, a bogus
   progression) are fatal, as with djpeg -strict; those about metadata (an unknown JFIF revision or Adobe transform)
   are counted, as everything is in a header read. Trace messages (levels >= 1) are dropped. */
static void on_emit_message(j_common_ptr common, int level) {
    struct jpeg_state *state = (struct jpeg_state *)common->err;
    if (level >= 0) return;
    int code = common->err->msg_code;
    int metadata_only = code == JWRN_JFIF_MAJOR || code == JWRN_ADOBE_XFORM;
    if (state->warnings_fatal && !metadata_only) {
        state->status = RESPDECODE_IMAGE_INVALID;
        (*common->err->format_message)(common, state->outcome->message);
        longjmp(state->jump, 1);
    }
    if (state->outcome->warnings++ == 0) (*common->err->format_message)(common, state->outcome->first_warning);
}

static void on_output_message(j_common_ptr common) { (void)common; }

/* Called between scans while a progressive image is read: stops a file of endless scans. */
static void on_progress(j_common_ptr common) {
    struct jpeg_state *state = (struct jpeg_state *)common->err;
    j_decompress_ptr decompress = (j_decompress_ptr)common;
    if (decompress->input_scan_number > state->max_scans) {
        snprintf(state->outcome->message, sizeof state->outcome->message, "more than %d scans (--max-jpeg-scans)",
                 state->max_scans);
        state->status = RESPDECODE_IMAGE_LIMIT;
        longjmp(state->jump, 1);
    }
    /* Each scan of a progressive image is a pass over all of it: a valid scan script of a few hundred scans over a
       huge image is seconds of work from a small file. */
    uint64_t pixels = (uint64_t)decompress->image_width * decompress->image_height;
    if ((uint64_t)decompress->input_scan_number * pixels > state->max_scan_pixels) {
        snprintf(state->outcome->message, sizeof state->outcome->message,
                 "%d scans of %llu pixels are more than %llu scan pixels (--max-jpeg-scan-pixels)",
                 decompress->input_scan_number, (unsigned long long)pixels,
                 (unsigned long long)state->max_scan_pixels);
        state->status = RESPDECODE_IMAGE_LIMIT;
        longjmp(state->jump, 1);
    }
}

static int color_space_code(J_COLOR_SPACE space) {
    switch (space) {
    case JCS_GRAYSCALE: return 1;
    case JCS_RGB: return 2;
    case JCS_YCbCr: return 3;
    case JCS_CMYK: return 4;
    case JCS_YCCK: return 5;
    default: return 0;
    }
}

/* CMYK (or YCCK, which libjpeg turns into CMYK) to RGBA in place. Adobe files store the inks inverted. */
static void cmyk_to_rgba(uint8_t *p, uint32_t count, int inverted) {
    for (uint32_t i = 0; i < count; i++, p += 4) {
        unsigned c = p[0], m = p[1], y = p[2], k = p[3];
        if (!inverted) { c = 255 - c; m = 255 - m; y = 255 - y; k = 255 - k; }
        unsigned r = c * k + 128, g = m * k + 128, b = y * k + 128;
        p[0] = (uint8_t)((r + (r >> 8)) >> 8);
        p[1] = (uint8_t)((g + (g >> 8)) >> 8);
        p[2] = (uint8_t)((b + (b >> 8)) >> 8);
        p[3] = 255;
    }
}

int respdecode_jpeg_read(const uint8_t *data, size_t size, const respdecode_jpeg_limits *limits,
                         respdecode_jpeg_header *header, respdecode_rgba_row_fn row, void *context,
                         respdecode_image_outcome *outcome) {
    struct jpeg_decompress_struct decompress;
    struct jpeg_state state;
    memset(&state, 0, sizeof state);
    struct jpeg_state *volatile shared = &state;
    memset(header, 0, sizeof *header);
    outcome->message[0] = outcome->first_warning[0] = 0;
    outcome->warnings = 0;
    state.outcome = outcome;
    state.warnings_fatal = row != NULL;
    state.max_scans = limits->max_scans;
    state.max_scan_pixels = limits->max_scan_pixels;
    state.status = RESPDECODE_IMAGE_INVALID;

    decompress.err = jpeg_std_error(&state.error);
    state.error.error_exit = on_error_exit;
    state.error.emit_message = on_emit_message;
    state.error.output_message = on_output_message;
    if (setjmp(state.jump)) {
        free(shared->rows);
        jpeg_destroy_decompress(&decompress);
        return shared->status;
    }
    jpeg_create_decompress(&decompress);
    decompress.mem->max_memory_to_use = limits->max_memory;
    if (row != NULL) {
        state.progress.progress_monitor = on_progress;
        decompress.progress = &state.progress;
    }
    jpeg_mem_src(&decompress, data, (unsigned long)size);
    /* With require_image TRUE, anything but a header followed by a scan is an error (longjmp). */
    jpeg_read_header(&decompress, TRUE);
    header->width = decompress.image_width;
    header->height = decompress.image_height;
    header->precision = decompress.data_precision;
    header->components = decompress.num_components;
    header->color_space = color_space_code(decompress.jpeg_color_space);
    header->progressive = decompress.progressive_mode != 0;
    header->arithmetic = decompress.arith_code != 0;
    for (int i = 0; i < decompress.num_components && i < 4; i++) {
        header->h_samp[i] = decompress.comp_info[i].h_samp_factor;
        header->v_samp[i] = decompress.comp_info[i].v_samp_factor;
    }
    header->saw_jfif = decompress.saw_JFIF_marker;
    header->density_unit = decompress.density_unit;
    header->x_density = decompress.X_density;
    header->y_density = decompress.Y_density;
    header->saw_adobe = decompress.saw_Adobe_marker;
    header->adobe_transform = decompress.Adobe_transform;
    if (row == NULL) {
        jpeg_destroy_decompress(&decompress);
        return RESPDECODE_IMAGE_OK;
    }
    /* The pixel budget before libjpeg allocates anything for the image (a 60000x60000 header would take 7 GB). */
    if ((uint64_t)decompress.image_width * decompress.image_height > limits->max_pixels) {
        snprintf(outcome->message, sizeof outcome->message,
                 "%u x %u pixels is over the pixel budget of %llu (--max-image-pixels)",
                 (unsigned)decompress.image_width, (unsigned)decompress.image_height,
                 (unsigned long long)limits->max_pixels);
        jpeg_destroy_decompress(&decompress);
        return RESPDECODE_IMAGE_LIMIT;
    }
    int cmyk = decompress.jpeg_color_space == JCS_CMYK || decompress.jpeg_color_space == JCS_YCCK;
    int gray = decompress.jpeg_color_space == JCS_GRAYSCALE;
    /* RGB with an opaque fourth byte (libjpeg-turbo writes it as it converts): four-byte pixels sum fastest. */
    decompress.out_color_space = cmyk ? JCS_CMYK : gray ? JCS_GRAYSCALE : JCS_EXT_RGBA;
    uint32_t channels = gray ? 1 : 4;
    jpeg_start_decompress(&decompress);
    uint32_t width = decompress.output_width;
    if ((uint32_t)decompress.output_components != channels) {
        snprintf(outcome->message, sizeof outcome->message, "unexpected output layout");
        longjmp(state.jump, 1);
    }
    int batch = decompress.rec_outbuf_height > 0 ? decompress.rec_outbuf_height : 1;
    if (batch > 16) batch = 16;
    /* Every row starts ROW_SKEW bytes past a 16-byte boundary. libjpeg-turbo's SIMD colour conversion writes a
       16-byte-aligned row with non-temporal stores (movntdq, past the caches), and the pixel sums then read every row
       back from memory: on issue 22's baseline JPEGs those reads were 15 % of a decode's time (perf). Unaligned, it
       writes with ordinary stores and the row is still in the cache when it is summed. */
    enum { ROW_SKEW = 4 };
    size_t stride = ((size_t)width * 4 + ROW_SKEW + 15) / 16 * 16;
    state.rows = malloc(stride * (size_t)batch);
    if (state.rows == NULL) {
        snprintf(outcome->message, sizeof outcome->message, "out of memory for rows");
        state.status = RESPDECODE_IMAGE_LIMIT;
        longjmp(state.jump, 1);
    }
    JSAMPROW pointers[16];
    for (int i = 0; i < batch; i++) pointers[i] = state.rows + (size_t)i * stride + ROW_SKEW;
    while (decompress.output_scanline < decompress.output_height) {
        uint32_t first = decompress.output_scanline;
        JDIMENSION got = jpeg_read_scanlines(&decompress, pointers, (JDIMENSION)batch);
        for (JDIMENSION i = 0; i < got; i++) {
            if (cmyk) cmyk_to_rgba(pointers[i], width, decompress.saw_Adobe_marker);
            row(context, width, decompress.output_height, channels, pointers[i], width, first + i, 0, 1, NULL);
        }
    }
    jpeg_finish_decompress(&decompress);
    free(state.rows);
    state.rows = NULL;
    jpeg_destroy_decompress(&decompress);
    return RESPDECODE_IMAGE_OK;
}
