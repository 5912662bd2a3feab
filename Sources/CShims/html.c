#include "CShims.h"

#include <string.h>

#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/HTMLparser.h>

/* libxml2's varargs message callbacks, which Swift cannot implement: ignores the message. */
static void ignore_message(void *context, const char *message, ...) {
    (void)context;
    (void)message;
}

void respdecode_html_quiet_handler(void *sax_handler) {
    htmlSAXHandler *sax = sax_handler;
    sax->warning = ignore_message;
    sax->error = ignore_message;
    sax->fatalError = ignore_message;
}

void respdecode_xml_free(void *pointer) { xmlFree(pointer); }
