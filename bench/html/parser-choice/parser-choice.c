/*
 * parser-choice: gumbo against libxml2's HTML parser, the measurement behind docs/html-parser.md.
 * Driven by ./run (read it first); three modes:
 *
 *   PARSER: gumbo, libxml2 (HTML_PARSE_NOERROR | NOWARNING | NONET | NODEFDTD, UTF-8) or libxml2-recover (the
 *   same and HTML_PARSE_RECOVER).
 *
 *   parser-choice tree PARSER < RECORDS
 *       Conformance. RECORDS is a sequence of "<context>\t<length>\n<length bytes of input>", where <context> is
 *       "-" for a whole document, else the html5lib fragment context ("td", "svg desc", "math mi").
 *       For each record it writes "<status>\t<length>\n<length bytes of dump>", the status being "ok" or
 *       "skipped" (a fragment context the parser cannot take). The dump is the html5lib tree-construction
 *       "#document" format without the "| " prefixes' trailing newline: one line per node, "| " + two spaces per
 *       depth; elements "<name>" ("<svg name>", "<math name>" in a foreign namespace), attributes on the lines
 *       below sorted by their printed name, text "\"...\"" (adjacent text nodes merged, as a DOM holds them),
 *       comments "<!-- ... -->", the doctype "<!DOCTYPE name>" or "<!DOCTYPE name \"public\" \"system\">",
 *       template contents under "content".
 *
 *   parser-choice speed RUNS REPEAT FILE...
 *       Speed. Reads the files into memory, then for gumbo (parse to tree, destroy), libxml2 htmlReadMemory
 *       (parse to tree, free) and libxml2's HTML SAX parser with empty callbacks (without and with
 *       HTML_PARSE_RECOVER): one warm-up pass, then RUNS
 *       runs, each parsing every file REPEAT times. Prints "<parser>\t<bytes>\t<wall s>\t<cpu s>" per run.
 *
 *   parser-choice extract PARSER FILE...
 *       What extraction needs, per file: "P\t<file>", then "T\t<first <title>'s text>" (or "T-" without a
 *       title), "L\t<lang of the root html element>" (or "L-"), one "A\t<href>" per <a href> in document order,
 *       and "W\t<visible words>": the text of the tree without script and style, every element boundary a word
 *       break, words split on ASCII whitespace and joined by one space. Tabs, newlines, CR and backslashes in
 *       values are written \t \n \r \\.
 *
 * Every input is parsed as UTF-8 (the readability pages are stored as UTF-8; see their PROVENANCE.md).
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gumbo.h>
#include <libxml/HTMLparser.h>
#include <libxml/HTMLtree.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

/* ------------------------------------------------------------------------------------------------- buffers */
typedef struct {
    char *data;
    size_t len, cap;
} Buf;

