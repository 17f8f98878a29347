"""What the report scripts in perf-reports/ share, written once: running commands, the CPU, the
commit and the toolchain a report names, building `blockbloom-perf` and running its programs
with `--format json`, grouping their JSON rows, and writing markdown. A script here imports it
with `sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))`, then `import perflib`.
Commands run in the checkout's root (ROOT) from any directory; an OUT stays the caller's path.
"""

import json
import os
import re
import shlex
import subprocess
import sys
from datetime import date

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME = os.path.basename(sys.argv[0])
TIERS = ("avx2", "avx512f", "avx512dq", "avx512bw")
BUILD = ["cargo", "build", "--release", "-p", "blockbloom-perf"]


def sh(cmd, cwd=ROOT):
    """The stdout of the shell command CMD run in CWD; raises CalledProcessError if it fails."""
    return subprocess.run(cmd, shell=True, check=True, capture_output=True, text=True,
                          cwd=cwd).stdout


def run(argv, env=None, cwd=ROOT):
    """(stdout, stderr) of ARGV, said on stderr first; the script stops with both if it fails."""
    print(f"{NAME}: {shlex.join(argv)}", file=sys.stderr, flush=True)
    p = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, env=env)
    if p.returncode != 0:
        sys.exit(f"{NAME}: `{shlex.join(argv)}` failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p.stdout, p.stderr


def cpu_info():
    """This CPU's model name and which of TIERS' flags it has (from /proc/cpuinfo)."""
    info = open("/proc/cpuinfo").read() if os.path.exists("/proc/cpuinfo") else ""
    model = re.search(r"model name\s*:\s*(.*)", info)
    flags = re.search(r"^flags\s*:\s*(.*)$", info, re.M)
    tiers = [f for f in TIERS if flags and f in flags.group(1).split()]
    return (model.group(1) if model else "unknown CPU"), tiers


def cpu(count=False):
    """The CPU as a report names it: the model and which of TIERS' flags it has, with COUNT
    also its logical CPUs."""
    model, tiers = cpu_info()
    return (f"{model}; flags {', '.join(tiers) or 'no AVX2'}"
            + (f"; {os.cpu_count()} logical CPUs" if count else ""))


def commit(rev="HEAD"):
    """REV's short hash."""
    return sh(f"git rev-parse --short {rev}").strip()


def dirty():
    """" (with uncommitted changes)" when a tracked file differs from HEAD, else ""."""
    modified = sh("git status --porcelain --untracked-files=no").strip()
    return " (with uncommitted changes)" if modified else ""


def rustc():
    """The compiler's version line."""
    return sh("rustc --version").strip()


def today():
    """The date a report is written, YYYY-MM-DD."""
    return date.today().isoformat()


def shown(path):
    """PATH as a report shows it: relative to the checkout when inside it."""
    return os.path.relpath(path, ROOT) if path.startswith(ROOT + os.sep) else path


def build(cwd=ROOT, env=None):
    """Builds `blockbloom-perf` (BUILD) in the workspace at CWD; the binary's path (in cargo's
    target directory, CARGO_TARGET_DIR honoured)."""
    run(BUILD, env=env, cwd=cwd)
    meta, _ = run(["cargo", "metadata", "--format-version", "1", "--no-deps"], env=env, cwd=cwd)
    return os.path.join(json.loads(meta)["target_directory"], "release", "blockbloom-perf")


def perf(binary, args, env=None):
    """Runs `BINARY --format json ARGS`: (its JSON document as printed, its text on stderr)."""
    return run([binary, "--format", "json", *map(str, args)], env=env)


def rows(document):
    """The rows of a measuring program's JSON document (text or parsed): `results.rows`."""
    return (json.loads(document) if isinstance(document, str) else document)["results"]["rows"]


def pivot(rows, *fields, keep=None):
    """ROWS (those KEEP accepts) grouped by their FIELDS, in the order first seen:
    {values: {"ns": {side: ns_per_key}, "ratio": {ratio: median}}}, values a tuple, or one
    value for one field; a row with neither a side nor a ratio opens its group only."""
    out = {}
    for r in rows:
        if keep is None or keep(r):
            key = tuple(r.get(f) for f in fields) if len(fields) > 1 else r.get(fields[0])
            cell = out.setdefault(key, {"ns": {}, "ratio": {}})
            if "side" in r:
                cell["ns"][r["side"]] = r["ns_per_key"]
            elif "ratio" in r:
                cell["ratio"][r["ratio"]] = r["median"]
    return out


def medians(rows, *fields, keep=None):
    """The sides' medians alone: {values: {side: ns_per_key}} of the ROWS that have a side."""
    has_side = lambda r: "side" in r and (keep is None or keep(r))  # noqa: E731
    return {k: v["ns"] for k, v in pivot(rows, *fields, keep=has_side).items()}


def num(value):
    """A median ns per key as the tables print it ("-" when missing)."""
    return "-" if value is None else f"{value:.2f}"


def times(value):
    """A ratio as the tables print it ("-" when missing)."""
    return "-" if value is None else f"{value:.2f}x"


def table(head, body, align):
    """A markdown table's lines: the HEAD cells, ALIGN (l, r or - a column), the BODY rows."""
    line = lambda cells: "| " + " | ".join(str(c) for c in cells) + " |"  # noqa: E731
    rule = ({"l": ":---", "r": "---:", "-": "---"}[a] for a in align)
    return [line(head), line(rule)] + [line(r) for r in body]


def fence(text, lang=""):
    """TEXT in a fenced code block."""
    return f"```{lang}\n{text.rstrip()}\n```"


def emit(report, out):
    """Writes REPORT to the file OUT, or prints it when OUT is None."""
    if out:
        open(out, "w").write(report)
        print(f"{NAME}: wrote {out}", file=sys.stderr)
    else:
        print(report)
