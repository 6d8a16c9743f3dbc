/* Reading access and size distributions from a bench's Lua options (runtime/distrib.h):
 * `access = "zipf:1.1"` and `object_size = 4096 | "4K" | {low, high} |
 * { {"4K", 40}, {"64K", 30}, {"4M", 30} }`. Mistakes raise one line naming the option. */
#ifndef CEPHMARK_DISTRIB_LUA_H
#define CEPHMARK_DISTRIB_LUA_H

#include "distrib.h"

#include <lua.h>

/* Parses the access text; raises "<what>: access ...: <why>". */
void cm_lua_access_spec(lua_State *L, const char *text, const char *what,
                        struct cm_access_spec *spec);

/* Reads the size distribution at stack index `index` (option `name`): a size, a range
 * {low, high} or buckets { {size, weight}, ... }; raises "<what>: <name>...: <why>". */
void cm_lua_size_dist(lua_State *L, int index, const char *what, const char *name,
                      struct cm_size_dist *dist);

#endif
