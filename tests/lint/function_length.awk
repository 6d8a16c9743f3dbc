# Function length check for tests/lint/run.sh: prints "file:line: name is N lines" for every
# function longer than `limit` lines, counted from the line with the function's name to its
# closing brace. It relies on the layout .clang-format gives every C file (BreakBeforeBraces:
# Linux): a definition's signature starts in column 0 and its body opens with "{" alone on a
# line and closes with "}" alone on a line. Usage: awk -v limit=100 -f function_length.awk FILES
FNR == 1 {
    signature_line = 0
    name = ""
    in_body = 0
    in_comment = 0
}
# block comments starting in column 0 (file headers) never hold a signature
in_comment {
    if ($0 ~ /\*\//)
        in_comment = 0
    next
}
/^\/\*/ {
    if ($0 !~ /\*\//)
        in_comment = 1
    next
}
in_body {
    if ($0 ~ /^}[ \t]*$/) {
        length_lines = FNR - signature_line + 1
        if (length_lines > limit)
            printf "%s:%d: %s is %d lines (limit %d)\n", FILENAME, signature_line, name, length_lines, limit
        in_body = 0
        signature_line = 0
    }
    next
}
/^\{[ \t]*$/ {
    if (signature_line)
        in_body = 1
    next
}
# a line in column 0 naming a function: "type name(" (the name is the word before the first "(")
/^[A-Za-z_][A-Za-z0-9_ \t*]*\(/ && $0 !~ /^(return|if|while|for|switch)[ \t(]/ && $0 !~ /;[ \t]*$/ {
    head = $0
    sub(/\(.*/, "", head)
    count = split(head, words, /[ \t*]+/)
    name = words[count]
    signature_line = FNR
    next
}
# a signature line ending in ";" (a prototype) or any other top-level statement resets it
/^[^ \t]/ && $0 !~ /^\{/ {
    if ($0 ~ /;[ \t]*$/ || $0 ~ /^#/)
        signature_line = 0
}
