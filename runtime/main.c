/* cephmark's entry point: top-level command dispatch, `run` argument parsing, help and
 * version. Commands other than `run` are stdlib modules (cephmark.cmd.<name>) called with
 * their arguments, so most of the command line lives in readable Lua. */
#include "exitcode.h"
#include "interrupt.h"
#include "lstate.h"
#include "units.h"

#include <lualib.h>
#include <rados/librados.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: cephmark <command> [options]\n"
    "\n"
    "Ceph benchmarks as Lua scenario scripts.\n"
    "\n"
    "commands:\n"
    "  run SCRIPT [options]      run a scenario script (see `cephmark help run`)\n"
    "  cluster up|down|status|env\n"
    "                            a throwaway local Ceph cluster on loopback\n"
    "  rados-bench -p POOL SECONDS write|seq|rand [options]\n"
    "                            a drop-in for `rados bench`, with percentiles\n"
    "  rados-cleanup -p POOL [--run-name NAME] [--prefix PREFIX]\n"
    "                            remove a benchmark run's objects, like `rados cleanup`\n"
    "  cleanup --leftovers [--yes]\n"
    "                            list (remove, with --yes) what cephmark runs that are gone\n"
    "                            left: pools, EC profiles, runs' objects\n"
    "  rbd-bench [POOL/]IMAGE --io-type read|write|readwrite [options]\n"
    "                            a drop-in for `rbd bench`, with percentiles\n"
    "  swift-bench [OPTIONS] [CONF_FILE]\n"
    "                            a drop-in for swift-bench (Swift on radosgw), with percentiles\n"
    "  report DIR... [-o FILE]   one HTML report (SVG charts, tables) of results folders\n"
    "  compare BASE_DIR NEW_DIR [--metric M]... [--threshold PCT]\n"
    "                            compare two results folders of a scenario: verdicts, and\n"
    "                            exit 1 when a metric is significantly worse (a CI gate)\n"
    "  agent [--name NAME]       serve multi-client runs: register in the control pool and\n"
    "                            run the phases `cephmark run --agents` sends; with\n"
    "                            --monitor, read an OSD host's CPU, disks and network per phase\n"
    "  netserver [--port PORT]   the server side of the network baseline (like iperf3 -s)\n"
    "  options [TARGET]          every option of each bench target (phase options), with\n"
    "                            its type, default and meaning\n"
    "  help [COMMAND]            show help for a command\n"
    "\n"
    "options:\n"
    "  -h, --help                show this help\n"
    "  -V, --version             show the cephmark, Lua and librados versions\n"
    "\n"
    "With no cluster configured (no -c, no CEPH_CONF, no /etc/ceph/ceph.conf), `run` uses the\n"
    "local cluster, starting it if needed.\n";

