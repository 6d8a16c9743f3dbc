/* The `cephmark.sys` Lua module: the operating-system primitives the stdlib needs to run a
 * local cluster and to manage results (processes, files, ports, clocks, environment), plus
 * the operator-facing error helper. Kept small; benchmark I/O lives in the target modules. */
#include "exitcode.h"
#include "interrupt.h"
#include "lstate.h"
#include "registry.h"
#include "units.h"

#include <dirent.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int push_failure(lua_State *L, const char *what, int err)
{
    lua_pushnil(L);
    lua_pushfstring(L, "%s: %s", what, strerror(err));
    lua_pushinteger(L, -err);
    return 3;
}

/* Collects a Lua array of strings into a NULL-terminated argv, allocated as userdata so
 * that a Lua error cannot leak it. */
static char **check_argv(lua_State *L, int index)
{
    luaL_checktype(L, index, LUA_TTABLE);
    lua_Integer n = (lua_Integer)lua_rawlen(L, index);
    if (n < 1)
        luaL_argerror(L, index, "expected a non-empty list of strings (program and arguments)");
    char **argv = lua_newuserdatauv(L, sizeof(char *) * (size_t)(n + 1), 0);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L, index, i);
        if (!lua_isstring(L, -1))
            luaL_error(L, "argument list item %d is a %s, expected a string", (int)i,
                       luaL_typename(L, -1));
        argv[i - 1] = (char *)lua_tostring(L, -1);
        lua_pop(L, 1); /* the table keeps the string alive */
    }
    argv[n] = NULL;
    return argv;
}

static const char *opt_field_string(lua_State *L, int table, const char *key)
{
    if (lua_type(L, table) != LUA_TTABLE)
        return NULL;
    lua_getfield(L, table, key);
    const char *value = lua_tostring(L, -1);
    lua_pop(L, 1);
    return value;
}

/* In the child: route fd `target` to `path` (appending) or /dev/null. Async-signal-safe. */
static void child_redirect(int target, const char *path, int flags)
{
    int fd = open(path ? path : "/dev/null", flags, 0644);
    if (fd >= 0 && fd != target) {
        dup2(fd, target);
        close(fd);
    }
}

/* sys.spawn(argv [, {stdout=PATH, stderr=PATH}]) -> pid | nil, message, code
 * Starts a long-running process (a daemon kept in the foreground) in its own session, so
 * it outlives this process and a terminal's SIGINT does not reach it. Returns once the
 * program has been executed: a CLOEXEC pipe reports an exec failure (its errno) instead. */
