#!/usr/bin/env python3
"""Checks how nfsgw's source folders depend on each other, from their #include lines.

A folder depends on another when one of its files includes a file of the other
("gateway/rpc/dispatcher.h" from gateway/server/ makes gateway/server depend on
gateway/rpc). The checks:
  - no cycle between folders: two folders never include each other, directly or
    through others (each folder is one CMake library, and libraries depend one way);
  - the layers point one way: protocol/ includes neither cache/ nor gateway/ (nor
    config/), and cache/ does not include gateway/;
  - every folder with sources has its own CMakeLists.txt (one library per folder);
  - no test sleeps: sleep_for, sleep_until, usleep, nanosleep or sleep( in tests/
    (comments aside) only in tests/support/waiting.h, which waits on conditions,
    on a clock, or paces a load on purpose.

--self-test builds small trees that break each rule and expects each to fail, and
one that keeps them and expects it to pass: the check can fail.
"""
import argparse
import os
import re
import sys
import tempfile

SOURCE_ROOTS = ["protocol", "config", "cache", "gateway"]
FORBIDDEN = [("protocol", "cache"), ("protocol", "gateway"), ("protocol", "config"), ("cache", "gateway")]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SUFFIXES = (".h", ".hpp", ".cpp", ".cc")

SLEEP = re.compile(r"\b(sleep_for|sleep_until|usleep|nanosleep|sleep)\s*\(")
SLEEP_SUFFIXES = (".h", ".hpp", ".cpp", ".cc", ".c", ".py")
SLEEP_HOME = "tests/support/waiting.h"
# Files that cannot use waiting.h, with why they may sleep.
SLEEP_EXEMPT = {
    "tests/kernel/host/rpcb_claim.c": "a C program run in the kernel test's guest; it paces a re-claim loop",
    "tests/packaging/check_unit_sandbox.py": "Python: its wait_for() polls a condition, as waiting.h does",
    "tests/layering/check_includes.py": "this check: it names what it looks for",
    "tests/kernel/guest/fstests.c": "a C program run in the kernel test's guest; it polls for the client's "
    "asynchronous removal of a silly-renamed file",
    "tests/container/helper.py": "Python: wait_nfs() polls a condition (an NFS NULL answer), as waiting.h does",
}
C_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
PY_COMMENT = re.compile(r"#[^\n]*")


def folder_edges(root):
    """{folder: {included folder: [(file, include)]}} for the folders under SOURCE_ROOTS."""
    edges = {}
    for top in SOURCE_ROOTS:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            folder = os.path.relpath(dirpath, root)
            edges.setdefault(folder, {})
            for name in files:
                if not name.endswith(SUFFIXES):
                    continue
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                for inc in INCLUDE.findall(text):
                    if not os.path.exists(os.path.join(root, inc)):
                        continue  # not one of ours (or relative to the file's folder)
                    target = os.path.dirname(inc)
                    if target and target != folder:
                        edges[folder].setdefault(target, []).append((os.path.relpath(path, root), inc))
    return edges


