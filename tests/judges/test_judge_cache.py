"""The judge reply cache: hits skip the call, only successes are kept, and a cache that
cannot be used turns itself off with one warning instead of failing the run."""

from __future__ import annotations

import logging
import sqlite3
import threading

from judge_server import status
from judge_testkit import SCHEMA, ask

from assay.judges import JudgeCache
from assay.runner.resources import LazyJudgeClient, build_resources
from assay.settings import Settings


def test_hit_makes_no_call_and_is_marked(judge_server, make_client, tmp_path):
    client = make_client(cache=JudgeCache(str(tmp_path / "deep" / "folder" / "cache.sqlite")))
    first = client.judge(ask(cache_key="sample-1", schema=SCHEMA))
    again = client.judge(ask(cache_key="sample-1", schema=SCHEMA))
    assert first.ok and not first.cached and first.attempts == 1
    assert again.cached and again.attempts == 0 and len(judge_server.requests) == 1
    assert (again.text, again.parsed, again.usage, again.model) == (first.text, first.parsed, first.usage, first.model)


def test_hits_survive_a_new_client(judge_server, make_client, tmp_path):
    path = str(tmp_path / "cache.sqlite")
    make_client(cache=JudgeCache(path)).judge(ask(cache_key="k"))
    assert make_client(cache=JudgeCache(path)).judge(ask(cache_key="k")).cached
    assert len(judge_server.requests) == 1


def test_anything_that_changes_the_answer_changes_the_key(judge_server, make_client, tmp_path):
    client = make_client(cache=JudgeCache(str(tmp_path / "c.sqlite")))
    variants = [ask(cache_key="k"), ask(cache_key="k2"), ask(cache_key="k", model="other"),
                ask(cache_key="k", temperature=0.7), ask(cache_key="k", seed=1), ask(cache_key="k", max_tokens=9),
                ask(cache_key="k", schema=SCHEMA)]
    assert [r.cached for r in client.judge_many(variants)] == [False] * 7
    # a trailing slash names the same endpoint: a hit
    assert client.judge(ask(cache_key="k", base_url=judge_server.url + "/")).cached
    assert len(judge_server.requests) == 7


def test_failures_and_uncached_requests_are_not_stored(judge_server, make_client, tmp_path):
    client = make_client(cache=JudgeCache(str(tmp_path / "c.sqlite")), max_retries=0)
    judge_server.queue(status(500))
    assert not client.judge(ask(cache_key="k")).ok
    assert client.judge(ask(cache_key="k")).ok  # asked again: the failure was not cached
    client.judge(ask(cache_key=None))
    assert not client.judge(ask(cache_key=None)).cached
    assert len(judge_server.requests) == 4


def test_no_cache_reads_nothing_but_refreshes(judge_server, make_client, tmp_path):
    path = str(tmp_path / "c.sqlite")
    make_client(cache=JudgeCache(path)).judge(ask(cache_key="k"))
    fresh = make_client(cache=JudgeCache(path, read=False))
    assert not fresh.judge(ask(cache_key="k")).cached and not fresh.judge(ask(cache_key="new")).cached
    assert make_client(cache=JudgeCache(path)).judge(ask(cache_key="new")).cached
    assert len(judge_server.requests) == 3


def test_corrupt_file_degrades_with_one_warning(judge_server, make_client, tmp_path, caplog):
    path = tmp_path / "c.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    client = make_client(cache=JudgeCache(str(path)))
    with caplog.at_level(logging.WARNING):
        replies = [client.judge(ask(cache_key="k")) for _ in range(3)]
    assert all(r.ok and not r.cached for r in replies) and len(judge_server.requests) == 3
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "judge cache" in r.getMessage()]
    assert len(warnings) == 1 and "continuing without a cache" in warnings[0].getMessage()


def test_unwritable_location_degrades(judge_server, make_client, tmp_path, caplog):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    client = make_client(cache=JudgeCache(str(blocker / "cache.sqlite")))  # its folder is a file
    with caplog.at_level(logging.WARNING):
        assert client.judge(ask(cache_key="k")).ok
    assert not client.cache.enabled and "judge cache" in caplog.text


def test_locked_file_degrades(judge_server, make_client, tmp_path, caplog):
    path = str(tmp_path / "c.sqlite")
    seeded = JudgeCache(path)
    seeded.put("x", ask_reply())
    seeded.close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        client = make_client(cache=JudgeCache(path, busy_timeout_s=0.1))
        with caplog.at_level(logging.WARNING):
            assert client.judge(ask(cache_key="k")).ok
        assert not client.cache.enabled
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_concurrent_use_from_many_threads(judge_server, make_client, tmp_path):
    client = make_client(cache=JudgeCache(str(tmp_path / "c.sqlite")), concurrency=8)
    keys = [f"k{i}" for i in range(40)]

    def work(offset: int) -> None:
        client.judge_many([ask(k, cache_key=k) for k in keys[offset:] + keys[:offset]])

    threads = [threading.Thread(target=work, args=(i * 10,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    replies = client.judge_many([ask(k, cache_key=k) for k in keys])
    assert all(r.cached for r in replies) and client.cache.enabled
    assert 40 <= len(judge_server.requests) <= 160  # each key asked at most once per thread


def test_resources_build_the_judge_lazily_and_no_cache_skips_reads(judge_server, tmp_path):
    settings = Settings.from_env({"ASSAY_JUDGE_BASE_URL": judge_server.url, "ASSAY_JUDGE_MODEL": "judge-test",
                                  "ASSAY_JUDGE_CACHE": str(tmp_path / "c.sqlite")})
    resources = build_resources(settings)
    judge = resources.judge_client
    assert isinstance(judge, LazyJudgeClient) and judge._client is None
    assert not (tmp_path / "c.sqlite").exists()  # nothing built, nothing opened
    try:
        judge.judge(ask(cache_key="k"))
        assert judge.judge(ask(cache_key="k")).cached
        bypass = build_resources(settings, judge_cache_reads=False).judge_client
        assert not bypass.judge(ask(cache_key="k")).cached
        bypass.close()
    finally:
        judge.close()
    assert len(judge_server.requests) == 2


def ask_reply():
    from assay.core.judge import JudgeReply

    return JudgeReply(text="ok")


def test_run_no_cache_swaps_only_the_judge_client():
    from typer.testing import CliRunner

    from assay.cli.main import app
    from assay.runner.job import _resources
    from assay.runner.resources import Defaults

    shared = Defaults.resources()
    assert _resources(False) is shared
    bypass = _resources(True)
    assert bypass.code_runner is shared.code_runner and bypass.process_runner is shared.process_runner
    assert isinstance(bypass.judge_client, LazyJudgeClient) and bypass.judge_client._read_cache is False
    assert shared.judge_client._read_cache is True
    assert "--no-cache" in CliRunner().invoke(app, ["run", "--help"]).output