static int sys_spawn(lua_State *L)
{
    char **argv = check_argv(L, 1);
    const char *out = opt_field_string(L, 2, "stdout");
    const char *err = opt_field_string(L, 2, "stderr");
    int report[2];
    if (pipe2(report, O_CLOEXEC) < 0)
        return push_failure(L, "pipe", errno);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(report[0]);
        close(report[1]);
        return push_failure(L, "fork", e);
    }
    if (pid == 0) {
        setsid();
        child_redirect(STDIN_FILENO, NULL, O_RDONLY);
        child_redirect(STDOUT_FILENO, out, O_WRONLY | O_CREAT | O_APPEND);
        child_redirect(STDERR_FILENO, err ? err : out, O_WRONLY | O_CREAT | O_APPEND);
        /* daemons inherit nothing else of ours (the report pipe closes on exec) */
        for (int fd = 3; fd < 1024; fd++)
            if (fd != report[1])
                close(fd);
        signal(SIGINT, SIG_DFL);
        signal(SIGPIPE, SIG_DFL); /* ignored by cephmark; an ignored signal survives exec */
        execvp(argv[0], argv);
        int e = errno;
        ssize_t unused = write(report[1], &e, sizeof e);
        (void)unused;
        _exit(127);
    }
    close(report[1]);
    int exec_errno = 0;
    ssize_t got;
    while ((got = read(report[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR)
        ;
    close(report[0]);
    if (got == (ssize_t)sizeof exec_errno) {
        waitpid(pid, NULL, 0);
        return push_failure(L, lua_pushfstring(L, "exec %s", argv[0]), exec_errno);
    }
    lua_pushinteger(L, pid);
    return 1;
}

static double monotonic_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Makes the three pipes of sys.run (stdin, stdout, stderr of the child); on failure closes
 * those already made and returns the errno. */
static int run_pipes_open(int pipes[3][2])
{
    for (int made = 0; made < 3; made++) {
        if (pipe2(pipes[made], O_CLOEXEC) < 0) {
            int e = errno;
            for (int i = 0; i < made; i++) {
                close(pipes[i][0]);
                close(pipes[i][1]);
            }
            return e;
        }
    }
    return 0;
}

/* In the child of sys.run: the pipes become its standard streams and it runs argv. */
static _Noreturn void run_child_exec(char **argv, int in_fd, int out_fd, int err_fd)
{
    dup2(in_fd, STDIN_FILENO);
    dup2(out_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
    signal(SIGINT, SIG_DFL);
    signal(SIGPIPE, SIG_DFL); /* ignored by cephmark; an ignored signal survives exec */
    /* NOLINTNEXTLINE(clang-analyzer-core.NonNullParamChecker): check_argv raised if empty */
    execvp(argv[0], argv);
    _exit(127);
}

/* Reads the child's stdout and stderr until both close, the timeout passes or an interrupt
 * asks to stop (then the child is killed). Output arrives interleaved from two pipes: the
 * pieces go into the table at `pieces`, stdout at negative keys and stderr at positive ones,
 * to be joined per side at the end. Closes both descriptors; returns whether it timed out. */
static int run_collect_output(lua_State *L, pid_t pid, int out_fd, int err_fd, double timeout,
                              int pieces)
{
    int n_out_pieces = 0, n_err_pieces = 0;
    struct pollfd fds[2] = {{.fd = out_fd, .events = POLLIN}, {.fd = err_fd, .events = POLLIN}};
    int open_fds = 2;
    int timed_out = 0;
    double deadline = monotonic_seconds() + timeout;
    char chunk[65536];
    while (open_fds > 0) {
        double left = deadline - monotonic_seconds();
        if (left <= 0 || cm_interrupt_should_stop()) {
            timed_out = left <= 0;
            kill(pid, SIGKILL);
            break;
        }
        int ready = poll(fds, 2, (int)(left * 1000) + 1);
        if (ready < 0 && errno != EINTR)
            break;
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            ssize_t got = read(fds[i].fd, chunk, sizeof chunk);
            if (got <= 0) {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_fds--;
            } else {
                lua_pushlstring(L, chunk, (size_t)got);
                lua_rawseti(L, pieces, i == 0 ? -(++n_out_pieces) : ++n_err_pieces);
            }
        }
    }
    for (int i = 0; i < 2; i++)
        if (fds[i].fd >= 0)
            close(fds[i].fd);
    return timed_out;
}

/* Pushes the concatenation of pieces[step], pieces[2 * step], ... up to the first nil. */
static void run_push_joined(lua_State *L, int pieces, int step)
{
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = step;; i += step) {
        if (lua_rawgeti(L, pieces, i) == LUA_TNIL) {
            lua_pop(L, 1);
            break;
        }
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
}

/* sys.run(argv [, {timeout=SECONDS, stdin=STRING}]) -> {status=N, stdout=S, stderr=S,
 * timed_out=BOOL} | nil, message, code
 * Runs a short command to completion, capturing its output; on timeout the child is
 * killed, so a wedged `ceph` command never hangs cephmark. */
static int sys_run(lua_State *L)
{
    char **argv = check_argv(L, 1);
    double timeout = 60;
    size_t input_len = 0;
    const char *input = NULL;
    if (lua_type(L, 2) == LUA_TTABLE) {
        lua_getfield(L, 2, "timeout");
        timeout = luaL_optnumber(L, -1, timeout);
        lua_getfield(L, 2, "stdin");
        input = lua_tolstring(L, -1, &input_len);
        lua_pop(L, 2);
    }
    enum { RUN_IN, RUN_OUT, RUN_ERR };
    int pipes[3][2];
    int e = run_pipes_open(pipes);
    if (e)
        return push_failure(L, "pipe", e);
    pid_t pid = fork();
    if (pid < 0) {
        e = errno;
        for (int i = 0; i < 2; i++) {
            close(pipes[RUN_OUT][i]);
            close(pipes[RUN_ERR][i]);
            close(pipes[RUN_IN][i]);
        }
        return push_failure(L, "fork", e);
    }
    if (pid == 0)
        run_child_exec(argv, pipes[RUN_IN][0], pipes[RUN_OUT][1], pipes[RUN_ERR][1]);
    close(pipes[RUN_OUT][1]);
    close(pipes[RUN_ERR][1]);
    close(pipes[RUN_IN][0]);
    if (input_len > 0) {
        /* inputs are small (keys, JSON); a pipe buffer holds them */
        ssize_t unused = write(pipes[RUN_IN][1], input, input_len);
        (void)unused;
    }
    close(pipes[RUN_IN][1]);

    lua_newtable(L);
    int pieces = lua_gettop(L);
    int timed_out =
        run_collect_output(L, pid, pipes[RUN_OUT][0], pipes[RUN_ERR][0], timeout, pieces);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;

    lua_createtable(L, 0, 5);
    int result = lua_gettop(L);
    run_push_joined(L, pieces, -1);
    lua_setfield(L, result, "stdout");
    run_push_joined(L, pieces, 1);
    lua_setfield(L, result, "stderr");
    if (WIFEXITED(status))
        lua_pushinteger(L, WEXITSTATUS(status));
    else
        lua_pushinteger(L, 128 + WTERMSIG(status));
    lua_setfield(L, result, "status");
    lua_pushboolean(L, timed_out);
    lua_setfield(L, result, "timed_out");
    cm_interrupt_check(L);
    return 1;
}

/* sys.alive(pid) -> bool: the process exists and is not a zombie. */
static int sys_alive(lua_State *L)
{
    lua_Integer pid = luaL_checkinteger(L, 1);
    if (pid <= 0 || kill((pid_t)pid, 0) != 0) {
        lua_pushboolean(L, errno == EPERM);
        return 1;
    }
    char path[64], state = '?';
    snprintf(path, sizeof path, "/proc/%lld/stat", (long long)pid);
    FILE *f = fopen(path, "r");
    if (f) {
        /* the state letter follows the command name in parentheses, which may hold spaces */
        char line[512];
        if (fgets(line, sizeof line, f)) {
            char *close_paren = strrchr(line, ')');
            if (close_paren && close_paren[1] == ' ')
                state = close_paren[2];
        }
        fclose(f);
    }
    lua_pushboolean(L, state != 'Z' && state != 'X');
    return 1;
}

/* sys.kill(pid [, signal name or number]) -> true | nil, message, code */
static int sys_kill(lua_State *L)
{
    lua_Integer pid = luaL_checkinteger(L, 1);
    int signo = SIGTERM;
    if (lua_type(L, 2) == LUA_TSTRING) {
        static const char *const names[] = {"TERM", "KILL", "INT", "STOP", "CONT", "HUP", NULL};
        static const int numbers[] = {SIGTERM, SIGKILL, SIGINT, SIGSTOP, SIGCONT, SIGHUP};
        signo = numbers[luaL_checkoption(L, 2, NULL, names)];
    } else if (!lua_isnoneornil(L, 2)) {
        signo = (int)luaL_checkinteger(L, 2);
    }
    if (pid <= 0)
        return luaL_argerror(L, 1, "expected a positive pid");
    if (kill((pid_t)pid, signo) != 0)
        return push_failure(L, "kill", errno);
    lua_pushboolean(L, 1);
    return 1;
}

/* sys.reap() -> number of exited children collected (for daemons this process started). */
static int sys_reap(lua_State *L)
{
    int reaped = 0;
    while (waitpid(-1, NULL, WNOHANG) > 0)
        reaped++;
    lua_pushinteger(L, reaped);
    return 1;
}

/* sys.sleep(seconds [, {after_interrupt=true}]): returns early and raises "interrupted"
 * on SIGINT; with after_interrupt, it sleeps regardless (for cleanup that must wait, e.g.
 * for daemons to exit after an interrupted run). */
static int sys_sleep(lua_State *L)
{
    double seconds = luaL_checknumber(L, 1);
    int after_interrupt = 0;
    if (lua_istable(L, 2)) {
        lua_getfield(L, 2, "after_interrupt");
        after_interrupt = lua_toboolean(L, -1);
        lua_pop(L, 1);
    }
    if (after_interrupt) {
        struct timespec ts = {.tv_sec = (time_t)seconds,
                              .tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9)};
        while (seconds > 0 && nanosleep(&ts, &ts) < 0 && errno == EINTR)
            ;
        return 0;
    }
    if (seconds > 0)
        cm_interrupt_sleep(seconds);
    cm_interrupt_check(L);
    return 0;
}

static int sys_monotonic(lua_State *L)
{
    lua_pushnumber(L, monotonic_seconds());
    return 1;
}

/* sys.utc_timestamp() -> "20261130T050000Z", for result folder names */
static int sys_utc_timestamp(lua_State *L)
{
    time_t now = time(NULL);
    struct tm tm;
    char text[32];
    /* 0: the text did not fit (or is empty), and the buffer's contents are unspecified */
    if (gmtime_r(&now, &tm) == NULL ||
        strftime(text, sizeof text, luaL_optstring(L, 1, "%Y%m%dT%H%M%SZ"), &tm) == 0)
        text[0] = '\0';
    lua_pushstring(L, text);
    return 1;
}

/* sys.free_port() -> a TCP port on 127.0.0.1 that was free a moment ago. */
static int sys_free_port(lua_State *L)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return push_failure(L, "socket", errno);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof addr;
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) < 0 ||
        getsockname(fd, (struct sockaddr *)&addr, &len) < 0) {
        int e = errno;
        close(fd);
        return push_failure(L, "bind", e);
    }
    close(fd);
    lua_pushinteger(L, ntohs(addr.sin_port));
    return 1;
}

