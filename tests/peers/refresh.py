"""How far a waza source tree is from what assay knows. Run by `make peers-refresh WAZA=<dir>`,
never in CI; it reads local files only (a git directory the fetch tool mirrored, or a plain
source folder), never the network.

What assay knows is read from assay itself (the waza dialect's kinds, parameter keys and file
fields, runner/suites/dialects/) and from tests/peers/waza/cases.yaml; what waza has is read
from its Go source at ``--rev`` (default HEAD): grader kinds (``GraderKind... = "..."``), each
``*GraderParameters`` struct's yaml keys, and the test functions and ``t.Run`` names of its
``*_test.go`` files. It prints new grader kinds, new and removed keys, cited tests that are
gone, and regenerates the argument-matcher cases of waza's table-driven ``TestMatcherEquals``
into tests/peers/waza/generated.yaml (``--write``), naming every case whose verdict moved.
Exit status 0 when nothing differs, 1 otherwise.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).parent
KIND = re.compile(r'GraderKind\w*\s+GraderKind\s*=\s*"(\w+)"')
STRUCT = re.compile(r"type (\w+GraderParameters) struct \{(.*?)\n\}", re.S)
YAML_TAG = re.compile(r'yaml:"([a-z_]+)')
TEST = re.compile(r'func (Test\w+)\(t \*testing\.T\)|t\.Run\("([^"]+)"')
EQUALS_ROW = re.compile(r'\{"([^"]+)",\s*(.+?),\s*(.+?),\s*(true|false)\},')


class Source:
    """Files of a waza tree: a git directory read at a revision, or a plain folder."""

    def __init__(self, path: Path, rev: str) -> None:
        self.path, self.rev = path, rev
        self.git = (path / "HEAD").is_file() and (path / "objects").is_dir()

    def files(self, under: str, suffix: str) -> list[str]:
        if self.git:
            out = subprocess.run(["git", f"--git-dir={self.path}", "ls-tree", "-r", "--name-only", self.rev, under],
                                 capture_output=True, text=True, check=True).stdout.split()
        else:
            out = [str(p.relative_to(self.path)) for p in (self.path / under).rglob("*")]
        return sorted(f for f in out if f.endswith(suffix))

    def read(self, name: str) -> str:
        if self.git:
            return subprocess.run(["git", f"--git-dir={self.path}", "show", f"{self.rev}:{name}"],
                                  capture_output=True, text=True, check=True).stdout
        return (self.path / name).read_text(encoding="utf-8")

    def commit(self) -> str:
        if not self.git:
            return "(folder)"
        return subprocess.run(["git", f"--git-dir={self.path}", "rev-parse", self.rev],
                              capture_output=True, text=True, check=True).stdout.strip()


def waza_surface(src: Source) -> dict[str, Any]:
    go = {f: src.read(f) for f in src.files("internal", ".go")}
    kinds = sorted({k for f, text in go.items() if f.startswith("internal/models/") for k in KIND.findall(text)})
    params = {name: sorted(set(YAML_TAG.findall(body)))
              for text in go.values() for name, body in STRUCT.findall(text)}
    tests = {f: sorted({a or b for a, b in TEST.findall(text)}) for f, text in go.items() if f.endswith("_test.go")}
    return {"kinds": kinds, "params": params, "tests": tests, "go": go}


def assay_surface(release: str) -> dict[str, Any]:
    """The kinds assay reads at ``release`` and the parameter keys it knows (of any release)."""
    from assay.runner.suites.dialects._waza_kinds import WAZA_PARAMS, go_kinds
    from assay.runner.suites.dialects._waza_releases import Release, parse

    kinds = go_kinds(Release(parse(release), "compared"))
    return {"kinds": sorted(kinds), "params": {t: sorted(keys) for t, keys in WAZA_PARAMS.values()}}


def matcher_cases(go: dict[str, str]) -> list[dict[str, Any]]:
    """TestMatcherEquals's rows as tool_calls cases (Go literals of the simple kinds it uses)."""
    text = go.get("internal/graders/argmatcher/matcher_test.go", "")
    body = text.split("func TestMatcherEquals", 1)[-1].split("\nfunc ", 1)[0] if text else ""
    out = []
    for name, want_go, actual_go, ok in EQUALS_ROW.findall(body):
        try:
            want, actual = _literal(want_go), _literal(actual_go)
        except ValueError:
            continue
        out.append({"source": {"file": "internal/graders/argmatcher/matcher_test.go",
                               "test": f"TestMatcherEquals/{name}"},
                    "assay": {"type": "waza_tool_calls", "config": {"expect": [{"tool": "t", "args": {"v": {
                        "equals": want}}}]}},
                    "metadata": {"session_digest": {"tool_calls": [{"name": "t", "arguments": {"v": actual}}]}},
                    "expect": {"passed": ok == "true"}})
    return out


