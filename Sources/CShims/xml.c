#include "CShims.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/parserInternals.h>
#include <libxml/xmlerror.h>

static __thread char generic_message[512];

static void keep_generic_error(void *context, const char *message, ...) {
    (void)context;
    size_t used = strlen(generic_message);
    if (used + 1 >= sizeof generic_message) return;
    va_list arguments;
    va_start(arguments, message);
    vsnprintf(generic_message + used, sizeof generic_message - used, message, arguments);
    va_end(arguments);
}

void respdecode_xml_set_max_depth(unsigned int depth) { xmlParserMaxDepth = depth; }

void respdecode_xml_silence_this_thread(void) {
    generic_message[0] = 0;
    xmlSetGenericErrorFunc(NULL, keep_generic_error);
}

const char *respdecode_xml_last_generic_error(void) { return generic_message; }

static __thread void *current_parse;

void respdecode_xml_set_current_parse(void *parse) { current_parse = parse; }

void *respdecode_xml_current_parse(void) { return current_parse; }