/* sys.realtime() -> seconds since the epoch (CLOCK_REALTIME, sub-microsecond), for
 * comparing events across processes and hosts; intervals use sys.monotonic(). */
static int sys_realtime(lua_State *L)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    lua_pushnumber(L, (double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
    return 1;
}

/* sys.port_open(port [, host]) -> bool: something accepts TCP connections there. */
static int sys_port_open(lua_State *L)
{
    lua_Integer port = luaL_checkinteger(L, 1);
    const char *host = luaL_optstring(L, 2, "127.0.0.1");
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, host, &addr.sin_addr) != 1)
        return luaL_argerror(L, 2, "an IPv4 address");
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return push_failure(L, "socket", errno);
    int ok = connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0;
    close(fd);
    lua_pushboolean(L, ok);
    return 1;
}

static int mkdir_parents(char *path, mode_t mode)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        int rc = mkdir(path, mode);
        *p = '/';
        if (rc < 0 && errno != EEXIST)
            return -1;
    }
    if (mkdir(path, mode) < 0 && errno != EEXIST)
        return -1;
    return 0;
}

/* sys.mkdir(path [, mode]) creates the folder and its parents -> true | nil, msg, code;
 * a folder that exists already is fine, anything else of that name is refused. */
static int sys_mkdir(lua_State *L)
{
    size_t len;
    const char *path = luaL_checklstring(L, 1, &len);
    mode_t mode = (mode_t)luaL_optinteger(L, 2, 0755);
    if (len == 0 || len >= PATH_MAX)
        return luaL_argerror(L, 1, "expected a folder path");
    char copy[PATH_MAX];
    memcpy(copy, path, len + 1);
    if (mkdir_parents(copy, mode) < 0)
        return push_failure(L, lua_pushfstring(L, "mkdir %s", path), errno);
    /* mkdir's EEXIST also covers a file of that name, which is no folder to write into */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISDIR(st.st_mode))
        return push_failure(L, lua_pushfstring(L, "mkdir %s", path), ENOTDIR);
    lua_pushboolean(L, 1);
    return 1;
}

