# ruff: noqa
# fmt: off
from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = '_macros.md.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_limited = l_0_more = l_0_architecture = l_0_strip = l_0_config_table = l_0_config_changes = l_0_tensor_changes = l_0_metrics_table = l_0_kv = l_0_claims = l_0_next_steps = l_0_unverified = l_0_matters = l_0_hub_counts = l_0_storage = l_0_claimable = missing
    try:
        t_1 = environment.filters['bytes']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'bytes' found.")
    try:
        t_2 = environment.filters['code']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No filter named 'code' found.")
    try:
        t_3 = environment.filters['figure']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'figure' found.")
    try:
        t_4 = environment.filters['format']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No filter named 'format' found.")
    try:
        t_5 = environment.filters['gb']
    except KeyError:
        @internalcode
        def t_5(*unused):
            raise TemplateRuntimeError("No filter named 'gb' found.")
    try:
        t_6 = environment.filters['join']
    except KeyError:
        @internalcode
        def t_6(*unused):
            raise TemplateRuntimeError("No filter named 'join' found.")
    try:
        t_7 = environment.filters['length']
    except KeyError:
        @internalcode
        def t_7(*unused):
            raise TemplateRuntimeError("No filter named 'length' found.")
    try:
        t_8 = environment.filters['list']
    except KeyError:
        @internalcode
        def t_8(*unused):
            raise TemplateRuntimeError("No filter named 'list' found.")
    try:
        t_9 = environment.filters['map']
    except KeyError:
        @internalcode
        def t_9(*unused):
            raise TemplateRuntimeError("No filter named 'map' found.")
    try:
        t_10 = environment.filters['md']
    except KeyError:
        @internalcode
        def t_10(*unused):
            raise TemplateRuntimeError("No filter named 'md' found.")
    try:
        t_11 = environment.filters['number']
    except KeyError:
        @internalcode
        def t_11(*unused):
            raise TemplateRuntimeError("No filter named 'number' found.")
    try:
        t_12 = environment.filters['rejectattr']
    except KeyError:
        @internalcode
        def t_12(*unused):
            raise TemplateRuntimeError("No filter named 'rejectattr' found.")
    try:
        t_13 = environment.filters['selectattr']
    except KeyError:
        @internalcode
        def t_13(*unused):
            raise TemplateRuntimeError("No filter named 'selectattr' found.")
    try:
        t_14 = environment.filters['sort']
    except KeyError:
        @internalcode
        def t_14(*unused):
            raise TemplateRuntimeError("No filter named 'sort' found.")
    try:
        t_15 = environment.filters['string']
    except KeyError:
        @internalcode
        def t_15(*unused):
            raise TemplateRuntimeError("No filter named 'string' found.")
    try:
        t_16 = environment.filters['sum']
    except KeyError:
        @internalcode
        def t_16(*unused):
            raise TemplateRuntimeError("No filter named 'sum' found.")
    try:
        t_17 = environment.filters['unique']
    except KeyError:
        @internalcode
        def t_17(*unused):
            raise TemplateRuntimeError("No filter named 'unique' found.")
    try:
        t_18 = environment.filters['value']
    except KeyError:
        @internalcode
        def t_18(*unused):
            raise TemplateRuntimeError("No filter named 'value' found.")
    try:
        t_19 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_19(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    try:
        t_20 = environment.tests['number']
    except KeyError:
        @internalcode
        def t_20(*unused):
            raise TemplateRuntimeError("No test named 'number' found.")
    pass
    def macro(l_1_items, l_1_max_rows):
        t_21 = []
        if l_1_items is missing:
            l_1_items = undefined("parameter 'items' was not provided", name='items')
        if l_1_max_rows is missing:
            l_1_max_rows = undefined("parameter 'max_rows' was not provided", name='max_rows')
        pass
        t_21.append(
            str(environment.finalize((l_1_items if t_19(l_1_max_rows) else l_1_items[:l_1_max_rows]))),
        )
        return concat(t_21)
    context.exported_vars.add('limited')
    context.vars['limited'] = l_0_limited = Macro(environment, macro, 'limited', ('items', 'max_rows'), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_items, l_1_max_rows, l_1_full_report):
        t_22 = []
        if l_1_items is missing:
            l_1_items = undefined("parameter 'items' was not provided", name='items')
        if l_1_max_rows is missing:
            l_1_max_rows = undefined("parameter 'max_rows' was not provided", name='max_rows')
        if l_1_full_report is missing:
            l_1_full_report = undefined("parameter 'full_report' was not provided", name='full_report')
        pass
        if ((not t_19(l_1_max_rows)) and (t_7(l_1_items) > l_1_max_rows)):
            pass
            t_22.extend((
                '… ',
                str(environment.finalize((t_7(l_1_items) - l_1_max_rows))),
                ' more',
            ))
            if l_1_full_report:
                pass
                t_22.extend((
                    ' in the full report (',
                    str(environment.finalize(t_10(l_1_full_report))),
                    ')',
                ))
            t_22.append(
                '.\n',
            )
        return concat(t_22)
    context.exported_vars.add('more')
    context.vars['more'] = l_0_more = Macro(environment, macro, 'more', ('items', 'max_rows', 'full_report'), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_c):
        t_23 = []
        l_1_architecture_rows = resolve('architecture_rows')
        l_1_memory_row = resolve('memory_row')
        l_1_label = l_1_a = l_1_b = missing
        if l_1_c is missing:
            l_1_c = undefined("parameter 'c' was not provided", name='c')
        pass
        t_23.extend((
            '| | ',
            str(environment.finalize(t_10(environment.getattr(environment.getattr(l_1_c, 'old'), 'label')))),
            ' | ',
            str(environment.finalize(t_10(environment.getattr(environment.getattr(l_1_c, 'new'), 'label')))),
            ' |\n|---|---|---|\n',
        ))
        for (l_2_label, l_2_a, l_2_b) in context.call((undefined(name='architecture_rows') if l_1_architecture_rows is missing else l_1_architecture_rows), environment.getattr(environment.getattr(l_1_c, 'old'), 'metrics'), environment.getattr(environment.getattr(l_1_c, 'new'), 'metrics')):
            _loop_vars = {}
            pass
            t_23.extend((
                '| ',
                str(environment.finalize(l_2_label)),
                ' | ',
                str(environment.finalize(t_10(l_2_a))),
                ' | ',
                str(environment.finalize(t_10(l_2_b))),
            ))
            if (l_2_a != l_2_b):
                pass
                t_23.append(
                    ' ◀',
                )
            t_23.append(
                ' |\n',
            )
        l_2_label = l_2_a = l_2_b = missing
        (l_1_label, l_1_a, l_1_b) = context.call((undefined(name='memory_row') if l_1_memory_row is missing else l_1_memory_row), environment.getattr(l_1_c, 'old'), environment.getattr(l_1_c, 'new'))
        t_23.extend((
            '| ',
            str(environment.finalize((undefined(name='label') if l_1_label is missing else l_1_label))),
            ' | ',
            str(environment.finalize(t_10((undefined(name='a') if l_1_a is missing else l_1_a)))),
            ' | ',
            str(environment.finalize(t_10((undefined(name='b') if l_1_b is missing else l_1_b)))),
        ))
        if ((undefined(name='a') if l_1_a is missing else l_1_a) != (undefined(name='b') if l_1_b is missing else l_1_b)):
            pass
            t_23.append(
                ' ◀',
            )
        t_23.append(
            ' |\n',
        )
        return concat(t_23)
    context.exported_vars.add('architecture')
    context.vars['architecture'] = l_0_architecture = Macro(environment, macro, 'architecture', ('c',), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_c, l_1_legend):
        t_24 = []
        l_1_layer_strip = resolve('layer_strip')
        l_1_old = l_1_new = missing
        if l_1_c is missing:
            l_1_c = undefined("parameter 'c' was not provided", name='c')
        if l_1_legend is missing:
            l_1_legend = True
        pass
        l_1_old = context.call((undefined(name='layer_strip') if l_1_layer_strip is missing else l_1_layer_strip), environment.getattr(environment.getattr(l_1_c, 'old'), 'metrics'))
        l_1_new = context.call((undefined(name='layer_strip') if l_1_layer_strip is missing else l_1_layer_strip), environment.getattr(environment.getattr(l_1_c, 'new'), 'metrics'))
        t_24.extend((
            '```text\n',
            str(environment.finalize(context.call(environment.getattr('old attn', 'ljust'), 9))),
            str(environment.finalize(environment.getitem((undefined(name='old') if l_1_old is missing else l_1_old), 0))),
            '\n',
            str(environment.finalize(context.call(environment.getattr('    mlp', 'ljust'), 9))),
            str(environment.finalize(environment.getitem((undefined(name='old') if l_1_old is missing else l_1_old), 1))),
            '\n',
            str(environment.finalize(context.call(environment.getattr('new attn', 'ljust'), 9))),
            str(environment.finalize(environment.getitem((undefined(name='new') if l_1_new is missing else l_1_new), 0))),
            '\n',
            str(environment.finalize(context.call(environment.getattr('    mlp', 'ljust'), 9))),
            str(environment.finalize(environment.getitem((undefined(name='new') if l_1_new is missing else l_1_new), 1))),
            '\n```\n',
        ))
        if l_1_legend:
            pass
            t_24.append(
                'Attention: `D` DSA with its own indexer, `d` DSA reusing an earlier indexer, `M` MLA, `A` full attention, `S` sliding window, `C` compressed KV, `K` Kimi Delta Attention, `G` Gated DeltaNet, `m` Mamba. MLP: `E` mixture of experts, `F` dense. MTP layers not shown.\n',
            )
        else:
            pass
            t_24.append(
                '`K` KDA, `D`/`d` DSA with its own/a shared indexer, `M` MLA, `A` full, `S` sliding window; `E` MoE, `F` dense.\n',
            )
        return concat(t_24)
    context.exported_vars.add('strip')
    context.vars['strip'] = l_0_strip = Macro(environment, macro, 'strip', ('c', 'legend'), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_changes, l_1_max_rows, l_1_full_report):
        t_25 = []
        if l_1_changes is missing:
            l_1_changes = undefined("parameter 'changes' was not provided", name='changes')
        if l_1_max_rows is missing:
            l_1_max_rows = undefined("parameter 'max_rows' was not provided", name='max_rows')
        if l_1_full_report is missing:
            l_1_full_report = undefined("parameter 'full_report' was not provided", name='full_report')
        pass
        t_25.append(
            '| key | change | old | new | rule |\n|---|---|---|---|---|\n',
        )
        for l_2_x in (l_1_changes if t_19(l_1_max_rows) else l_1_changes[:l_1_max_rows]):
            _loop_vars = {}
            pass
            if environment.getattr(l_2_x, 'summary'):
                pass
                t_25.extend((
                    '| ',
                    str(environment.finalize(t_2(environment.getattr(l_2_x, 'path')))),
                    ' | ',
                    str(environment.finalize(environment.getattr(l_2_x, 'kind'))),
                    ' | ',
                    str(environment.finalize((t_10(environment.getattr(l_2_x, 'summary')) if (environment.getattr(l_2_x, 'kind') == 'removed') else ''))),
                    ' | ',
                    str(environment.finalize((t_10(environment.getattr(l_2_x, 'summary')) if (environment.getattr(l_2_x, 'kind') != 'removed') else ''))),
                    ' | ',
                    str(environment.finalize(t_10(environment.getattr(l_2_x, 'rule')))),
                    ' |\n',
                ))
            else:
                pass
                t_25.extend((
                    '| ',
                    str(environment.finalize(t_2(environment.getattr(l_2_x, 'path')))),
                    ' | ',
                    str(environment.finalize(environment.getattr(l_2_x, 'kind'))),
                    ' | ',
                    str(environment.finalize((t_2(t_18(environment.getattr(l_2_x, 'old')), 120) if (environment.getattr(l_2_x, 'kind') != 'added') else ''))),
                    ' | ',
                    str(environment.finalize((t_2(t_18(environment.getattr(l_2_x, 'new')), 120) if (environment.getattr(l_2_x, 'kind') != 'removed') else ''))),
                    ' | ',
                    str(environment.finalize(t_10(environment.getattr(l_2_x, 'rule')))),
                    ' |\n',
                ))
        l_2_x = missing
        t_25.extend((
            str(environment.finalize(context.call((undefined(name='more') if l_0_more is missing else l_0_more), l_1_changes, l_1_max_rows, l_1_full_report))),
            '\n',
        ))
        return concat(t_25)
    context.exported_vars.add('config_table')
    context.vars['config_table'] = l_0_config_table = Macro(environment, macro, 'config_table', ('changes', 'max_rows', 'full_report'), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_c, l_1_max_rows, l_1_full_report):
        t_26 = []
        l_1_arch = l_1_behav = l_1_cosm = missing
        if l_1_c is missing:
            l_1_c = undefined("parameter 'c' was not provided", name='c')
        if l_1_max_rows is missing:
            l_1_max_rows = undefined("parameter 'max_rows' was not provided", name='max_rows')
        if l_1_full_report is missing:
            l_1_full_report = undefined("parameter 'full_report' was not provided", name='full_report')
        pass
        l_1_arch = context.call(environment.getattr(l_1_c, 'config_by'), 'architectural')
        l_1_behav = context.call(environment.getattr(l_1_c, 'config_by'), 'behavioural')
        l_1_cosm = context.call(environment.getattr(l_1_c, 'config_by'), 'cosmetic')
        if (not environment.getattr(l_1_c, 'config')):
            pass
            t_26.append(
                'No config changes.\n',
            )
        else:
            pass
            if (undefined(name='arch') if l_1_arch is missing else l_1_arch):
                pass
                t_26.extend((
                    '**Architectural** (',
                    str(environment.finalize(t_7((undefined(name='arch') if l_1_arch is missing else l_1_arch)))),
                    '): shape-, cache- or routing-relevant, and unknown keys.\n\n',
                    str(environment.finalize(context.call((undefined(name='config_table') if l_0_config_table is missing else l_0_config_table), (undefined(name='arch') if l_1_arch is missing else l_1_arch), l_1_max_rows, l_1_full_report))),
                    '\n',
                ))
            if (undefined(name='behav') if l_1_behav is missing else l_1_behav):
                pass
                t_26.extend((
                    '**Behavioural** (',
                    str(environment.finalize(t_7((undefined(name='behav') if l_1_behav is missing else l_1_behav)))),
                    '): token ids, generation settings, remote-code pointers.\n\n',
                    str(environment.finalize(context.call((undefined(name='config_table') if l_0_config_table is missing else l_0_config_table), (undefined(name='behav') if l_1_behav is missing else l_1_behav), l_1_max_rows, l_1_full_report))),
                    '\n',
                ))
            if (undefined(name='cosm') if l_1_cosm is missing else l_1_cosm):
                pass
                t_26.extend((
                    '<details><summary>Cosmetic (',
                    str(environment.finalize(t_7((undefined(name='cosm') if l_1_cosm is missing else l_1_cosm)))),
                    '): serialisation only</summary>\n\n',
                    str(environment.finalize(context.call((undefined(name='config_table') if l_0_config_table is missing else l_0_config_table), (undefined(name='cosm') if l_1_cosm is missing else l_1_cosm), l_1_max_rows, l_1_full_report))),
                    '\n</details>\n',
                ))
        return concat(t_26)
    context.exported_vars.add('config_changes')
    context.vars['config_changes'] = l_0_config_changes = Macro(environment, macro, 'config_changes', ('c', 'max_rows', 'full_report'), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_c, l_1_max_rows, l_1_full_report):
        t_27 = []
        l_1_t = missing
        if l_1_c is missing:
            l_1_c = undefined("parameter 'c' was not provided", name='c')
        if l_1_max_rows is missing:
            l_1_max_rows = undefined("parameter 'max_rows' was not provided", name='max_rows')
        if l_1_full_report is missing:
            l_1_full_report = undefined("parameter 'full_report' was not provided", name='full_report')
        pass
        l_1_t = environment.getattr(l_1_c, 'tensors')
        t_27.extend((
            'Tensors: ',
            str(environment.finalize(t_11(environment.getattr((undefined(name='t') if l_1_t is missing else l_1_t), 'old_count')))),
            ' → ',
            str(environment.finalize(t_11(environment.getattr((undefined(name='t') if l_1_t is missing else l_1_t), 'new_count')))),
            '.\n',
        ))
        if environment.getattr((undefined(name='t') if l_1_t is missing else l_1_t), 'templates'):
            pass
            t_27.append(
                '\n| tensor (indices as `*`) | before | after |\n|---|---|---|\n',
            )
            for l_2_x in (environment.getattr((undefined(name='t') if l_1_t is missing else l_1_t), 'templates') if t_19(l_1_max_rows) else environment.getattr((undefined(name='t') if l_1_t is missing else l_1_t), 'templates')[:l_1_max_rows]):
                _loop_vars = {}
                pass
                t_27.extend((
                    '| ',
                    str(environment.finalize(t_2(environment.getattr(l_2_x, 'template')))),
                    ' | ',
                    str(environment.finalize(t_11(environment.getattr(l_2_x, 'old_count')))),
                ))
                if environment.getattr(l_2_x, 'old_layers'):
                    pass
                    t_27.extend((
                        ' in ',
                        str(environment.finalize(t_2(environment.getattr(l_2_x, 'old_layers')))),
                    ))
                t_27.extend((
                    ' | ',
                    str(environment.finalize(t_11(environment.getattr(l_2_x, 'new_count')))),
                ))
                if environment.getattr(l_2_x, 'new_layers'):
                    pass
                    t_27.extend((
                        ' in ',
                        str(environment.finalize(t_2(environment.getattr(l_2_x, 'new_layers')))),
                    ))
                t_27.append(
                    ' |\n',
                )
            l_2_x = missing
            t_27.extend((
                str(environment.finalize(context.call((undefined(name='more') if l_0_more is missing else l_0_more), environment.getattr((undefined(name='t') if l_1_t is missing else l_1_t), 'templates'), l_1_max_rows, l_1_full_report))),
                '\n',
            ))
        def t_28(fiter):
            for (l_2_title, l_2_patterns) in fiter:
                if l_2_patterns:
                    yield (l_2_title, l_2_patterns)
        for (l_2_title, l_2_patterns) in t_28([('Removed', environment.getattr((undefined(name='t') if l_1_t is missing else l_1_t), 'removed')), ('Added', environment.getattr((undefined(name='t') if l_1_t is missing else l_1_t), 'added'))]):
            _loop_vars = {}
            pass
            t_27.extend((
                '\n',
                str(environment.finalize(l_2_title)),
                ' (',
                str(environment.finalize(t_11(t_16(environment, l_2_patterns, attribute='count')))),
                ' tensors in ',
                str(environment.finalize(t_7(l_2_patterns))),
                ' patterns):\n\n| pattern | dtype | shape | count |\n|---|---|---|---|\n',
            ))
            for l_3_p in (l_2_patterns if t_19(l_1_max_rows) else l_2_patterns[:l_1_max_rows]):
                _loop_vars = {}
                pass
                t_27.extend((
                    '| ',
                    str(environment.finalize(t_2(environment.getattr(l_3_p, 'name')))),
                    ' | ',
                    str(environment.finalize(t_2(environment.getattr(l_3_p, 'dtype')))),
                    ' | ',
                    str(environment.finalize(t_2(t_8(context.eval_ctx, environment.getattr(l_3_p, 'shape'))))),
                    ' | ',
                    str(environment.finalize(t_11(environment.getattr(l_3_p, 'count')))),
                    ' |\n',
                ))
            l_3_p = missing
            t_27.extend((
                str(environment.finalize(context.call((undefined(name='more') if l_0_more is missing else l_0_more), l_2_patterns, l_1_max_rows, l_1_full_report, _loop_vars=_loop_vars))),
                '\n',
            ))
        l_2_title = l_2_patterns = missing
        if environment.getattr((undefined(name='t') if l_1_t is missing else l_1_t), 'changed'):
            pass
            t_27.append(
                '\nReshaped or retyped:\n\n| pattern | old | new | count |\n|---|---|---|---|\n',
            )
            for l_2_x in (environment.getattr((undefined(name='t') if l_1_t is missing else l_1_t), 'changed') if t_19(l_1_max_rows) else environment.getattr((undefined(name='t') if l_1_t is missing else l_1_t), 'changed')[:l_1_max_rows]):
                _loop_vars = {}
                pass
                t_27.extend((
                    '| ',
                    str(environment.finalize(t_2(environment.getattr(environment.getattr(l_2_x, 'pattern'), 'name')))),
                    ' | ',
                    str(environment.finalize(t_2(environment.getattr(l_2_x, 'old_dtype')))),
                    ' ',
                    str(environment.finalize(t_2(t_8(context.eval_ctx, environment.getattr(l_2_x, 'old_shape'))))),
                    ' | ',
                    str(environment.finalize(t_2(environment.getattr(environment.getattr(l_2_x, 'pattern'), 'dtype')))),
                    ' ',
                    str(environment.finalize(t_2(t_8(context.eval_ctx, environment.getattr(environment.getattr(l_2_x, 'pattern'), 'shape'))))),
                    ' | ',
                    str(environment.finalize(t_11(environment.getattr(environment.getattr(l_2_x, 'pattern'), 'count')))),
                    ' |\n',
                ))
            l_2_x = missing
            t_27.extend((
                str(environment.finalize(context.call((undefined(name='more') if l_0_more is missing else l_0_more), environment.getattr((undefined(name='t') if l_1_t is missing else l_1_t), 'changed'), l_1_max_rows, l_1_full_report))),
                '\n',
            ))
        if environment.getattr((undefined(name='t') if l_1_t is missing else l_1_t), 'cross_model'):
            pass
            t_27.append(
                '\nSame tensor, different model (matched by the name after the layer index):\n\n| tensor | old | new |\n|---|---|---|\n',
            )
            for l_2_x in (environment.getattr((undefined(name='t') if l_1_t is missing else l_1_t), 'cross_model') if t_19(l_1_max_rows) else environment.getattr((undefined(name='t') if l_1_t is missing else l_1_t), 'cross_model')[:l_1_max_rows]):
                _loop_vars = {}
                pass
                t_27.extend((
                    '| ',
                    str(environment.finalize(t_2(environment.getattr(l_2_x, 'tail')))),
                    ' | ',
                    str(environment.finalize(t_2(environment.getattr(l_2_x, 'old')))),
                    ' | ',
                    str(environment.finalize(t_2(environment.getattr(l_2_x, 'new')))),
                    ' |\n',
                ))
            l_2_x = missing
            t_27.extend((
                str(environment.finalize(context.call((undefined(name='more') if l_0_more is missing else l_0_more), environment.getattr((undefined(name='t') if l_1_t is missing else l_1_t), 'cross_model'), l_1_max_rows, l_1_full_report))),
                '\n',
            ))
        return concat(t_27)
    context.exported_vars.add('tensor_changes')
    context.vars['tensor_changes'] = l_0_tensor_changes = Macro(environment, macro, 'tensor_changes', ('c', 'max_rows', 'full_report'), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_c, l_1_max_rows, l_1_full_report):
        t_29 = []
        if l_1_c is missing:
            l_1_c = undefined("parameter 'c' was not provided", name='c')
        if l_1_max_rows is missing:
            l_1_max_rows = undefined("parameter 'max_rows' was not provided", name='max_rows')
        if l_1_full_report is missing:
            l_1_full_report = undefined("parameter 'full_report' was not provided", name='full_report')
        pass
        if environment.getattr(l_1_c, 'metrics'):
            pass
            t_29.append(
                '| figure | old | new | delta | change |\n|---|---|---|---|---|\n',
            )
            for l_2_m in (environment.getattr(l_1_c, 'metrics') if t_19(l_1_max_rows) else environment.getattr(l_1_c, 'metrics')[:l_1_max_rows]):
                l_2_change = resolve('change')
                _loop_vars = {}
                pass
                t_29.extend((
                    '| ',
                    str(environment.finalize(environment.getattr(l_2_m, 'name'))),
                    ' | ',
                    str(environment.finalize(t_3(environment.getattr(l_2_m, 'old'), environment.getattr(l_2_m, 'unit')))),
                    ' | ',
                    str(environment.finalize(t_3(environment.getattr(l_2_m, 'new'), environment.getattr(l_2_m, 'unit')))),
                    ' | ',
                    str(environment.finalize((t_11(environment.getattr(l_2_m, 'delta')) if (not t_19(environment.getattr(l_2_m, 'delta'))) else ''))),
                    ' | ',
                    str(environment.finalize((context.call((undefined(name='change') if l_2_change is missing else l_2_change), environment.getattr(l_2_m, 'old'), environment.getattr(l_2_m, 'new'), _loop_vars=_loop_vars) if (not t_19(environment.getattr(l_2_m, 'delta'))) else ''))),
                    ' |\n',
                ))
            l_2_m = l_2_change = missing
            t_29.extend((
                str(environment.finalize(context.call((undefined(name='more') if l_0_more is missing else l_0_more), environment.getattr(l_1_c, 'metrics'), l_1_max_rows, l_1_full_report))),
                '\n',
            ))
            if ('@' in t_6(context.eval_ctx, t_9(context, environment.getattr(l_1_c, 'metrics'), attribute='name'), ' ')):
                pass
                t_29.append(
                    "\nFigures named `…@tpN` are per GPU at that parallel configuration, by vLLM's sharding and KV-cache rules; `hubdiff metrics SOURCE --tp N` shows each figure beside its rule and the vLLM version read.\n",
                )
        else:
            pass
            t_29.append(
                'No figure changed.\n',
            )
        return concat(t_29)
    context.exported_vars.add('metrics_table')
    context.vars['metrics_table'] = l_0_metrics_table = Macro(environment, macro, 'metrics_table', ('c', 'max_rows', 'full_report'), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_r):
        t_30 = []
        l_1_kv_derivation = resolve('kv_derivation')
        l_1_c = l_1_a = l_1_b = missing
        if l_1_r is missing:
            l_1_r = undefined("parameter 'r' was not provided", name='r')
        pass
        l_1_c = environment.getattr(l_1_r, 'comparison')
        t_30.extend((
            '- ',
            str(environment.finalize(t_10(environment.getattr(environment.getattr((undefined(name='c') if l_1_c is missing else l_1_c), 'old'), 'label')))),
            ': ',
            str(environment.finalize(context.call((undefined(name='kv_derivation') if l_1_kv_derivation is missing else l_1_kv_derivation), environment.getattr(environment.getattr((undefined(name='c') if l_1_c is missing else l_1_c), 'old'), 'metrics')))),
            '\n- ',
            str(environment.finalize(t_10(environment.getattr(environment.getattr((undefined(name='c') if l_1_c is missing else l_1_c), 'new'), 'label')))),
            ': ',
            str(environment.finalize(context.call((undefined(name='kv_derivation') if l_1_kv_derivation is missing else l_1_kv_derivation), environment.getattr(environment.getattr((undefined(name='c') if l_1_c is missing else l_1_c), 'new'), 'metrics')))),
            '\n',
        ))
        l_1_a = environment.getattr(environment.getattr(environment.getattr((undefined(name='c') if l_1_c is missing else l_1_c), 'old'), 'metrics'), 'kv')
        l_1_b = environment.getattr(environment.getattr(environment.getattr((undefined(name='c') if l_1_c is missing else l_1_c), 'new'), 'metrics'), 'kv')
        if environment.getattr((undefined(name='b') if l_1_b is missing else l_1_b), 'bytes_per_token'):
            pass
            t_30.extend((
                '- ratio: ',
                str(environment.finalize(t_4('%.1f', (environment.getattr((undefined(name='a') if l_1_a is missing else l_1_a), 'bytes_per_token') / environment.getattr((undefined(name='b') if l_1_b is missing else l_1_b), 'bytes_per_token'))))),
                '×\n',
            ))
        for l_2_v in environment.getattr(l_1_r, 'kv_variants'):
            _loop_vars = {}
            pass
            t_30.extend((
                '- if ',
                str(environment.finalize(environment.getattr(l_2_v, 'label'))),
                ': ',
                str(environment.finalize(t_11(environment.getattr(l_2_v, 'old_bytes')))),
                ' vs ',
                str(environment.finalize(t_11(environment.getattr(l_2_v, 'new_bytes')))),
                ' bytes/token, ',
                str(environment.finalize((t_4('%.1f', (environment.getattr(l_2_v, 'old_bytes') / environment.getattr(l_2_v, 'new_bytes'))) if environment.getattr(l_2_v, 'new_bytes') else '-'))),
                '×\n',
            ))
        l_2_v = missing
        t_30.extend((
            '- at ',
            str(environment.finalize(t_11(environment.getattr((undefined(name='a') if l_1_a is missing else l_1_a), 'context_tokens')))),
            ' tokens: ',
            str(environment.finalize(t_1((environment.getattr((undefined(name='a') if l_1_a is missing else l_1_a), 'bytes_at_context') - environment.getattr((undefined(name='a') if l_1_a is missing else l_1_a), 'state_bytes_per_sequence'))))),
        ))
        if environment.getattr((undefined(name='a') if l_1_a is missing else l_1_a), 'state_bytes_per_sequence'):
            pass
            t_30.extend((
                ' + ',
                str(environment.finalize(t_5(environment.getattr((undefined(name='a') if l_1_a is missing else l_1_a), 'state_bytes_per_sequence')))),
                ' of recurrent state',
            ))
        t_30.extend((
            ' (',
            str(environment.finalize(t_10(environment.getattr(environment.getattr((undefined(name='c') if l_1_c is missing else l_1_c), 'old'), 'label')))),
            '); at ',
            str(environment.finalize(t_11(environment.getattr((undefined(name='b') if l_1_b is missing else l_1_b), 'context_tokens')))),
            ' tokens: ',
            str(environment.finalize(t_1((environment.getattr((undefined(name='b') if l_1_b is missing else l_1_b), 'bytes_at_context') - environment.getattr((undefined(name='b') if l_1_b is missing else l_1_b), 'state_bytes_per_sequence'))))),
        ))
        if environment.getattr((undefined(name='b') if l_1_b is missing else l_1_b), 'state_bytes_per_sequence'):
            pass
            t_30.extend((
                ' + ',
                str(environment.finalize(t_5(environment.getattr((undefined(name='b') if l_1_b is missing else l_1_b), 'state_bytes_per_sequence')))),
                ' of recurrent state',
            ))
        t_30.extend((
            ' (',
            str(environment.finalize(t_10(environment.getattr(environment.getattr((undefined(name='c') if l_1_c is missing else l_1_c), 'new'), 'label')))),
            ')\n\n',
        ))
        if (environment.getattr((undefined(name='a') if l_1_a is missing else l_1_a), 'assumptions') == environment.getattr((undefined(name='b') if l_1_b is missing else l_1_b), 'assumptions')):
            pass
            t_30.extend((
                'Assumptions: ',
                str(environment.finalize(t_10(t_6(context.eval_ctx, environment.getattr((undefined(name='b') if l_1_b is missing else l_1_b), 'assumptions'), '; '), 2000))),
                '.\n',
            ))
        else:
            pass
            t_30.extend((
                'Assumptions (',
                str(environment.finalize(t_10(environment.getattr(environment.getattr((undefined(name='c') if l_1_c is missing else l_1_c), 'old'), 'label')))),
                '): ',
                str(environment.finalize(t_10(t_6(context.eval_ctx, environment.getattr((undefined(name='a') if l_1_a is missing else l_1_a), 'assumptions'), '; '), 2000))),
                '.\n\nAssumptions (',
                str(environment.finalize(t_10(environment.getattr(environment.getattr((undefined(name='c') if l_1_c is missing else l_1_c), 'new'), 'label')))),
                '): ',
                str(environment.finalize(t_10(t_6(context.eval_ctx, environment.getattr((undefined(name='b') if l_1_b is missing else l_1_b), 'assumptions'), '; '), 2000))),
                '.\n',
            ))
        return concat(t_30)
    context.exported_vars.add('kv')
    context.vars['kv'] = l_0_kv = Macro(environment, macro, 'kv', ('r',), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_r):
        t_31 = []
        l_1_shaky = resolve('shaky')
        l_1_broken = missing
        if l_1_r is missing:
            l_1_r = undefined("parameter 'r' was not provided", name='r')
        pass
        l_1_broken = environment.getattr(l_1_r, 'broken_claims')
        if (undefined(name='broken') if l_1_broken is missing else l_1_broken):
            pass
            t_31.append(
                '| claim that no longer holds | where | stated → measured | accepting writes | checked |\n|---|---|---|---|---|\n',
            )
            for l_2_x in (undefined(name='broken') if l_1_broken is missing else l_1_broken):
                l_2_accepted = resolve('accepted')
                _loop_vars = {}
                pass
                t_31.extend((
                    '| ',
                    str(environment.finalize(t_2(environment.getattr(environment.getattr(l_2_x, 'claim'), 'name')))),
                    ' | ',
                ))
                if environment.getattr(l_1_r, 'baseline'):
                    pass
                    t_31.append(
                        str(environment.finalize(t_2(str_join((t_15(environment.getattr(l_1_r, 'baseline')), ':', environment.getattr(environment.getattr(l_2_x, 'claim'), 'line'), ))))),
                    )
                t_31.extend((
                    ' | ',
                    str(environment.finalize(t_2(environment.getattr(environment.getattr(l_2_x, 'claim'), 'stated')))),
                    ' → ',
                    str(environment.finalize(t_10(environment.getattr(l_2_x, 'measured_text')))),
                    ' | ',
                    str(environment.finalize((t_2(context.call((undefined(name='accepted') if l_2_accepted is missing else l_2_accepted), l_2_x, _loop_vars=_loop_vars)) if (not t_19(environment.getattr(l_2_x, 'measured'))) else '(no figure: remove the claim)'))),
                    ' | ',
                    str(environment.finalize(t_10(environment.getattr(l_2_x, 'rule')))),
                ))
                if environment.getattr(l_2_x, 'unverified'):
                    pass
                    t_31.append(
                        ', on an unverified figure',
                    )
                t_31.append(
                    ' |\n',
                )
            l_2_x = l_2_accepted = missing
            t_31.append(
                '\n',
            )
        if environment.getattr(l_1_r, 'claims'):
            pass
            l_1_shaky = t_8(context.eval_ctx, t_13(context, t_13(context, environment.getattr(l_1_r, 'claims'), 'holds'), 'unverified'))
            t_31.extend((
                str(environment.finalize((t_7(environment.getattr(l_1_r, 'claims')) - t_7((undefined(name='broken') if l_1_broken is missing else l_1_broken))))),
                ' of ',
                str(environment.finalize(t_7(environment.getattr(l_1_r, 'claims')))),
                ' claims hold',
            ))
            if (undefined(name='shaky') if l_1_shaky is missing else l_1_shaky):
                pass
                t_31.extend((
                    ' (',
                    str(environment.finalize(t_7((undefined(name='shaky') if l_1_shaky is missing else l_1_shaky)))),
                    ' on an unverified figure: ',
                ))
                l_2_loop = missing
                for l_2_x, l_2_loop in LoopContext((undefined(name='shaky') if l_1_shaky is missing else l_1_shaky), undefined):
                    _loop_vars = {}
                    pass
                    t_31.extend((
                        str(environment.finalize(t_2(environment.getattr(environment.getattr(l_2_x, 'claim'), 'name')))),
                        str(environment.finalize((', ' if (not environment.getattr(l_2_loop, 'last')) else cond_expr_undefined("the inline if-expression on line 176 in '_macros.md.j2' evaluated to false and no else section was defined.")))),
                    ))
                l_2_loop = l_2_x = missing
                t_31.append(
                    ')',
                )
            t_31.append(
                '.\n',
            )
        return concat(t_31)
    context.exported_vars.add('claims')
    context.vars['claims'] = l_0_claims = Macro(environment, macro, 'claims', ('r',), False, False, False, context.eval_ctx.autoescape)
    def macro(l_1_report, l_1_results):
        t_32 = []
        l_1_accept_commands = resolve('accept_commands')
        l_1_commands = l_1_proposed = l_1_releases_only = missing
        if l_1_report is missing:
            l_1_report = undefined("parameter 'report' was not provided", name='report')
        if l_1_results is missing:
            l_1_results = undefined("parameter 'results' was not provided", name='results')
        pass
        l_1_commands = context.call((undefined(name='accept_commands') if l_1_accept_commands is missing else l_1_accept_commands), environment.getattr(l_1_report, 'kind'), l_1_results)
        l_1_proposed = t_8(context.eval_ctx, t_13(context, t_13(context, t_12(context, l_1_results, 'error'), 'kind', 'in', ['revision', 'new release', 'renamed']), 'status', 'ne', 'ok'))
        l_1_releases_only = ((undefined(name='proposed') if l_1_proposed is missing else l_1_proposed) and (not t_8(context.eval_ctx, t_12(context, (undefined(name='proposed') if l_1_proposed is missing else l_1_proposed), 'kind', 'eq', 'new release'))))
        if ((undefined(name='commands') if l_1_commands is missing else l_1_commands) or ((environment.getattr(l_1_report, 'kind') == 'watch') and (undefined(name='proposed') if l_1_proposed is missing else l_1_proposed))):
            pass
            t_32.append(
                '\n**What to do**\n\n',
            )
            if (undefined(name='commands') if l_1_commands is missing else l_1_commands):
                pass
                t_32.extend((
                    '- **The change is expected**: accept the measured figures',
                    str(environment.finalize((" on this pull request's branch" if (environment.getattr(l_1_report, 'kind') == 'watch') else ''))),
                    ' with ',
                ))
                l_2_loop = missing
                for l_2_command, l_2_loop in LoopContext((undefined(name='commands') if l_1_commands is missing else l_1_commands), undefined):
                    _loop_vars = {}
                    pass
                    t_32.extend((
                        str(environment.finalize(t_2(l_2_command, 2000, table=False))),
                        str(environment.finalize((' and ' if (not environment.getattr(l_2_loop, 'last')) else ''))),
                    ))
                l_2_loop = l_2_command = missing
                t_32.extend((
                    ', then commit and push. Each claim above is rewritten as *accepting writes* says, in its own unit and precision, from the figures ',
                    str(environment.finalize(('this branch recorded (no Hub request)' if (environment.getattr(l_1_report, 'kind') == 'watch') else 'recorded for it'))),
                    '; comments and every other line of the file stay as they are.\n',
                ))
            elif (undefined(name='releases_only') if l_1_releases_only is missing else l_1_releases_only):
                pass
                t_32.append(
                    '- **A release to track**: give it claims from its recorded figures (below) if you like, and merge.\n',
                )
            else:
                pass
                t_32.append(
                    '- **The change is expected**: merge; the baseline then pins these Hub commits.\n',
                )
            if (environment.getattr(l_1_report, 'kind') != 'watch'):
                pass
                t_32.append(
                    '- **It is a regression**: keep the claims as they are and do not merge (a watch pull request: close it; the watch does not propose these Hub commits again).\n',
                )
            elif (undefined(name='releases_only') if l_1_releases_only is missing else l_1_releases_only):
                pass
                t_32.append(
                    "- **Not one to track**: close this pull request (the watch does not propose these Hub commits again), or leave such names out with the discover rule's `exclude`.\n",
                )
            else:
                pass
                t_32.append(
                    '- **It is a regression**: do not merge; close this pull request. The claims keep the published figures, the watch does not propose these Hub commits again, and newer commits get a new pull request. Tell the publisher.\n',
                )
        return concat(t_32)
    context.exported_vars.add('next_steps')
    context.vars['next_steps'] = l_0_next_steps = Macro(environment, macro, 'next_steps', ('report', 'results'), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_c):
        t_33 = []
        if l_1_c is missing:
            l_1_c = undefined("parameter 'c' was not provided", name='c')
        pass
        def t_34(fiter):
            for l_2_side in fiter:
                if environment.getattr(environment.getattr(l_2_side, 'metrics'), 'unverified'):
                    yield l_2_side
        for l_2_side in t_34((environment.getattr(l_1_c, 'old'), environment.getattr(l_1_c, 'new'))):
            _loop_vars = {}
            pass
            t_33.extend((
                '> **Unverified figures for ',
                str(environment.finalize(t_10(environment.getattr(l_2_side, 'label')))),
                '**: ',
                str(environment.finalize(t_10(t_6(context.eval_ctx, environment.getattr(environment.getattr(l_2_side, 'metrics'), 'unverified'), '; '), 2000))),
                '. hubdiff computed them but cannot vouch for them.\n\n',
            ))
        l_2_side = missing
        return concat(t_33)
    context.exported_vars.add('unverified')
    context.vars['unverified'] = l_0_unverified = Macro(environment, macro, 'unverified', ('c',), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_r, l_1_rows):
        t_35 = []
        l_1_key_figures = resolve('key_figures')
        l_1_layer_strip = resolve('layer_strip')
        l_1_reshaped_first = resolve('reshaped_first')
        l_1_by_impact = resolve('by_impact')
        l_1_c = l_1_figures = l_1_reshaped = l_1_arch = missing
        if l_1_r is missing:
            l_1_r = undefined("parameter 'r' was not provided", name='r')
        if l_1_rows is missing:
            l_1_rows = 8
        pass
        l_1_c = environment.getattr(l_1_r, 'comparison')
        l_1_figures = context.call((undefined(name='key_figures') if l_1_key_figures is missing else l_1_key_figures), (undefined(name='c') if l_1_c is missing else l_1_c))
        if (undefined(name='figures') if l_1_figures is missing else l_1_figures):
            pass
            t_35.extend((
                '| | ',
                str(environment.finalize(t_10(environment.getattr(environment.getattr((undefined(name='c') if l_1_c is missing else l_1_c), 'old'), 'label')))),
                ' | ',
                str(environment.finalize(t_10(environment.getattr(environment.getattr((undefined(name='c') if l_1_c is missing else l_1_c), 'new'), 'label')))),
                ' | change |\n|---|---|---|---|\n',
            ))
            for (l_2_label, l_2_unit, l_2_old, l_2_new) in (undefined(name='figures') if l_1_figures is missing else l_1_figures):
                l_2_change = resolve('change')
                _loop_vars = {}
                pass
                t_35.extend((
                    '| ',
                    str(environment.finalize(l_2_label)),
                    ' | ',
                    str(environment.finalize(t_3(l_2_old, l_2_unit))),
                    ' | ',
                    str(environment.finalize(t_3(l_2_new, l_2_unit))),
                    ' | ',
                    str(environment.finalize((context.call((undefined(name='change') if l_2_change is missing else l_2_change), l_2_old, l_2_new, _loop_vars=_loop_vars) if (t_20(l_2_old) and t_20(l_2_new)) else ''))),
                    ' |\n',
                ))
            l_2_label = l_2_unit = l_2_old = l_2_new = l_2_change = missing
        t_35.append(
            '\n',
        )
        if (context.call((undefined(name='layer_strip') if l_1_layer_strip is missing else l_1_layer_strip), environment.getattr(environment.getattr((undefined(name='c') if l_1_c is missing else l_1_c), 'old'), 'metrics')) == context.call((undefined(name='layer_strip') if l_1_layer_strip is missing else l_1_layer_strip), environment.getattr(environment.getattr((undefined(name='c') if l_1_c is missing else l_1_c), 'new'), 'metrics'))):
            pass
            t_35.extend((
                'Layer stack unchanged (',
                str(environment.finalize(t_7(environment.getitem(context.call((undefined(name='layer_strip') if l_1_layer_strip is missing else l_1_layer_strip), environment.getattr(environment.getattr((undefined(name='c') if l_1_c is missing else l_1_c), 'new'), 'metrics')), 0)))),
                ' layers).\n',
            ))
        else:
            pass
            t_35.extend((
                str(environment.finalize(context.call((undefined(name='strip') if l_0_strip is missing else l_0_strip), (undefined(name='c') if l_1_c is missing else l_1_c), legend=False))),
                '\n',
            ))
        l_1_reshaped = context.call((undefined(name='reshaped_first') if l_1_reshaped_first is missing else l_1_reshaped_first), (undefined(name='c') if l_1_c is missing else l_1_c))
        if (undefined(name='reshaped') if l_1_reshaped is missing else l_1_reshaped):
            pass
            t_35.extend((
                '\n**Reshaped tensors** (',
                str(environment.finalize(t_7((undefined(name='reshaped') if l_1_reshaped is missing else l_1_reshaped)))),
                ' pattern',
                str(environment.finalize(('s' if (t_7((undefined(name='reshaped') if l_1_reshaped is missing else l_1_reshaped)) != 1) else cond_expr_undefined("the inline if-expression on line 233 in '_macros.md.j2' evaluated to false and no else section was defined.")))),
                '):\n',
            ))
            for l_2_x in (undefined(name='reshaped') if l_1_reshaped is missing else l_1_reshaped)[:l_1_rows]:
                _loop_vars = {}
                pass
                t_35.extend((
                    '- ',
                    str(environment.finalize(t_2(environment.getattr(environment.getattr(l_2_x, 'pattern'), 'name'), table=False))),
                    ' ',
                    str(environment.finalize(t_2(environment.getattr(l_2_x, 'old_dtype'), table=False))),
                    ' ',
                    str(environment.finalize(t_2(t_8(context.eval_ctx, environment.getattr(l_2_x, 'old_shape')), table=False))),
                    ' → ',
                ))
                if (environment.getattr(environment.getattr(l_2_x, 'pattern'), 'dtype') != environment.getattr(l_2_x, 'old_dtype')):
                    pass
                    t_35.extend((
                        str(environment.finalize(t_2(environment.getattr(environment.getattr(l_2_x, 'pattern'), 'dtype'), table=False))),
                        ' ',
                    ))
                t_35.extend((
                    str(environment.finalize(t_2(t_8(context.eval_ctx, environment.getattr(environment.getattr(l_2_x, 'pattern'), 'shape')), table=False))),
                    '\n',
                ))
            l_2_x = missing
            if (t_7((undefined(name='reshaped') if l_1_reshaped is missing else l_1_reshaped)) > l_1_rows):
                pass
                t_35.extend((
                    '- … ',
                    str(environment.finalize((t_7((undefined(name='reshaped') if l_1_reshaped is missing else l_1_reshaped)) - l_1_rows))),
                    ' more under "tensor layout" below\n',
                ))
        l_2_loop = missing
        for l_2_x, l_2_loop in LoopContext(environment.getattr(environment.getattr((undefined(name='c') if l_1_c is missing else l_1_c), 'tensors'), 'renames'), undefined):
            _loop_vars = {}
            pass
            if environment.getattr(l_2_loop, 'first'):
                pass
                t_35.append(
                    '\n**Renamed**:\n',
                )
            t_35.extend((
                '- ',
                str(environment.finalize(t_2(environment.getattr(l_2_x, 'old'), table=False))),
                ' → ',
                str(environment.finalize(t_2(environment.getattr(l_2_x, 'new'), table=False))),
                ': ',
                str(environment.finalize(t_11(environment.getattr(l_2_x, 'count')))),
                ' tensors (',
                str(environment.finalize(t_11(environment.getattr(l_2_x, 'matched')))),
                ' keep the rest of their name)\n',
            ))
        l_2_loop = l_2_x = missing
        l_1_arch = context.call((undefined(name='by_impact') if l_1_by_impact is missing else l_1_by_impact), (undefined(name='c') if l_1_c is missing else l_1_c))
        if (undefined(name='arch') if l_1_arch is missing else l_1_arch):
            pass
            t_35.extend((
                '\n**Architectural config changes** (',
                str(environment.finalize(t_7((undefined(name='arch') if l_1_arch is missing else l_1_arch)))),
                '; KV-cache- and shape-changing first):\n\n| key | old | new |\n|---|---|---|\n',
            ))
            for l_2_x in (undefined(name='arch') if l_1_arch is missing else l_1_arch)[:l_1_rows]:
                _loop_vars = {}
                pass
                t_35.extend((
                    '| ',
                    str(environment.finalize(t_2(environment.getattr(l_2_x, 'path')))),
                    ' | ',
                ))
                if (environment.getattr(l_2_x, 'kind') == 'added'):
                    pass
                    t_35.append(
                        '(absent)',
                    )
                else:
                    pass
                    t_35.append(
                        str(environment.finalize(t_2((environment.getattr(l_2_x, 'summary') if environment.getattr(l_2_x, 'summary') else t_18(environment.getattr(l_2_x, 'old'))), 60))),
                    )
                t_35.append(
                    ' | ',
                )
                if (environment.getattr(l_2_x, 'kind') == 'removed'):
                    pass
                    t_35.append(
                        '(absent)',
                    )
                else:
                    pass
                    t_35.append(
                        str(environment.finalize(t_2((environment.getattr(l_2_x, 'summary') if environment.getattr(l_2_x, 'summary') else t_18(environment.getattr(l_2_x, 'new'))), 60))),
                    )
                t_35.append(
                    ' |\n',
                )
            l_2_x = missing
            if (t_7((undefined(name='arch') if l_1_arch is missing else l_1_arch)) > l_1_rows):
                pass
                t_35.extend((
                    '\n… ',
                    str(environment.finalize((t_7((undefined(name='arch') if l_1_arch is missing else l_1_arch)) - l_1_rows))),
                    ' more under "config changes" below.\n',
                ))
        return concat(t_35)
    context.exported_vars.add('matters')
    context.vars['matters'] = l_0_matters = Macro(environment, macro, 'matters', ('r', 'rows'), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_c):
        t_36 = []
        l_1_counts = missing
        if l_1_c is missing:
            l_1_c = undefined("parameter 'c' was not provided", name='c')
        pass
        l_1_counts = []
        def t_37(fiter):
            l_2_hub_count = resolve('hub_count')
            for l_2_side in fiter:
                if (not t_19(context.call((undefined(name='hub_count') if l_2_hub_count is missing else l_2_hub_count), environment.getattr(l_2_side, 'snapshot')))):
                    yield l_2_side
        for l_2_side in t_37((environment.getattr(l_1_c, 'old'), environment.getattr(l_1_c, 'new'))):
            l_2_hub_count = resolve('hub_count')
            l_2__ = missing
            _loop_vars = {}
            pass
            l_2__ = context.call(environment.getattr((undefined(name='counts') if l_1_counts is missing else l_1_counts), 'append'), (l_2_side, context.call((undefined(name='hub_count') if l_2_hub_count is missing else l_2_hub_count), environment.getattr(l_2_side, 'snapshot'), _loop_vars=_loop_vars)), _loop_vars=_loop_vars)
            _loop_vars['_'] = l_2__
        l_2_side = l_2_hub_count = l_2__ = missing
        if (undefined(name='counts') if l_1_counts is missing else l_1_counts):
            pass
            def t_38(fiter):
                for (l_2_side, l_2_h) in fiter:
                    if (not environment.getattr(l_2_h, 'agrees')):
                        yield (l_2_side, l_2_h)
            l_2_loop = missing
            for (l_2_side, l_2_h), l_2_loop in LoopContext(t_38((undefined(name='counts') if l_1_counts is missing else l_1_counts)), undefined):
                _loop_vars = {}
                pass
                t_36.extend((
                    "**The Hub's own count for ",
                    str(environment.finalize(t_10(environment.getattr(l_2_side, 'label')))),
                    ' disagrees with the headers:**',
                ))
                l_3_loop = missing
                for l_3_d, l_3_loop in LoopContext(environment.getattr(l_2_h, 'differing'), undefined):
                    _loop_vars = {}
                    pass
                    t_36.extend((
                        ' ',
                        str(environment.finalize(t_10(l_3_d))),
                        ' Hub ',
                        str(environment.finalize(t_11((context.call(environment.getattr(environment.getattr(l_2_h, 'hub'), 'get'), l_3_d, _loop_vars=_loop_vars) or 0)))),
                        ', headers ',
                        str(environment.finalize(t_11((context.call(environment.getattr(environment.getattr(l_2_h, 'ours'), 'get'), l_3_d, _loop_vars=_loop_vars) or 0)))),
                        str(environment.finalize((';' if (not environment.getattr(l_3_loop, 'last')) else '.'))),
                    ))
                l_3_loop = l_3_d = missing
                t_36.append(
                    '\n',
                )
            l_2_loop = l_2_side = l_2_h = missing
            def t_39(fiter):
                for (l_2_side, l_2_h) in fiter:
                    if environment.getattr(l_2_h, 'agrees'):
                        yield (l_2_side, l_2_h)
            l_2_loop = missing
            for (l_2_side, l_2_h), l_2_loop in LoopContext(t_39((undefined(name='counts') if l_1_counts is missing else l_1_counts)), undefined):
                _loop_vars = {}
                pass
                if environment.getattr(l_2_loop, 'first'):
                    pass
                    t_36.append(
                        "The Hub's own count (`safetensors.parameters`) agrees with the headers: ",
                    )
                t_36.extend((
                    str(environment.finalize(t_10(environment.getattr(l_2_side, 'label')))),
                    ' ',
                    str(environment.finalize(t_11(t_16(environment, context.call(environment.getattr(environment.getattr(l_2_h, 'hub'), 'values'), _loop_vars=_loop_vars))))),
                    ' stored elements (',
                ))
                l_3_loop = missing
                for (l_3_d, l_3_n), l_3_loop in LoopContext(context.call(environment.getattr(environment.getattr(l_2_h, 'hub'), 'items'), _loop_vars=_loop_vars), undefined):
                    _loop_vars = {}
                    pass
                    t_36.extend((
                        str(environment.finalize(t_10(l_3_d))),
                        ' ',
                        str(environment.finalize(t_11(l_3_n))),
                        str(environment.finalize((', ' if (not environment.getattr(l_3_loop, 'last')) else cond_expr_undefined("the inline if-expression on line 276 in '_macros.md.j2' evaluated to false and no else section was defined.")))),
                    ))
                l_3_loop = l_3_d = l_3_n = missing
                t_36.extend((
                    ')',
                    str(environment.finalize(('; ' if (not environment.getattr(l_2_loop, 'last')) else '.'))),
                ))
            l_2_loop = l_2_side = l_2_h = missing
            t_36.append(
                '\n',
            )
        return concat(t_36)
    context.exported_vars.add('hub_counts')
    context.vars['hub_counts'] = l_0_hub_counts = Macro(environment, macro, 'hub_counts', ('c',), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_v):
        t_40 = []
        l_1_change = resolve('change')
        if l_1_v is missing:
            l_1_v = undefined("parameter 'v' was not provided", name='v')
        pass
        t_40.extend((
            '| stored as | ',
            str(environment.finalize(t_10(environment.getattr(l_1_v, 'of')))),
            ' | new |\n|---|---|---|\n',
        ))
        for l_2_d in t_14(environment, t_17(environment, (t_8(context.eval_ctx, context.call(environment.getattr(environment.getattr(l_1_v, 'old_dtypes'), 'keys'))) + t_8(context.eval_ctx, context.call(environment.getattr(environment.getattr(l_1_v, 'new_dtypes'), 'keys')))))):
            _loop_vars = {}
            pass
            t_40.extend((
                '| ',
                str(environment.finalize(t_10(l_2_d))),
                ' elements | ',
                str(environment.finalize(t_11((context.call(environment.getattr(environment.getattr(l_1_v, 'old_dtypes'), 'get'), l_2_d, _loop_vars=_loop_vars) or 0)))),
                ' | ',
                str(environment.finalize(t_11((context.call(environment.getattr(environment.getattr(l_1_v, 'new_dtypes'), 'get'), l_2_d, _loop_vars=_loop_vars) or 0)))),
                ' |\n',
            ))
        l_2_d = missing
        t_40.extend((
            '| tensor data | ',
            str(environment.finalize(t_1(environment.getattr(l_1_v, 'old_bytes')))),
            ' | ',
            str(environment.finalize(t_1(environment.getattr(l_1_v, 'new_bytes')))),
            ' (',
            str(environment.finalize(context.call((undefined(name='change') if l_1_change is missing else l_1_change), environment.getattr(l_1_v, 'old_bytes'), environment.getattr(l_1_v, 'new_bytes')))),
            ') |\n| scale tensors | ',
            str(environment.finalize(t_1(environment.getattr(l_1_v, 'old_scale_bytes')))),
            ' | ',
            str(environment.finalize(t_1(environment.getattr(l_1_v, 'new_scale_bytes')))),
            ' |\n\n',
        ))
        if (environment.getattr(l_1_v, 'kind') == 'same layout'):
            pass
            t_40.extend((
                'Same architecture, parameters by component and tensor layout (every name, dtype and shape) as ',
                str(environment.finalize(t_10(environment.getattr(l_1_v, 'of')))),
                '. Only headers are read: a fine-tune, a re-upload and a copy look the same.\n',
            ))
        else:
            pass
            t_40.extend((
                'Same architecture and the same parameters by component; the config differs at most in how the model is stored (`quantization_config`, `dtype`): the weights are ',
                str(environment.finalize(environment.getattr(l_1_v, 'kind'))),
                str(environment.finalize((' (other dtypes, or scale tensors)' if (environment.getattr(l_1_v, 'kind') == 'quantized') else ' (other dtypes without scales, other names or shards)'))),
                '.\n',
            ))
        return concat(t_40)
    context.exported_vars.add('storage')
    context.vars['storage'] = l_0_storage = Macro(environment, macro, 'storage', ('v',), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_r):
        t_41 = []
        l_1_CLAIMABLE = resolve('CLAIMABLE')
        l_1_f = missing
        if l_1_r is missing:
            l_1_r = undefined("parameter 'r' was not provided", name='r')
        pass
        l_1_f = environment.getattr(environment.getattr(l_1_r, 'comparison'), 'figures_new')
        t_41.append(
            'Nothing is claimed for a new release until a reviewer states it. Figures one may want to claim, as measured (add them under `claims:` in the entry, rounded as published):\n\n```yaml\nclaims:\n',
        )
        def t_42(fiter):
            for l_2_name in fiter:
                if (t_20(context.call(environment.getattr((undefined(name='f') if l_1_f is missing else l_1_f), 'get'), l_2_name)) and context.call(environment.getattr((undefined(name='f') if l_1_f is missing else l_1_f), 'get'), l_2_name)):
                    yield l_2_name
        for l_2_name in t_42((undefined(name='CLAIMABLE') if l_1_CLAIMABLE is missing else l_1_CLAIMABLE)):
            _loop_vars = {}
            pass
            t_41.extend((
                '  ',
                str(environment.finalize(l_2_name)),
                ': ',
                str(environment.finalize(environment.getitem((undefined(name='f') if l_1_f is missing else l_1_f), l_2_name))),
                '\n',
            ))
        l_2_name = missing
        t_41.append(
            '```\n',
        )
        return concat(t_41)
    context.exported_vars.add('claimable')
    context.vars['claimable'] = l_0_claimable = Macro(environment, macro, 'claimable', ('r',), False, False, False, context.eval_ctx.autoescape)

blocks = {}
debug_info = '2=134&3=142&6=148&7=157&8=161&12=178&13=188&15=193&16=198&18=213&19=216&22=234&23=243&24=244&26=247&27=250&28=253&29=256&31=260&38=274&41=286&42=289&43=293&45=308&48=321&51=328&52=338&53=339&54=340&55=341&58=348&59=352&61=354&63=357&64=361&66=363&68=366&69=370&71=372&77=379&78=389&79=392&80=397&84=402&85=407&87=432&89=435&91=444&95=451&96=456&98=467&100=471&106=476&107=481&109=496&111=499&117=504&118=509&120=518&124=525&125=534&128=539&129=545&131=558&132=561&141=575&142=582&143=585&144=589&145=594&146=595&147=596&148=600&150=603&151=608&153=620&155=651&156=655&158=662&160=666&164=675&165=682&166=683&169=688&170=694&174=724&175=726&176=728&182=758&183=767&184=768&185=769&186=770&190=775&191=779&192=796&197=806&199=811&207=825&208=830&209=839&214=849&215=861&216=862&217=863&218=867&220=872&221=878&225=891&226=895&228=901&230=904&231=905&233=909&234=914&235=919&237=937&238=941&241=945&242=948&246=955&248=965&249=966&251=970&255=973&256=978&258=1008&260=1012&265=1019&266=1025&267=1026&268=1036&270=1039&271=1041&272=1051&275=1072&276=1080&282=1114&283=1122&285=1125&286=1130&288=1140&289=1146&291=1151&292=1155&294=1162&298=1170&299=1177&304=1181&305=1190'
