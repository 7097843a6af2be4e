import textwrap

import pytest

from assay.core.errors import SpecError
from assay.runner.local_engine.run import run_suite
from assay.runner.results import JsonlSink, read_results
from assay.runner.suites import load_suite


def suite_file(tmp_path, body, data=None):
    (tmp_path / "eval.yaml").write_text(textwrap.dedent(body), encoding="utf-8")
    if data is not None:
        (tmp_path / "data.jsonl").write_text(data, encoding="utf-8")
    return tmp_path / "eval.yaml"


def test_invalid_grader_config_names_file_line_and_field(tmp_path):
    p = suite_file(tmp_path, """\
        name: s
        dataset: data.jsonl
        graders:
          - type: contains
          - type: similarity
            config:
              threshold: 2
        """, '{"id": 1}\n')
    with pytest.raises(SpecError) as info:
        load_suite(p)
    msg = str(info.value)
    assert f"{p}:7" in msg and "graders[1].config.threshold" in msg


def test_unknown_top_level_key(tmp_path):
    p = suite_file(tmp_path, "name: s\ngraders: [{type: contains}]\nsamples: []\nthreshhold: 1\n")
    with pytest.raises(SpecError, match=r"eval\.yaml:4.*threshhold: unknown field"):
        load_suite(p)


def test_yaml_syntax_error_has_line(tmp_path):
    p = suite_file(tmp_path, "name: s\ngraders: [\n  {type: contains\n")
    with pytest.raises(SpecError, match=r"eval\.yaml:\d+: invalid YAML"):
        load_suite(p)


def test_duplicate_grader_names(tmp_path):
    p = suite_file(tmp_path, "name: s\nsamples: []\ngraders: [{type: contains}, {type: contains}]\n")
    with pytest.raises(SpecError, match="duplicate grader name 'contains'"):
        load_suite(p)


def test_run_and_resume_without_duplicates(tmp_path):
    rows = "".join(f'{{"id": {i}, "output": "x{i}", "expected": "x{i if i % 3 else -1}"}}\n' for i in range(10))
    p = suite_file(tmp_path, "name: s\ndataset: data.jsonl\ngraders: [{type: exact_match}]\n", rows)
    suite = load_suite(p)
    out = tmp_path / "results.jsonl"
    sink = JsonlSink(out)
    # a run that dies after its first chunk, mid-way through writing the second line of the next
    first = run_suite(suite, sink=sink, chunk_size=4, done_ids=set(str(i) for i in range(4, 10)))
    sink.close()
    with out.open("ab") as fh:
        fh.write(b'{"id": "4", "status": "pass')
    log = read_results(out)
    log.drop_torn_line()
    done = {v.id for v in log.verdicts}
    assert done == {"0", "1", "2", "3"} and len(first.verdicts) == 4 and log.torn_line is None
    sink = JsonlSink(out, append=True)
    rest = run_suite(suite, sink=sink, done_ids=done)
    sink.close()
    ids = [line.split('"id":"')[1].split('"')[0] for line in out.read_text().splitlines()]
    assert sorted(ids, key=int) == [str(i) for i in range(10)]
    assert rest.resumed == 4 and rest.summary.total == 6


def test_cost_ordered_skips_expensive_graders_after_a_cheap_failure(tmp_path):
    p = suite_file(tmp_path, """\
        name: s
        cost_ordered: true
        samples:
          - {id: a, output: "ok", expected: "ok"}
          - {id: b, output: "no", expected: "ok"}
        graders:
          - {type: code, name: costly, config: {assertions: ["len(output) > 0"]}}
          - {type: exact_match, name: cheap}
        """)
    suite = load_suite(p)

    class CountingRunner:
        calls = 0

        def call(self, request):
            from assay.core.interfaces import CodeOutcome
            CountingRunner.calls += 1
            return CodeOutcome(value=[{"assertion": "len(output) > 0", "passed": True}])

    from assay.core.interfaces import Resources
    result = run_suite(suite, resources=Resources(code_runner=CountingRunner()))
    a, b = result.verdicts
    assert a.passed and [r.name for r in a.results] == ["costly", "cheap"]
    assert b.skipped == ["costly"] and [r.name for r in b.results] == ["cheap"]
    assert CountingRunner.calls == 1
    assert {g.name: g.skipped for g in result.summary.graders} == {"costly": 1, "cheap": 0}