static int remove_tree(int dirfd, const char *name)
{
    struct stat st;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return errno == ENOENT ? 0 : -1;
    if (!S_ISDIR(st.st_mode))
        return unlinkat(dirfd, name, 0);
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    DIR *dir = fdopendir(fd);
    if (!dir) {
        close(fd);
        return -1;
    }
    struct dirent *entry;
    int rc = 0;
    while ((entry = readdir(dir)) != NULL) {
        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
            continue;
        if (remove_tree(fd, entry->d_name) < 0)
            rc = -1;
    }
    closedir(dir);
    if (rc == 0)
        rc = unlinkat(dirfd, name, AT_REMOVEDIR);
    return rc;
}

/* sys.remove_tree(path) removes a folder and its contents without following symlinks.
 * Refuses "/" and relative paths with no folder part, as a guard against accidents. */
static int sys_remove_tree(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    if (path[0] == '\0' || strcmp(path, "/") == 0 || strcmp(path, ".") == 0 ||
        strcmp(path, "..") == 0)
        return luaL_argerror(L, 1, "refusing to remove this path");
    if (remove_tree(AT_FDCWD, path) < 0)
        return push_failure(L, lua_pushfstring(L, "remove %s", path), errno);
    lua_pushboolean(L, 1);
    return 1;
}

/* sys.stat(path) -> {type="file"|"dir"|"other", size=N, mode=N} | nil */
static int sys_stat(lua_State *L)
{
    struct stat st;
    if (stat(luaL_checkstring(L, 1), &st) < 0) {
        lua_pushnil(L);
        return 1;
    }
    lua_createtable(L, 0, 3);
    lua_pushstring(L, S_ISREG(st.st_mode) ? "file" : S_ISDIR(st.st_mode) ? "dir" : "other");
    lua_setfield(L, -2, "type");
    lua_pushinteger(L, (lua_Integer)st.st_size);
    lua_setfield(L, -2, "size");
    lua_pushinteger(L, (lua_Integer)(st.st_mode & 07777));
    lua_setfield(L, -2, "mode");
    return 1;
}

/* ---- files cephmark writes ------------------------------------------------------------- */

/* The files the running command reads (its script, --params file, the results it reports
 * on), keyed "dev:ino" in a registry table, so that no write can replace one of them,
 * whatever path (symlink, hard link, "./x", "../d/x") names it. */
static const char inputs_key[] = "cephmark.inputs";

static void push_inputs(lua_State *L)
{
    if (lua_getfield(L, LUA_REGISTRYINDEX, inputs_key) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, LUA_REGISTRYINDEX, inputs_key);
    }
}

static const char *file_key(lua_State *L, const struct stat *st)
{
    return lua_pushfstring(L, "%I:%I", (lua_Integer)st->st_dev, (lua_Integer)st->st_ino);
}

/* sys.note_input(path) -> true, or false when there is no such file: from now on, no file
 * this process writes may replace it. */
static int sys_note_input(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    struct stat st;
    if (stat(path, &st) < 0) {
        lua_pushboolean(L, 0);
        return 1;
    }
    push_inputs(L);
    file_key(L, &st);
    lua_pushvalue(L, 1);
    lua_rawset(L, -3);
    lua_pushboolean(L, 1);
    return 1;
}

static const char *file_kind(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISLNK(mode))
        return "a symbolic link";
    return "not a regular file";
}

/* Why cephmark must not replace `path`, pushed as a phrase ("it is a character device, not
 * a regular file"), or NULL (nothing pushed) when it may: the path does not
 * exist yet, or is a regular file that is none of the command's inputs. A symbolic link
 * is refused rather than followed or replaced: following it writes wherever it points
 * (the rename would then land on the link's target folder), replacing it silently breaks
 * the link the operator made. */
static const char *target_refusal(lua_State *L, const char *path)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return NULL; /* a new file, or a path the write itself will fail on */
    if (S_ISLNK(st.st_mode)) {
        char to[PATH_MAX];
        ssize_t n = readlink(path, to, sizeof to - 1);
        to[n > 0 ? n : 0] = '\0';
        return lua_pushfstring(L, "it is a symbolic link (to %s); give the path of a regular file",
                               to);
    }
    if (!S_ISREG(st.st_mode))
        return lua_pushfstring(L, "it is %s, not a regular file", file_kind(st.st_mode));
    push_inputs(L);
    file_key(L, &st);
    lua_rawget(L, -2);
    const char *input = lua_tostring(L, -1);
    if (input == NULL) {
        lua_pop(L, 2);
        return NULL;
    }
    const char *why =
        strcmp(input, path) == 0
            ? lua_pushliteral(L, "it is one of this command's inputs")
            : lua_pushfstring(L, "it is the same file as %s, one of this command's inputs", input);
    lua_replace(L, -3);
    lua_pop(L, 1);
    return why;
}

/* sys.check_target(path) -> true | nil, reason: whether sys.write_file may replace path
 * (see target_refusal), for commands that check their outputs before doing any work. */
static int sys_check_target(lua_State *L)
{
    const char *why = target_refusal(L, luaL_checkstring(L, 1));
    if (why == NULL) {
        lua_pushboolean(L, 1);
        return 1;
    }
    lua_pushnil(L);
    lua_insert(L, -2);
    return 2;
}

/* A temporary file next to `path`, created exclusively and never through a symlink, so
 * that a stale or planted "<path>.tmp.<pid>" is neither truncated nor written through. */