static const char run_usage_text[] =
    "usage: cephmark run SCRIPT [options] [-- script arguments]\n"
    "\n"
    "Runs a scenario script in a Lua state where the cephmark stdlib and C modules are\n"
    "available through require.\n"
    "\n"
    "options:\n"
    "  -p, --param KEY=VALUE     set a scenario parameter (repeatable)\n"
    "  --params FILE.yaml        read scenario parameters from a YAML file\n"
    "  -c, --conf CONF           ceph.conf to use (default: $CEPH_CONF, /etc/ceph/ceph.conf,\n"
    "                            else the local cluster)\n"
    "  --id NAME                 client id, as in client.NAME (default: admin)\n"
    "  -k, --keyring FILE        keyring (default: from the conf)\n"
    "  --timeout SECONDS         connect and mon command timeout (default: 10)\n"
    "  -o, --output DIR          results directory\n"
    "  -L DIR                    add DIR to the folders require searches (repeatable)\n"
    "  --agents N|NAME,NAME      run each phase on N registered agents (or those named),\n"
    "                            started together; results merged (see docs/distributed.md)\n"
    "  --monitors all|NAME,NAME  read each phase's host figures (daemons' CPU, disks,\n"
    "                            network) from these `cephmark agent --monitor` monitors\n"
    "  --control-pool POOL       the agents' and monitors' control pool (default:\n"
    "                            cephmark-control)\n"
    "  --repeats N               run the scenario's run function N times (default: its\n"
    "                            repeats, else 1); pools are created once\n"
    "  --order interleaved|fixed the order of s:each_pool's pools and s:sweep's points in each\n"
    "                            repetition: changed between repetitions (default), or kept\n"
    "  --order-seed N            the seed of the interleaved orders (default: a new one; each\n"
    "                            run records its own in results.json)\n"
    "  --yes                     run a sweep of more than 1000 points without asking\n"
    "                            (its points in all repetitions count), or more than 1000\n"
    "                            repetitions (needed when stdin is not a terminal)\n"
    "  --no-telemetry            do not read the OSDs' perf counters around pool phases\n"
    "                            (as telemetry = false in the scenario; docs/telemetry.md)\n"
    "  --prometheus URL          read each phase's host CPU, disks, network and ceph daemons'\n"
    "                            CPU from this Prometheus (default: the dashboard's\n"
    "                            PROMETHEUS_API_HOST, if the cluster has one;\n"
    "                            docs/prometheus.md)\n"
    "  --wait-clean DURATION     before each phase on a cluster, wait until its PGs are\n"
    "                            active+clean (fail after DURATION; needs a mgr), as\n"
    "                            wait_clean in the scenario (docs/cluster-state.md)\n"
    "  --quiesce                 set noscrub and nodeep-scrub for the run, restored at the\n"
    "                            end (as quiesce = true in the scenario)\n"
    "  -h, --help                with SCRIPT: list the scenario's parameters\n"
    "\n"
    "exit codes: 0 success; 1 the benchmark ran but reported failed ops; 2 script error,\n"
    "bad input or configuration error; 130, 143, 129 stopped by SIGINT, SIGTERM, SIGHUP\n"
    "(the run still cleans up and writes its results; a second signal exits at once);\n"
    "os.exit(N) in the script: N, after the same cleanup.\n";

/* Commands implemented by stdlib modules; the module is cephmark.cmd.<name with - as _>. */
static const char *const stdlib_commands[] = {
    "cluster",   "rados-bench", "rados-cleanup", "rbd-bench", "report",  "cleanup",
    "netserver", "agent",       "swift-bench",   "compare",   "options", NULL};

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "cephmark: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see `cephmark help run`)\n");
    return CM_EXIT_USAGE;
}

static void print_version(void)
{
    int major, minor, extra;
    rados_version(&major, &minor, &extra);
    printf("cephmark %s (%s, librados %d.%d.%d)\n", CEPHMARK_VERSION, LUA_RELEASE, major, minor,
           extra);
}

static int print_command_help(const char *command)
{
    if (command == NULL) {
        fputs(usage_text, stdout);
        return CM_EXIT_OK;
    }
    if (strcmp(command, "run") == 0) {
        fputs(run_usage_text, stdout);
        return CM_EXIT_OK;
    }
    for (const char *const *c = stdlib_commands; *c; c++)
        if (strcmp(command, *c) == 0)
            return -1; /* the stdlib command prints its own help */
    fprintf(stderr, "cephmark: no help for unknown command '%s'\n", command);
    return CM_EXIT_USAGE;
}

/* Runs `fn(arg)` where fn is field `function` of stdlib module `module`; the Lua code
 * returns the exit code. */
static int run_in_lua(lua_State *L, const char *module, const char *function)
{
    /* stack: argument table */
    lua_getglobal(L, "require");
    lua_pushstring(L, module);
    int status = cm_lua_docall(L, 1, 1);
    if (status != LUA_OK)
        return cm_lua_report(L, status);
    lua_getfield(L, -1, function);
    lua_remove(L, -2);
    lua_insert(L, -2);
    status = cm_lua_docall(L, 1, 1);
    if (status != LUA_OK)
        return cm_lua_report(L, status);
    int code = (int)luaL_optinteger(L, -1, CM_EXIT_OK);
    lua_pop(L, 1);
    return code;
}

