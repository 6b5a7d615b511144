# Copies a storage-conf.xml, replacing the elements listed in the environment variable
# SET_ELEMENTS, one NAME=VALUE per line:
#
#   SET_ELEMENTS=$'ListenAddress=10.0.0.1\nSeeds=<Seed>10.0.0.1</Seed>' \
#       awk -f set-conf-elements.awk template.xml > storage-conf.xml
#
# VALUE is the element's new content, child elements included (for <Seeds> and
# <DataFileDirectories>). The first <NAME> at the start of a line outside a comment is
# replaced, from its start tag to its end tag (which may be on a later line). Elements inside
# comments (the sample's commented-out examples) are left alone; listed elements the file
# lacks are added before </Storage>. Used by scripts/local-cluster.sh and the Docker
# entrypoint. The environment, not awk -v, carries the list: -v would interpret backslashes
# and refuse newlines.

BEGIN {
    n = split(ENVIRON["SET_ELEMENTS"], lines, "\n")
    for (k = 1; k <= n; k++) {
        if (lines[k] == "") continue
        eq = index(lines[k], "=")
        if (eq < 2) { print "set-conf-elements: expected NAME=VALUE, got: " lines[k] > "/dev/stderr"; exit 2 }
        name = substr(lines[k], 1, eq - 1)
        names[++count] = name
        value[name] = substr(lines[k], eq + 1)
    }
}

function element(name) { return "<" name ">" value[name] "</" name ">" }

{
    if (skipping != "") {
        if (index($0, "</" skipping ">") > 0) skipping = ""
        next
    }
    if (!in_comment && match($0, /^[ \t]*<[A-Za-z]+[ \/>]/)) {
        tag = $0
        sub(/^[ \t]*</, "", tag)
        sub(/[ \/>].*$/, "", tag)
        if ((tag in value) && !(tag in done)) {
            indent = $0
            sub(/<.*$/, "", indent)
            print indent element(tag)
            done[tag] = 1
            # An element spanning lines (a container): drop everything up to its end tag.
            if (index($0, "</" tag ">") == 0 && $0 !~ /\/>[ \t]*$/) skipping = tag
            next
        }
    }
    if (!in_comment && $0 ~ /^[ \t]*<\/Storage>/) {
        for (k = 1; k <= count; k++) if (!(names[k] in done)) print "  " element(names[k])
    }
    print
    # Follow comments across lines so that commented-out elements are never replaced.
    rest = $0
    while (rest != "") {
        if (in_comment) {
            p = index(rest, "-->"); if (p == 0) break
            rest = substr(rest, p + 3); in_comment = 0
        } else {
            p = index(rest, "<!--"); if (p == 0) break
            rest = substr(rest, p + 4); in_comment = 1
        }
    }
}

END {
    if (skipping != "") { print "set-conf-elements: <" skipping "> is never closed" > "/dev/stderr"; exit 1 }
}
