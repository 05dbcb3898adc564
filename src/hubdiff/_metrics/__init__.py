"""Metrics: what a snapshot means. Parameters by component, active parameters, the layer census, KV
cache and recurrent state, and the checks of config against tensors.

Everything is derived from config keys and tensor names and shapes; when there are no headers, from
the tensors the config implies (``estimate``), with that basis stated.

The package imports nothing itself: a run imports the stage it uses. ``results`` holds what a run
reports (``Metrics``, and what the cache rebuilds it from), ``options`` how it is asked for,
``compute`` how it is computed (and cached), and the other modules each one part of the computation.
"""
