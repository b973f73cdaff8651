/*
 * text_file.h -- a whole file as a NUL-terminated string, for the tests
 * that compare or edit file text.  Include after cmocka.h.
 */
#ifndef AS_TESTS_TEXT_FILE_H
#define AS_TESTS_TEXT_FILE_H

#include <stdlib.h>
#include <string.h>

#include "core/core.h"

/* The text of the file at path (malloc'd; free it), or NULL when it
 * cannot be read (st says why). */
static inline char *text_file_or_null(const char *path, as_status *st)
{
    size_t size;
    as_status_clear(st);
    uint8_t *bytes = as_read_file(path, &size, st);
    if (!bytes)
        return NULL;
    char *text = malloc(size + 1);
    assert_non_null(text);
    memcpy(text, bytes, size);
    text[size] = '\0';
    free(bytes);
    return text;
}

/* The text of the file at path (malloc'd; free it); fails the test when
 * the file cannot be read. */
static inline char *text_file(const char *path)
{
    as_status st;
    char *text = text_file_or_null(path, &st);
    if (!text)
        fail_msg("%s", st.message);
    return text;
}

#endif
