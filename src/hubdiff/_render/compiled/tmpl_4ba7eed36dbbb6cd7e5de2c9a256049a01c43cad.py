# ruff: noqa
# fmt: off
from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'report.txt.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_results = resolve('results')
    try:
        t_1 = environment.filters['figure']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'figure' found.")
    try:
        t_2 = environment.filters['format']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No filter named 'format' found.")
    try:
        t_3 = environment.filters['grouped']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'grouped' found.")
    try:
        t_4 = environment.filters['join']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No filter named 'join' found.")
    try:
        t_5 = environment.filters['length']
    except KeyError:
        @internalcode
        def t_5(*unused):
            raise TemplateRuntimeError("No filter named 'length' found.")
    try:
        t_6 = environment.filters['list']
    except KeyError:
        @internalcode
        def t_6(*unused):
            raise TemplateRuntimeError("No filter named 'list' found.")
    try:
        t_7 = environment.filters['number']
    except KeyError:
        @internalcode
        def t_7(*unused):
            raise TemplateRuntimeError("No filter named 'number' found.")
    try:
        t_8 = environment.filters['t']
    except KeyError:
        @internalcode
        def t_8(*unused):
            raise TemplateRuntimeError("No filter named 't' found.")
    try:
        t_9 = environment.filters['value']
    except KeyError:
        @internalcode
        def t_9(*unused):
            raise TemplateRuntimeError("No filter named 'value' found.")
    try:
        t_10 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_10(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    for l_1_r in (undefined(name='results') if l_0_results is missing else l_0_results):
        l_1_c = resolve('c')
        l_1_kv_derivation = resolve('kv_derivation')
        l_1_layer_strip = resolve('layer_strip')
        l_1_old_strip = resolve('old_strip')
        l_1_new_strip = resolve('new_strip')
        l_1_show_claims = resolve('show_claims')
        _loop_vars = {}
        pass
        yield str(environment.finalize(t_8(environment.getattr(l_1_r, 'headline'))))
        yield '\n'
        if (not t_10(environment.getattr(l_1_r, 'comparison'))):
            pass
            l_1_c = environment.getattr(l_1_r, 'comparison')
            _loop_vars['c'] = l_1_c
            for l_2_x in environment.getattr((undefined(name='c') if l_1_c is missing else l_1_c), 'config'):
                _loop_vars = {}
                pass
                yield '  config  '
                yield str(environment.finalize(t_2('%-13s', environment.getattr(l_2_x, 'category'))))
                yield ' '
                yield str(environment.finalize(t_8(environment.getattr(l_2_x, 'path'))))
                yield ': '
                yield str(environment.finalize(t_8((environment.getattr(l_2_x, 'summary') if environment.getattr(l_2_x, 'summary') else str_join(((t_9(environment.getattr(l_2_x, 'old')) if (environment.getattr(l_2_x, 'kind') != 'added') else '(absent)'), ' -> ', (t_9(environment.getattr(l_2_x, 'new')) if (environment.getattr(l_2_x, 'kind') != 'removed') else '(absent)'), ))))))
                yield '\n'
            l_2_x = missing
            for l_2_x in environment.getattr(environment.getattr((undefined(name='c') if l_1_c is missing else l_1_c), 'tensors'), 'templates'):
                _loop_vars = {}
                pass
                yield '  tensors '
                yield str(environment.finalize(t_8(environment.getattr(l_2_x, 'template'))))
                yield ': '
                yield str(environment.finalize(t_7(environment.getattr(l_2_x, 'old_count'))))
                if environment.getattr(l_2_x, 'old_layers'):
                    pass
                    yield ' in '
                    yield str(environment.finalize(environment.getattr(l_2_x, 'old_layers')))
                yield ' -> '
                yield str(environment.finalize(t_7(environment.getattr(l_2_x, 'new_count'))))
                if environment.getattr(l_2_x, 'new_layers'):
                    pass
                    yield ' in '
                    yield str(environment.finalize(environment.getattr(l_2_x, 'new_layers')))
                yield '\n'
            l_2_x = missing
            for l_2_x in environment.getattr(environment.getattr((undefined(name='c') if l_1_c is missing else l_1_c), 'tensors'), 'changed'):
                _loop_vars = {}
                pass
                yield '  reshape '
                yield str(environment.finalize(t_8(environment.getattr(environment.getattr(l_2_x, 'pattern'), 'name'))))
                yield ': '
                yield str(environment.finalize(environment.getattr(l_2_x, 'old_dtype')))
                yield ' '
                yield str(environment.finalize(t_6(context.eval_ctx, environment.getattr(l_2_x, 'old_shape'))))
                yield ' -> '
                yield str(environment.finalize(environment.getattr(environment.getattr(l_2_x, 'pattern'), 'dtype')))
                yield ' '
                yield str(environment.finalize(t_6(context.eval_ctx, environment.getattr(environment.getattr(l_2_x, 'pattern'), 'shape'))))
                yield '\n'
            l_2_x = missing
            for l_2_x in environment.getattr(environment.getattr((undefined(name='c') if l_1_c is missing else l_1_c), 'tensors'), 'cross_model'):
                _loop_vars = {}
                pass
                yield '  shape   '
                yield str(environment.finalize(t_8(environment.getattr(l_2_x, 'tail'))))
                yield ': '
                yield str(environment.finalize(environment.getattr(l_2_x, 'old')))
                yield ' -> '
                yield str(environment.finalize(environment.getattr(l_2_x, 'new')))
                yield '\n'
            l_2_x = missing
            for l_2_mm in environment.getattr((undefined(name='c') if l_1_c is missing else l_1_c), 'metrics'):
                l_2_change = resolve('change')
                _loop_vars = {}
                pass
                yield '  figure  '
                yield str(environment.finalize(environment.getattr(l_2_mm, 'name')))
                yield ': '
                yield str(environment.finalize(t_1(environment.getattr(l_2_mm, 'old'), environment.getattr(l_2_mm, 'unit'))))
                yield ' -> '
                yield str(environment.finalize(t_1(environment.getattr(l_2_mm, 'new'), environment.getattr(l_2_mm, 'unit'))))
                yield str(environment.finalize((str_join((' (', context.call((undefined(name='change') if l_2_change is missing else l_2_change), environment.getattr(l_2_mm, 'old'), environment.getattr(l_2_mm, 'new'), _loop_vars=_loop_vars), ')', )) if (not t_10(environment.getattr(l_2_mm, 'delta'))) else '')))
                yield '\n'
            l_2_mm = l_2_change = missing
            if (context.call((undefined(name='kv_derivation') if l_1_kv_derivation is missing else l_1_kv_derivation), environment.getattr(environment.getattr((undefined(name='c') if l_1_c is missing else l_1_c), 'old'), 'metrics'), _loop_vars=_loop_vars) == context.call((undefined(name='kv_derivation') if l_1_kv_derivation is missing else l_1_kv_derivation), environment.getattr(environment.getattr((undefined(name='c') if l_1_c is missing else l_1_c), 'new'), 'metrics'), _loop_vars=_loop_vars)):
                pass
                yield '  kv      '
                yield str(environment.finalize(context.call((undefined(name='kv_derivation') if l_1_kv_derivation is missing else l_1_kv_derivation), environment.getattr(environment.getattr((undefined(name='c') if l_1_c is missing else l_1_c), 'new'), 'metrics'), _loop_vars=_loop_vars)))
                yield ' (both)\n'
            else:
                pass
                yield '  kv      '
                yield str(environment.finalize(context.call((undefined(name='kv_derivation') if l_1_kv_derivation is missing else l_1_kv_derivation), environment.getattr(environment.getattr((undefined(name='c') if l_1_c is missing else l_1_c), 'old'), 'metrics'), _loop_vars=_loop_vars)))
                yield '\n  kv      '
                yield str(environment.finalize(context.call((undefined(name='kv_derivation') if l_1_kv_derivation is missing else l_1_kv_derivation), environment.getattr(environment.getattr((undefined(name='c') if l_1_c is missing else l_1_c), 'new'), 'metrics'), _loop_vars=_loop_vars)))
                yield '\n'
            l_1_old_strip = context.call((undefined(name='layer_strip') if l_1_layer_strip is missing else l_1_layer_strip), environment.getattr(environment.getattr((undefined(name='c') if l_1_c is missing else l_1_c), 'old'), 'metrics'), _loop_vars=_loop_vars)
            _loop_vars['old_strip'] = l_1_old_strip
            l_1_new_strip = context.call((undefined(name='layer_strip') if l_1_layer_strip is missing else l_1_layer_strip), environment.getattr(environment.getattr((undefined(name='c') if l_1_c is missing else l_1_c), 'new'), 'metrics'), _loop_vars=_loop_vars)
            _loop_vars['new_strip'] = l_1_new_strip
            if ((undefined(name='old_strip') if l_1_old_strip is missing else l_1_old_strip) != (undefined(name='new_strip') if l_1_new_strip is missing else l_1_new_strip)):
                pass
                yield '  layers  old attn '
                yield str(environment.finalize(t_3(environment.getitem((undefined(name='old_strip') if l_1_old_strip is missing else l_1_old_strip), 0))))
                yield '\n  layers      mlp  '
                yield str(environment.finalize(t_3(environment.getitem((undefined(name='old_strip') if l_1_old_strip is missing else l_1_old_strip), 1))))
                yield '\n  layers  new attn '
                yield str(environment.finalize(t_3(environment.getitem((undefined(name='new_strip') if l_1_new_strip is missing else l_1_new_strip), 0))))
                yield '\n  layers      mlp  '
                yield str(environment.finalize(t_3(environment.getitem((undefined(name='new_strip') if l_1_new_strip is missing else l_1_new_strip), 1))))
                yield '\n'
            for l_2_v in environment.getattr(l_1_r, 'kv_variants'):
                l_2_change = resolve('change')
                _loop_vars = {}
                pass
                if (environment.getattr(l_2_v, 'old_bytes') == environment.getattr(l_2_v, 'new_bytes')):
                    pass
                    yield '  kv      if '
                    yield str(environment.finalize(environment.getattr(l_2_v, 'label')))
                    yield ': '
                    yield str(environment.finalize(t_7(environment.getattr(l_2_v, 'new_bytes'))))
                    yield ' bytes/token (both)\n'
                else:
                    pass
                    yield '  kv      if '
                    yield str(environment.finalize(environment.getattr(l_2_v, 'label')))
                    yield ': '
                    yield str(environment.finalize(t_7(environment.getattr(l_2_v, 'old_bytes'))))
                    yield ' -> '
                    yield str(environment.finalize(t_7(environment.getattr(l_2_v, 'new_bytes'))))
                    yield ' bytes/token ('
                    yield str(environment.finalize(context.call((undefined(name='change') if l_2_change is missing else l_2_change), environment.getattr(l_2_v, 'old_bytes'), environment.getattr(l_2_v, 'new_bytes'), _loop_vars=_loop_vars)))
                    yield ')\n'
            l_2_v = l_2_change = missing
            if (undefined(name='show_claims') if l_1_show_claims is missing else l_1_show_claims):
                pass
                def t_11(fiter):
                    for l_2_x in fiter:
                        if ((not environment.getattr(l_2_x, 'holds')) or environment.getattr(l_2_x, 'unverified')):
                            yield l_2_x
                for l_2_x in t_11(environment.getattr(l_1_r, 'claims')):
                    _loop_vars = {}
                    pass
                    yield '  claim   '
                    yield str(environment.finalize(environment.getattr(environment.getattr(l_2_x, 'claim'), 'name')))
                    yield ': stated '
                    yield str(environment.finalize(t_8(environment.getattr(environment.getattr(l_2_x, 'claim'), 'stated'))))
                    yield ', measured '
                    yield str(environment.finalize(environment.getattr(l_2_x, 'measured_text')))
                    yield ': '
                    yield str(environment.finalize(('holds' if environment.getattr(l_2_x, 'holds') else str_join(('DOES NOT HOLD (', environment.getattr(l_2_x, 'rule'), ')', )))))
                    if environment.getattr(l_2_x, 'unverified'):
                        pass
                        yield ' (on an unverified figure: '
                        yield str(environment.finalize(t_8(t_4(context.eval_ctx, environment.getattr(l_2_x, 'unverified'), '; '))))
                        yield ')'
                    yield '\n'
                l_2_x = missing
                if (t_5(environment.getattr(l_1_r, 'claims')) > t_5(environment.getattr(l_1_r, 'broken_claims'))):
                    pass
                    yield '  claims  '
                    yield str(environment.finalize((t_5(environment.getattr(l_1_r, 'claims')) - t_5(environment.getattr(l_1_r, 'broken_claims')))))
                    yield ' of '
                    yield str(environment.finalize(t_5(environment.getattr(l_1_r, 'claims'))))
                    yield ' hold\n'
        yield '\n'
    l_1_r = l_1_c = l_1_kv_derivation = l_1_layer_strip = l_1_old_strip = l_1_new_strip = l_1_show_claims = missing

blocks = {}
debug_info = '1=74&2=83&3=85&4=87&5=89&6=93&8=100&9=104&12=119&13=123&15=134&16=138&18=145&19=150&21=158&22=161&24=166&25=168&27=170&28=172&29=174&30=177&31=179&32=181&33=183&35=185&36=189&37=192&39=199&42=208&43=210&44=218&47=232&48=235'
