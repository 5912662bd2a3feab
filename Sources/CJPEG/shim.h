/* jpeglib.h needs size_t and FILE declared first. */
#include <stddef.h>
#include <stdio.h>
#include <jpeglib.h>
#include <jerror.h>
