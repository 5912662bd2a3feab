/* The parts of libxml2 (2.9.x and later) that respdecode's XML wrapper uses. */
#ifndef RESPDECODE_CLIBXML2_SHIM_H
#define RESPDECODE_CLIBXML2_SHIM_H

#include <libxml/xmlversion.h>
/* Debian builds libxml2 with ICU; its ICU types clash with Foundation's copy of ICU in one Swift module graph
   ("'UErrorCode' has different definitions in different modules"). Nothing here needs libxml2's ICU bits. */
#undef LIBXML_ICU_ENABLED

#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/SAX2.h>
#include <libxml/xmlerror.h>
#include <libxml/globals.h>

/* C globals and macros that Swift 6 cannot touch safely or at all. */

/* libxml2's element nesting cap (256 in 2.9.x); respdecode enforces its own, configurable limit below it. */
static inline void respdecode_xml_set_max_depth(unsigned int depth) { xmlParserMaxDepth = depth; }

/* libxml2 prints some errors (encoding errors in 2.9.x) through a per-thread generic handler, whatever the parse
   options say; a variadic C function is needed to replace it, which Swift cannot write. */
static void respdecode_xml_ignore_error(void *context, const char *message, ...) { (void)context; (void)message; }
static inline void respdecode_xml_silence_this_thread(void) {
    xmlSetGenericErrorFunc(NULL, respdecode_xml_ignore_error);
}
#endif
