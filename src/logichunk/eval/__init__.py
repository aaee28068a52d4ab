"""Evaluation harness: readers for the public benchmarks, metrics, the segmentation / chunking /
retrieval tasks, the registry of methods and peers, and the report (``logichunk eval``)."""
