#include <uchardet.h>
