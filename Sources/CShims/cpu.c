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

#include <sys/resource.h>
#include <sys/syscall.h>

int respdecode_lower_this_thread(int steps) {
    /* On Linux each thread has its own nice value, set through its thread id (setpriority's "process"). */
    pid_t thread = (pid_t)syscall(SYS_gettid);
    int current = getpriority(PRIO_PROCESS, (id_t)thread);
    return setpriority(PRIO_PROCESS, (id_t)thread, current + steps);
}
