// CLD2 (Compact Language Detector 2) behind one C function: its API is C++ only. See docs/decoding.md#language.
#include <climits>
#include <cstdio> // before CLD2's header, which uses FILE without including it
#include <cstdlib>
#include <cstring>

#include <cld2/public/compact_lang_det.h>
#include <cld2/public/encodings.h>
#include <unicode/uloc.h>

extern "C" {
#include "CShims.h"
}

namespace {

// Copies a C string into a fixed buffer, truncated and NUL-terminated.
void copy_string(char *destination, size_t size, const char *source) {
    if (source == nullptr) source = "";
    size_t n = strnlen(source, size - 1);
    memcpy(destination, source, n);
    destination[n] = '\0';
}

// The ISO 639-3 code of a CLD2 language: ICU's uloc_getISO3Language of CLD2's code (its ISO 639-1 to 639-2/T
// table, whose codes are 639-3's too, including the macrolanguages "zho", "nor", "msa", "ara", "fas").
void iso639_3(CLD2::Language language, const char *code, char *out, size_t size) {
    out[0] = '\0';
    if (language == CLD2::UNKNOWN_LANGUAGE || language == CLD2::TG_UNKNOWN_LANGUAGE) return;
    // CLD2 still writes Javanese with the code ISO 639-1 withdrew in 2001, "jw"; ICU 72 maps "jw" to "jaw", which is
    // no ISO 639-3 code (measured). Javanese is "jv", 639-3 "jav". (CLD2's other old code, "iw", ICU maps to "heb".)
    const char *asked = strcmp(code, "jw") == 0 ? "jv" : code;
    const char *iso3 = uloc_getISO3Language(asked);
    if (iso3 != nullptr && iso3[0] != '\0') {
        copy_string(out, size, iso3);
        return;
    }
    // ICU knows no 3-letter code for some languages whose CLD2 code is already ISO 639-3 ("lif" Limbu, "crs"
    // Seselwa). Only for CLD2's real languages: above NUM_LANGUAGES are its pseudo-languages ("zzb" Bork).
    if (static_cast<int>(language) < static_cast<int>(CLD2::NUM_LANGUAGES) && strlen(code) == 3) {
        copy_string(out, size, code);
    }
}

bool is_continuation(uint8_t byte) { return (byte & 0xC0) == 0x80; }

// Writes spaces over what CLD2's checking entry point refuses, which are not only invalid UTF-8: it stops at the
// first byte that is not "interchange-valid" -- C0 controls but tab, LF, FF and CR, DEL and the C1 controls, the
// noncharacters U+FDD0-FDEF and U+xxFFFE-xxFFFF (measured on every code point with libcld2 0.0.197) -- and then
// scores nothing: one stray control character in a page made the whole page unknown. Returns the bytes replaced.
size_t sanitize(uint8_t *text, size_t length) {
    size_t replaced = 0;
    size_t i = 0;
    while (i < length) {
        uint8_t b = text[i];
        size_t n = 1;
        bool refused = false;
        if (b < 0x80) {
            refused = (b < 0x20 && b != '\t' && b != '\n' && b != '\f' && b != '\r') || b == 0x7F;
        } else if (b >= 0xC2 && b <= 0xDF && i + 1 < length && is_continuation(text[i + 1])) {
            n = 2;
            uint32_t scalar = ((b & 0x1Fu) << 6) | (text[i + 1] & 0x3Fu);
            refused = scalar <= 0x9F; // C1 controls
        } else if (b >= 0xE0 && b <= 0xEF && i + 2 < length && is_continuation(text[i + 1]) &&
                   is_continuation(text[i + 2]) && !(b == 0xE0 && text[i + 1] < 0xA0) &&
                   !(b == 0xED && text[i + 1] > 0x9F)) {
            n = 3;
            uint32_t scalar = ((b & 0x0Fu) << 12) | ((text[i + 1] & 0x3Fu) << 6) | (text[i + 2] & 0x3Fu);
            refused = (scalar >= 0xFDD0 && scalar <= 0xFDEF) || (scalar & 0xFFFE) == 0xFFFE;
        } else if (b >= 0xF0 && b <= 0xF4 && i + 3 < length && is_continuation(text[i + 1]) &&
                   is_continuation(text[i + 2]) && is_continuation(text[i + 3]) &&
                   !(b == 0xF0 && text[i + 1] < 0x90) && !(b == 0xF4 && text[i + 1] > 0x8F)) {
            n = 4;
            uint32_t scalar = ((b & 0x07u) << 18) | ((text[i + 1] & 0x3Fu) << 12) | ((text[i + 2] & 0x3Fu) << 6) |
                              (text[i + 3] & 0x3Fu);
            refused = (scalar & 0xFFFE) == 0xFFFE;
        } else {
            refused = true; // an invalid byte: replaced alone, the next one is looked at afresh
        }
        if (refused) {
            memset(text + i, ' ', n);
            replaced += n;
        }
        i += n;
    }
    return replaced;
}

// One call of CLD2's checking entry point (it never reads past `length`, whatever the bytes). False when it refused
// the bytes, leaving its outputs unset.
bool detect(const char *text, int length, bool is_plain_text, const CLD2::CLDHints *hints,
            respdecode_language_result *result) {
    CLD2::Language language3[3] = {CLD2::UNKNOWN_LANGUAGE, CLD2::UNKNOWN_LANGUAGE, CLD2::UNKNOWN_LANGUAGE};
    int percent3[3] = {0, 0, 0};
    double normalized3[3] = {0, 0, 0};
    int text_bytes = 0;
    bool reliable = false;
    int valid_prefix = 0;
    CLD2::ExtDetectLanguageSummaryCheckUTF8(text, length, is_plain_text, hints, 0, language3, percent3, normalized3,
                                            nullptr, &text_bytes, &reliable, &valid_prefix);
    if (valid_prefix < length) return false;
    for (int k = 0; k < 3; k++) {
        respdecode_language *out = &result->languages[k];
        const char *code = CLD2::LanguageCode(language3[k]);
        out->language = static_cast<int>(language3[k]);
        out->percent = percent3[k];
        out->normalized_score = normalized3[k];
        copy_string(out->code, sizeof out->code, code);
        copy_string(out->name, sizeof out->name, CLD2::LanguageName(language3[k]));
        iso639_3(language3[k], out->code, out->iso639_3, sizeof out->iso639_3);
    }
    result->text_bytes = text_bytes;
    result->reliable = reliable ? 1 : 0;
    return true;
}

} // namespace