static int open_temporary(lua_State *L, const char *path, mode_t mode, const char **tmp_out)
{
    for (int attempt = 0; attempt < 100; attempt++) {
        const char *tmp = attempt == 0
                              ? lua_pushfstring(L, "%s.tmp.%d", path, (int)getpid())
                              : lua_pushfstring(L, "%s.tmp.%d.%d", path, (int)getpid(), attempt);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd >= 0 || errno != EEXIST) {
            *tmp_out = tmp; /* stays on the stack */
            return fd;
        }
        lua_pop(L, 1);
    }
    errno = EEXIST;
    return -1;
}

/* sys.write_file(path, data [, mode]) writes atomically: a temporary file in the same
 * folder, fsync, then rename, so a reader never sees half a file. It replaces only a
 * regular file that is none of the command's inputs (sys.check_target); anything else is
 * refused with nil, "refusing to replace PATH: it is a character device, ...", -EEXIST,
 * before and again right before the rename. */
static int sys_write_file(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    size_t len;
    const char *data = luaL_checklstring(L, 2, &len);
    mode_t mode = (mode_t)luaL_optinteger(L, 3, 0644);
    lua_settop(L, 3);
    const char *why = target_refusal(L, path);
    if (why) {
        lua_pushnil(L);
        lua_pushfstring(L, "refusing to replace %s: %s", path, why);
        lua_pushinteger(L, -EEXIST);
        return 3;
    }
    const char *tmp = NULL;
    int fd = open_temporary(L, path, mode, &tmp);
    if (fd < 0)
        return push_failure(L, lua_pushfstring(L, "write %s", path), errno);
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(fd, data + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            close(fd);
            unlink(tmp);
            return push_failure(L, lua_pushfstring(L, "write %s", path), e);
        }
        done += (size_t)n;
    }
    if (fsync(fd) < 0 || close(fd) < 0) {
        int e = errno;
        unlink(tmp);
        return push_failure(L, lua_pushfstring(L, "write %s", path), e);
    }
    why = target_refusal(L, path);
    if (why) {
        unlink(tmp);
        lua_pushnil(L);
        lua_pushfstring(L, "refusing to replace %s: %s", path, why);
        lua_pushinteger(L, -EEXIST);
        return 3;
    }
    if (rename(tmp, path) < 0) {
        int e = errno;
        unlink(tmp);
        return push_failure(L, lua_pushfstring(L, "write %s", path), e);
    }
    lua_pushboolean(L, 1);
    return 1;
}

/* sys.create_file(path [, mode]) -> true | nil, message, code: creates an empty file that
 * must not exist yet (O_EXCL, never through a symlink), so what it names afterwards is
 * known to be this process's own file, which it may write and remove. */
static int sys_create_file(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    mode_t mode = (mode_t)luaL_optinteger(L, 2, 0644);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0)
        return push_failure(L, lua_pushfstring(L, "create %s", path), errno);
    close(fd);
    lua_pushboolean(L, 1);
    return 1;
}

/* sys.read_file(path) -> string | nil, message, code */
static int sys_read_file(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return push_failure(L, lua_pushfstring(L, "read %s", path), errno);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (;;) {
        char *space = luaL_prepbuffsize(&b, 65536);
        ssize_t n = read(fd, space, 65536);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            close(fd);
            return push_failure(L, lua_pushfstring(L, "read %s", path), e);
        }
        if (n == 0)
            break;
        luaL_addsize(&b, (size_t)n);
    }
    close(fd);
    luaL_pushresult(&b);
    return 1;
}

/* sys.list_dir(path) -> sorted array of entry names | nil, message, code */
static int sys_list_dir(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    DIR *dir = opendir(path);
    if (!dir)
        return push_failure(L, lua_pushfstring(L, "open %s", path), errno);
    lua_newtable(L);
    lua_Integer n = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
            continue;
        lua_pushstring(L, entry->d_name);
        lua_rawseti(L, -2, ++n);
    }
    closedir(dir);
    lua_getglobal(L, "table");
    lua_getfield(L, -1, "sort");
    lua_pushvalue(L, -3);
    lua_call(L, 1, 0);
    lua_pop(L, 1);
    return 1;
}

static int sys_realpath(lua_State *L)
{
    char resolved[PATH_MAX];
    const char *path = luaL_checkstring(L, 1);
    if (!realpath(path, resolved))
        return push_failure(L, path, errno);
    lua_pushstring(L, resolved);
    return 1;
}

static int sys_setenv(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    int rc = lua_isnil(L, 2) ? unsetenv(name) : setenv(name, luaL_checkstring(L, 2), 1);
    if (rc < 0)
        return push_failure(L, name, errno);
    lua_pushboolean(L, 1);
    return 1;
}

static int sys_getpid(lua_State *L)
{
    lua_pushinteger(L, getpid());
    return 1;
}

static int sys_hostname(lua_State *L)
{
    char name[256] = "localhost";
    gethostname(name, sizeof name - 1);
    name[sizeof name - 1] = '\0';
    lua_pushstring(L, name);
    return 1;
}

static int sys_geteuid(lua_State *L)
{
    lua_pushinteger(L, geteuid());
    return 1;
}

