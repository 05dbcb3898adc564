"""Names that read the same but are not (a Cyrillic о, a fullwidth ｗ, a decomposed é): every report
shows a name that could pass for another with its ASCII form beside it, so a reviewer can tell two
tensors or keys apart from the ASCII of the report alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from hubdiff._render.markdown import code
from hubdiff.testing import CommitSpec, write_checkpoint
from hubdiff.visible import named

from .test_fuzz import FUZZ

# ASCII letters and the characters that pass for them: Cyrillic, Greek, fullwidth, combining marks
LOOKALIKES = "aoecpwx.0" + "аосерх" + "οε" + "ｗｏ．０" + "\u0301\u0308" + "éö"
names = st.text(st.sampled_from(LOOKALIKES), min_size=1, max_size=12)


def ascii_of(text: str) -> str:
    return "".join(ch for ch in text if ch.isascii())


@settings(max_examples=300, **FUZZ)
@given(names, names)
def test_two_different_names_differ_in_the_ascii_of_every_form(a, b):
    if a == b:
        return
    assert ascii_of(code(a)) != ascii_of(code(b))
    assert ascii_of(named(a)) != ascii_of(named(b))


@settings(max_examples=100, **FUZZ)
@given(names)
def test_a_name_and_its_normal_forms_are_told_apart(name):
    for form in ("NFC", "NFD", "NFKC"):
        other = unicodedata.normalize(form, name)
        if other != name:
            assert ascii_of(code(name)) != ascii_of(code(other))


def test_plain_ascii_names_and_hubdiffs_own_symbols_are_shown_as_they_are():
    assert code("model.layers.0.w") == "`model.layers.0.w`"
    assert named("2×3 → 4 −1") == "2×3 → 4 −1"


def test_a_cyrillic_tensor_name_is_marked_in_every_report(tmp_path):
    old, new = tmp_path / "old", tmp_path / "new"
    config = json.dumps({"hidden_size": 8, "num_hidden_layers": 1, "vocab_size": 10}).encode()
    write_checkpoint(old, CommitSpec({"config.json": config}, [("model.layers.0.w", "F32", (2, 2))]))
    write_checkpoint(new, CommitSpec({"config.json": config}, [("mоdel.layers.0.w", "F32", (2, 2))]))
    for form in ("markdown", "text"):
        result = subprocess.run(
            [sys.executable, "-m", "hubdiff", "diff", str(old), str(new), "--format", form],
            capture_output=True,
            text=True,
            env={**os.environ, "COLUMNS": "200"},
            timeout=300,
        )
        assert result.returncode == 1, result.stderr
        assert "m\\u043edel.layers" in result.stdout, (form, result.stdout)
