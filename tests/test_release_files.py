"""The files beside the weights: read (bounded, which file wins), rendered (sandboxed), compared, and
the held-back pair of issue 32 end to end, from folders and through the Hub replica."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from hubdiff._release.diff import compare_release
from hubdiff._release.files import (
    TOKENIZER_HEAD_BYTES,
    ReleaseProblem,
    read_release,
    read_vocabulary,
)
from hubdiff._release.render import CONVERSATIONS, render_template
from hubdiff.testing import RepoSpec, write_checkpoint

from . import release_pair as rp
from .test_schemas import schema


def hubdiff(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hubdiff", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


class Files:
    """A release's files in memory, read as a folder or the Hub would be."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files
        self.asked: list[tuple[str, int]] = []

    def read(self, path: str, limit: int) -> bytes:
        self.asked.append((path, limit))
        return self.files[path][: limit + 1]

    def head(self, path: str, size: int) -> bytes:
        self.asked.append((path, size))
        return self.files[path][:size]


def release_of(files: dict[str, bytes], generation: dict | None = None):
    return read_release(Files(files), set(files), generation)


# -- the held-back pair, end to end ----------------------------------------------------------------
CHANGED_TEMPLATE_TEXT = (
    "+{%- if tools %}",
    "+{{- '<tool_call>\\n' + (call.function | tojson) + '\\n</tool_call>' }}",
    "-{{- '<|im_start|>assistant\\n' }}",
    "+{{- '<|im_start|>assistant\\n<think>\\n' }}",
)


def assert_names_the_pair(text: str) -> None:
    """What the issue's check asks: the template change with its own changed text, the eos token,
    the generation settings."""
    for line in CHANGED_TEMPLATE_TEXT:
        assert line in text, line
    assert '"<|im_end|>" (id 151645) -> "<|endoftext|>" (id 151643)' in text
    assert "generate eos_token_id: 151645 -> 151643" in text
    assert "generate temperature: 0.7 -> 0.6" in text
    assert "template default: real (+16 -1 lines)" in text
    assert "prompt   tool call: differs from line 1" in text
    assert "prompt   generation prompt: differs from line 4" in text
    assert "new: <think>" in text


def test_held_back_pair_from_folders_exits_1_and_names_every_change(tmp_path):
    write_checkpoint(tmp_path / "old", rp.old_release())
    write_checkpoint(tmp_path / "new", rp.new_release())
    result = hubdiff("diff", str(tmp_path / "old"), str(tmp_path / "new"), "--format", "text")
    assert result.returncode == 1, result.stderr
    assert_names_the_pair(result.stdout)
    assert result.stdout.startswith(
        f"{tmp_path / 'old'} → {tmp_path / 'new'}: chat template changed (prompts differ: tool call, "
        "generation prompt); special tokens changed (eos_token); generation defaults changed "
        "(eos_token_id, temperature)."
    )
    # the same weights and config: nothing else is reported
    assert "config  " not in result.stdout and "tensors " not in result.stdout


def test_held_back_pair_over_the_replica_reads_only_the_release_files(hub, tmp_path):
    shas = hub.add(RepoSpec("org/chat", [rp.old_release(), rp.new_release()]))
    env = {"HF_ENDPOINT": hub.endpoint, "HUBDIFF_CACHE": str(tmp_path / "cache")}
    hub.clear()
    result = hubdiff("diff", f"org/chat@{shas[0]}", "org/chat@main", "--format", "text", env=env)
    assert result.returncode == 1, result.stderr
    assert_names_the_pair(result.stdout)
    fetched = [e.path.rsplit("/", 1)[-1] for e in hub.log if "/resolve/" in e.path]
    # each side: config, generation config, the one shard's header, and tokenizer_config.json once
    assert sorted(f for f in fetched if f == "tokenizer_config.json") == ["tokenizer_config.json"] * 2
    # markdown: the report has the diff in full, the comment under <details>, its first screen names it
    report, comment = tmp_path / "r.md", tmp_path / "c.md"
    result = hubdiff(
        "diff",
        f"org/chat@{shas[0]}",
        "org/chat@main",
        "--output",
        str(report),
        "--comment",
        str(comment),
        env=env,
    )
    assert result.returncode == 1, result.stderr
    full, pr = report.read_text(), comment.read_text()
    for line in CHANGED_TEMPLATE_TEXT:
        assert line in full and line in pr
    first_screen = pr.split("<details>")[0]
    assert (
        "chat template changed (+16 −1 lines): real, other prompts for tool call, generation prompt"
        in first_screen
    )
    assert '`eos_token`: `"<|im_end|>" (id 151645)` → `"<|endoftext|>" (id 151643)`' in first_screen
    assert "`temperature`: `0.7` → `0.6`" in first_screen
    assert "- generation prompt, line 4: `(empty line)` → `<think>`" in first_screen
    assert "+{%- if tools %}" not in first_screen  # the diff itself is folded
    assert pr.index("<summary>The template's diff (16 added, 1 removed lines)</summary>") < pr.index(
        "+{%- if tools %}"
    )


