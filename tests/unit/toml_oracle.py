#!/usr/bin/env python3
"""toml_oracle.py --dumper BIN [--count N] [--seed S] [--files F...] - the property test
behind test_toml.c: Python's tomllib is the oracle for mlsetup's TOML
reader (src/pkg/toml.c).

Random documents are generated from random data (strings in every quoting,
integers in every base, floats, booleans, dates and times, arrays, inline
tables, tables defined by headers or dotted keys, arrays of tables) with
random spacing and comments; a third of them are then mutated (characters
deleted, inserted or swapped, lines dropped or doubled), which makes many
of them invalid. `BIN --dump-dir DIR` parses every DIR/N.toml into DIR/N.json
(tagged JSON) or DIR/N.err. Both parsers must agree on whether each
document is TOML, and on every value of those that are. The tolerated
differences: integers beyond 64 bits, and documents nested more than 64
levels deep (ML_TOML_MAX_DEPTH: every table and array is a level, so an
array of tables is two), which tomllib keeps and mlsetup refuses. Prints the first disagreements and exits 1 when there are any.
With --files, the given documents (real lock files: pip lock, uv export,
mlsetup's own) are compared instead of random ones.
Only the standard library; the seed makes a run repeatable.
"""
import argparse
import datetime
import json
import math
import os
import random
import shutil
import string
import subprocess
import sys
import tempfile
import tomllib

BARE = string.ascii_letters + string.digits + "_-"
TEXT = (string.ascii_letters + string.digits + " .,-_'\"\\#=[]{}\t\n" +
        "\u00e9\u4e2d\U0001f600\x01\x7f")


def rand_key(rng):
    kind = rng.random()
    if kind < 0.7:
        return "".join(rng.choice(BARE) for _ in range(rng.randint(1, 6)))
    if kind < 0.8:
        return rng.choice(["", "a b", "x.y", "\u00e9t\u00e9", "q\"q", "it's"])
    return "".join(rng.choice(string.ascii_lowercase + " .") for _ in range(rng.randint(0, 5)))


def render_key(rng, k):
    if k and all(c in BARE for c in k) and rng.random() < 0.8:
        return k
    if "'" not in k and all(c >= " " for c in k) and rng.random() < 0.4:
        return "'%s'" % k
    return render_basic(rng, k)


def render_basic(rng, s):
    out = []
    for c in s:
        if c == '"':
            out.append('\\"')
        elif c == "\\":
            out.append("\\\\")
        elif c in "\b\t\n\f\r":
            out.append({"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}[c]
                       if c != "\t" or rng.random() < 0.5 else "\t")
        elif ord(c) < 0x20 or ord(c) == 0x7f:
            out.append("\\u%04x" % ord(c))
        elif rng.random() < 0.05:
            out.append("\\u%04X" % ord(c) if ord(c) < 0x10000 else "\\U%08x" % ord(c))
        else:
            out.append(c)
    return '"%s"' % "".join(out)


def render_string(rng, s):
    r = rng.random()
    if r < 0.2 and "'" not in s and all(c >= " " and c != "\x7f" or c == "\t" for c in s):
        return "'%s'" % s
    if r < 0.35 and "'''" not in s and not s.endswith("'") and all(
            c >= " " and c != "\x7f" or c in "\t\n" for c in s):
        return "'''%s%s'''" % ("\n" if s.startswith("\n") or rng.random() < 0.5 else "", s)
    if r < 0.5:
        body = render_basic(rng, s)[1:-1].replace("\\n", "\n")
        if rng.random() < 0.5:
            # a line-ending backslash and indentation, which TOML drops
            cut = rng.randint(0, len(body))
            if not body[:cut].endswith("\\") or body[:cut].endswith("\\\\"):
                if body[cut:cut + 1] not in (" ", "\t", "\n") and not (
                        body[:cut].count("\\") % 2):
                    body = body[:cut] + "\\\n   " + body[cut:]
        if body.endswith('"'):
            body = body[:-1] + '\\"'
        return '"""%s"""' % body
    return render_basic(rng, s)


def rand_string(rng):
    return "".join(rng.choice(TEXT) for _ in range(rng.randint(0, 12)))


def rand_int(rng):
    v = rng.choice([0, 1, -1, rng.randint(-1000, 1000), rng.randint(-2**63, 2**63 - 1),
                    2**63 - 1, -2**63])
    return v


def render_int(rng, v):
    r = rng.random()
    if v >= 0 and r < 0.1:
        return "0x" + rng.choice([format(v, "x"), format(v, "X")])
    if v >= 0 and r < 0.15:
        return "0o%o" % v
    if v >= 0 and r < 0.2:
        return "0b" + format(v, "b")
    s = str(abs(v))
    if len(s) > 3 and rng.random() < 0.3:
        s = "{:,}".format(abs(v)).replace(",", "_")
    sign = "-" if v < 0 else ("+" if rng.random() < 0.1 else "")
    return sign + s


def rand_float_text(rng):
    r = rng.random()
    if r < 0.1:
        return rng.choice(["inf", "+inf", "-inf", "nan", "+nan", "-nan"])
    sign = rng.choice(["", "-", "+"])
    ip = str(rng.randint(0, 10**rng.randint(0, 6)))
    text = sign + ip
    has = False
    if rng.random() < 0.7:
        text += "." + str(rng.randint(0, 10**rng.randint(1, 5)))
        has = True
    if not has or rng.random() < 0.3:
        text += rng.choice("eE") + rng.choice(["", "+", "-"]) + str(rng.randint(0, 300))
    return text


def rand_datetime_text(rng):
    y = rng.randint(1, 9999)
    m = rng.randint(1, 12)
    d = rng.randint(1, 28)
    date = "%04d-%02d-%02d" % (y, m, d)
    time = "%02d:%02d:%02d" % (rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59))
    if rng.random() < 0.3:
        time += "." + "".join(rng.choice(string.digits) for _ in range(rng.randint(1, 9)))
    r = rng.random()
    if r < 0.25:
        return date
    if r < 0.4:
        return time
    text = date + rng.choice("Tt ") + time
    r = rng.random()
    if r < 0.3:
        text += rng.choice("Zz")
    elif r < 0.6:
        text += "%s%02d:%02d" % (rng.choice("+-"), rng.randint(0, 23), rng.randint(0, 59))
    return text