static void buf_add(Buf *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (b->len + n + 1 > cap) cap *= 2;
        b->data = realloc(b->data, cap);
        if (!b->data) {
            perror("realloc");
            exit(1);
        }
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

static void buf_str(Buf *b, const char *s) { buf_add(b, s, strlen(s)); }

static void buf_indent(Buf *b, int depth) {
    buf_str(b, "| ");
    for (int i = 0; i < depth; i++) buf_str(b, "  ");
}

/* One attribute line, kept to be sorted: the printed name (with its "xlink "/"xml "/"xmlns " prefix) and value. */
typedef struct {
    char *name;
    char *value;
} Attr;

static int attr_cmp(const void *a, const void *b) { return strcmp(((const Attr *)a)->name, ((const Attr *)b)->name); }

static void dump_attrs(Buf *b, Attr *attrs, size_t n, int depth) {
    qsort(attrs, n, sizeof *attrs, attr_cmp);
    for (size_t i = 0; i < n; i++) {
        buf_indent(b, depth);
        buf_str(b, attrs[i].name);
        buf_str(b, "=\"");
        buf_str(b, attrs[i].value);
        buf_str(b, "\"\n");
        free(attrs[i].name);
        free(attrs[i].value);
    }
    free(attrs);
}

static char *concat(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    char *s = malloc(la + lb + 1);
    memcpy(s, a, la);
    memcpy(s + la, b, lb + 1);
    return s;
}

static void dump_text(Buf *b, const Buf *text, int depth) {
    buf_indent(b, depth);
    buf_str(b, "\"");
    buf_add(b, text->data, text->len);
    buf_str(b, "\"\n");
}

static void dump_comment(Buf *b, const char *text, int depth) {
    buf_indent(b, depth);
    buf_str(b, "<!-- ");
    buf_str(b, text ? text : "");
    buf_str(b, " -->\n");
}

static void dump_doctype(Buf *b, const char *name, const char *public_id, const char *system_id) {
    buf_str(b, "| <!DOCTYPE ");
    buf_str(b, name ? name : "");
    if (public_id || system_id) {
        buf_str(b, " \"");
        buf_str(b, public_id ? public_id : "");
        buf_str(b, "\" \"");
        buf_str(b, system_id ? system_id : "");
        buf_str(b, "\"");
    }
    buf_str(b, ">\n");
}

/* ---------------------------------------------------------------------------------------------------- gumbo */
static int g_is_text(const GumboNode *n) {
    return n->type == GUMBO_NODE_TEXT || n->type == GUMBO_NODE_WHITESPACE || n->type == GUMBO_NODE_CDATA;
}

/* The element's name as the html5lib format prints it (lower case; SVG names in their camel case); `tmp` holds a
 * name that is not one of gumbo's known tags. */
static const char *g_name(const GumboElement *el, char *tmp, size_t tmpsize) {
    GumboStringPiece piece = el->original_tag;
    if (el->tag_namespace == GUMBO_NAMESPACE_SVG && piece.length > 0) {
        gumbo_tag_from_original_text(&piece);
        const char *svg = gumbo_normalize_svg_tagname(&piece);
        if (svg) return svg;
    }
    if (el->tag != GUMBO_TAG_UNKNOWN) return gumbo_normalized_tagname(el->tag);
    piece = el->original_tag;
    if (piece.length == 0) return "?";
    gumbo_tag_from_original_text(&piece);
    size_t n = piece.length < tmpsize - 1 ? piece.length : tmpsize - 1;
    for (size_t i = 0; i < n; i++) tmp[i] = (char)tolower((unsigned char)piece.data[i]);
    tmp[n] = 0;
    return tmp;
}

static void g_children(Buf *b, const GumboVector *children, int depth);

static void g_element(Buf *b, const GumboNode *node, int depth) {
    const GumboElement *el = &node->v.element;
    char tmp[512];
    buf_indent(b, depth);
    buf_str(b, "<");
    if (el->tag_namespace == GUMBO_NAMESPACE_SVG) buf_str(b, "svg ");
    if (el->tag_namespace == GUMBO_NAMESPACE_MATHML) buf_str(b, "math ");
    buf_str(b, g_name(el, tmp, sizeof tmp));
    buf_str(b, ">\n");
    Attr *attrs = calloc(el->attributes.length + 1, sizeof *attrs);
    for (unsigned i = 0; i < el->attributes.length; i++) {
        const GumboAttribute *a = el->attributes.data[i];
        const char *prefix = a->attr_namespace == GUMBO_ATTR_NAMESPACE_XLINK   ? "xlink "
                             : a->attr_namespace == GUMBO_ATTR_NAMESPACE_XML   ? "xml "
                             : a->attr_namespace == GUMBO_ATTR_NAMESPACE_XMLNS ? "xmlns "
                                                                               : "";
        attrs[i].name = concat(prefix, a->name);
        attrs[i].value = strdup(a->value);
    }
    dump_attrs(b, attrs, el->attributes.length, depth + 1);
    if (node->type == GUMBO_NODE_TEMPLATE) {
        buf_indent(b, depth + 1);
        buf_str(b, "content\n");
        g_children(b, &el->children, depth + 2);
    } else {
        g_children(b, &el->children, depth + 1);
    }
}

static void g_children(Buf *b, const GumboVector *children, int depth) {
    Buf text = {0};
    int pending = 0;
    for (unsigned i = 0; i < children->length; i++) {
        const GumboNode *c = children->data[i];
        if (g_is_text(c)) {
            buf_str(&text, c->v.text.text);
            pending = 1;
            continue;
        }
        if (pending) {
            dump_text(b, &text, depth);
            text.len = 0;
            pending = 0;
        }
        if (c->type == GUMBO_NODE_COMMENT)
            dump_comment(b, c->v.text.text, depth);
        else if (c->type == GUMBO_NODE_ELEMENT || c->type == GUMBO_NODE_TEMPLATE)
            g_element(b, c, depth);
    }
    if (pending) dump_text(b, &text, depth);
    free(text.data);
}

/* The fragment context "td" / "svg desc" / "math mi" as gumbo's options; 0 when gumbo has no tag for it. */
static int g_context(const char *context, GumboOptions *options) {
    const char *name = context;
    GumboNamespaceEnum ns = GUMBO_NAMESPACE_HTML;
    if (strncmp(context, "svg ", 4) == 0) ns = GUMBO_NAMESPACE_SVG, name = context + 4;
    if (strncmp(context, "math ", 5) == 0) ns = GUMBO_NAMESPACE_MATHML, name = context + 5;
    GumboTag tag = gumbo_tag_enum(name);
    if (tag == GUMBO_TAG_UNKNOWN) return 0;
    options->fragment_context = tag;
    options->fragment_namespace = ns;
    return 1;
}

static int g_tree(Buf *b, const char *context, const char *data, size_t len) {
    GumboOptions options = kGumboDefaultOptions;
    if (context && !g_context(context, &options)) return 0;
    GumboOutput *out = gumbo_parse_with_options(&options, data, len);
    if (context) {
        /* gumbo puts the fragment's nodes under an <html> root standing for the context element */
        g_children(b, &out->root->v.element.children, 0);
    } else {
        const GumboDocument *doc = &out->document->v.document;
        if (doc->has_doctype) {
            /* gumbo keeps no missing-versus-empty distinction for the identifiers: empty counts as missing */
            int ids = doc->public_identifier[0] || doc->system_identifier[0];
            dump_doctype(b, doc->name, ids ? doc->public_identifier : NULL, ids ? doc->system_identifier : NULL);
        }
        g_children(b, &doc->children, 0);
    }
    gumbo_destroy_output(&kGumboDefaultOptions, out);
    return 1;
}

/* -------------------------------------------------------------------------------------------------- libxml2 */
/* The options of "libxml2"; "libxml2-recover" adds HTML_PARSE_RECOVER, which changes one thing that matters here:
 * without it a <script> or <style> ends at the first "</" followed by a letter (a "</div>" inside a JavaScript
 * string), with it only at its own end tag. */
static const int LX_BASE = HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING | HTML_PARSE_NONET | HTML_PARSE_NODEFDTD;
static int LX_OPTIONS = LX_BASE;

/* Which parser a name means: 1 gumbo, 0 libxml2 (setting LX_OPTIONS), -1 unknown. */
static int parser_kind(const char *name) {
    if (strcmp(name, "gumbo") == 0) return 1;
    if (strcmp(name, "libxml2") == 0) return LX_OPTIONS = LX_BASE, 0;
    if (strcmp(name, "libxml2-recover") == 0) return LX_OPTIONS = LX_BASE | HTML_PARSE_RECOVER, 0;
    return -1;
}

/* Bytes for gumbo: without a leading UTF-8 byte order mark, which the HTML decoding step removes and libxml2
 * skips itself, but gumbo (that takes decoded UTF-8) would keep as text. */
static const char *g_bytes(const char *data, size_t *len) {
    if (*len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0) return *len -= 3, data + 3;
    return data;
}

static int x_is_text(const xmlNode *n) { return n->type == XML_TEXT_NODE || n->type == XML_CDATA_SECTION_NODE; }

static void x_list(Buf *b, const xmlNode *first, int depth);

static void x_element(Buf *b, const xmlNode *node, int depth) {
    buf_indent(b, depth);
    buf_str(b, "<");
    buf_str(b, (const char *)node->name);
    buf_str(b, ">\n");
    size_t n = 0;
    for (const xmlAttr *a = node->properties; a; a = a->next) n++;
    Attr *attrs = calloc(n + 1, sizeof *attrs);
    size_t i = 0;
    for (const xmlAttr *a = node->properties; a; a = a->next, i++) {
        xmlChar *value = xmlNodeGetContent((const xmlNode *)a);
        attrs[i].name = strdup((const char *)a->name);
        attrs[i].value = strdup(value ? (const char *)value : "");
        xmlFree(value);
    }
    dump_attrs(b, attrs, n, depth + 1);
    x_list(b, node->children, depth + 1);
}

static void x_list(Buf *b, const xmlNode *first, int depth) {
    Buf text = {0};
    int pending = 0;
    for (const xmlNode *c = first; c; c = c->next) {
        if (x_is_text(c)) {
            if (c->content) buf_str(&text, (const char *)c->content);
            pending = 1;
            continue;
        }
        if (pending) {
            dump_text(b, &text, depth);
            text.len = 0;
            pending = 0;
        }
        switch (c->type) {
        case XML_ELEMENT_NODE:
            x_element(b, c, depth);
            break;
        case XML_COMMENT_NODE:
            dump_comment(b, (const char *)c->content, depth);
            break;
        case XML_DTD_NODE: {
            const xmlDtd *dtd = (const xmlDtd *)c;
            dump_doctype(b, (const char *)dtd->name, (const char *)dtd->ExternalID, (const char *)dtd->SystemID);
            break;
        }
        case XML_PI_NODE: /* HTML5 makes "<?x ...>" a comment; libxml2 keeps a processing instruction */
            buf_indent(b, depth);
            buf_str(b, "<?");
            buf_str(b, (const char *)c->name);
            buf_str(b, " ");
            buf_str(b, c->content ? (const char *)c->content : "");
            buf_str(b, ">\n");
            break;
        default:
            break;
        }
    }
    if (pending) dump_text(b, &text, depth);
    free(text.data);
}

/* A fragment in libxml2: xmlParseInNodeContext under a context element of an otherwise empty HTML document
 * (html > body > context; html or html > head for those contexts). Foreign contexts ("svg desc") use the local
 * name: libxml2's HTML parser has no namespaces. */
static void x_fragment(Buf *b, const char *context, const char *data, size_t len) {
    const char *name = context;
    if (strncmp(context, "svg ", 4) == 0) name = context + 4;
    if (strncmp(context, "math ", 5) == 0) name = context + 5;
    htmlDocPtr doc = htmlNewDocNoDtD(NULL, NULL);
    doc->encoding = xmlStrdup((const xmlChar *)"UTF-8");
    xmlNodePtr html = xmlNewDocNode(doc, NULL, (const xmlChar *)"html", NULL);
    xmlDocSetRootElement(doc, html);
    xmlNodePtr ctx = html;
    if (strcmp(name, "head") == 0) {
        ctx = xmlNewChild(html, NULL, (const xmlChar *)"head", NULL);
    } else if (strcmp(name, "html") != 0) {
        xmlNodePtr body = xmlNewChild(html, NULL, (const xmlChar *)"body", NULL);
        ctx = strcmp(name, "body") == 0 ? body : xmlNewChild(body, NULL, (const xmlChar *)name, NULL);
    }
    xmlNodePtr list = NULL;
    if (len > 0) xmlParseInNodeContext(ctx, data, (int)len, LX_OPTIONS, &list);
    x_list(b, list, 0);
    xmlFreeNodeList(list);
    xmlFreeDoc(doc);
}

static int x_tree(Buf *b, const char *context, const char *data, size_t len) {
    if (context) {
        x_fragment(b, context, data, len);
        return 1;
    }
    htmlDocPtr doc = htmlReadMemory(data, (int)len, NULL, "UTF-8", LX_OPTIONS);
    if (doc) x_list(b, doc->children, 0);
    xmlFreeDoc(doc);
    return 1;
}

/* ----------------------------------------------------------------------------------------------- tree mode */
static int tree_mode(const char *parser) {
    int gumbo = parser_kind(parser);
    if (gumbo < 0) return fprintf(stderr, "unknown parser %s\n", parser), 2;
    char line[1024];
    while (fgets(line, sizeof line, stdin)) {
        char *tab = strchr(line, '\t');
        if (!tab) {
            fprintf(stderr, "bad record header: %s", line);
            return 1;
        }
        *tab = 0;
        size_t len = strtoul(tab + 1, NULL, 10);
        char *data = malloc(len + 1);
        if (fread(data, 1, len, stdin) != len) {
            fprintf(stderr, "short record\n");
            return 1;
        }
        data[len] = 0;
        const char *context = strcmp(line, "-") == 0 ? NULL : line;
        Buf b = {0};
        buf_str(&b, "");
        int ok = gumbo ? g_tree(&b, context, data, len) : x_tree(&b, context, data, len);
        printf("%s\t%zu\n", ok ? "ok" : "skipped", b.len);
        fwrite(b.data, 1, b.len, stdout);
        free(b.data);
        free(data);
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------------- speed mode */
typedef struct {
    char *data;
    size_t len;
} File;

static File read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    Buf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) buf_add(&b, chunk, n);
    fclose(f);
    if (!b.data) buf_str(&b, "");
    return (File){b.data, b.len};
}

static void sax_start(void *ctx, const xmlChar *name, const xmlChar **atts) { (void)ctx, (void)name, (void)atts; }
static void sax_end(void *ctx, const xmlChar *name) { (void)ctx, (void)name; }
static void sax_chars(void *ctx, const xmlChar *ch, int len) { (void)ctx, (void)ch, (void)len; }
static void sax_comment(void *ctx, const xmlChar *value) { (void)ctx, (void)value; }

static void parse_gumbo(const File *f) {
    size_t len = f->len;
    const char *data = g_bytes(f->data, &len);
    GumboOutput *out = gumbo_parse_with_options(&kGumboDefaultOptions, data, len);
    gumbo_destroy_output(&kGumboDefaultOptions, out);
}

static void parse_libxml2_tree(const File *f) {
    xmlFreeDoc(htmlReadMemory(f->data, (int)f->len, NULL, "UTF-8", LX_OPTIONS));
}

static void parse_libxml2_sax(const File *f);

static void parse_libxml2_sax_recover(const File *f) {
    LX_OPTIONS = LX_BASE | HTML_PARSE_RECOVER;
    parse_libxml2_sax(f);
    LX_OPTIONS = LX_BASE;
}

static void parse_libxml2_sax(const File *f) {
    htmlSAXHandler sax;
    memset(&sax, 0, sizeof sax);
    sax.startElement = sax_start;
    sax.endElement = sax_end;
    sax.characters = sax_chars;
    sax.ignorableWhitespace = sax_chars;
    sax.cdataBlock = sax_chars;
    sax.comment = sax_comment;
    /* htmlCtxtReadMemory with "UTF-8", as htmlReadMemory is called: the given encoding also overrides a <meta>
     * charset (qq declares gb2312 but is UTF-8), which xmlSwitchEncoding on a fresh context would not */
    htmlParserCtxtPtr ctxt = htmlNewParserCtxt();
    if (!ctxt) return;
    htmlSAXHandler *own = (htmlSAXHandler *)ctxt->sax;
    ctxt->sax = &sax;
    xmlDocPtr doc = htmlCtxtReadMemory(ctxt, f->data, (int)f->len, NULL, "UTF-8", LX_OPTIONS);
    if (doc) xmlFreeDoc(doc);
    ctxt->sax = own;
    htmlFreeParserCtxt(ctxt);
}

static double seconds(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int speed_mode(int runs, int repeat, int nfiles, char **paths) {
    File *files = calloc((size_t)nfiles, sizeof *files);
    size_t total = 0;
    for (int i = 0; i < nfiles; i++) {
        files[i] = read_file(paths[i]);
        total += files[i].len;
    }
    struct {
        const char *name;
        void (*parse)(const File *);
    } parsers[] = {{"gumbo", parse_gumbo}, {"libxml2-tree", parse_libxml2_tree}, {"libxml2-sax", parse_libxml2_sax},
                   {"libxml2-sax-recover", parse_libxml2_sax_recover}};
    for (size_t p = 0; p < sizeof parsers / sizeof *parsers; p++) {
        for (int i = 0; i < nfiles; i++) parsers[p].parse(&files[i]); /* warm-up */
        for (int r = 0; r < runs; r++) {
            double w0 = seconds(CLOCK_MONOTONIC), c0 = seconds(CLOCK_PROCESS_CPUTIME_ID);
            for (int k = 0; k < repeat; k++)
                for (int i = 0; i < nfiles; i++) parsers[p].parse(&files[i]);
            double w1 = seconds(CLOCK_MONOTONIC), c1 = seconds(CLOCK_PROCESS_CPUTIME_ID);
            printf("%s\t%zu\t%.6f\t%.6f\n", parsers[p].name, total * (size_t)repeat, w1 - w0, c1 - c0);
            fflush(stdout);
        }
    }
    return 0;
}

/* -------------------------------------------------------------------------------------------- extract mode */
static void put_escaped(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '\\') fputs("\\\\", stdout);
        else if (c == '\n') fputs("\\n", stdout);
        else if (c == '\t') fputs("\\t", stdout);
        else if (c == '\r') fputs("\\r", stdout);
        else putchar(c);
    }
}

