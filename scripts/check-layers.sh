#!/usr/bin/env bash
# The layer check: every #include "pkg/<x>/..." in pkg/ and cmd/ must name a folder whose CMake
# library the including target depends on, directly or transitively, in CMakeLists.txt (the one
# place dependencies are written), and must not point to a higher layer (docs: conventions.md §2).
# Prints one line per violation, `file:line: include: rule`, and fails if there is any.
#   scripts/check-layers.sh
set -euo pipefail
cd "$(dirname "$0")/.."
python3 - <<'PY'
import pathlib, re, sys

# Lowest first: a target may include only its own layer or lower ones. The core does no I/O, the
# app layer runs the scheduler on it, the edge talks to the network, cmd/berth wires it all.
LAYERS = [
    ("base", "util log"),
    ("model", "resource api labels"),
    ("core", "framework runtime algorithm plugins cache queue config metrics"),
    ("app", "events scheduler simulate leaderelection"),
    ("edge", "client informer serving apiserver"),
    ("root", "berth"),
]
rank = {("berth" if lib == "berth" else "berth_" + lib): (i, name)
        for i, (name, libs) in enumerate(LAYERS) for lib in libs.split()}

cmake = re.sub(r"#[^\n]*", "", pathlib.Path("CMakeLists.txt").read_text())
folders, deps, globs = {}, {}, {}  # folder -> target, target -> deps, glob var -> folders
for command, args in re.findall(r"\b(\w+)\s*\(([^()]*)\)", cmake):
    args = args.split()
    if command == "berth_library":
        folders[args[1]] = "berth_" + args[0]
        deps.setdefault("berth_" + args[0], set()).update(args[2:])
    elif command == "file" and args[:1] == ["GLOB"]:
        for path in args[2:]:
            path = path.replace("${CMAKE_SOURCE_DIR}/", "")
            folder = "/".join(p for p in path.split("/")[:-1] if "*" not in p)
            if "$" not in folder and folder.split("/")[0] in ("pkg", "cmd"):
                globs.setdefault(args[1], set()).add(folder)
    elif command in ("add_library", "add_executable") and "$" not in args[0]:
        for arg in args[1:]:
            for folder in globs.get(arg.strip("${}"), ()):
                folders[folder] = args[0]
        deps.setdefault(args[0], set())
    elif command == "target_link_libraries" and args[0] in deps:
        deps[args[0]].update(a for a in args[1:] if a not in ("PUBLIC", "PRIVATE", "INTERFACE"))

def owner(path):
    parts = path.split("/")
    for n in range(len(parts) - 1, 0, -1):
        if "/".join(parts[:n]) in folders:
            return folders["/".join(parts[:n])]
    return None

def closure(target):
    seen, todo = set(), [target]
    while todo:
        for dep in deps.get(todo.pop(), ()):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen

problems = []
for target in sorted(set(folders.values())):
    if target not in rank:
        problems.append(f"CMakeLists.txt: {target}: library has no layer in scripts/check-layers.sh")
include = re.compile(r'\s*#\s*include\s+"(pkg/[^"]+)"')
files = sorted(p for top in ("pkg", "cmd") for p in pathlib.Path(top).rglob("*")
               if p.suffix in (".h", ".cc", ".in"))
for path in files:
    source = owner(str(path))
    if source is None:
        problems.append(f"{path}: folder is in no CMake library")
        continue
    allowed = closure(source) | {source}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        m = include.match(line)
        if not m:
            continue
        target = owner(m.group(1))
        where = f"{path}:{number}: {m.group(1)}"
        if target is None:
            problems.append(f"{where}: folder is in no CMake library")
        elif target not in allowed:
            problems.append(f"{where}: {source} does not depend on {target} in CMakeLists.txt")
        elif target in rank and source in rank and rank[target][0] > rank[source][0]:
            problems.append(f"{where}: {source} ({rank[source][1]}) may not reach up into "
                            f"{target} ({rank[target][1]})")
print("\n".join(problems) or "layers clean")
sys.exit(1 if problems else 0)
PY
