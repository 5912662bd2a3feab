/* A signal handler may only call async-signal-safe functions, and Swift code is not known to be one: the handler
   here writes the signal's number to a pipe, which a Swift thread reads. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include "CShims.h"

static volatile int signal_pipe = -1;

static void forward_signal(int number) {
    int saved = errno;
    unsigned char byte = (unsigned char)number;
    if (signal_pipe >= 0) (void)!write(signal_pipe, &byte, 1);
    errno = saved;
}

int respdecode_forward_signals(int pipe_write_end) {
    signal_pipe = pipe_write_end;
    const int numbers[] = {SIGTERM, SIGINT, SIGUSR1};
    for (unsigned i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_handler = forward_signal;
        sigemptyset(&action.sa_mask);
        action.sa_flags = SA_RESTART;
        if (sigaction(numbers[i], &action, NULL) != 0) return -1;
    }
    return 0;
}
