/*
 * progress.c -- a progress bar on a terminal (silent otherwise), a
 * Ctrl-C handler that asks long runs to stop and keep what they found, and
 * the wall clock that long runs report their seconds by.
 */
#include "cli.h"

#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile int *interrupt_flag;

/* First Ctrl-C: raise the flag and let the run wind down; a second one
 * kills the program the usual way. */
static void on_interrupt(int signo)
{
    if (interrupt_flag)
        *interrupt_flag = 1;
    signal(signo, SIG_DFL);
}

void cli_catch_interrupt(volatile int *flag)
{
    interrupt_flag = flag;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
}

/* Monotonic, so that a clock adjustment never makes a run look negative. */
double cli_seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void cli_progress_init(cli_progress *p, const char *label)
{
    p->label = label;
    p->enabled = isatty(STDERR_FILENO) && cli_verbosity >= 0;
    p->last_percent = -1;
}

void cli_progress_update(cli_progress *p, int64_t done, int64_t total)
{
    if (!p->enabled || total <= 0)
        return;
    int percent = (int)(100 * done / total);
    if (percent == p->last_percent)
        return;
    p->last_percent = percent;
    enum { WIDTH = 30 };
    int filled = (int)(WIDTH * done / total);
    fprintf(stderr, "\r%s [%.*s%*s] %lld/%lld", p->label, filled, "##############################",
            WIDTH - filled, "", (long long)done, (long long)total);
    fflush(stderr);
}

void cli_progress_end(cli_progress *p)
{
    if (p->enabled && p->last_percent >= 0)
        fputs("\r\033[K", stderr);
    p->last_percent = -1;
}