/* sys.which(program) -> path | nil: where execvp would find the program. */
static int sys_which(lua_State *L)
{
    const char *program = luaL_checkstring(L, 1);
    const char *path_env = getenv("PATH");
    if (strchr(program, '/')) {
        lua_pushstring(L, access(program, X_OK) == 0 ? program : NULL);
        return 1;
    }
    if (!path_env)
        path_env = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";
    const char *start = path_env;
    while (*start) {
        const char *end = strchr(start, ':');
        size_t len = end ? (size_t)(end - start) : strlen(start);
        char candidate[PATH_MAX];
        if (len > 0 && len + strlen(program) + 2 < sizeof candidate) {
            memcpy(candidate, start, len);
            candidate[len] = '/';
            memcpy(candidate + len + 1, program, strlen(program) + 1);
            if (access(candidate, X_OK) == 0) {
                lua_pushstring(L, candidate);
                return 1;
            }
        }
        if (!end)
            break;
        start = end + 1;
    }
    lua_pushnil(L);
    return 1;
}

/* sys.cpu_times() -> user, system seconds of this process (for client CPU per op). */
static int sys_cpu_times(lua_State *L)
{
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    lua_pushnumber(L, (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec / 1e6);
    lua_pushnumber(L, (double)usage.ru_stime.tv_sec + (double)usage.ru_stime.tv_usec / 1e6);
    return 2;
}

/* Reads a small /proc file whole into buf (NUL-terminated); the length, or -1. */
static ssize_t read_small_file(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    if (n < 0)
        return -1;
    buf[n] = '\0';
    return n;
}

/* What a daemon's command line says about it: its name (`-i 0` / `--id 0` give "osd.0",
 * the kind without the "ceph-" prefix; `-n client.rgw.x` / `--name x` the name itself), and
 * the config file (`-c` / `--conf`) and cluster name (`--cluster`) it reads, which tell
 * whose daemon it is when several clusters run on one host. */
struct daemon_args {
    char name[128];
    char conf[PATH_MAX];
    char cluster[64];
};

static void daemon_args(pid_t pid, const char *comm, struct daemon_args *args)
{
    char path[64], cmdline[8192];
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    ssize_t n = read_small_file(path, cmdline, sizeof cmdline);
    const char *kind = strncmp(comm, "ceph-", 5) == 0 ? comm + 5 : comm;
    snprintf(args->name, sizeof args->name, "%s.%d", kind, (int)pid);
    args->conf[0] = args->cluster[0] = '\0';
    bool named = false;
    for (ssize_t at = 0; n > 0 && at < n;) {
        const char *arg = cmdline + at;
        size_t len = strlen(arg);
        const char *next = at + (ssize_t)len + 1 < n ? arg + len + 1 : NULL;
        const char *value;
        if (!named && (((strcmp(arg, "-i") == 0 || strcmp(arg, "--id") == 0) && (value = next)) ||
                       (strncmp(arg, "--id=", 5) == 0 && (value = arg + 5)))) {
            snprintf(args->name, sizeof args->name, "%s.%s", kind, value);
            named = true;
        } else if (!named &&
                   (((strcmp(arg, "-n") == 0 || strcmp(arg, "--name") == 0) && (value = next)) ||
                    (strncmp(arg, "--name=", 7) == 0 && (value = arg + 7)))) {
            snprintf(args->name, sizeof args->name, "%s", value);
            named = true;
        } else if (((strcmp(arg, "-c") == 0 || strcmp(arg, "--conf") == 0) && (value = next)) ||
                   (strncmp(arg, "--conf=", 7) == 0 && (value = arg + 7))) {
            snprintf(args->conf, sizeof args->conf, "%s", value);
        } else if ((strcmp(arg, "--cluster") == 0 && (value = next)) ||
                   (strncmp(arg, "--cluster=", 10) == 0 && (value = arg + 10))) {
            snprintf(args->cluster, sizeof args->cluster, "%s", value);
        }
        at += (ssize_t)len + 1;
    }
}

/* sys.process_cpu([comm names]) -> { {pid, comm, name, conf, cluster, cpu, start}, ... }: every
 * process whose /proc/PID/comm is one of the names (default: the ceph daemons), with its user +
 * system CPU seconds (all threads; also as `ticks` of 1/`hz` s, the unit /proc counts in) and its
 * start time in clock ticks after boot, which tells a restarted daemon from the one before it. Done
 * in C: a scan of /proc touches every process on the host, and it runs twice per phase. */
static int sys_process_cpu(lua_State *L)
{
    static const char *const ceph_daemons[] = {"ceph-osd", "ceph-mon", "ceph-mgr", "radosgw"};
    const char *names[32];
    size_t n_names = 0;
    if (lua_isnoneornil(L, 1)) {
        for (; n_names < sizeof ceph_daemons / sizeof ceph_daemons[0]; n_names++)
            names[n_names] = ceph_daemons[n_names];
    } else {
        luaL_checktype(L, 1, LUA_TTABLE);
        lua_Integer count = luaL_len(L, 1);
        luaL_argcheck(L, count >= 1 && count <= 32, 1, "expected a list of 1 to 32 process names");
        for (lua_Integer i = 1; i <= count; i++) {
            if (lua_rawgeti(L, 1, i) != LUA_TSTRING)
                return luaL_argerror(L, 1, "expected a list of process names (strings)");
            names[n_names++] = lua_tostring(L, -1);
            lua_pop(L, 1); /* the string stays alive in the table */
        }
    }
    long ticks = sysconf(_SC_CLK_TCK);
    if (ticks <= 0)
        ticks = 100;
    DIR *proc = opendir("/proc");
    if (!proc)
        return push_failure(L, "/proc", errno);
    lua_newtable(L);
    lua_Integer found = 0;
    struct dirent *entry;
    while ((entry = readdir(proc)) != NULL) {
        if (entry->d_name[0] < '1' || entry->d_name[0] > '9')
            continue;
        char path[300], comm[64], stat[1024];
        snprintf(path, sizeof path, "/proc/%s/comm", entry->d_name);
        ssize_t len = read_small_file(path, comm, sizeof comm);
        if (len <= 0)
            continue; /* gone since the listing */
        if (comm[len - 1] == '\n')
            comm[len - 1] = '\0';
        bool wanted = false;
        for (size_t i = 0; i < n_names && !wanted; i++)
            wanted = strncmp(comm, names[i], 15) == 0; /* comm keeps 15 characters */
        if (!wanted)
            continue;
        snprintf(path, sizeof path, "/proc/%s/stat", entry->d_name);
        if (read_small_file(path, stat, sizeof stat) <= 0)
            continue;
        /* fields after the command name in parentheses, which may hold spaces: the
         * state is field 3, utime 14, stime 15, starttime 22 */
        char *fields = strrchr(stat, ')');
        unsigned long long utime = 0, stime = 0, start = 0;
        /* NOLINTNEXTLINE(cert-err34-c): kernel-written decimals in range; the count is checked */
        if (!fields || sscanf(fields + 1,
                              " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d "
                              "%*d %*d %*d %llu",
                              &utime, &stime, &start) != 3)
            continue;
        pid_t pid = (pid_t)strtol(entry->d_name, NULL, 10);
        struct daemon_args args = {0};
        daemon_args(pid, comm, &args);
        lua_createtable(L, 0, 9);
        lua_pushinteger(L, pid);
        lua_setfield(L, -2, "pid");
        lua_pushstring(L, comm);
        lua_setfield(L, -2, "comm");
        lua_pushstring(L, args.name);
        lua_setfield(L, -2, "name");
        if (args.conf[0]) {
            lua_pushstring(L, args.conf);
            lua_setfield(L, -2, "conf");
        }
        if (args.cluster[0]) {
            lua_pushstring(L, args.cluster);
            lua_setfield(L, -2, "cluster");
        }
        lua_pushnumber(L, (double)(utime + stime) / (double)ticks);
        lua_setfield(L, -2, "cpu");
        /* the count itself too: differences of ticks are exact, those of seconds are not */
        lua_pushinteger(L, (lua_Integer)(utime + stime));
        lua_setfield(L, -2, "ticks");
        lua_pushinteger(L, ticks);
        lua_setfield(L, -2, "hz");
        lua_pushinteger(L, (lua_Integer)start);
        lua_setfield(L, -2, "start");
        lua_rawseti(L, -2, ++found);
    }
    closedir(proc);
    return 1;
}

static int sys_isatty(lua_State *L)
{
    lua_pushboolean(L, isatty((int)luaL_optinteger(L, 1, STDOUT_FILENO)));
    return 1;
}

static int sys_interrupted(lua_State *L)
{
    lua_pushboolean(L, cm_interrupted());
    return 1;
}

/* sys.interrupt_signal() -> "SIGINT" | "SIGTERM" | "SIGHUP" | nil: what stopped the run. */
static int sys_interrupt_signal(lua_State *L)
{
    const char *name = cm_interrupt_signal_name();
    if (name)
        lua_pushstring(L, name);
    else
        lua_pushnil(L);
    return 1;
}

/* sys.exit_requested() -> code | nil: os.exit(code) was called (interrupt.h). */
static int sys_exit_requested(lua_State *L)
{
    int code;
    if (cm_exit_requested(&code))
        lua_pushinteger(L, code);
    else
        lua_pushnil(L);
    return 1;
}

/* The message handler of sys.with_cleanup: the Lua handler runs held (interrupt.h), and
 * protected, so neither an interrupt nor its own error replaces the error it describes. */
static int cleanup_message_handler(lua_State *L)
{
    cm_interrupt_hold();
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushvalue(L, 1);
    int status = lua_pcall(L, 1, 1, 0);
    cm_interrupt_release();
    if (status != LUA_OK) {
        lua_pop(L, 1);
        lua_pushvalue(L, 1);
    }
    return 1;
}

/* sys.with_cleanup(body, handler, cleanup) -> cleanup's results
 * Runs body() as xpcall(body, handler) does, then cleanup(ok, err) with stop signals held:
 * the interrupt that ended body does not fire again inside the cleanup it starts, and one
 * arriving between the two cannot skip it (no Lua instruction runs there). cleanup's error,
 * if any, is raised once the hold is released. */
static int sys_with_cleanup(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TFUNCTION);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    luaL_checktype(L, 3, LUA_TFUNCTION);
    lua_settop(L, 3);
    lua_pushvalue(L, 2);
    lua_pushcclosure(L, cleanup_message_handler, 1); /* 4 */
    lua_pushvalue(L, 1);
    int ok = lua_pcall(L, 0, 0, 4) == LUA_OK; /* the error, or nothing, at 5 */
    cm_interrupt_hold();
    lua_pushvalue(L, 3);
    lua_pushboolean(L, ok);
    if (ok)
        lua_pushnil(L);
    else
        lua_pushvalue(L, 5);
    int base = lua_gettop(L) - 3;
    int status = lua_pcall(L, 2, LUA_MULTRET, 0);
    cm_interrupt_release();
    if (status != LUA_OK)
        return lua_error(L);
    return lua_gettop(L) - base;
}

