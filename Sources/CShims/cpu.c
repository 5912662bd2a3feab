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

int respdecode_cpu_has_avx2(void) {
#if defined(__x86_64__) || defined(__i386__)
    static int known = -1; /* races only write the same value */
    int value = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (value < 0) {
        __builtin_cpu_init();
        value = __builtin_cpu_supports("avx2") ? 1 : 0;
        __atomic_store_n(&known, value, __ATOMIC_RELAXED);
    }
    return value;
#else
    return 0;
#endif
}

int respdecode_cpu_has_avx512vbmi(void) {
#if defined(__x86_64__) || defined(__i386__)
    static int known = -1; /* races only write the same value */
    int value = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (value < 0) {
        __builtin_cpu_init();
        /* The compiler runtime counts a feature only when XGETBV says the OS saves the AVX-512 registers. */
        value = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                        __builtin_cpu_supports("avx512vbmi")
                    ? 1
                    : 0;
        __atomic_store_n(&known, value, __ATOMIC_RELAXED);
    }
    return value;
#else
    return 0;
#endif
}
