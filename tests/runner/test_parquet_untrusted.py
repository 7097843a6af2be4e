"""An uploaded Parquet file is decoded in a child process with a memory cap: a file of a few
kilobytes that decodes to gigabytes (a long value repeated by its dictionary) is a SpecError
naming the file and row, and an ordinary file gives the rows the in-process reader gives, as JSON."""

from __future__ import annotations

import datetime
import decimal
import os
import resource
from pathlib import Path

import pytest

from assay.core.errors import SpecError
from assay.runner.dataset import read_rows
from assay.runner.dataset._parquet import untrusted_parquet_rows

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def write(path: Path, columns: dict) -> Path:
    pq.write_table(pa.table(columns), path, compression="zstd")
    return path


def test_an_ordinary_file_gives_the_same_rows_as_json_values(tmp_path):
    path = write(tmp_path / "d.parquet", {
        "id": ["1", "2"], "output": ["北京", None], "when": [datetime.datetime(2024, 1, 2, 3, 4), None],
        "price": [decimal.Decimal("1.50"), None], "tags": [["a", "b"], []], "meta": [{"k": 1}, {"k": None}]})
    with path.open("rb") as fh:
        rows = list(read_rows(fh, path, untrusted=True))
    assert rows == [
        (1, {"id": "1", "output": "北京", "when": "2024-01-02T03:04:00", "price": "1.50", "tags": ["a", "b"],
             "meta": {"k": 1}}),
        (2, {"id": "2", "output": None, "when": None, "price": None, "tags": [], "meta": {"k": None}})]
    with path.open("rb") as fh:
        trusted = list(read_rows(fh, path))
    assert [r["id"] for _, r in trusted] == ["1", "2"] and trusted[0][1]["tags"] == ["a", "b"]


def test_a_decompression_bomb_is_refused_without_growing_this_process(tmp_path):
    # 256 rows of one 4 MiB string: 1 GiB decoded, a few KiB on disk (dictionary + zstd).
    value = pa.DictionaryArray.from_arrays(pa.array([0] * 256, pa.int32()), pa.array(["x" * (4 << 20)]))
    path = write(tmp_path / "bomb.parquet", {"id": [str(i) for i in range(256)], "output": value})
    assert path.stat().st_size < 100_000
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with path.open("rb") as fh, pytest.raises(SpecError) as caught:
        for _ in untrusted_parquet_rows(fh, path, max_row_bytes=1 << 20, limit_mb=384):
            pass
    assert str(path) + ":1:" in str(caught.value)
    assert "384 MiB" in str(caught.value) and "JSONL" in str(caught.value)
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kb < 100_000, grown_kb  # the decoding happened in the child


def test_a_damaged_file_is_a_spec_error_naming_it(tmp_path):
    path = write(tmp_path / "d.parquet", {"id": [str(i) for i in range(1000)], "output": ["a"] * 1000})
    data = bytearray(path.read_bytes())
    data[20:400] = b"\xff" * 380  # the first page's bytes
    path.write_bytes(bytes(data))
    with path.open("rb") as fh, pytest.raises(SpecError) as caught:
        list(read_rows(fh, path, untrusted=True))
    assert str(path) in str(caught.value) and "Parquet" in str(caught.value)


def decoders() -> set[int]:
    """Children of this process running the Parquet decoder."""
    found = set()
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/stat") as stat, open(f"/proc/{pid}/cmdline", "rb") as cmd:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
                if parent == os.getpid() and b"_parquet_child" in cmd.read():
                    found.add(int(pid))
        except (OSError, ValueError, IndexError):
            continue
    return found


def test_a_reader_stopped_early_ends_its_child(tmp_path):
    path = write(tmp_path / "d.parquet", {"id": [str(i) for i in range(200_000)], "output": ["a"] * 200_000})
    with path.open("rb") as fh:
        rows = read_rows(fh, path, untrusted=True)
        assert next(rows)[0] == 1
        assert len(decoders()) == 1  # still decoding: far more rows than the pipe holds
        rows.close()  # what the upload does when a row is refused
    assert decoders() == set()  # killed and reaped, not left behind
