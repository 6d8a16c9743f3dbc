/* The list of C Lua modules built into cephmark (see registry.h). */
#include "registry.h"
#include "json.h"
#include "workers.h"
#include "yaml_codec.h"

/* one module per line, in name order (clang-format would pack them into columns) */
// clang-format off
const struct cm_c_module cm_c_modules[] = {
    {"cephmark.control", luaopen_cephmark_control},
    {"cephmark.disk", luaopen_cephmark_disk},
    {"cephmark.http", luaopen_cephmark_http},
    {"cephmark.json", luaopen_cephmark_json},
    {"cephmark.null", luaopen_cephmark_null},
    {"cephmark.options", luaopen_cephmark_options},
    {"cephmark.rados", luaopen_cephmark_rados},
    {"cephmark.rbd", luaopen_cephmark_rbd},
    {"cephmark.s3", luaopen_cephmark_s3},
    {"cephmark.swift", luaopen_cephmark_swift},
    {"cephmark.socket", luaopen_cephmark_socket},
    {"cephmark.sys", luaopen_cephmark_sys},
    {"cephmark.workers", luaopen_cephmark_workers},
    {"cephmark.yaml", luaopen_cephmark_yaml},
    {NULL, NULL},
};
// clang-format on
