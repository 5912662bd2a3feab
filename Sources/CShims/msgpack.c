/* The msgpack decoder's parser: msgpack-c's own unpacking state machine (msgpack/unpack_template.h, the template its
   msgpack_unpack_next is built from), instantiated here with callbacks that hand each value to the caller as it is
   read, instead of msgpack-c's callbacks that build a msgpack_object tree. A C file because the template is a C
   header to be included with macros defined, which Swift cannot do.

   Why not msgpack_unpack_next (measured with msgpack-c 4.0.0, docs/reliability.md#msgpack-and-cbor): its tree costs
   24 bytes (a msgpack_object) per item, 1.57 GB resident for a 64 MB body of one-byte items; it allocates an array
   or map of the count its header claims before reading any element (`FIXME security guard` in the template); and
   its parser stack stops at 32 levels. Here nothing
   is allocated per item or per claimed count: the caller writes JSON as the events come and checks each count
   against the bytes left. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The template's nesting stack, on the C stack of respdecode_msgpack_parse (24 bytes a level): nesting deeper than
   this is refused by the template with MSGPACK_UNPACK_NOMEM_ERROR (the caller's --max-depth check comes first). */
#define MSGPACK_EMBED_STACK_SIZE RESPDECODE_MSGPACK_MAX_DEPTH
#include "CShims.h"
#include <msgpack/unpack.h> /* MSGPACK_UNPACK_PARSE_ERROR (-1), MSGPACK_UNPACK_NOMEM_ERROR (-2) */
#include <msgpack/unpack_define.h>

typedef struct {
    respdecode_msgpack_event event;
    void *sink;
} rd_user;

#define msgpack_unpack_struct(name) struct rd_msgpack##name
#define msgpack_unpack_func(ret, name) static ret rd_msgpack##name
#define msgpack_unpack_callback(name) rd_msgpack_callback##name
#define msgpack_unpack_object int
#define msgpack_unpack_user rd_user

#define RD_EVENT(kind, value, bytes, length) (u->event(u->sink, (kind), (value), (bytes), (length)))

static inline int rd_msgpack_callback_root(rd_user *u) { (void)u; return 0; }
static inline int rd_msgpack_callback_uint8(rd_user *u, uint8_t d, int *o) {
    (void)o; return RD_EVENT(RESPDECODE_MSGPACK_UINT, d, NULL, 0);
}
static inline int rd_msgpack_callback_uint16(rd_user *u, uint16_t d, int *o) {
    (void)o; return RD_EVENT(RESPDECODE_MSGPACK_UINT, d, NULL, 0);
}
static inline int rd_msgpack_callback_uint32(rd_user *u, uint32_t d, int *o) {
    (void)o; return RD_EVENT(RESPDECODE_MSGPACK_UINT, d, NULL, 0);
}
static inline int rd_msgpack_callback_uint64(rd_user *u, uint64_t d, int *o) {
    (void)o; return RD_EVENT(RESPDECODE_MSGPACK_UINT, d, NULL, 0);
}
static inline int rd_msgpack_callback_int8(rd_user *u, int8_t d, int *o) {
    (void)o; return RD_EVENT(RESPDECODE_MSGPACK_INT, (uint64_t)(int64_t)d, NULL, 0);
}
static inline int rd_msgpack_callback_int16(rd_user *u, int16_t d, int *o) {
    (void)o; return RD_EVENT(RESPDECODE_MSGPACK_INT, (uint64_t)(int64_t)d, NULL, 0);
}
static inline int rd_msgpack_callback_int32(rd_user *u, int32_t d, int *o) {
    (void)o; return RD_EVENT(RESPDECODE_MSGPACK_INT, (uint64_t)(int64_t)d, NULL, 0);
}
static inline int rd_msgpack_callback_int64(rd_user *u, int64_t d, int *o) {
    (void)o; return RD_EVENT(RESPDECODE_MSGPACK_INT, (uint64_t)d, NULL, 0);
}
static inline int rd_msgpack_callback_float(rd_user *u, float d, int *o) {
    double wide = d;
    uint64_t bits;
    memcpy(&bits, &wide, sizeof bits);
    (void)o; return RD_EVENT(RESPDECODE_MSGPACK_FLOAT, bits, NULL, 0);
}
static inline int rd_msgpack_callback_double(rd_user *u, double d, int *o) {
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    (void)o; return RD_EVENT(RESPDECODE_MSGPACK_FLOAT, bits, NULL, 0);
}
static inline int rd_msgpack_callback_nil(rd_user *u, int *o) {
    (void)o; return RD_EVENT(RESPDECODE_MSGPACK_NIL, 0, NULL, 0);
}
static inline int rd_msgpack_callback_true(rd_user *u, int *o) {
    (void)o; return RD_EVENT(RESPDECODE_MSGPACK_TRUE, 0, NULL, 0);
}
static inline int rd_msgpack_callback_false(rd_user *u, int *o) {
    (void)o; return RD_EVENT(RESPDECODE_MSGPACK_FALSE, 0, NULL, 0);
}
static inline int rd_msgpack_callback_array(rd_user *u, unsigned int n, int *o) {
    (void)o; return RD_EVENT(RESPDECODE_MSGPACK_ARRAY, n, NULL, 0);
}
static inline int rd_msgpack_callback_array_item(rd_user *u, int *c, int o) {
    (void)u; (void)c; (void)o; return 0;
}
static inline int rd_msgpack_callback_map(rd_user *u, unsigned int n, int *o) {
    (void)o; return RD_EVENT(RESPDECODE_MSGPACK_MAP, n, NULL, 0);
}
static inline int rd_msgpack_callback_map_item(rd_user *u, int *c, int k, int v) {
    (void)u; (void)c; (void)k; (void)v; return 0;
}
static inline int rd_msgpack_callback_str(rd_user *u, const char *b, const char *p, unsigned int l, int *o) {
    (void)b; (void)o; return RD_EVENT(RESPDECODE_MSGPACK_STR, 0, p, l);
}
static inline int rd_msgpack_callback_bin(rd_user *u, const char *b, const char *p, unsigned int l, int *o) {
    (void)b; (void)o; return RD_EVENT(RESPDECODE_MSGPACK_BIN, 0, p, l);
}
/* `p` is the type byte, followed by `l - 1` bytes of data. The template computes `l` of an ext 32 as its length + 1
   in 32 bits, so an ext 32 claiming 2^32 - 1 bytes arrives here with l == 0 (and `l - 1` would be 4 GiB read past the
   body): refused as malformed. */
static inline int rd_msgpack_callback_ext(rd_user *u, const char *b, const char *p, unsigned int l, int *o) {
    (void)b; (void)o;
    if (l == 0) return MSGPACK_UNPACK_PARSE_ERROR;
    return RD_EVENT(RESPDECODE_MSGPACK_EXT, (uint64_t)(int64_t)(int8_t)p[0], p + 1, l - 1);
}

#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wunused-function"
#include <msgpack/unpack_template.h>
#pragma clang diagnostic pop

int respdecode_msgpack_parse(const uint8_t *data, size_t length, size_t *end, respdecode_msgpack_event event,
                             void *sink) {
    struct rd_msgpack_context context;
    rd_msgpack_init(&context);
    context.user.event = event;
    context.user.sink = sink;
    size_t offset = 0;
    int status = rd_msgpack_execute(&context, (const char *)data, length, &offset);
    *end = offset;
    return status;
}