def test_json_report_carries_the_release_and_follows_the_schema(tmp_path):
    write_checkpoint(tmp_path / "old", rp.old_release())
    write_checkpoint(tmp_path / "new", rp.new_release())
    result = hubdiff("diff", str(tmp_path / "old"), str(tmp_path / "new"), "--json")
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    jsonschema.Draft202012Validator(schema("report")).validate(report)
    release = report["results"][0]["release"]
    template = release["templates"][0]
    assert template["verdict"] == "real" and template["added_lines"] == 16 and template["removed_lines"] == 1
    assert [p["conversation"] for p in template["prompts"] if not p["same"]] == [
        "tool call",
        "generation prompt",
    ]
    eos = next(t for t in release["special_tokens"] if t["name"] == "eos_token")
    assert (eos["old"], eos["old_id"], eos["new"], eos["new_id"]) == (
        "<|im_end|>",
        151645,
        "<|endoftext|>",
        151643,
    )
    changed = {r["name"]: (r["old"], r["new"]) for r in release["generation"] if r["changed"]}
    assert changed == {"eos_token_id": (151645, 151643), "temperature": (0.7, 0.6)}


def test_the_same_release_twice_is_no_difference(tmp_path):
    write_checkpoint(tmp_path / "a", rp.old_release())
    write_checkpoint(tmp_path / "b", rp.old_release())
    result = hubdiff("diff", str(tmp_path / "a"), str(tmp_path / "b"), "--format", "text")
    assert result.returncode == 0, result.stdout + result.stderr
    assert ": no differences." in result.stdout and "template" not in result.stdout


def test_a_cosmetic_template_change_is_named_cosmetic(tmp_path):
    """Whitespace inside ``{%- ... %}`` and a comment change the text, not one prompt."""
    cosmetic = rp.OLD_TEMPLATE.replace("{%- endfor %}", "{%-   endfor   %}{# turns #}")
    write_checkpoint(tmp_path / "a", rp.old_release())
    write_checkpoint(tmp_path / "b", rp.release(cosmetic, "<|im_end|>", 151645, 0.7))
    result = hubdiff("diff", str(tmp_path / "a"), str(tmp_path / "b"), "--format", "text")
    assert result.returncode == 1  # diff reports any change
    assert "template default: cosmetic (+1 -1 lines)" in result.stdout
    assert "chat template changed (cosmetic: the same prompts)" in result.stdout
    assert "  prompt   " not in result.stdout


# -- which file wins ---------------------------------------------------------------------------------
def test_chat_template_jinja_wins_over_tokenizer_config():
    files = release_of(
        {
            "tokenizer_config.json": rp.tokenizer_config("{{ 'config' }}", "<|im_end|>"),
            "chat_template.json": json.dumps({"chat_template": "{{ 'json' }}"}).encode(),
            "chat_template.jinja": b"{{ 'jinja' }}",
            "additional_chat_templates/tool_use.jinja": b"{{ 'tools' }}",
        }
    )
    assert [(t.name, t.text, t.file) for t in files.templates] == [
        ("default", "{{ 'jinja' }}", "chat_template.jinja"),
        ("tool_use", "{{ 'tools' }}", "additional_chat_templates/tool_use.jinja"),
    ]
    assert files.shadowed == ("chat_template.json", "tokenizer_config.json")
    only_json = release_of(
        {
            "tokenizer_config.json": rp.tokenizer_config("{{ 'config' }}", "<|im_end|>"),
            "chat_template.json": json.dumps({"chat_template": "{{ 'json' }}"}).encode(),
        }
    )
    assert only_json.template.text == "{{ 'json' }}" and only_json.shadowed == ("tokenizer_config.json",)


