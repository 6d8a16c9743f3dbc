/* Minimal assertion helpers shared by the C unit tests: each failed check prints
 * file:line and the expression, and the test's main returns check_summary(). */
#ifndef CEPHMARK_TESTS_CHECK_H
#define CEPHMARK_TESTS_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failures;
static int check_count;

#define CHECK(expr)                                                                                \
    do {                                                                                           \
        check_count++;                                                                             \
        if (!(expr)) {                                                                             \
            check_failures++;                                                                      \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #expr);              \
        }                                                                                          \
    } while (0)

#define CHECK_MSG(expr, ...)                                                                       \
    do {                                                                                           \
        check_count++;                                                                             \
        if (!(expr)) {                                                                             \
            check_failures++;                                                                      \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #expr);               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

#define CHECK_STR(got, want)                                                                       \
    CHECK_MSG(strcmp((got), (want)) == 0, "got \"%s\", want \"%s\"", (got), (want))

static inline int check_summary(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, check_count, check_failures);
    return check_failures ? 1 : 0;
}

#endif