class Raw:
    """A scalar already rendered as TOML text."""

    def __init__(self, text):
        self.text = text


def rand_scalar(rng):
    r = rng.random()
    if r < 0.35:
        return Raw(render_string(rng, rand_string(rng)))
    if r < 0.6:
        return Raw(render_int(rng, rand_int(rng)))
    if r < 0.72:
        return Raw(rand_float_text(rng))
    if r < 0.82:
        return Raw(rng.choice(["true", "false"]))
    return Raw(rand_datetime_text(rng))


def rand_value(rng, depth):
    r = rng.random()
    if depth < 3 and r < 0.12:
        return [rand_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    if depth < 3 and r < 0.22:
        return rand_table(rng, depth + 1)
    if depth < 3 and r < 0.27:
        return [rand_table(rng, depth + 1) for _ in range(rng.randint(1, 3))]
    return rand_scalar(rng)


def rand_table(rng, depth):
    t = {}
    for _ in range(rng.randint(0, 4 if depth else 6)):
        t[rand_key(rng)] = rand_value(rng, depth)
    return t


def ws(rng):
    return rng.choice(["", "", " ", "  ", "\t"])


def comment(rng):
    if rng.random() < 0.15:
        return ws(rng) + " # " + rng.choice(["note", "", "\u00e9", "a # b", "[x]"])
    return ""


def inline(rng, v):
    if isinstance(v, Raw):
        return v.text
    if isinstance(v, list):
        if not v:
            return "[" + ws(rng) + "]"
        sep = rng.choice([", ", ",", ",\n  ", " ,\n# c\n "])
        body = sep.join(inline(rng, x) for x in v)
        if rng.random() < 0.3:
            body += rng.choice([",", ",\n"])
        return "[" + ws(rng) + body + ws(rng) + "]"
    parts = ["%s%s=%s%s" % (render_key(rng, k), ws(rng), ws(rng), inline(rng, x))
             for k, x in v.items()]
    return "{" + ws(rng) + ("," + ws(rng)).join(parts) + ws(rng) + "}"


def dotted(rng, keys):
    return (ws(rng) + "." + ws(rng)).join(render_key(rng, k) for k in keys)


def is_aot(v):
    return isinstance(v, list) and v and all(isinstance(x, dict) for x in v)


def emit_body(rng, prefix, t, lines, deferred, path):
    """Key/value lines of table t (keys relative to the section: prefix),
    tables and arrays of tables left for headers go to deferred."""
    for k, v in t.items():
        if isinstance(v, dict) and v and rng.random() < 0.35:
            emit_body(rng, prefix + [k], v, lines, deferred, path + [k])
        elif isinstance(v, dict) and rng.random() < 0.6:
            deferred.append(("table", path + [k], v))
        elif is_aot(v) and rng.random() < 0.6:
            deferred.append(("aot", path + [k], v))
        else:
            lines.append("%s%s%s=%s%s%s" % (ws(rng), dotted(rng, prefix + [k]), ws(rng), ws(rng),
                                            inline(rng, v), comment(rng)))
        if rng.random() < 0.1:
            lines.append(rng.choice(["", "# comment", "   "]))


def emit_sections(rng, deferred, lines):
    for kind, path, v in deferred:
        elems = [v] if kind == "table" else v
        for e in elems:
            open_, close = ("[", "]") if kind == "table" else ("[[", "]]")
            lines.append("%s%s%s%s%s%s" % (open_, ws(rng), dotted(rng, path), ws(rng), close,
                                           comment(rng)))
            sub = []
            emit_body(rng, [], e, lines, sub, path)
            emit_sections(rng, sub, lines)


# Statement soup: few names, so tables, dotted keys, inline tables and
# arrays of tables collide in every order; values with the corner cases of
# strings, numbers and dates.
SOUP_KEYS = ["a", "b", "c", "a.b", "b.c", "a.b.c", "'a'", '"b"', "a . c", "c.a"]
SOUP_VALUES = [
    "1", '"s"', "'l'", '"""a""""', '"""a"""""', "'''b''''", "'''b'''''", '"""\\\n  x"""',
    '"""a\\ \n b"""', '"""\na"""', "'''\n'''", "{}", "{x = 1}", "{x.y = 1, x.z = 2}",
    "[]", "[1,]", "[{}]", "[[1], [2]]", "true", "1979-05-27", "07:32:00", "0x1f", "1e3",
    "-inf", '"\\u00e9"', '"\\U0001F600"', '"\\f\\b\\r\\t"', "+0", "-0.0", "0o17",
    "1979-05-27T07:32:00.5-07:00", "2000-02-29", "[ # c\n 1 # d\n , 2 ]", "{a.b = 1}",
    "{x = 1,\n y = 2}", "{x = 1\n}", "{x = 1\n y = 2}", "2001-02-29", "1979-04-31T00:00:00",
]


def gen_soup(rng):
    lines = []
    for _ in range(rng.randint(1, 8)):
        r = rng.random()
        k = rng.choice(SOUP_KEYS)
        if r < 0.25:
            lines.append("[%s]" % k)
        elif r < 0.4:
            lines.append("[[%s]]" % k)
        else:
            lines.append("%s = %s" % (k, rng.choice(SOUP_VALUES)))
    return "\n".join(lines) + "\n"


def gen_document(rng):
    if rng.random() < 0.4:
        return gen_soup(rng)
    t = rand_table(rng, 0)
    lines, deferred = [], []
    emit_body(rng, [], t, lines, deferred, [])
    emit_sections(rng, deferred, lines)
    text = "\n".join(lines) + rng.choice(["\n", "", "\n\n"])
    if rng.random() < 0.1:
        text = text.replace("\n", "\r\n")
    return text


def mutate(rng, text):
    pool = "[]{}=.,\"'#\\\n \t0_x+-:TZe\u00e9\r"
    for _ in range(rng.randint(1, 3)):
        if not text:
            text = rng.choice(pool)
            continue
        i = rng.randrange(len(text))
        op = rng.random()
        if op < 0.3:
            text = text[:i] + text[i + 1:]
        elif op < 0.6:
            text = text[:i] + rng.choice(pool) + text[i:]
        elif op < 0.75 and i + 1 < len(text):
            text = text[:i] + text[i + 1] + text[i] + text[i + 2:]
        else:
            lines = text.split("\n")
            j = rng.randrange(len(lines))
            if rng.random() < 0.5:
                lines.insert(j, lines[j])
            else:
                del lines[j]
            text = "\n".join(lines)
    return text




def ours_value(j):
    """Turns the dumper's tagged JSON into comparable Python values."""
    if isinstance(j, list):
        return [ours_value(x) for x in j]
    if isinstance(j, dict) and "type" in j and "value" in j and isinstance(j["type"], str) \
            and len(j) in (2, 3) and j["type"] in ("string", "integer", "float", "bool",
                                                  "datetime"):
        t, v = j["type"], j["value"]
        if t == "string":
            return ("str", v)
        if t == "integer":
            return ("int", int(v))
        if t == "bool":
            return ("bool", v == "true")
        if t == "float":
            f = float(v)
            return ("float", "nan" if math.isnan(f) else f)
        try:
            return ("dt", tomllib.loads("x = " + v)["x"])
        except tomllib.TOMLDecodeError:
            return ("not a date for tomllib", v)
    return {k: ours_value(x) for k, x in j.items()}


def their_value(v):
    if isinstance(v, dict):
        return {k: their_value(x) for k, x in v.items()}
    if isinstance(v, list):
        return [their_value(x) for x in v]
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, int):
        return ("int", v)
    if isinstance(v, float):
        return ("float", "nan" if math.isnan(v) else v)
    if isinstance(v, str):
        return ("str", v)
    if isinstance(v, (datetime.datetime, datetime.date, datetime.time)):
        return ("dt", v)
    raise TypeError(type(v))


