/* The process exit codes cephmark promises, shared by the C runtime and the stdlib. */
#ifndef CEPHMARK_EXITCODE_H
#define CEPHMARK_EXITCODE_H

enum cm_exit_code {
    CM_EXIT_OK = 0,            /* the benchmark ran and every op succeeded */
    CM_EXIT_FAILED_OPS = 1,    /* the benchmark ran but reported failed ops */
    CM_EXIT_USAGE = 2,         /* script error, bad input or configuration error */
    CM_EXIT_INTERRUPTED = 130, /* stopped by SIGINT (128 + 2, as shells report it) */
};

#endif