/* sys.fail(message [, exit_code]) raises an error meant for the operator: one line,
 * no traceback, the given exit code (default 2). */
static int sys_fail(lua_State *L)
{
    const char *message = luaL_checkstring(L, 1);
    int code = (int)luaL_optinteger(L, 2, CM_EXIT_USAGE);
    cm_push_user_error(L, code, message);
    return lua_error(L);
}

/* sys.error_info(err) -> message, exit_code, is_operator_error: for Lua code that catches
 * errors with pcall and must report or re-raise them faithfully. */
static int sys_error_info(lua_State *L)
{
    if (lua_istable(L, 1) && lua_getfield(L, 1, "cephmark.user_error") != LUA_TNIL) {
        lua_getfield(L, 1, "message");
        lua_getfield(L, 1, "exit_code");
        lua_pushboolean(L, 1);
        return 3;
    }
    cm_lua_error_text(L, 1);
    lua_pushinteger(L, CM_EXIT_USAGE);
    lua_pushboolean(L, 0);
    return 3;
}

/* sys.parse_size("4K") -> 4096 | nil, message ; integers pass through */
static int sys_parse_size(lua_State *L)
{
    if (lua_isinteger(L, 1) && lua_tointeger(L, 1) >= 0) {
        lua_settop(L, 1);
        return 1;
    }
    uint64_t bytes;
    char error[256];
    if (cm_parse_size(luaL_checkstring(L, 1), &bytes, error, sizeof error) < 0) {
        lua_pushnil(L);
        lua_pushstring(L, error);
        return 2;
    }
    lua_pushinteger(L, (lua_Integer)bytes);
    return 1;
}

