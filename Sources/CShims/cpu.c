/* sched_getaffinity and CPU_COUNT are GNU extensions (a macro, for CPU_COUNT) that Swift's Glibc module does not
   export. */
#define _GNU_SOURCE
#include <sched.h>
#include <unistd.h>
#include "CShims.h"

int respdecode_usable_cpus(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int count = CPU_COUNT(&set);
        if (count > 0) return count;
    }
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? (int)online : 1;
}
