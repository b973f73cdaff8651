/*
 * browser.h -- reports rendered by a real browser, for the tests labelled
 * `browser` (test_report.c, ...): Debian's chromium headless renders a
 * page to its DOM or a screenshot, and the DOM is searched by element id.
 * Include after cmocka.h.
 */
#ifndef AS_TESTS_BROWSER_H
#define AS_TESTS_BROWSER_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#define CHROMIUM "chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars"

/* The whole of a file, malloc'd. */
static inline char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
    text[n] = 0;
    fclose(f);
    return text;
}

/* The DOM chromium renders from the page at path, malloc'd. */
static inline char *render(const char *path)
{
    char cmd[2048], dom[600];
    snprintf(dom, sizeof dom, "%s.dom", path);
    snprintf(cmd, sizeof cmd, CHROMIUM " --dump-dom 'file://%s' >'%s' 2>/dev/null", path, dom);
    if (system(cmd) != 0)
        fail_msg("chromium could not render %s (is Debian's chromium installed? "
                 "scripts/setup.sh installs it)",
                 path);
    return slurp(dom);
}

/* Occurrences of needle in the element of the DOM whose id is id (up to
 * its closing </figure> or </table>). */
static inline int count_in(const char *dom, const char *id, const char *end, const char *needle)
{
    char attr[128];
    snprintf(attr, sizeof attr, "id=\"%s\"", id);
    const char *from = strstr(dom, attr);
    if (!from)
        return -1;
    const char *to = strstr(from, end);
    int n = 0;
    for (const char *p = strstr(from, needle); p && (!to || p < to); p = strstr(p + 1, needle))
        n++;
    return n;
}

/* A screenshot of the page at path, window width x height, into the test
 * folder as name; asserts it was written and is not blank-small. */
static inline void screenshot(const char *path, const char *name, int width, int height)
{
    char png[600], cmd[1400];
    snprintf(png, sizeof png, "%s/%s", AS_TEST_TMP_DIR, name);
    remove(png);
    snprintf(cmd, sizeof cmd,
             CHROMIUM " --window-size=%d,%d --screenshot='%s' 'file://%s' >/dev/null 2>&1", width,
             height, png, path);
    assert_int_equal(system(cmd), 0);
    struct stat s;
    assert_int_equal(stat(png, &s), 0);
    assert_true(s.st_size > 10000);
}

/* The DOM of a copy (at bad) of the page at good whose text `from` is
 * replaced by `to` (of the same length): a page with its data spoilt,
 * which must show the error, so that the checks can fail. */
static inline char *render_spoilt(const char *good, const char *bad, const char *from,
                                  const char *to)
{
    assert_int_equal(strlen(from), strlen(to));
    char *page = slurp(good);
    char *at = strstr(page, from);
    assert_non_null(at);
    memcpy(at, to, strlen(to));
    FILE *f = fopen(bad, "w");
    assert_non_null(f);
    fputs(page, f);
    fclose(f);
    free(page);
    return render(bad);
}

/* The data a report page embeds (its #report-data element), parsed. */
static inline json_t *page_data(const char *path)
{
    char *page = slurp(path);
    const char *open = "id=\"report-data\">";
    char *from = strstr(page, open);
    assert_non_null(from);
    from += strlen(open);
    char *to = strstr(from, "</script>");
    assert_non_null(to);
    *to = 0;
    json_error_t error;
    json_t *data = json_loads(from, 0, &error);
    if (!data)
        fail_msg("%s: the report's data does not parse: %s", path, error.text);
    free(page);
    return data;
}
#endif