extern "C" void respdecode_detect_language(const uint8_t *utf8, size_t length, size_t max_bytes, int is_plain_text,
                                           const char *content_language_hint, const char *tld_hint,
                                           respdecode_language_result *result) {
    memset(result, 0, sizeof *result);
    for (int k = 0; k < 3; k++) {
        result->languages[k].language = static_cast<int>(CLD2::UNKNOWN_LANGUAGE);
        copy_string(result->languages[k].code, sizeof result->languages[k].code, "un");
        copy_string(result->languages[k].name, sizeof result->languages[k].name, "Unknown");
    }
    result->utf8_ok = 1;
    if (max_bytes > static_cast<size_t>(INT_MAX)) max_bytes = INT_MAX;
    size_t n = length < max_bytes ? length : max_bytes;
    // Cut before a lead byte (a character is at most 4 bytes), so that a cap never splits a character.
    if (n < length) {
        size_t floor = n >= 3 ? n - 3 : 0;
        while (n > floor && is_continuation(utf8[n])) n--;
    }
    result->examined_bytes = n;
    if (n == 0 || utf8 == nullptr) return;

    CLD2::CLDHints hints = {content_language_hint, tld_hint, CLD2::UNKNOWN_ENCODING, CLD2::UNKNOWN_LANGUAGE};
    const char *text = reinterpret_cast<const char *>(utf8);
    if (detect(text, static_cast<int>(n), is_plain_text != 0, &hints, result)) return;
    // Refused: score a copy with the refused bytes as spaces (at most max_bytes, the cap bounds the memory).
    uint8_t *copy = static_cast<uint8_t *>(malloc(n));
    if (copy == nullptr) {
        result->utf8_ok = 0;
        return;
    }
    memcpy(copy, utf8, n);
    result->replaced_bytes = sanitize(copy, n);
    if (!detect(reinterpret_cast<const char *>(copy), static_cast<int>(n), is_plain_text != 0, &hints, result)) {
        result->utf8_ok = 0;
    }
    free(copy);
}
