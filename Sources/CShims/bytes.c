/* memrchr is a GNU extension that Swift's Glibc module does not export. */
#define _GNU_SOURCE
#include <string.h>
#include "CShims.h"

const void *respdecode_memrchr(const void *bytes, int byte, size_t count) { return memrchr(bytes, byte, count); }
