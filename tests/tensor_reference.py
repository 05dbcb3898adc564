"""The name-by-name tensor diff that ``hubdiff._compare.tensor_diff`` is held to: every name built,
split and compared (seconds for 200,000 tensors), with prefix renames aligned first. Tests and
``bench/diff.py`` only; never on a user's path."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping

from hubdiff._compare.tensor_diff import (
    MAX_RENAMES,
    MIN_TEMPLATE_SHARE,
    PrefixRename,
    ShapeChange,
    TemplateChange,
    TensorDiff,
    _best_rename,
    _cross_model,
    _tail,
    _template,
)
from hubdiff.patterns import compress, format_index_set, group, split_name
from hubdiff.snapshot import Snapshot


def template_stats(names: list[str], templates: set[str]) -> dict[str, tuple[int, set[int]]]:
    """For the given name templates: how many names match, and the values of their first index.

    The names are grouped once at C speed (``patterns.group``), then looked up per group: linear in the
    names whatever the number of templates (testing each name against every template's suffix was
    names x templates, 12 s for 40,000 distinct names).
    """
    out: dict[str, tuple[int, set[int]]] = {t: (0, set()) for t in templates}
    for (parts, _, _), tuples in group(names, [""] * len(names), [()] * len(names)).items():
        key = "*".join(parts)
        if key in out:
            count, first = out[key]
            if parts[1:]:
                first.update(t[0] for t in tuples)
            out[key] = (count + len(tuples), first)
    return out


def name_template(name: str) -> str:
    return _template(split_name(name)[0])


def align_names(
    before: Mapping[str, object], after: Mapping[str, object]
) -> tuple[dict[str, str], list[PrefixRename]]:
    """Old name -> name it is compared under, and the prefix renames that explain the differences."""
    aligned = {n: n for n in before}
    gone, came = set(before) - set(after), set(after) - set(before)
    claimed: set[str] = set()
    renames: list[PrefixRename] = []
    for _ in range(MAX_RENAMES):
        if not gone or not came:
            break
        came_templates = {name_template(n) for n in came}
        best = _best_rename(Counter(name_template(n) for n in gone), came_templates)
        if best is None:
            break
        old_prefix, new_prefix = best
        moved = {
            n: new_prefix + n[len(old_prefix) :]
            for n in gone
            if n.startswith(old_prefix)
            and new_prefix + n[len(old_prefix) :] not in before
            and new_prefix + n[len(old_prefix) :] not in claimed
        }
        found = {n for n, m in moved.items() if m in came}
        moved_templates = {name_template(m) for m in moved.values()}
        if len(found) < 2 or len(moved_templates & came_templates) < MIN_TEMPLATE_SHARE * len(
            moved_templates
        ):
            break
        renames.append(PrefixRename(old_prefix, new_prefix, len(moved), len(found)))
        for name, target in moved.items():
            aligned[name] = target
        claimed |= set(moved.values())
        gone -= set(moved)
        came -= {moved[n] for n in found}
    return aligned, renames


def diff_by_name(old: Snapshot, new: Snapshot) -> TensorDiff:
    """Name by name, with prefix renames aligned first: the reference ``_diff`` is tested against.

    Every name is built, split and compared here (seconds for 200,000 tensors): never on a user's path.
    """
    original = {t.name: (t.dtype, t.shape) for t in old.tensors}
    after = {t.name: (t.dtype, t.shape) for t in new.tensors}
    aligned, renames = align_names(original, after)
    before = {aligned[n]: v for n, v in original.items()}
    old_name = {a: n for n, a in aligned.items()}
    common = before.keys() & after.keys()
    removed = compress((old_name[n], *before[n]) for n in before.keys() - common)
    added = compress((n, *after[n]) for n in after.keys() - common)
    by_change: dict[tuple[str, tuple[int, ...]], list[tuple[str, str, tuple[int, ...]]]] = defaultdict(list)
    for name in common:
        if before[name] != after[name]:
            by_change[before[name]].append((name, *after[name]))
    changed = [
        ShapeChange(p, dtype, shape) for (dtype, shape), rows in by_change.items() for p in compress(rows)
    ]
    changed.sort(key=lambda c: c.pattern.name)

    touched = {p.template for p in added} | {c.pattern.template for c in changed}
    touched |= {name_template(n) for n in before.keys() - common}
    old_t, new_t = template_stats(list(before), touched), template_stats(list(after), touched)
    templates = []
    for key in sorted(touched):
        a, b = old_t.get(key, (0, set())), new_t.get(key, (0, set()))
        templates.append(
            TemplateChange(
                key,
                a[0],
                b[0],
                format_index_set(a[1]) if a[1] else "",
                format_index_set(b[1]) if b[1] else "",
            )
        )
    gone, came = len(before) - len(common), len(after) - len(common)
    different_models = gone > len(before) // 2 and came > len(after) // 2  # most names differ: match by tail
    cross = _cross_model(old, new) if different_models else []
    reshaped_tails = {_tail(c.pattern.template) for c in changed}
    cross = [x for x in cross if x.tail not in reshaped_tails]  # already a reshape through a rename
    return TensorDiff(
        tuple(added),
        tuple(removed),
        tuple(changed),
        tuple(templates),
        tuple(cross),
        len(before),
        len(after),
        tuple(renames),
    )