static void set_string_field(lua_State *L, const char *key, const char *value)
{
    lua_pushstring(L, value);
    lua_setfield(L, -2, key);
}

static void append_string(lua_State *L, const char *list, const char *value)
{
    lua_getfield(L, -1, list);
    lua_pushstring(L, value);
    lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
    lua_pop(L, 1);
}

/* A whole number typed on the command line, from min to max: decimal digits only, since
 * "0x10", "1e3", "2.5" and "-1" are not counts. Returns 0 and *value, or -1 with `why`
 * holding what to add to the refusal: why a number cannot be read (" (hexadecimal: write
 * it in decimal)", " (out of range)"), or "" when the range in the refusal says it. */
static int parse_count(const char *text, long long min, long long max, long long *value, char *why,
                       size_t why_size)
{
    why[0] = '\0';
    const char *c = text;
    long long n = 0;
    int overflow = 0;
    for (; *c >= '0' && *c <= '9'; c++) {
        if (n > (max - (*c - '0')) / 10)
            overflow = 1;
        else
            n = n * 10 + (*c - '0');
    }
    if (c != text && *c == '\0') {
        if (overflow || n > max || n < min)
            return -1;
        *value = n;
        return 0;
    }
    /* not digits: say why when the number parser knows (hexadecimal, infinity) */
    double number;
    char reason[128];
    int code = cm_parse_number(text, &number, reason, sizeof reason);
    if (code == CM_NUMBER_HEX || code == CM_NUMBER_RANGE)
        snprintf(why, why_size, " (%s)", reason);
    return -1;
}

/* Matches "-x VALUE", "--long VALUE" and "--long=VALUE"; returns the value or NULL. */
static const char *option_value(int argc, char **argv, int *i, const char *short_name,
                                const char *long_name, int *missing)
{
    const char *arg = argv[*i];
    if (arg == NULL) /* argv ends with NULL at argc; *i is below it */
        return NULL;
    size_t long_len = long_name ? strlen(long_name) : 0;
    if (long_name && strncmp(arg, long_name, long_len) == 0 && arg[long_len] == '=')
        return arg + long_len + 1;
    if ((short_name && strcmp(arg, short_name) == 0) ||
        (long_name && strcmp(arg, long_name) == 0)) {
        if (*i + 1 >= argc) {
            *missing = 1;
            return NULL;
        }
        return argv[++*i];
    }
    return NULL;
}

/* What the option parsers below return besides an exit code (>= 0, the parse is over). */
#define RUN_ARG_TAKEN    (-1) /* the argument (and its value) went into the options table */
#define RUN_ARG_NOT_MINE (-2) /* another parser's, or a positional argument */

/* `run`'s options without a value: the field each sets, and to what. */
static const struct run_flag {
    const char *name;
    const char *field;
    int value;
} run_flags[] = {
    {"-h", "help", 1},           {"--help", "help", 1},
    {"--yes", "yes", 1},         {"--no-telemetry", "telemetry", 0},
    {"--quiesce", "quiesce", 1},
};

/* `run`'s options whose value is taken as given: a string field, or a list appended to. */
static const struct run_string_option {
    const char *short_name, *long_name;
    const char *field;
    bool list;
} run_string_options[] = {
    {NULL, "--params", "params_file", false},
    {"-c", "--conf", "conf", false},
    {NULL, "--id", "id", false},
    {"-k", "--keyring", "keyring", false},
    {"-o", "--output", "output", false},
    {"-L", NULL, "lib_dirs", true},
    {NULL, "--agents", "agents", false},
    {NULL, "--monitors", "monitors", false},
    {NULL, "--control-pool", "control_pool", false},
    {NULL, "--prometheus", "prometheus", false},
};

static int parse_run_flag(lua_State *L, const char *arg)
{
    for (size_t k = 0; k < sizeof run_flags / sizeof run_flags[0]; k++) {
        if (strcmp(arg, run_flags[k].name) == 0) {
            lua_pushboolean(L, run_flags[k].value);
            lua_setfield(L, -2, run_flags[k].field);
            return RUN_ARG_TAKEN;
        }
    }
    return RUN_ARG_NOT_MINE;
}