/* sys.parse_duration("500ms") -> 0.5 | nil, message ; numbers pass through */
static int sys_parse_duration(lua_State *L)
{
    if (lua_type(L, 1) == LUA_TNUMBER && lua_tonumber(L, 1) >= 0) {
        lua_settop(L, 1);
        return 1;
    }
    double seconds;
    char error[256];
    if (cm_parse_duration(luaL_checkstring(L, 1), &seconds, error, sizeof error) < 0) {
        lua_pushnil(L);
        lua_pushstring(L, error);
        return 2;
    }
    lua_pushnumber(L, seconds);
    return 1;
}

/* sys.parse_number("0.25") -> 0.25 | nil, reason ("not a number", "hexadecimal: write it
 * in decimal", "out of range"); decimal only, finite (cm_parse_number). Numbers pass
 * through when finite. */
static int sys_parse_number(lua_State *L)
{
    if (lua_type(L, 1) == LUA_TNUMBER) {
        if (isfinite(lua_tonumber(L, 1))) {
            lua_settop(L, 1);
            return 1;
        }
        lua_pushnil(L);
        lua_pushliteral(L, "out of range");
        return 2;
    }
    double value;
    char error[128];
    if (cm_parse_number(luaL_checkstring(L, 1), &value, error, sizeof error) < 0) {
        lua_pushnil(L);
        lua_pushstring(L, error);
        return 2;
    }
    lua_pushnumber(L, value);
    return 1;
}

/* sys.format_size(bytes) -> "4 MiB" */
static int sys_format_size(lua_State *L)
{
    char text[32];
    cm_format_size((uint64_t)luaL_checkinteger(L, 1), text, sizeof text);
    lua_pushstring(L, text);
    return 1;
}

int luaopen_cephmark_sys(lua_State *L)
{
    static const luaL_Reg functions[] = {
        {"alive", sys_alive},
        {"check_target", sys_check_target},
        {"cpu_times", sys_cpu_times},
        {"create_file", sys_create_file},
        {"error_info", sys_error_info},
        {"exit_requested", sys_exit_requested},
        {"fail", sys_fail},
        {"format_size", sys_format_size},
        {"free_port", sys_free_port},
        {"geteuid", sys_geteuid},
        {"getpid", sys_getpid},
        {"hostname", sys_hostname},
        {"interrupt_signal", sys_interrupt_signal},
        {"interrupted", sys_interrupted},
        {"isatty", sys_isatty},
        {"kill", sys_kill},
        {"list_dir", sys_list_dir},
        {"mkdir", sys_mkdir},
        {"monotonic", sys_monotonic},
        {"note_input", sys_note_input},
        {"parse_duration", sys_parse_duration},
        {"parse_number", sys_parse_number},
        {"parse_size", sys_parse_size},
        {"port_open", sys_port_open},
        {"process_cpu", sys_process_cpu},
        {"read_file", sys_read_file},
        {"realtime", sys_realtime},
        {"realpath", sys_realpath},
        {"reap", sys_reap},
        {"remove_tree", sys_remove_tree},
        {"run", sys_run},
        {"setenv", sys_setenv},
        {"sleep", sys_sleep},
        {"spawn", sys_spawn},
        {"stat", sys_stat},
        {"utc_timestamp", sys_utc_timestamp},
        {"which", sys_which},
        {"with_cleanup", sys_with_cleanup},
        {"write_file", sys_write_file},
        {NULL, NULL},
    };
    luaL_newlib(L, functions);
    lua_pushinteger(L, CM_EXIT_OK);
    lua_setfield(L, -2, "EXIT_OK");
    lua_pushinteger(L, CM_EXIT_FAILED_OPS);
    lua_setfield(L, -2, "EXIT_FAILED_OPS");
    lua_pushinteger(L, CM_EXIT_USAGE);
    lua_setfield(L, -2, "EXIT_USAGE");
    lua_pushinteger(L, CM_EXIT_INTERRUPTED);
    lua_setfield(L, -2, "EXIT_INTERRUPTED");
    lua_pushstring(L, CEPHMARK_VERSION);
    lua_setfield(L, -2, "version");
    return 1;
}
