# ruff: noqa
# fmt: off
from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'comment.md.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_marker = resolve('marker')
    l_0_report = resolve('report')
    l_0_results = resolve('results')
    l_0_full_report = resolve('full_report')
    l_0_full_report_link = resolve('full_report_link')
    l_0_m = l_0_steps = missing
    try:
        t_1 = environment.filters['length']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'length' found.")
    try:
        t_2 = environment.filters['md']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No filter named 'md' found.")
    try:
        t_3 = environment.filters['trim']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'trim' found.")
    try:
        t_4 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    l_0_m = context.vars['m'] = environment.get_template('_macros.md.j2', 'comment.md.j2')._get_default_module(context)
    context.exported_vars.discard('m')
    yield '<!-- hubdiff:'
    yield str(environment.finalize((undefined(name='marker') if l_0_marker is missing else l_0_marker)))
    yield ' -->\n### hubdiff '
    yield str(environment.finalize(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'kind')))
    yield ': '
    yield str(environment.finalize(('all clear' if (environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'exit_code') == 0) else ('sources failed' if (environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'exit_code') == 3) else 'changes found'))))
    yield '\n\n'
    for l_1_r in (undefined(name='results') if l_0_results is missing else l_0_results):
        _loop_vars = {}
        pass
        yield '- '
        yield str(environment.finalize(context.call(environment.getattr({'ok': '✅', 'error': '⚠️', 'skipped': '➖', 'new release': '🆕'}, 'get'), environment.getattr(l_1_r, 'status'), '❌', _loop_vars=_loop_vars)))
        yield ' '
        yield str(environment.finalize(t_2(environment.getattr(l_1_r, 'headline'), 2000)))
        yield '\n'
    l_1_r = missing
    if (undefined(name='full_report') if l_0_full_report is missing else l_0_full_report):
        pass
        yield '\nFull report: '
        yield str(environment.finalize((undefined(name='full_report_link') if l_0_full_report_link is missing else l_0_full_report_link)))
        yield '\n'
    yield '\n'
    def t_5(fiter):
        for l_1_r in fiter:
            if (not t_4(environment.getattr(l_1_r, 'comparison'))):
                yield l_1_r
    for l_1_r in t_5((undefined(name='results') if l_0_results is missing else l_0_results)):
        l_1_c = missing
        _loop_vars = {}
        pass
        l_1_c = environment.getattr(l_1_r, 'comparison')
        _loop_vars['c'] = l_1_c
        yield str(environment.finalize(context.call(environment.getattr((undefined(name='m') if l_0_m is missing else l_0_m), 'unverified'), (undefined(name='c') if l_1_c is missing else l_1_c), _loop_vars=_loop_vars)))
        if environment.getattr(l_1_r, 'broken_claims'):
            pass
            yield '\n**Claims that no longer hold ('
            yield str(environment.finalize(t_2(environment.getattr(l_1_r, 'title'))))
            yield ')**\n\n'
            yield str(environment.finalize(context.call(environment.getattr((undefined(name='m') if l_0_m is missing else l_0_m), 'claims'), l_1_r, _loop_vars=_loop_vars)))
            yield '\n'
    l_1_r = l_1_c = missing
    l_0_steps = context.call(environment.getattr((undefined(name='m') if l_0_m is missing else l_0_m), 'next_steps'), (undefined(name='report') if l_0_report is missing else l_0_report), (undefined(name='results') if l_0_results is missing else l_0_results))
    context.vars['steps'] = l_0_steps
    context.exported_vars.add('steps')
    if t_3((undefined(name='steps') if l_0_steps is missing else l_0_steps)):
        pass
        yield str(environment.finalize((undefined(name='steps') if l_0_steps is missing else l_0_steps)))
        yield '\n'
    def t_6(fiter):
        for l_1_r in fiter:
            if (not t_4(environment.getattr(l_1_r, 'comparison'))):
                yield l_1_r
    for l_1_r in t_6((undefined(name='results') if l_0_results is missing else l_0_results)):
        l_1_release_heading = resolve('release_heading')
        l_1_max_rows = resolve('max_rows')
        l_1_c = missing
        _loop_vars = {}
        pass
        l_1_c = environment.getattr(l_1_r, 'comparison')
        _loop_vars['c'] = l_1_c
        if (environment.getattr(l_1_r, 'kind') == 'new release'):
            pass
            yield '\n#### '
            yield str(environment.finalize(t_2(context.call((undefined(name='release_heading') if l_1_release_heading is missing else l_1_release_heading), l_1_r, _loop_vars=_loop_vars))))
            yield '\n\n'
            if environment.getattr(l_1_r, 'variant'):
                pass
                yield str(environment.finalize(context.call(environment.getattr((undefined(name='m') if l_0_m is missing else l_0_m), 'storage'), environment.getattr(l_1_r, 'variant'), _loop_vars=_loop_vars)))
                yield '\n'
            yield str(environment.finalize(context.call(environment.getattr((undefined(name='m') if l_0_m is missing else l_0_m), 'claimable'), l_1_r, _loop_vars=_loop_vars)))
            yield '\n'
        if ((environment.getattr(l_1_r, 'changed') or (environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'kind') == 'diff')) or (environment.getattr(l_1_r, 'kind') == 'new release')):
            pass
            yield '\n'
            if (not environment.getattr(l_1_r, 'variant')):
                pass
                yield '#### '
                yield str(environment.finalize(t_2(environment.getattr(l_1_r, 'title'))))
                yield ': what changed that matters\n\n'
                yield str(environment.finalize(context.call(environment.getattr((undefined(name='m') if l_0_m is missing else l_0_m), 'matters'), l_1_r, _loop_vars=_loop_vars)))
                yield '\n'
            yield '\n<details><summary>'
            yield str(environment.finalize(t_2(environment.getattr(l_1_r, 'title'))))
            yield ': architecture and layer stack</summary>\n\n'
            yield str(environment.finalize(context.call(environment.getattr((undefined(name='m') if l_0_m is missing else l_0_m), 'architecture'), (undefined(name='c') if l_1_c is missing else l_1_c), _loop_vars=_loop_vars)))
            yield '\n\n'
            yield str(environment.finalize(context.call(environment.getattr((undefined(name='m') if l_0_m is missing else l_0_m), 'hub_counts'), (undefined(name='c') if l_1_c is missing else l_1_c), _loop_vars=_loop_vars)))
            yield '\n'
            yield str(environment.finalize(context.call(environment.getattr((undefined(name='m') if l_0_m is missing else l_0_m), 'strip'), (undefined(name='c') if l_1_c is missing else l_1_c), _loop_vars=_loop_vars)))
            yield '\n</details>\n\n<details><summary>'
            yield str(environment.finalize(t_2(environment.getattr(l_1_r, 'title'))))
            yield ': config changes ('
            yield str(environment.finalize(t_1(environment.getattr((undefined(name='c') if l_1_c is missing else l_1_c), 'config'))))
            yield ')</summary>\n\n'
            yield str(environment.finalize(context.call(environment.getattr((undefined(name='m') if l_0_m is missing else l_0_m), 'config_changes'), (undefined(name='c') if l_1_c is missing else l_1_c), (undefined(name='max_rows') if l_1_max_rows is missing else l_1_max_rows), (undefined(name='full_report') if l_0_full_report is missing else l_0_full_report), _loop_vars=_loop_vars)))
            yield '\n</details>\n\n<details><summary>'
            yield str(environment.finalize(t_2(environment.getattr(l_1_r, 'title'))))
            yield ': tensor layout</summary>\n\n'
            yield str(environment.finalize(context.call(environment.getattr((undefined(name='m') if l_0_m is missing else l_0_m), 'tensor_changes'), (undefined(name='c') if l_1_c is missing else l_1_c), (undefined(name='max_rows') if l_1_max_rows is missing else l_1_max_rows), (undefined(name='full_report') if l_0_full_report is missing else l_0_full_report), _loop_vars=_loop_vars)))
            yield '\n</details>\n\n<details><summary>'
            yield str(environment.finalize(t_2(environment.getattr(l_1_r, 'title'))))
            yield ': metrics and KV cache</summary>\n\n'
            yield str(environment.finalize(context.call(environment.getattr((undefined(name='m') if l_0_m is missing else l_0_m), 'metrics_table'), (undefined(name='c') if l_1_c is missing else l_1_c), (undefined(name='max_rows') if l_1_max_rows is missing else l_1_max_rows), (undefined(name='full_report') if l_0_full_report is missing else l_0_full_report), _loop_vars=_loop_vars)))
            yield '\n\n'
            yield str(environment.finalize(context.call(environment.getattr((undefined(name='m') if l_0_m is missing else l_0_m), 'kv'), l_1_r, _loop_vars=_loop_vars)))
            yield '\n</details>\n'
    l_1_r = l_1_c = l_1_release_heading = l_1_max_rows = missing

blocks = {}
debug_info = '1=43&2=46&3=48&5=52&6=56&8=61&10=64&13=67&14=75&15=77&17=81&19=83&22=86&23=89&24=91&26=93&27=103&28=105&30=108&32=110&33=112&35=114&37=116&39=119&40=122&42=124&45=127&47=129&49=131&50=133&53=135&55=139&58=141&60=143&63=145&65=147&67=149'