def has_big_int(v):
    if isinstance(v, dict):
        return any(has_big_int(x) for x in v.values())
    if isinstance(v, list):
        return any(has_big_int(x) for x in v)
    return isinstance(v, int) and not isinstance(v, bool) and not -2**63 <= v < 2**63


def depth(v):
    """Levels below v of its deepest value, as ML_TOML_MAX_DEPTH counts them."""
    kids = v.values() if isinstance(v, dict) else v if isinstance(v, list) else ()
    return max((1 + depth(x) for x in kids), default=0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dumper", required=True)
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--files", nargs="*", default=None)
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else random.randrange(2**32)
    rng = random.Random(seed)
    work = tempfile.mkdtemp(prefix="mlsetup-toml-oracle.")
    try:
        docs = []
        for i in range(a.count if a.files is None else 0):
            text = gen_document(rng)
            if rng.random() < 0.35:
                text = mutate(rng, text)
            docs.append(text)
        for path in a.files or []:
            with open(path, encoding="utf-8") as f:
                docs.append(f.read())
        for i, text in enumerate(docs):
            with open(os.path.join(work, "%d.toml" % i), "wb") as f:
                f.write(text.encode("utf-8", "surrogatepass"))
        subprocess.run([a.dumper, "--dump-dir", work], check=True)
        bad, n_valid = [], 0
        for i, text in enumerate(docs):
            try:
                theirs = tomllib.loads(text)
                their_err = None
            except tomllib.TOMLDecodeError as e:
                theirs, their_err = None, str(e)
            except (ValueError, RecursionError) as e:
                theirs, their_err = None, repr(e)
            jp, ep = os.path.join(work, "%d.json" % i), os.path.join(work, "%d.err" % i)
            if os.path.exists(jp):
                with open(jp, encoding="utf-8") as f:
                    ours = ours_value(json.load(f))
                our_err = None
            else:
                with open(ep, encoding="utf-8", errors="replace") as f:
                    ours, our_err = None, f.read().strip()
            if their_err is None:
                n_valid += 1
            if their_err is None and our_err is None:
                if ours != their_value(theirs):
                    bad.append((i, "values differ", ours, their_value(theirs)))
            elif their_err is None:
                if not ("64-bit range" in our_err and has_big_int(theirs)) and \
                        not ("nested more than 64 levels deep" in our_err and
                             depth(theirs) > 64):
                    bad.append((i, "only tomllib accepts it", our_err, None))
            elif our_err is None:
                bad.append((i, "only mlsetup accepts it", their_err, None))
        print("# toml oracle: seed %d, %d documents (%d valid TOML), %d disagreements"
              % (seed, len(docs), n_valid, len(bad)))
        if a.files and n_valid != len(docs):
            print("# a given file is not TOML for tomllib")
            return 1
        for i, what, x, y in bad[:5]:
            print("# document %d: %s" % (i, what))
            for line in docs[i].splitlines():
                print("#   | " + repr(line))
            print("#   %r" % (x,))
            if y is not None:
                print("#   tomllib: %r" % (y,))
        return 1 if bad else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
