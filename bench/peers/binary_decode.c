/* The C peer of bench/msgpack/run and bench/cbor/run: each body of a bodies file (a 4-byte big-endian length before
   each body) parsed by the library itself into its object tree -- msgpack-c's msgpack_unpack_next, libcbor's
   cbor_load -- and the tree walked to one JSON line (bytes as {"base64":...}, non-string keys written as they come,
   doubles with "%.17g"), written to standard output. Compiled by the bench at run time:
       cc -O2 binary_decode.c -o binary_decode -lmsgpackc -lcbor
   Usage: binary_decode msgpack|cbor BODIES > /dev/null */
#include <cbor.h>
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *out;
static size_t used, capacity;

static void room(size_t n) {
    if (used + n <= capacity) return;
    while (used + n > capacity) capacity = capacity ? capacity * 2 : 1 << 20;
    out = realloc(out, capacity);
    if (!out) abort();
}
static void put(const char *s, size_t n) { room(n); memcpy(out + used, s, n); used += n; }
static void putc1(char c) { room(1); out[used++] = c; }
static void put_u64(unsigned long long v) {
    char b[24]; int i = 24;
    do { b[--i] = (char)('0' + v % 10); v /= 10; } while (v);
    put(b + i, 24 - i);
}
static void put_i64(long long v) {
    if (v < 0) { putc1('-'); put_u64(0ULL - (unsigned long long)v); } else put_u64((unsigned long long)v);
}
static void put_double(double d) { room(32); used += snprintf(out + used, 32, "%.17g", d); }
static void put_string(const unsigned char *s, size_t n) {
    room(n * 6 + 2);
    out[used++] = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = s[i];
        if (c == '"' || c == '\\') { out[used++] = '\\'; out[used++] = (char)c; }
        else if (c < 0x20) used += sprintf(out + used, "\\u%04x", c);
        else out[used++] = (char)c;
    }
    out[used++] = '"';
}
static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static void put_base64(const unsigned char *s, size_t n) {
    put("{\"base64\":\"", 11);
    room((n + 2) / 3 * 4 + 2);
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        unsigned v = s[i] << 16 | s[i + 1] << 8 | s[i + 2];
        out[used++] = alphabet[v >> 18]; out[used++] = alphabet[v >> 12 & 63];
        out[used++] = alphabet[v >> 6 & 63]; out[used++] = alphabet[v & 63];
    }
    if (n - i) {
        unsigned v = s[i] << 16 | (n - i == 2 ? s[i + 1] << 8 : 0);
        out[used++] = alphabet[v >> 18]; out[used++] = alphabet[v >> 12 & 63];
        out[used++] = n - i == 2 ? alphabet[v >> 6 & 63] : '='; out[used++] = '=';
    }
    put("\"}", 2);
}

static void msgpack_json(const msgpack_object *o) {
    switch (o->type) {
    case MSGPACK_OBJECT_NIL: put("null", 4); break;
    case MSGPACK_OBJECT_BOOLEAN: if (o->via.boolean) put("true", 4); else put("false", 5); break;
    case MSGPACK_OBJECT_POSITIVE_INTEGER: put_u64(o->via.u64); break;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: put_i64(o->via.i64); break;
    case MSGPACK_OBJECT_FLOAT32: case MSGPACK_OBJECT_FLOAT64: put_double(o->via.f64); break;
    case MSGPACK_OBJECT_STR: put_string((const unsigned char *)o->via.str.ptr, o->via.str.size); break;
    case MSGPACK_OBJECT_BIN: put_base64((const unsigned char *)o->via.bin.ptr, o->via.bin.size); break;
    case MSGPACK_OBJECT_EXT:
        put("{\"ext\":", 7); put_i64(o->via.ext.type); putc1(',');
        put_base64((const unsigned char *)o->via.ext.ptr, o->via.ext.size); putc1('}'); break;
    case MSGPACK_OBJECT_ARRAY:
        putc1('[');
        for (uint32_t i = 0; i < o->via.array.size; i++) { if (i) putc1(','); msgpack_json(&o->via.array.ptr[i]); }
        putc1(']'); break;
    case MSGPACK_OBJECT_MAP:
        putc1('{');
        for (uint32_t i = 0; i < o->via.map.size; i++) {
            if (i) putc1(',');
            msgpack_json(&o->via.map.ptr[i].key); putc1(':'); msgpack_json(&o->via.map.ptr[i].val);
        }
        putc1('}'); break;
    }
}

