/* Shared libraries loaded on first use: libcurl (Swift/S3) and librbd (RBD) are opened with
 * dlopen when a scenario first needs them, not by the dynamic loader at every start.
 * Together they pull in about 35 more libraries (TLS, Kerberos, LDAP, cryptsetup, ...),
 * which doubled the CPU every cephmark process spent before its first op (about 20 ms
 * against 11 ms; docs/performance.md).
 *
 * A user describes the functions it calls in one list and declares a table of pointers,
 * each typed from the library's own header (so a wrong type is a compile error):
 *
 *     #define CM_FOO_FUNCTIONS(X) X(foo_open) X(foo_close)
 *     CM_LAZYLIB_TABLE(cm_foo, CM_FOO_FUNCTIONS)
 *     #define foo_open  (cm_foo_functions.fn_foo_open)
 *     #define foo_close (cm_foo_functions.fn_foo_close)
 *
 * so that call sites keep the library's names, and defines the table, its symbol list and
 * its struct cm_lazylib in one .c file:
 *
 *     #define FOO_SYMBOL(name) {#name, offsetof(struct cm_foo_table, fn_##name)},
 *     CM_LAZYLIB_DEFINE(cm_foo, "libfoo.so.1", "libfoo1", CM_FOO_FUNCTIONS, FOO_SYMBOL)
 *
 * cm_lazylib_load(&cm_foo_lib, ...) must succeed before the first call. */
#ifndef CEPHMARK_LAZYLIB_H
#define CEPHMARK_LAZYLIB_H

#include <stdbool.h>
#include <stddef.h>

struct cm_lazylib_symbol {
    const char *name;
    size_t offset; /* of the pointer in the library's table */
};

struct cm_lazylib {
    const char *soname;  /* e.g. "libcurl.so.4" */
    const char *package; /* the Debian package that provides it, for the error message */
    void *table;
    const struct cm_lazylib_symbol *symbols;
    size_t n_symbols;
    bool loaded;
};

/* Opens the library and fills its table, once; later calls return at once. 0, or -1 with
 * the reason (the library or one of its functions is missing) in error. Thread-safe. */
int cm_lazylib_load(struct cm_lazylib *lib, char *error, size_t error_size);

/* The table of typed pointers (fn_<name>, pasted so that the name is never expanded) and
 * the library descriptor, declared; must come before the names are mapped with #define. */
#define CM_LAZYLIB_FIELD(name) __typeof__(name) *fn_##name;
#define CM_LAZYLIB_TABLE(prefix, LIST)                                                             \
    struct prefix##_table {                                                                        \
        LIST(CM_LAZYLIB_FIELD)                                                                     \
    };                                                                                             \
    extern struct prefix##_table prefix##_functions;                                               \
    extern struct cm_lazylib prefix##_lib;

/* The table, its symbol list (SYMBOL turns a name into a struct cm_lazylib_symbol, with the
 * offset of fn_<name> in struct prefix##_table) and the descriptor, defined. */
#define CM_LAZYLIB_DEFINE(prefix, soname_, package_, LIST, SYMBOL)                                 \
    struct prefix##_table prefix##_functions;                                                      \
    static const struct cm_lazylib_symbol prefix##_symbols[] = {LIST(SYMBOL)};                     \
    struct cm_lazylib prefix##_lib = {                                                             \
        .soname = (soname_),                                                                       \
        .package = (package_),                                                                     \
        .table = &prefix##_functions,                                                              \
        .symbols = prefix##_symbols,                                                               \
        .n_symbols = sizeof prefix##_symbols / sizeof prefix##_symbols[0],                         \
    };

#endif