def test_named_templates_in_tokenizer_config_and_added_token_objects():
    config = {
        "chat_template": [
            {"name": "default", "template": "{{ 'a' }}"},
            {"name": "rag", "template": "{{ 'b' }}"},
        ],
        "eos_token": {"__type": "AddedToken", "content": "</s>", "lstrip": False},
        "added_tokens_decoder": {"2": {"content": "</s>", "special": True}},
        "additional_special_tokens": ["<tool>", {"content": "<img>"}],
    }
    files = release_of({"tokenizer_config.json": json.dumps(config).encode()})
    assert [t.name for t in files.templates] == ["default", "rag"]
    assert files.special_tokens == {"eos_token": "</s>"} and files.token_id("</s>") == 2
    assert files.extra_special_tokens == ("<tool>", "<img>")


def test_special_tokens_map_is_read_only_in_the_legacy_layout():
    """transformers 5.25.0 reads special_tokens_map.json only without added_tokens_decoder, and then
    its tokens replace tokenizer_config.json's."""
    mapped = json.dumps({"eos_token": {"content": "</s>"}, "bos_token": "<s>"}).encode()
    legacy = release_of(
        {"tokenizer_config.json": b'{"eos_token": "<eos>"}', "special_tokens_map.json": mapped}
    )
    assert legacy.special_tokens == {"eos_token": "</s>", "bos_token": "<s>"}
    assert legacy.special_file == "special_tokens_map.json"
    current = release_of(
        {"tokenizer_config.json": rp.tokenizer_config("x", "<|im_end|>"), "special_tokens_map.json": mapped}
    )
    assert current.special_tokens["eos_token"] == "<|im_end|>" and "bos_token" not in current.special_tokens
    assert any("not read by transformers 5" in n for n in current.notes)


def test_missing_files_are_normal():
    files = release_of({})
    assert files.templates == () and files.special_tokens == {} and files.files == ()
    diff = compare_release(files, files)
    assert not diff.changed and diff.templates == ()


@pytest.mark.parametrize(
    ("files", "problem"),
    [
        ({"tokenizer_config.json": b"[1]"}, "tokenizer_config.json: JSON but not an object (list)"),
        (
            {"tokenizer_config.json": b'{"chat_template": 3}'},
            "tokenizer_config.json: chat_template is int, not a string",
        ),
        (
            {"tokenizer_config.json": b'{"eos_token": 3}'},
            "tokenizer_config.json: eos_token is int, not a token",
        ),
        (
            {"tokenizer_config.json": b'{"a": NaN}'},
            "tokenizer_config.json: not JSON (NaN is not a JSON number)",
        ),
        (
            {"chat_template.jinja": b"\xff{{ x }}"},
            "chat_template.jinja: not UTF-8 text (invalid byte at offset 0)",
        ),
        (
            {"chat_template.jinja": b"x" * 1_000_001},
            "chat_template.jinja: over the 1,000,000-byte limit for this file",
        ),
        (
            {"tokenizer_config.json": b'{"added_tokens_decoder": {"x": {"content": "a"}}}'},
            "key 'x' is not a token id",
        ),
    ],
)
def test_malformed_files_are_refused_naming_the_file(files, problem):
    with pytest.raises(ReleaseProblem) as caught:
        release_of(files)
    assert problem in str(caught.value)


def test_a_malformed_file_is_one_line_and_exit_3(tmp_path):
    spec = rp.old_release()
    spec.files["tokenizer_config.json"] = b'{"chat_template": '
    write_checkpoint(tmp_path / "bad", spec)
    write_checkpoint(tmp_path / "old", rp.old_release())
    result = hubdiff("diff", str(tmp_path / "old"), str(tmp_path / "bad"))
    assert result.returncode == 3
    assert result.stderr.startswith(f"hubdiff: {tmp_path / 'bad'} tokenizer_config.json: not JSON (")
    assert result.stderr.count("\n") == 1


