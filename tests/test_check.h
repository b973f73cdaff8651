/*
 * test_check.h -- two assertions the library's tests share: a call that
 * must succeed (failing with the library's own message, which names the
 * file, line and key), and two doubles equal to a relative 1e-9 (figures
 * the cost model computes in different but equivalent orders).  Uses
 * cmocka.
 */
#ifndef AS_TEST_CHECK_H
#define AS_TEST_CHECK_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "core/core.h"

/* Fail the test with st's message unless code is AS_OK. */
static inline void check(as_code code, const as_status *st)
{
    if (code != AS_OK)
        fail_msg("%s", st->message);
}

/* Fail unless x and y agree to 1e-9 of the larger magnitude. */
static inline void assert_close(double x, double y)
{
    if (fabs(x - y) > 1e-9 * fmax(fabs(x), fabs(y)))
        fail_msg("%.17g != %.17g", x, y);
}

#endif