def test_cost_ordered_with_threshold_skips_only_when_the_verdict_is_decided(tmp_path):
    p = suite_file(tmp_path, """\
        name: s
        cost_ordered: true
        threshold: 0.6
        samples:
          - {id: a, output: "ok", expected: "no"}
          - {id: b, output: "x", expected: "no"}
        graders:
          - {type: code, name: costly, weight: 1, config: {assertions: ["True"]}}
          - {type: exact_match, name: exact, weight: 1}
          - {type: contains, name: has-o, weight: 1, config: {}}
        """)
    suite = load_suite(p)

    class Runner:
        def call(self, request):
            from assay.core.interfaces import CodeOutcome
            return CodeOutcome(value=[{"assertion": "True", "passed": True}])

    from assay.core.interfaces import Resources
    result = run_suite(suite, resources=Resources(code_runner=Runner()))
    for v in result.verdicts:
        # both cheap graders fail (score 0 + 0); the best reachable is 1/3 < 0.6: costly is skipped
        assert v.skipped == ["costly"] and not v.passed
    suite.threshold = 0.3
    result = run_suite(suite, resources=Resources(code_runner=Runner()))
    # 1/3 >= 0.3 is still reachable, so the costly grader runs and decides
    assert all(v.skipped == [] and v.passed for v in result.verdicts)


@pytest.mark.parametrize("body, data, message", [
    ("name: s\nthreshold: true\ngraders: [{type: contains}]\nsamples: [{output: a}]\n", None,
     r"eval\.yaml:2: threshold: Input should be a valid number"),
    ("name: s\ngraders: [{type: contains, weight: .inf}]\nsamples: [{output: a}]\n", None,
     r"graders\[0\]\.weight: Input should be a finite number"),
    ("name: s\ngraders: [{type: contains, weight: 1.0e+308}]\nsamples: [{output: a}]\n", None,
     r"graders\[0\]\.weight: Input should be less than or equal to 1000000"),
    ("name: s\ngraders: [{type: contains, weight: true}]\nsamples: [{output: a}]\n", None,
     r"graders\[0\]\.weight: Input should be a valid number"),
    ("name: s\nthreshold: 0.5\ngraders: [{type: contains, weight: 0}, {type: exact_match, weight: 0}]\n"
     "samples: [{output: a}]\n", None, r"every grader of sample 'sample-1' has weight 0"),
    ("name: s\ndataset: data.jsonl\ngraders: [{type: contains}]\nsamples: [{output: a}]\n", '{"output": "a"}\n',
     r"eval\.yaml:4: samples: give either `dataset` or inline `samples`, not both"),
    ("name: s\ndataset: data.jsonl\ngraders: [{type: contains}]\n", "\n", r"no samples to grade"),
    ("name: s\ngraders: [{type: contains}]\nsamples: []\n", None, r"no samples to grade"),
    ("name: s\ndataset: data.jsonl\ngraders: [{type: contains}]\n", '{"id": 1, "response": "a", "expected": "a"}\n',
     r"data\.jsonl: no row has an `output`.*columns are: response"),
    ("name: s\ncost_ordered: 'yes'\ngraders: [{type: contains}]\nsamples: [{output: a}]\n", None,
     r"cost_ordered: Input should be a valid boolean"),
])
def test_nonsense_is_refused_with_what_and_where(tmp_path, body, data, message):
    p = suite_file(tmp_path, body, data)
    with pytest.raises(SpecError, match=message):
        load_suite(p)


def test_vally_scoring_weights_must_be_finite(tmp_path):
    p = suite_file(tmp_path, """\
        stimuli:
          - name: one
            prompt: p
            graders: [{type: contains, name: c}]
        scoring:
          weights: {c: .inf}
        """)
    with pytest.raises(SpecError, match=r"eval\.yaml:6: scoring\.weights\.c: Input should be a finite number"):
        load_suite(p)


def test_inline_samples_without_ids_are_named_by_position(tmp_path):
    p = suite_file(tmp_path, "name: s\ngraders: [{type: contains}]\nsamples: [{output: a}, {output: b, id: ''}]\n")
    assert [s.id for s in load_suite(p).samples] == ["sample-1", "sample-2"]


def test_a_composite_of_free_graders_is_ranked_free_when_cost_ordered(tmp_path):
    p = suite_file(tmp_path, """\
        name: s
        cost_ordered: true
        samples: [{id: a, output: "no", expected: "ok"}]
        graders:
          - {type: code, name: costly, config: {code: "def evaluate(*a):\\n    return {'passed': True}"}}
          - type: composite
            name: cheap
            config: {graders: [{type: exact_match}, {type: contains}]}
        """)
    suite = load_suite(p)
    assert [spec.taxonomy.cost for spec in suite.graders] == ["low", "free"]
    verdict = run_suite(suite).verdicts[0]
    assert verdict.skipped == ["costly"]  # the free composite failed first, so the code grader never ran
