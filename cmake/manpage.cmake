# cephmark.1 from the binary's own help (cmake -P script mode): help2man turns
# `cephmark --help` and `--version` into the page, and a COMMANDS section adds each
# command's `cephmark help COMMAND` verbatim, so the page says what the binary says.
# Inputs: CEPHMARK (the built binary), HELP2MAN, OUT (the .1 file), COMMANDS (a,b,c).
set(include_file "${OUT}.include")
string(REPLACE "," ";" COMMANDS "${COMMANDS}")
set(text "[COMMANDS]\nEach command's own help, as `cephmark help COMMAND` prints it.\n")
foreach(command IN LISTS COMMANDS)
  execute_process(COMMAND "${CEPHMARK}" help "${command}" OUTPUT_VARIABLE help RESULT_VARIABLE rc
                  ERROR_QUIET)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cephmark help ${command} failed (${rc})")
  endif()
  # roff: a backslash is written \e; a line starting with . or ' would be a request
  string(REPLACE "\\" "\\e" help "${help}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" help "${help}")
  string(APPEND text ".SS ${command}\n.nf\n${help}.fi\n")
endforeach()
string(APPEND text "[SEE ALSO]\nThe documentation in /usr/share/doc/cephmark, and the scenario scripts in\n/usr/share/cephmark/scenarios.\n")
file(WRITE "${include_file}" "${text}")
execute_process(COMMAND "${HELP2MAN}" --no-info --section=1 --name=Ceph\ benchmarks\ as\ Lua\ scenario\ scripts
                        --include=${include_file} --output=${OUT} "${CEPHMARK}"
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "help2man failed (${rc})")
endif()