static void cbor_json(const cbor_item_t *item) {
    switch (cbor_typeof(item)) {
    case CBOR_TYPE_UINT: put_u64(cbor_get_int(item)); break;
    case CBOR_TYPE_NEGINT: putc1('-'); put_u64(cbor_get_int(item) + 1); break;
    case CBOR_TYPE_BYTESTRING:
        if (cbor_bytestring_is_definite(item)) put_base64(cbor_bytestring_handle(item), cbor_bytestring_length(item));
        else put("{\"base64\":\"\"}", 13);
        break;
    case CBOR_TYPE_STRING:
        if (cbor_string_is_definite(item)) put_string(cbor_string_handle(item), cbor_string_length(item));
        else put("\"\"", 2);
        break;
    case CBOR_TYPE_ARRAY: {
        size_t n = cbor_array_size(item);
        cbor_item_t **items = cbor_array_handle(item);
        putc1('[');
        for (size_t i = 0; i < n; i++) { if (i) putc1(','); cbor_json(items[i]); }
        putc1(']'); break;
    }
    case CBOR_TYPE_MAP: {
        size_t n = cbor_map_size(item);
        struct cbor_pair *pairs = cbor_map_handle(item);
        putc1('{');
        for (size_t i = 0; i < n; i++) {
            if (i) putc1(',');
            cbor_json(pairs[i].key); putc1(':'); cbor_json(pairs[i].value);
        }
        putc1('}'); break;
    }
    case CBOR_TYPE_TAG:
        put("{\"tag\":", 7); put_u64(cbor_tag_value(item)); put(",\"value\":", 9);
        cbor_json(cbor_tag_item(item)); putc1('}'); break;
    case CBOR_TYPE_FLOAT_CTRL:
        if (cbor_float_ctrl_is_ctrl(item)) {
            if (cbor_is_bool(item)) { if (cbor_get_bool(item)) put("true", 4); else put("false", 5); }
            else put("null", 4);
        } else put_double(cbor_float_get_float(item));
        break;
    }
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: binary_decode msgpack|cbor BODIES\n"); return 2; }
    int is_msgpack = strcmp(argv[1], "msgpack") == 0;
    FILE *f = fopen(argv[2], "rb");
    if (!f) { perror(argv[2]); return 2; }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc((size_t)size);
    if (fread(data, 1, (size_t)size, f) != (size_t)size) return 2;
    fclose(f);
    msgpack_unpacked result;
    msgpack_unpacked_init(&result);
    for (long i = 0; i + 4 <= size;) {
        size_t length = (size_t)data[i] << 24 | data[i + 1] << 16 | data[i + 2] << 8 | data[i + 3];
        const unsigned char *body = data + i + 4;
        i += 4 + (long)length;
        if (is_msgpack) {
            size_t offset = 0;
            if (msgpack_unpack_next(&result, (const char *)body, length, &offset) != MSGPACK_UNPACK_SUCCESS) return 1;
            msgpack_json(&result.data);
        } else {
            struct cbor_load_result loaded;
            cbor_item_t *item = cbor_load(body, length, &loaded);
            if (!item) return 1;
            cbor_json(item);
            cbor_decref(&item);
        }
        putc1('\n');
        if (used > 1 << 20) { fwrite(out, 1, used, stdout); used = 0; }
    }
    fwrite(out, 1, used, stdout);
    msgpack_unpacked_destroy(&result);
    return 0;
}
