"""The local engine: a suite graded in this process, with the sandbox pools of this machine,
beside ``ray_engine`` (the same suites on Ray Data). ``run`` grades samples in chunks with
bounded concurrency, ``repeats`` grades each sample K times as attempts of one task, and
``stream`` reads a dataset file as it is graded, so memory does not grow with it. The use case
that drives either engine is ``runner.job``.
"""
