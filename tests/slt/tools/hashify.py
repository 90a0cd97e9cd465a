#!/usr/bin/env python3
"""hashify.py FILE.test > OUT.test: replaces expected results of more than 16 values by the
standard "N values hashing to <md5>" line (MD5 of every value followed by a newline)."""
import hashlib, sys
text = open(sys.argv[1]).read().split("\n")
out, i = [], 0
while i < len(text):
    line = text[i]
    out.append(line); i += 1
    if line.startswith("query "):
        while i < len(text) and text[i] != "----":
            out.append(text[i]); i += 1
        if i < len(text):
            out.append(text[i]); i += 1
            vals = []
            while i < len(text) and text[i] != "":
                vals.append(text[i]); i += 1
            if len(vals) > 16:
                h = hashlib.md5("".join(v + "\n" for v in vals).encode()).hexdigest()
                out.append("%d values hashing to %s" % (len(vals), h))
            else:
                out.extend(vals)
print("\n".join(out), end="")
