"""Suites, datasets and concurrency."""