static void put_field(char kind, const char *value) {
    putchar(kind);
    if (!value) {
        puts("-");
        return;
    }
    putchar('\t');
    put_escaped(value, strlen(value));
    putchar('\n');
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

/* The visible words: the text buffer gets a space at every element boundary, then is split on ASCII whitespace. */
static void put_words(const Buf *text) {
    fputs("W\t", stdout);
    int first = 1;
    size_t i = 0;
    while (i < text->len) {
        while (i < text->len && is_space(text->data[i])) i++;
        size_t start = i;
        while (i < text->len && !is_space(text->data[i])) i++;
        if (i > start) {
            if (!first) putchar(' ');
            put_escaped(text->data + start, i - start);
            first = 0;
        }
    }
    putchar('\n');
}

typedef struct {
    Buf title;
    int has_title;
    Buf text;
    Buf hrefs; /* escaped "A\t...\n" lines */
} Extract;

static void add_href(Extract *e, const char *href) {
    Buf *b = &e->hrefs;
    buf_str(b, "A\t");
    for (const char *p = href; *p; p++) {
        char c = *p;
        if (c == '\\') buf_str(b, "\\\\");
        else if (c == '\n') buf_str(b, "\\n");
        else if (c == '\t') buf_str(b, "\\t");
        else if (c == '\r') buf_str(b, "\\r");
        else buf_add(b, &c, 1);
    }
    buf_str(b, "\n");
}

static void g_walk(Extract *e, const GumboNode *node) {
    if (g_is_text(node)) {
        buf_str(&e->text, node->v.text.text);
        return;
    }
    if (node->type != GUMBO_NODE_ELEMENT && node->type != GUMBO_NODE_TEMPLATE) return;
    const GumboElement *el = &node->v.element;
    if (el->tag == GUMBO_TAG_SCRIPT || el->tag == GUMBO_TAG_STYLE) return;
    if (el->tag == GUMBO_TAG_TITLE && el->tag_namespace == GUMBO_NAMESPACE_HTML && !e->has_title) {
        e->has_title = 1;
        buf_str(&e->title, "");
        for (unsigned i = 0; i < el->children.length; i++) {
            const GumboNode *c = el->children.data[i];
            if (g_is_text(c)) buf_str(&e->title, c->v.text.text);
        }
    }
    if (el->tag == GUMBO_TAG_A && el->tag_namespace == GUMBO_NAMESPACE_HTML) {
        const GumboAttribute *href = gumbo_get_attribute(&el->attributes, "href");
        if (href) add_href(e, href->value);
    }
    buf_str(&e->text, " ");
    for (unsigned i = 0; i < el->children.length; i++) g_walk(e, el->children.data[i]);
    buf_str(&e->text, " ");
}

static void x_walk(Extract *e, const xmlNode *node) {
    for (const xmlNode *c = node; c; c = c->next) {
        if (x_is_text(c)) {
            if (c->content) buf_str(&e->text, (const char *)c->content);
            continue;
        }
        if (c->type != XML_ELEMENT_NODE) continue;
        const char *name = (const char *)c->name;
        if (strcmp(name, "script") == 0 || strcmp(name, "style") == 0) continue;
        if (strcmp(name, "title") == 0 && !e->has_title) {
            e->has_title = 1;
            buf_str(&e->title, "");
            for (const xmlNode *t = c->children; t; t = t->next)
                if (x_is_text(t) && t->content) buf_str(&e->title, (const char *)t->content);
        }
        if (strcmp(name, "a") == 0) {
            xmlChar *href = xmlGetProp(c, (const xmlChar *)"href");
            if (href) add_href(e, (const char *)href);
            xmlFree(href);
        }
        buf_str(&e->text, " ");
        x_walk(e, c->children);
        buf_str(&e->text, " ");
    }
}

static int extract_mode(const char *parser, int nfiles, char **paths) {
    int gumbo = parser_kind(parser);
    if (gumbo < 0) return fprintf(stderr, "unknown parser %s\n", parser), 2;
    for (int i = 0; i < nfiles; i++) {
        File f = read_file(paths[i]);
        Extract e;
        memset(&e, 0, sizeof e);
        buf_str(&e.text, "");
        buf_str(&e.hrefs, "");
        char *lang = NULL;
        if (gumbo) {
            size_t len = f.len;
            const char *data = g_bytes(f.data, &len);
            GumboOutput *out = gumbo_parse_with_options(&kGumboDefaultOptions, data, len);
            const GumboAttribute *a = gumbo_get_attribute(&out->root->v.element.attributes, "lang");
            if (a) lang = strdup(a->value);
            for (unsigned k = 0; k < out->document->v.document.children.length; k++)
                g_walk(&e, out->document->v.document.children.data[k]);
            gumbo_destroy_output(&kGumboDefaultOptions, out);
        } else {
            htmlDocPtr doc = htmlReadMemory(f.data, (int)f.len, NULL, "UTF-8", LX_OPTIONS);
            xmlNodePtr root = doc ? xmlDocGetRootElement(doc) : NULL;
            if (root && strcmp((const char *)root->name, "html") == 0) {
                xmlChar *a = xmlGetProp(root, (const xmlChar *)"lang");
                if (a) lang = strdup((const char *)a);
                xmlFree(a);
            }
            if (doc) x_walk(&e, doc->children);
            xmlFreeDoc(doc);
        }
        put_field('P', paths[i]);
        put_field('T', e.has_title ? e.title.data : NULL);
        put_field('L', lang);
        fwrite(e.hrefs.data, 1, e.hrefs.len, stdout);
        put_words(&e.text);
        free(lang);
        free(e.title.data);
        free(e.text.data);
        free(e.hrefs.data);
        free(f.data);
    }
    return 0;
}

int main(int argc, char **argv) {
    LIBXML_TEST_VERSION
    if (argc >= 3 && strcmp(argv[1], "tree") == 0) return tree_mode(argv[2]);
    if (argc >= 5 && strcmp(argv[1], "speed") == 0) return speed_mode(atoi(argv[2]), atoi(argv[3]), argc - 4, argv + 4);
    if (argc >= 3 && strcmp(argv[1], "extract") == 0) return extract_mode(argv[2], argc - 3, argv + 3);
    fprintf(stderr, "usage: parser-choice tree gumbo|libxml2|libxml2-recover < records\n"
                    "       parser-choice speed RUNS REPEAT FILE...\n"
                    "       parser-choice extract gumbo|libxml2|libxml2-recover FILE...\n");
    return 2;
}