static int parse_run_string_option(lua_State *L, int argc, char **argv, int *i, int *missing)
{
    for (size_t k = 0; k < sizeof run_string_options / sizeof run_string_options[0]; k++) {
        const struct run_string_option *option = &run_string_options[k];
        const char *value =
            option_value(argc, argv, i, option->short_name, option->long_name, missing);
        if (!value)
            continue;
        if (option->list)
            append_string(L, option->field, value);
        else
            set_string_field(L, option->field, value);
        return RUN_ARG_TAKEN;
    }
    return RUN_ARG_NOT_MINE;
}

/* A positive duration option (--wait-clean, --timeout) into `field`. The duration parser is
 * decimal only, so "abc", "0x10", "inf" and "1e309" fail. */
static int set_duration_field(lua_State *L, const char *value, const char *field,
                              const char *refusal)
{
    double seconds = 0;
    char reason[256];
    if (cm_parse_duration(value, &seconds, reason, sizeof reason) < 0 || !(seconds > 0))
        return usage_error(refusal, value);
    lua_pushnumber(L, seconds);
    lua_setfield(L, -2, field);
    return RUN_ARG_TAKEN;
}

/* A whole-number option (--repeats, --order-seed) from min to max into `field`; `expects`
 * is the refusal's description of the range. */
static int set_count_field(lua_State *L, const char *option, const char *value, long long min,
                           long long max, const char *field, const char *expects)
{
    long long count;
    char why[160];
    if (parse_count(value, min, max, &count, why, sizeof why) < 0) {
        char message[768];
        snprintf(message, sizeof message, "%s expects %s, got '%s'%s", option, expects, value, why);
        return usage_error("%s", message);
    }
    lua_pushinteger(L, (lua_Integer)count);
    lua_setfield(L, -2, field);
    return RUN_ARG_TAKEN;
}

/* `run`'s options whose value is checked before it goes into the options table. */
static int parse_run_checked_option(lua_State *L, int argc, char **argv, int *i, int *missing)
{
    const char *value;
    if ((value = option_value(argc, argv, i, NULL, "--wait-clean", missing)))
        return set_duration_field(L, value, "wait_clean",
                                  "--wait-clean expects a duration such as 60s or 2m (or a "
                                  "number of seconds), more than 0, got '%s'");
    if ((value = option_value(argc, argv, i, NULL, "--timeout", missing)))
        return set_duration_field(L, value, "timeout",
                                  "--timeout expects a positive number of seconds, got '%s'");
    if ((value = option_value(argc, argv, i, "-p", "--param", missing))) {
        if (strchr(value, '=') == NULL || value[0] == '=')
            return usage_error("-p expects KEY=VALUE, got '%s'", value);
        append_string(L, "params", value);
        return RUN_ARG_TAKEN;
    }
    if ((value = option_value(argc, argv, i, NULL, "--repeats", missing)))
        /* a bound that no run means to reach: more than 1000 needs --yes anyway */
        return set_count_field(L, "--repeats", value, 1, 1000000, "repeats",
                               "a whole number of repetitions from 1 to 1000000");
    if ((value = option_value(argc, argv, i, NULL, "--order-seed", missing))) {
        /* below 2^53: results.json keeps it exact */
        char expects[64];
        snprintf(expects, sizeof expects, "a whole number from 0 to %lld", (1LL << 53) - 1);
        return set_count_field(L, "--order-seed", value, 0, (1LL << 53) - 1, "order_seed", expects);
    }
    if ((value = option_value(argc, argv, i, NULL, "--order", missing))) {
        if (strcmp(value, "interleaved") != 0 && strcmp(value, "fixed") != 0)
            return usage_error("--order expects interleaved or fixed, got '%s'", value);
        set_string_field(L, "order", value);
        return RUN_ARG_TAKEN;
    }
    return RUN_ARG_NOT_MINE;
}

