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
#include <libxml/valid.h>
/* The html decoder: the HTML parser (SAX mode) and RFC 3986 reference resolution. */
#include <libxml/HTMLparser.h>
#include <libxml/uri.h>

#endif
