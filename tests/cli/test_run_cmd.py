"""`assay run` reports what the loader noticed, and takes the suite's dialect when told."""

import json
import subprocess
import sys

EVAL = ("name: x\nskill: s\ngraders:\n  - type: contains\n    name: c\ntasks:\n  - tasks/*.yaml\n"
        "config: {trials_per_task: 1, timeout_seconds: 60}\n")


def assay(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "assay.cli.main", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=120)


def waza_suite(tmp_path, eval_text=EVAL, records=()):
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "a.yaml").write_text("id: deploy-api\ninputs: {prompt: hi}\n")
    (tmp_path / "eval.yaml").write_text(eval_text)
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return tmp_path / "eval.yaml"


def test_results_whose_task_id_matches_no_task_are_named(tmp_path):
    p = waza_suite(tmp_path, records=[{"task_id": "deploy-api", "output": "x"},
                                      {"task_id": "deploy-apl", "output": "x"}])
    for quiet in ([], ["-q"]):
        r = assay("run", str(p), *quiet)
        assert r.returncode == 0, r.stderr      # what matched is graded and passes, as before
        assert "1/1 passed" in r.stdout
        warning = [line for line in r.stderr.splitlines() if line.startswith("warning: ")]
        assert len(warning) == 1 and "'deploy-apl'" in warning[0] and "results.jsonl" in warning[0]


def test_keys_a_peer_ignores_are_warned_about_with_their_line(tmp_path):
    p = waza_suite(tmp_path, EVAL.replace("trials_per_task: 1", "trails_per_task: 2"),
                   records=[{"task_id": "deploy-api", "output": "x"}])
    r = assay("run", str(p), "--waza-version", "0.21")  # waza 0.24 on refuses unknown keys
    assert r.returncode == 0, r.stderr
    assert f"warning: {p}:8: config.trails_per_task: unknown field 'trails_per_task' ignored" in r.stderr


def test_dialect_option(tmp_path):
    p = waza_suite(tmp_path, EVAL.replace("  - tasks/*.yaml\n", "  - tasks/*.yaml\n  - 3\n"),
                   records=[{"task_id": "deploy-api", "output": "x"}])
    r = assay("run", str(p), "--dialect", "waza")
    assert r.returncode == 2 and f"{p}:8: tasks[1]: a task entry must be a glob string" in r.stderr
    r = assay("run", str(p), "--dialect", "wazza")
    assert r.returncode == 2 and "unknown dialect 'wazza'" in r.stderr


def test_out_never_overwrites_the_results_file_found_beside_a_peer_suite(tmp_path):
    p = waza_suite(tmp_path, records=[{"task_id": "deploy-api", "output": "x"}])
    before = (tmp_path / "results.jsonl").read_text()
    r = assay("run", str(p), "--out", str(tmp_path / "results.jsonl"))
    assert r.returncode == 2 and "would overwrite an input" in r.stderr
    assert (tmp_path / "results.jsonl").read_text() == before