# -- tokenizer.json: its head only ------------------------------------------------------------------
def tokenizer_json(vocab_size: int, added: list[tuple[int, str, bool]]) -> bytes:
    """tokenizer.json as the tokenizers library writes it (added_tokens before model)."""
    return json.dumps(
        {
            "version": "1.0",
            "truncation": None,
            "padding": None,
            "added_tokens": [
                {
                    "id": i,
                    "content": c,
                    "single_word": False,
                    "lstrip": False,
                    "rstrip": False,
                    "normalized": False,
                    "special": s,
                }
                for i, c, s in added
            ],
            "normalizer": None,
            "pre_tokenizer": {"type": "ByteLevel"},
            "model": {
                "type": "BPE",
                "vocab": {f"tok{i:07d}": i for i in range(vocab_size)},
                "merges": [f"tok{i:07d} tok{i + 1:07d}" for i in range(vocab_size - 1)],
            },
        }
    ).encode()


ADDED = [(151643, "<|endoftext|>", True), (151644, "<|im_start|>", True), (151645, "<|im_end|>", True)]


def test_a_small_tokenizer_json_counts_its_vocabulary():
    vocab = read_vocabulary(tokenizer_json(1000, [(1000, "<a>", True), (1001, "<b>", False)]), cut=False)
    assert vocab.size == 1000 + 2  # the base vocabulary and the two added tokens not in it
    assert vocab.added == {"<a>": 1000, "<b>": 1001} and vocab.special == ("<a>",) and vocab.complete


def test_tokenizer_json_head_bytes_and_lower_bound(hub, tmp_path):
    big = tokenizer_json(151643, ADDED)  # ~7 MB with its merges, as Qwen2's 151,643-entry vocabulary
    spec = rp.old_release()
    spec.files["tokenizer.json"] = big
    sha = hub.add(RepoSpec("org/tok", [spec]))[0]
    write_checkpoint(tmp_path / "local", rp.old_release())
    hub.clear()
    result = hubdiff(
        "diff",
        f"org/tok@{sha}",
        str(tmp_path / "local"),
        "--json",
        env={"HF_ENDPOINT": hub.endpoint, "HUBDIFF_CACHE": str(tmp_path / "c")},
    )
    assert result.returncode == 1, result.stderr
    reads = [e for e in hub.log if e.path.endswith("/tokenizer.json")]
    assert reads and all(e.range == f"bytes=0-{TOKENIZER_HEAD_BYTES - 1}" for e in reads)
    assert sum(e.bytes_sent for e in reads) <= TOKENIZER_HEAD_BYTES < len(big)
    rows = {r["name"]: r for r in json.loads(result.stdout)["results"][0]["release"]["tokenizer"]}
    assert rows["vocabulary (tokenizer.json)"]["old"] == (
        "at least 151,646 tokens (highest added id + 1; the vocabulary is past the bytes read)"
    )  # 151,645 + 1