def _literal(go: str) -> Any:
    go = go.strip()
    if go == "nil":
        return None
    if go.startswith('"'):
        return go.strip('"')
    if re.fullmatch(r"-?\d+", go):
        return int(go)
    if re.fullmatch(r"-?\d+\.\d*", go):
        return float(go)
    if m := re.fullmatch(r"map\[string\]any\{(.*)\}", go):
        return {k: _literal(v) for k, v in re.findall(r'"(\w+)":\s*([^,]+)', m[1])}
    if m := re.fullmatch(r"\[\]any\{(.*)\}", go):
        return [_literal(v) for v in m[1].split(",") if v.strip()]
    raise ValueError(go)


def examples(src: Source, release: str) -> list[str]:
    """Each ``examples/*/eval.yaml`` of the tree, copied with its folder to a temporary one and
    read by assay as ``release``: the problems found (an example without outputs to grade is
    fine; its files were decoded before that was found)."""
    import tempfile

    from assay.core.errors import SpecError
    from assay.runner.suites import load_suite

    problems = []
    for name in src.files("examples", "eval.yaml"):
        folder = name.rsplit("/", 1)[0]
        with tempfile.TemporaryDirectory() as tmp:
            for f in src.files(folder, ""):
                if f.endswith((".yaml", ".yml", ".md", ".json", ".csv")):
                    (Path(tmp) / f).parent.mkdir(parents=True, exist_ok=True)
                    (Path(tmp) / f).write_text(src.read(f), encoding="utf-8")
            try:
                suite = load_suite(Path(tmp) / name, waza_version=release)
                problems += [f"{name}: warning: {w.replace(tmp + '/', '')}" for w in suite.warnings]
            except SpecError as exc:
                if "no graded outputs" not in str(exc):
                    problems.append(f"{name}: {str(exc).replace(tmp + '/', '')}")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("waza", type=Path, help="waza git directory (the fetch tool's mirror) or source folder")
    ap.add_argument("--rev", default="HEAD", help="revision of a git directory (default HEAD)")
    ap.add_argument("--write", action="store_true", help="rewrite tests/peers/waza/generated.yaml")
    ap.add_argument("--release", help="read the tree's examples/ as this waza release (default: the newest assay knows)")
    args = ap.parse_args(argv)
    from assay.runner.suites.dialects._waza_releases import NEWEST

    release = args.release or NEWEST
    src = Source(args.waza, args.rev)
    theirs, ours = waza_surface(src), assay_surface(release)
    print(f"waza at {src.commit()} against what assay knows of waza {release}")
    changed = False
    for label, items in (("grader kinds new in waza", set(theirs["kinds"]) - set(ours["kinds"])),
                         ("grader kinds assay knows that this waza lacks", set(ours["kinds"]) - set(theirs["kinds"]))):
        if items:
            changed = True
            print(f"  {label}: {', '.join(sorted(items))}")
    for name, keys in sorted(theirs["params"].items()):
        known = set(ours["params"].get(name, []))
        if name not in ours["params"]:
            changed = True
            print(f"  new parameter type {name}: {', '.join(keys)}")
        elif set(keys) != known:
            changed = True
            print(f"  {name}: new keys {sorted(set(keys) - known)}, gone {sorted(known - set(keys))}")
    tests = {f"{f}:{t}" for f, names in theirs["tests"].items() for t in names}
    missing: dict[str, list[str]] = {}
    for case in yaml.safe_load((HERE / "waza" / "cases.yaml").read_text()):
        s = case["source"]
        if s["file"].endswith("_test.go") and f"{s['file']}:{s['test'].split('/')[-1]}" not in tests:
            missing.setdefault(s["file"], []).append(s["test"])
    for name, cited in sorted(missing.items()):
        changed = True
        print(f"  cited tests not found at this revision: {name} ({len(cited)}, e.g. {cited[0]})")
    for problem in examples(src, release):
        changed = True
        print(f"  example not read cleanly: {problem}")
    generated = matcher_cases(theirs["go"])
    path = HERE / "waza" / "generated.yaml"
    before = {c["source"]["test"]: c["expect"] for c in (yaml.safe_load(path.read_text()) or [])} if path.exists() else {}
    for case in generated:
        old = before.get(case["source"]["test"])
        if old is not None and old != case["expect"]:
            changed = True
            print(f"  verdict moved: {case['source']['test']}: {old} -> {case['expect']}")
    new = [c["source"]["test"] for c in generated if c["source"]["test"] not in before]
    if new:
        changed = True
        print(f"  new generated cases: {', '.join(new)}")
    if args.write and generated:
        for case in generated:
            case["source"]["commit"] = src.commit()[:8]
        path.write_text("# Generated by tests/peers/refresh.py from waza's table-driven tests; do not edit.\n"
                        + yaml.safe_dump(generated, sort_keys=False, allow_unicode=True))
        print(f"  wrote {len(generated)} cases to {path}")
    print("  no differences" if not changed else "")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
