/* status.c -- the as_status error channel (see core.h). */
#include "core.h"

#include <stdio.h>

void as_status_clear(as_status *st)
{
    if (!st)
        return;
    st->code = AS_OK;
    st->message[0] = '\0';
}

as_status *as_status_or(as_status *st, as_status *spare)
{
    if (st)
        return st;
    as_status_clear(spare);
    return spare;
}

as_code as_fail(as_status *st, as_code code, const char *fmt, ...)
{
    if (!st || st->code != AS_OK)
        return st ? st->code : code;
    st->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->message, sizeof st->message, fmt, ap);
    va_end(ap);
    return code;
}

const char *as_code_name(as_code code)
{
    switch (code) {
    case AS_OK:
        return "ok";
    case AS_EINVAL:
        return "invalid input";
    case AS_ENOMEM:
        return "out of memory";
    case AS_EIO:
        return "i/o error";
    case AS_EINTERNAL:
        return "internal error";
    }
    return "unknown status";
}
