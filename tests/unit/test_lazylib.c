/* Tests for runtime/lazylib.c: loading a library's functions into a typed table on first
 * use, the messages for a missing library or function, and the libcurl and librbd tables
 * that cephmark itself uses (not mapped until loaded, then callable). */
#include "check.h"
#include "curl_api.h"
#include "lazylib.h"
#include "rbd_api.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* A library that every process has: libc, through a table of two of its functions. */
#define LIBC_FUNCTIONS(X) X(strlen) X(memchr)
CM_LAZYLIB_TABLE(test_libc, LIBC_FUNCTIONS)
#define LIBC_SYMBOL(name) {#name, offsetof(struct test_libc_table, fn_##name)},
CM_LAZYLIB_DEFINE(test_libc, "libc.so.6", "libc6", LIBC_FUNCTIONS, LIBC_SYMBOL)

static bool mapped(const char *name)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4096];
    bool found = false;
    while (maps && !found && fgets(line, sizeof line, maps))
        found = strstr(line, name) != NULL;
    if (maps)
        fclose(maps);
    return found;
}

static void test_load(void)
{
    char error[256] = "";
    CHECK(test_libc_functions.fn_strlen == NULL);
    CHECK(cm_lazylib_load(&test_libc_lib, error, sizeof error) == 0);
    CHECK(test_libc_lib.loaded);
    CHECK(test_libc_functions.fn_strlen("lazy") == 4);
    CHECK(test_libc_functions.fn_memchr("abc", 'c', 3) != NULL);
    /* a second load is a no-op */
    CHECK(cm_lazylib_load(&test_libc_lib, error, sizeof error) == 0);
}

static void test_missing(void)
{
    char error[256] = "";
    struct test_libc_table table = {0};
    struct cm_lazylib missing = {
        "libcephmark-absent.so.7", "cephmark-absent", &table, test_libc_symbols, 2, false};
    CHECK(cm_lazylib_load(&missing, error, sizeof error) == -1);
    CHECK_MSG(strstr(error, "cannot load libcephmark-absent.so.7 (install the package "
                            "cephmark-absent)") != NULL,
              "%s", error);
    CHECK(!missing.loaded);

    static const struct cm_lazylib_symbol absent[] = {
        {"strlen", 0},
        {"cephmark_no_such_function", sizeof(void *)},
    };
    struct cm_lazylib old = {"libc.so.6", "libc6", &table, absent, 2, false};
    CHECK(cm_lazylib_load(&old, error, sizeof error) == -1);
    CHECK_MSG(strstr(error, "libc.so.6 has no function cephmark_no_such_function") != NULL, "%s",
              error);
    CHECK(!old.loaded);
}

/* cephmark's own tables: libcurl and librbd stay out of the process until asked for */
static void test_cephmark_libraries(void)
{
    char error[512] = "";
    CHECK(!mapped("libcurl.so"));
    CHECK(!mapped("librbd.so"));
    CHECK_MSG(cm_curl_load(error, sizeof error) == 0, "%s", error);
    CHECK(mapped("libcurl.so"));
    curl_version_info_data *info = curl_version_info(CURLVERSION_NOW);
    CHECK(info && info->version && info->version[0] >= '7');
    struct curl_slist *list = curl_slist_append(NULL, "X-Test: 1");
    CHECK(list && strcmp(list->data, "X-Test: 1") == 0);
    curl_slist_free_all(list);

    CHECK_MSG(cm_rbd_load(error, sizeof error) == 0, "%s", error);
    CHECK(mapped("librbd.so"));
    int major = 0, minor = 0, extra = 0;
    rbd_version(&major, &minor, &extra);
    CHECK(major >= 1);
}

int main(void)
{
    test_load();
    test_missing();
    test_cephmark_libraries();
    return check_summary("test_lazylib");
}
