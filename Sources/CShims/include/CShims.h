/* What Swift cannot do itself: C globals, variadic callbacks and (with the image decoders) setjmp/longjmp.
   No type of a C library appears here. */
#ifndef RESPDECODE_CSHIMS_H
#define RESPDECODE_CSHIMS_H

/* libxml2's element nesting cap (xmlParserMaxDepth, 256 in 2.9.x): a C global. */
void respdecode_xml_set_max_depth(unsigned int depth);

/* Replaces this thread's libxml2 generic error handler (per thread in 2.9.x; it prints to stderr, and encoding
   errors reach only it, whatever the parse options say) with one that keeps the text instead, and forgets what it
   kept before. A variadic C function is needed for the handler. */
void respdecode_xml_silence_this_thread(void);

/* What libxml2 sent to the generic handler on this thread since respdecode_xml_silence_this_thread() (the first
   511 bytes; empty when nothing). */
const char *respdecode_xml_last_generic_error(void);

/* The parse running on this thread (an opaque pointer), or NULL: lets the process-wide external entity loader tell
   our parses from any other libxml2 user's. */
void respdecode_xml_set_current_parse(void *parse);
void *respdecode_xml_current_parse(void);

#endif
