"""The rest of a release: the files beside the weights that change how a model behaves.

A chat template that drops tool calls, an ``eos_token`` that makes generation run on, a new default
``temperature``, a context length cut in ``tokenizer_config.json``: none of it is in ``config.json`` or
the safetensors headers. This package reads those files (``files``), renders chat templates in a
sandboxed child process (``render``) and compares two releases the way a reviewer reads them
(``diff``); ``record`` is what a baseline keeps of them and what claims are checked against.
"""
