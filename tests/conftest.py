import pytest

from assay.core.spec import compile_spec


@pytest.fixture
def grade():
    """Grade one sample dict with one spec, through the grader directly."""
    from assay.core.sample import Sample

    def _grade(spec, **sample):
        sample.setdefault("id", "s1")
        return compile_spec(spec).build().grade(Sample(**sample))

    return _grade