# -- rendering -------------------------------------------------------------------------------------
def test_prompts_are_what_transformers_renders():
    """The independent figure: transformers' own apply_chat_template renderer on the same templates,
    conversations and special tokens gives the same prompts, character for character."""
    chat = pytest.importorskip("transformers.utils.chat_template_utils")
    tokens = {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"}
    for template in (rp.OLD_TEMPLATE, rp.NEW_TEMPLATE):
        ours = render_template(template, tokens)
        for conversation, got in zip(CONVERSATIONS, ours):
            theirs, _ = chat.render_jinja_template(
                conversations=[conversation["messages"]],
                tools=conversation.get("tools"),
                chat_template=template,
                add_generation_prompt=conversation["add_generation_prompt"],
                **tokens,
            )
            assert got.text == theirs[0], conversation["name"]


HOSTILE = {
    "loop": (
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}x",
        ("timeout", "bound"),
    ),
    "output": ("{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}", ("bound",)),
    "multiply": ("{{ 'a' * 10**10 }}", ("refused",)),
    "doubling": (
        "{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s }}",
        ("refused",),
    ),
    "class": ("{{ ''.__class__.__mro__[1].__subclasses__() }}", ("refused",)),
    "init": ("{{ cycler.__init__.__globals__ }}", ("refused",)),
    "mutate": ("{% set x = messages %}{{ x.append(1) }}", ("refused",)),
    "namespace": ("{% set ns = namespace(_x=1) %}", ("refused",)),
    "memory": ("{{ 'a'.ljust(2000000000) }}", ("bound",)),
    "syntax": ("{% for %}", ("error",)),
    "raises": ("{{ raise_exception('no tools here') }}", ("error",)),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_templates_are_bounded_and_reported(name):
    template, kinds = HOSTILE[name]
    rendered = render_template(template, {}, seconds=3)
    assert [r.conversation for r in rendered] == [c["name"] for c in CONVERSATIONS]
    assert all(r.text is None and r.kind in kinds for r in rendered), [(r.kind, r.error) for r in rendered]


def test_nothing_but_the_conversation_is_in_scope():
    """What a template could reach beyond the conversation renders as nothing: no environment, no
    module, no file, no clock (strftime_now gives a fixed date)."""
    template = "{{ os }}|{{ self.__dict__ }}|{{ config }}|{{ request }}|{{ lipsum }}|{{ strftime_now('%Y-%m-%d') }}|{{ eos_token }}"
    rendered = render_template(template, {"eos_token": "</s>"})
    assert {r.text for r in rendered} == {"|||||2026-01-01|</s>"}


def test_a_template_that_fails_to_render_is_reported_not_fatal(tmp_path):
    bad = rp.NEW_TEMPLATE.replace(
        "{%- if tools %}", "{%- if tools %}{{ raise_exception('tools are not supported') }}"
    )
    write_checkpoint(tmp_path / "old", rp.old_release())
    write_checkpoint(tmp_path / "new", rp.release(bad, "<|im_end|>", 151645, 0.7))
    result = hubdiff("diff", str(tmp_path / "old"), str(tmp_path / "new"), "--format", "text")
    assert result.returncode == 1, result.stderr
    assert "prompt   tool call: differs" in result.stdout
    assert "new: does not render: TemplateError: tools are not supported" in result.stdout


# -- baselines, claims, the watch --------------------------------------------------------------------
def baseline_over_the_replica(hub, tmp_path, claims: dict) -> tuple[Path, dict[str, str]]:
    """``baseline init`` of the old release over the replica, with ``claims`` written in."""
    hub.add(RepoSpec("org/chat", [rp.old_release()]))
    env = {"HF_ENDPOINT": hub.endpoint, "HUBDIFF_CACHE": str(tmp_path / "c")}
    result = subprocess.run(
        [sys.executable, "-m", "hubdiff", "baseline", "init", "org/chat", "--family", "chat"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    path = tmp_path / "baselines" / "chat.yaml"
    data = yaml.safe_load(path.read_text())
    data["repos"]["org/chat"]["claims"] = claims
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path, env


def test_a_baseline_records_hashes_tokens_and_defaults(hub, tmp_path):
    path, _ = baseline_over_the_replica(hub, tmp_path, {})
    data = yaml.safe_load(path.read_text())
    jsonschema.Draft202012Validator(schema("baseline")).validate(data)
    release = data["repos"]["org/chat"]["release"]
    prompts = {
        r.conversation: r.sha256 for r in render_template(rp.OLD_TEMPLATE, {"eos_token": "<|im_end|>"})
    }
    assert release["chat_template"] == {
        "file": "tokenizer_config.json",
        "sha256": hashlib.sha256(rp.OLD_TEMPLATE.encode()).hexdigest(),
        "prompts": prompts,
    }
    # the generation prompt is the user turn and the assistant opener, hashed independently here
    opener = "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n"
    assert prompts["generation prompt"] == hashlib.sha256(opener.encode()).hexdigest()
    assert release["special_tokens"] == {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"}
    assert release["token_ids"] == {"eos_token": 151645, "pad_token": 151643}
    assert release["generation"]["temperature"] == 0.7 and release["model_max_length"] == 131072


def test_claims_pin_the_template_the_eos_token_and_generation_defaults(hub, tmp_path):
    claims = {"chat_template": "unchanged", "eos_token": "<|im_end|>", "generation.temperature": 0.7}
    path, env = baseline_over_the_replica(hub, tmp_path, claims)
    valid = hubdiff("validate", str(path), env=env)
    assert valid.returncode == 0 and "3 claim(s): valid" in valid.stdout, valid.stdout + valid.stderr
    same = hubdiff("check", str(path), "--format", "text", env=env)
    assert same.returncode == 0 and "claims  3 of 3 hold" in same.stdout, same.stdout + same.stderr
    hub.push("org/chat", rp.new_release())
    changed = hubdiff("check", str(path), "--format", "text", env=env)
    assert changed.returncode == 1, changed.stderr
    out = changed.stdout
    assert "template default: real (sha256 " in out
    assert "prompt   tool call: differs" in out and "prompt   generation prompt: differs" in out
    assert (
        "claim   chat_template: stated unchanged" in out
        and "DOES NOT HOLD (the recorded template's sha256)" in out
    )
    assert "claim   eos_token: stated <|im_end|>, measured '<|endoftext|>': DOES NOT HOLD (equal)" in out
    assert "claim   generation.temperature: stated 0.7" in out
    assert '"<|im_end|>" (id 151645) -> "<|endoftext|>" (id 151643)' in out
    # accepting re-records the template: "unchanged" holds again, the others take the measured values
    update = hubdiff("baseline", "update", str(path), "--repo", "org/chat", "--accept-claims", env=env)
    assert update.returncode == 0, update.stdout + update.stderr
    claims_now = yaml.safe_load(path.read_text())["repos"]["org/chat"]["claims"]
    assert claims_now == {
        "chat_template": "unchanged",
        "eos_token": "<|endoftext|>",
        "generation.temperature": 0.6,
    }
    assert hubdiff("check", str(path), env=env).returncode == 0


@pytest.mark.parametrize(
    ("claims", "problem"),
    [
        ({"chat_template": "same"}, "claim chat_template: write 'unchanged', 'same prompts' or a sha256"),
        ({"eos_token": 2}, "claim eos_token: a token is a string (or null: none)"),
        ({"model_max_length": "long"}, "claim model_max_length: a number"),
    ],
)
def test_bad_release_claims_are_baseline_errors(hub, tmp_path, claims, problem):
    path, env = baseline_over_the_replica(hub, tmp_path, claims)
    result = hubdiff("validate", str(path), env=env)
    assert result.returncode == 2 and problem in result.stderr, result.stderr


def test_watch_reports_a_revision_that_only_changes_the_template(hub, tmp_path):
    _, env = baseline_over_the_replica(hub, tmp_path, {})
    only_template = rp.old_release()
    only_template.files["tokenizer_config.json"] = rp.tokenizer_config(rp.NEW_TEMPLATE, "<|im_end|>")
    hub.push("org/chat", only_template)
    result = subprocess.run(
        [sys.executable, "-m", "hubdiff", "watch"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    comment = (tmp_path / "reports" / "chat.comment.md").read_text()
    first_screen = comment.split("<details>")[0]
    assert "chat template changed (prompts differ: tool call, generation prompt)" in first_screen
    assert "real, other prompts for tool call, generation prompt" in first_screen
    assert "eos_token" not in first_screen and "generation defaults" not in first_screen


def test_generation_eos_that_misses_the_eos_token_is_warned_and_cosmetic_keys_do_not_fail_a_check():
    old = release_of(
        {"tokenizer_config.json": rp.tokenizer_config("x", "<|im_end|>")}, {"eos_token_id": 151645}
    )
    # the new release ends turns with <|im_end|> (151645) but stops generation at 151643
    new = release_of(
        {"tokenizer_config.json": rp.tokenizer_config("x", "<|im_end|>")},
        {"eos_token_id": [151643], "transformers_version": "5.0.0"},
    )
    diff = compare_release(old, new)
    assert diff.warnings == (
        "generation_config.json eos_token_id [151643] does not include the id of eos_token '<|im_end|>' (151645)",
    )
    only_cosmetic = compare_release(
        old, release_of({}, {"eos_token_id": 151645, "transformers_version": "5.0.0"})
    )
    rows = {r.name: r for r in only_cosmetic.generation}
    assert rows["transformers_version"].changed and rows["transformers_version"].cosmetic


def test_offline_reads_no_release_files_and_says_so(hub, tmp_path):
    sha = hub.add(RepoSpec("org/chat", [rp.old_release()]))[0]
    env = {"HF_ENDPOINT": hub.endpoint, "HUBDIFF_CACHE": str(tmp_path / "c")}
    assert hubdiff("snapshot", f"org/chat@{sha}", env=env).returncode == 0  # cached
    write_checkpoint(tmp_path / "local", rp.old_release())
    result = hubdiff(
        "diff", f"org/chat@{sha}", str(tmp_path / "local"), "--offline", "--format", "text", env=env
    )
    assert result.returncode == 0, result.stdout + result.stderr  # not read is not compared
    assert "note     old: not read: --offline reads only cached snapshots" in result.stdout