/* After the arguments: without a script, prints run's help when asked (exit 0) or refuses;
 * with one, records the script's folder as script_dir and returns -1 to go on. */
static int finish_run_args(lua_State *L, const char *script, const char **script_dir_out)
{
    if (script == NULL) {
        lua_getfield(L, -1, "help");
        int help = lua_toboolean(L, -1);
        lua_pop(L, 1);
        if (help) {
            fputs(run_usage_text, stdout);
            return CM_EXIT_OK;
        }
        fprintf(stderr, "cephmark: run needs a SCRIPT (see `cephmark help run`)\n");
        return CM_EXIT_USAGE;
    }
    const char *slash = strrchr(script, '/');
    if (slash == NULL)
        lua_pushliteral(L, ".");
    else if (slash == script)
        lua_pushliteral(L, "/");
    else
        lua_pushlstring(L, script, (size_t)(slash - script));
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "script_dir");
    *script_dir_out = lua_tostring(L, -1); /* stays alive: the options table holds it */
    lua_pop(L, 1);
    return -1;
}

/* Parses `run`'s arguments into the options table on top of the stack. Returns -1 to go
 * on, or the exit code when the command is over (help printed, usage error). */
static int parse_run_args(lua_State *L, int argc, char **argv, const char **script_dir_out)
{
    const char *script = NULL;
    lua_newtable(L);
    lua_newtable(L);
    lua_setfield(L, -2, "params");
    lua_newtable(L);
    lua_setfield(L, -2, "lib_dirs");
    lua_newtable(L);
    lua_setfield(L, -2, "args");
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        int missing = 0;
        if (strcmp(arg, "--") == 0) {
            for (i++; i < argc; i++)
                append_string(L, "args", argv[i]);
            break;
        }
        int rc = parse_run_flag(L, arg);
        if (rc == RUN_ARG_NOT_MINE)
            rc = parse_run_string_option(L, argc, argv, &i, &missing);
        if (rc == RUN_ARG_NOT_MINE)
            rc = parse_run_checked_option(L, argc, argv, &i, &missing);
        if (rc >= 0)
            return rc;
        if (rc == RUN_ARG_TAKEN)
            continue;
        if (missing)
            return usage_error("option %s needs a value", arg);
        if (arg[0] == '-' && arg[1] != '\0')
            return usage_error("unknown option '%s'", arg);
        if (script == NULL) {
            script = arg;
            set_string_field(L, "script", arg);
        } else {
            append_string(L, "args", arg);
        }
    }
    return finish_run_args(L, script, script_dir_out);
}