def cycles(edges):
    """Strongly connected components with more than one folder (Tarjan)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def sleeps(root):
    """Problems for each sleep in tests/ outside SLEEP_HOME and SLEEP_EXEMPT."""
    found = []
    for dirpath, _, files in os.walk(os.path.join(root, "tests")):
        for name in sorted(files):
            if not name.endswith(SLEEP_SUFFIXES):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            if rel == SLEEP_HOME or rel in SLEEP_EXEMPT:
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            # Comments may talk about sleeping; replaced by as many newlines, so
            # that line numbers stay right.
            comment = PY_COMMENT if name.endswith(".py") else C_COMMENT
            text = comment.sub(lambda m: "\n" * m.group(0).count("\n"), text)
            for m in SLEEP.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                found.append(f"{rel}:{line}: a test sleeps ({m.group(1)}): wait on the condition, "
                             f"or use {SLEEP_HOME} (wait_until, wait_past, Pacer, pass_time)")
    return found


def under(folder, top):
    return folder == top or folder.startswith(top + "/")


def problems(root):
    edges = folder_edges(root)
    found = []
    for comp in cycles(edges):
        lines = []
        for a in comp:
            for b, why in sorted(edges.get(a, {}).items()):
                if b in comp:
                    lines.append(f"    {a} -> {b} ({why[0][0]}: \"{why[0][1]}\")")
        found.append("folders include each other: " + ", ".join(comp) + "\n" + "\n".join(lines))
    for a, targets in sorted(edges.items()):
        for b, why in sorted(targets.items()):
            for low, high in FORBIDDEN:
                if under(a, low) and under(b, high):
                    found.append(f"{a} must not include {high}/: {why[0][0]} includes \"{why[0][1]}\"")
    for folder in sorted(edges):
        has_sources = any(n.endswith((".cpp", ".cc")) for n in os.listdir(os.path.join(root, folder)))
        if has_sources and not os.path.exists(os.path.join(root, folder, "CMakeLists.txt")):
            found.append(f"{folder} has sources but no CMakeLists.txt of its own (one library per folder)")
    return found + sleeps(root)


def write(root, path, text):
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w", encoding="utf-8") as f:
        f.write(text)


def self_test():
    base = {
        "protocol/CMakeLists.txt": "", "protocol/xdr.h": "", "protocol/xdr.cpp": '#include "protocol/xdr.h"\n',
        "cache/CMakeLists.txt": "", "cache/store.h": '#include "protocol/xdr.h"\n', "cache/store.cpp": "",
        "gateway/CMakeLists.txt": "", "gateway/program.h": '#include "cache/store.h"\n',
        "gateway/a/CMakeLists.txt": "", "gateway/a/a.h": '#include "gateway/program.h"\n', "gateway/a/a.cpp": "",
        "gateway/b/CMakeLists.txt": "", "gateway/b/b.h": '#include "gateway/a/a.h"\n', "gateway/b/b.cpp": "",
        SLEEP_HOME: "inline void pass_time() { std::this_thread::sleep_until(t); }\n",
        "tests/unit/a_test.cpp": "// no sleep_for(1s) here: a comment\nTEST(A, B) { wait_until(done, 1s, \"x\"); }\n",
        "tests/tool.py": "# time.sleep(1) in a comment\nprint('x')\n",
    }
    cases = {
        "a tree that keeps the rules": ({}, None),
        "two folders including each other": ({"gateway/a/a.cpp": '#include "gateway/b/b.h"\n'}, "include each other"),
        "a cycle through three folders": ({"gateway/program.h": '#include "gateway/b/b.h"\n'}, "include each other"),
        "protocol/ including cache/": ({"protocol/xdr.cpp": '#include "cache/store.h"\n'}, "protocol must not include cache/"),
        "protocol/ including gateway/": ({"protocol/xdr.cpp": '#include "gateway/a/a.h"\n'}, "protocol must not include gateway/"),
        "cache/ including gateway/": ({"cache/store.cpp": '#include "gateway/b/b.h"\n'}, "cache must not include gateway/"),
        "a folder without its CMakeLists.txt": ({"gateway/c/c.cpp": '#include "gateway/a/a.h"\n'}, "no CMakeLists.txt"),
        "a test calling sleep_for": ({"tests/unit/a_test.cpp": "TEST(A, B) {\n  std::this_thread::sleep_for(1s);\n}\n"},
                                     "tests/unit/a_test.cpp:2: a test sleeps (sleep_for)"),
        "a test helper calling usleep": ({"tests/support/x.cpp": "void f() { ::usleep(1000); }\n"},
                                         "tests/support/x.cpp:1: a test sleeps (usleep)"),
        "a test calling sleep(": ({"tests/integration/y_test.cpp": "void g() { sleep (1); }\n"}, "a test sleeps (sleep)"),
        "a test calling sleep_until": ({"tests/unit/a_test.cpp": "void h() { std::this_thread::sleep_until(t); }\n"},
                                       "a test sleeps (sleep_until)"),
        "a Python test calling time.sleep": ({"tests/tool.py": "import time\ntime.sleep(0.1)\n"},
                                             "tests/tool.py:2: a test sleeps (sleep)"),
    }
    failed = False
    for name, (change, expect) in cases.items():
        with tempfile.TemporaryDirectory() as root:
            for path, text in {**base, **change}.items():
                write(root, path, text)
            found = problems(root)
            if expect is None and found:
                print(f"self-test: {name}: unexpected problems: {found}")
                failed = True
            elif expect is not None and not any(expect in p for p in found):
                print(f"self-test: {name}: not caught (found {found})")
                failed = True
            else:
                print(f"self-test: {name}: {'passes' if expect is None else 'caught'}")
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    found = problems(os.path.abspath(args.source))
    for p in found:
        print(p)
    if not found:
        print("folders depend one way: no cycle, protocol/ and cache/ stay below gateway/")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
