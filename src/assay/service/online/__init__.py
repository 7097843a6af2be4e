"""Online evaluation: spans arriving over OTLP/HTTP (``otlp``, ``intake``), what they mean as
samples (``messages``, ``mapping``), the rules that pick them (``filters``, ``rules``,
``schedule``), the worker that grades them (``worker``) and the numbers (``summary``)."""