static int command_run(int argc, char **argv)
{
    /* The options are parsed into a scratch state first, since the real state's require
     * path depends on them (script folder, -L). */
    lua_State *scratch = luaL_newstate();
    if (!scratch) {
        fprintf(stderr, "cephmark: out of memory\n");
        return CM_EXIT_USAGE;
    }
    const char *script_dir = NULL;
    int code = parse_run_args(scratch, argc, argv, &script_dir);
    if (code >= 0) {
        lua_close(scratch);
        return code;
    }
    const char *lib_dirs[64];
    size_t n_lib_dirs = 0;
    lua_getfield(scratch, -1, "lib_dirs");
    for (lua_Integer i = 1; i <= (lua_Integer)lua_rawlen(scratch, -1) && n_lib_dirs < 64; i++) {
        lua_rawgeti(scratch, -1, i);
        lib_dirs[n_lib_dirs++] = lua_tostring(scratch, -1);
        lua_pop(scratch, 1); /* the string stays alive in the table */
    }
    lua_pop(scratch, 1);

    struct cm_lua_config config = {
        .script_dir = script_dir, .lib_dirs = lib_dirs, .n_lib_dirs = n_lib_dirs};
    lua_State *L = cm_lua_new(&config);
    if (!L) {
        lua_close(scratch);
        fprintf(stderr, "cephmark: cannot create the Lua state\n");
        return CM_EXIT_USAGE;
    }
    /* copy the options table across states: flat strings, numbers, booleans, string lists */
    lua_newtable(L);
    lua_pushnil(scratch);
    while (lua_next(scratch, -2)) {
        const char *key = lua_tostring(scratch, -2);
        if (lua_istable(scratch, -1)) {
            lua_newtable(L);
            for (lua_Integer i = 1; i <= (lua_Integer)lua_rawlen(scratch, -1); i++) {
                lua_rawgeti(scratch, -1, i);
                lua_pushstring(L, lua_tostring(scratch, -1));
                lua_rawseti(L, -2, i);
                lua_pop(scratch, 1);
            }
        } else if (lua_isinteger(scratch, -1)) {
            lua_pushinteger(L, lua_tointeger(scratch, -1));
        } else if (lua_type(scratch, -1) == LUA_TNUMBER) {
            lua_pushnumber(L, lua_tonumber(scratch, -1));
        } else if (lua_type(scratch, -1) == LUA_TBOOLEAN) {
            lua_pushboolean(L, lua_toboolean(scratch, -1));
        } else {
            lua_pushstring(L, lua_tostring(scratch, -1));
        }
        lua_setfield(L, -2, key);
        lua_pop(scratch, 1);
    }
    lua_close(scratch);

    cm_interrupt_install(L);
    code = cm_interrupt_exit_status(run_in_lua(L, "cephmark.run", "main"));
    cm_interrupt_uninstall();
    cm_lua_close(L);
    return code;
}

/* Secrets given on the command line (swift-bench's -K KEY, --key=KEY) are wiped from argv
 * once copied, so that ps and /proc/PID/cmdline no longer show them. They were visible
 * between exec and this point; a credentials file or $ST_KEY avoids even that. */
static void scrub_secrets(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        char *value = NULL;
        if ((strcmp(argv[i], "-K") == 0 || strcmp(argv[i], "--key") == 0) && i + 1 < argc)
            value = argv[++i];
        else if (strncmp(argv[i], "--key=", 6) == 0)
            value = argv[i] + 6;
        if (value)
            memset(value, 0, strlen(value));
    }
}

static int command_stdlib(const char *command, int argc, char **argv)
{
    struct cm_lua_config config = {0};
    lua_State *L = cm_lua_new(&config);
    if (!L) {
        fprintf(stderr, "cephmark: cannot create the Lua state\n");
        return CM_EXIT_USAGE;
    }
    lua_createtable(L, argc, 0);
    for (int i = 0; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i + 1);
    }
    scrub_secrets(argc, argv);
    char module[128];
    snprintf(module, sizeof module, "cephmark.cmd.%s", command);
    for (char *c = module; *c; c++)
        if (*c == '-')
            *c = '_';
    cm_interrupt_install(L);
    int code = cm_interrupt_exit_status(run_in_lua(L, module, "main"));
    cm_interrupt_uninstall();
    cm_lua_close(L);
    return code;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage_text, stderr);
        return CM_EXIT_USAGE;
    }
    const char *command = argv[1];
    if (strcmp(command, "-h") == 0 || strcmp(command, "--help") == 0)
        return print_command_help(NULL);
    if (strcmp(command, "-V") == 0 || strcmp(command, "--version") == 0) {
        print_version();
        return CM_EXIT_OK;
    }
    if (strcmp(command, "help") == 0) {
        int code = print_command_help(argc > 2 ? argv[2] : NULL);
        if (code >= 0)
            return code;
        char *help_argv[] = {"--help"};
        return command_stdlib(argv[2], 1, help_argv);
    }
    if (strcmp(command, "run") == 0)
        return command_run(argc - 2, argv + 2);
    for (const char *const *c = stdlib_commands; *c; c++)
        if (strcmp(command, *c) == 0)
            return command_stdlib(command, argc - 2, argv + 2);
    fprintf(stderr, "cephmark: unknown command '%s' (see `cephmark --help`)\n", command);
    return CM_EXIT_USAGE;
}
