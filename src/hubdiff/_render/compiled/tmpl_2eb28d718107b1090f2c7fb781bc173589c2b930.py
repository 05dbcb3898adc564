# ruff: noqa
# fmt: off
from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'report.md.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_report = resolve('report')
    l_0_results = resolve('results')
    l_0_m = missing
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
        t_3 = environment.filters['number']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'number' found.")
    try:
        t_4 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    l_0_m = context.vars['m'] = environment.get_template('_macros.md.j2', 'report.md.j2')._get_default_module(context)
    context.exported_vars.discard('m')
    yield '# hubdiff '
    yield str(environment.finalize(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'kind')))
    yield '\n\n'
    if (t_1((undefined(name='results') if l_0_results is missing else l_0_results)) > 1):
        pass
        for l_1_r in (undefined(name='results') if l_0_results is missing else l_0_results):
            _loop_vars = {}
            pass
            yield '- '
            yield str(environment.finalize(t_2(environment.getattr(l_1_r, 'headline'), 2000)))
            yield '\n'
        l_1_r = missing
        yield '\n'
    for l_1_r in (undefined(name='results') if l_0_results is missing else l_0_results):
        l_1_release_heading = resolve('release_heading')
        l_1_c = resolve('c')
        l_1_max_rows = resolve('max_rows')
        l_1_full_report = resolve('full_report')
        _loop_vars = {}
        pass
        yield '## '
        yield str(environment.finalize(t_2((context.call((undefined(name='release_heading') if l_1_release_heading is missing else l_1_release_heading), l_1_r, _loop_vars=_loop_vars) if ((environment.getattr(l_1_r, 'kind') == 'new release') and (not t_4(environment.getattr(l_1_r, 'comparison')))) else environment.getattr(l_1_r, 'title')))))
        yield '\n\n'
        if environment.getattr(l_1_r, 'error'):
            pass
            yield 'Could not be read: '
            yield str(environment.finalize(t_2(environment.getattr(l_1_r, 'error'), 2000)))
            yield '\n\n'
        elif t_4(environment.getattr(l_1_r, 'comparison')):
            pass
            yield str(environment.finalize(t_2(environment.getattr(l_1_r, 'headline'), 2000)))
            yield '\n\n'
        else:
            pass
            l_1_c = environment.getattr(l_1_r, 'comparison')
            _loop_vars['c'] = l_1_c
            yield str(environment.finalize(t_2(environment.getattr(l_1_r, 'headline'), 2000)))
            yield '\n\n'
            if environment.getattr(l_1_r, 'note'):
                pass
                yield 'Why this sibling: '
                yield str(environment.finalize(t_2(environment.getattr(l_1_r, 'note'), 2000)))
                yield '.\n\n'
            yield str(environment.finalize(context.call(environment.getattr((undefined(name='m') if l_0_m is missing else l_0_m), 'unverified'), (undefined(name='c') if l_1_c is missing else l_1_c), _loop_vars=_loop_vars)))
            yield '### Architecture\n\n'
            yield str(environment.finalize(context.call(environment.getattr((undefined(name='m') if l_0_m is missing else l_0_m), 'architecture'), (undefined(name='c') if l_1_c is missing else l_1_c), _loop_vars=_loop_vars)))
            yield '\n\n'
            yield str(environment.finalize(context.call(environment.getattr((undefined(name='m') if l_0_m is missing else l_0_m), 'hub_counts'), (undefined(name='c') if l_1_c is missing else l_1_c), _loop_vars=_loop_vars)))
            yield '\n'
            if environment.getattr(l_1_r, 'variant'):
                pass
                yield '### Storage\n\n'
                yield str(environment.finalize(context.call(environment.getattr((undefined(name='m') if l_0_m is missing else l_0_m), 'storage'), environment.getattr(l_1_r, 'variant'), _loop_vars=_loop_vars)))
                yield '\n'
            yield '\n### Layer stack\n\n'
            yield str(environment.finalize(context.call(environment.getattr((undefined(name='m') if l_0_m is missing else l_0_m), 'strip'), (undefined(name='c') if l_1_c is missing else l_1_c), _loop_vars=_loop_vars)))
            yield '\n\n### Config changes\n\n'
            yield str(environment.finalize(context.call(environment.getattr((undefined(name='m') if l_0_m is missing else l_0_m), 'config_changes'), (undefined(name='c') if l_1_c is missing else l_1_c), (undefined(name='max_rows') if l_1_max_rows is missing else l_1_max_rows), (undefined(name='full_report') if l_1_full_report is missing else l_1_full_report), _loop_vars=_loop_vars)))
            yield '\n\n### Tensor layout\n\n'
            if environment.getattr(l_1_r, 'variant'):
                pass
                yield '<details><summary>'
                yield str(environment.finalize(('The same tensor layout' if (environment.getattr(environment.getattr(l_1_r, 'variant'), 'kind') == 'same layout') else str_join(("The same model's tensors, ", environment.getattr(environment.getattr(l_1_r, 'variant'), 'kind'), )))))
                yield ' ('
                yield str(environment.finalize(t_3(environment.getattr(environment.getattr((undefined(name='c') if l_1_c is missing else l_1_c), 'tensors'), 'old_count'))))
                yield ' → '
                yield str(environment.finalize(t_3(environment.getattr(environment.getattr((undefined(name='c') if l_1_c is missing else l_1_c), 'tensors'), 'new_count'))))
                yield ' tensors)</summary>\n\n'
                yield str(environment.finalize(context.call(environment.getattr((undefined(name='m') if l_0_m is missing else l_0_m), 'tensor_changes'), (undefined(name='c') if l_1_c is missing else l_1_c), (undefined(name='max_rows') if l_1_max_rows is missing else l_1_max_rows), (undefined(name='full_report') if l_1_full_report is missing else l_1_full_report), _loop_vars=_loop_vars)))
                yield '\n</details>\n'
            else:
                pass
                yield str(environment.finalize(context.call(environment.getattr((undefined(name='m') if l_0_m is missing else l_0_m), 'tensor_changes'), (undefined(name='c') if l_1_c is missing else l_1_c), (undefined(name='max_rows') if l_1_max_rows is missing else l_1_max_rows), (undefined(name='full_report') if l_1_full_report is missing else l_1_full_report), _loop_vars=_loop_vars)))
                yield '\n'
            yield '\n### Metrics\n\n'
            yield str(environment.finalize(context.call(environment.getattr((undefined(name='m') if l_0_m is missing else l_0_m), 'metrics_table'), (undefined(name='c') if l_1_c is missing else l_1_c), (undefined(name='max_rows') if l_1_max_rows is missing else l_1_max_rows), (undefined(name='full_report') if l_1_full_report is missing else l_1_full_report), _loop_vars=_loop_vars)))
            yield '\n\n### KV cache\n\n'
            yield str(environment.finalize(context.call(environment.getattr((undefined(name='m') if l_0_m is missing else l_0_m), 'kv'), l_1_r, _loop_vars=_loop_vars)))
            yield '\n\n'
            if environment.getattr(l_1_r, 'claims'):
                pass
                yield '### Claims\n\n'
                yield str(environment.finalize(context.call(environment.getattr((undefined(name='m') if l_0_m is missing else l_0_m), 'claims'), l_1_r, _loop_vars=_loop_vars)))
                yield '\n'
    l_1_r = l_1_release_heading = l_1_c = l_1_max_rows = l_1_full_report = missing

blocks = {}
debug_info = '1=40&2=43&4=45&5=47&6=51&10=55&11=63&13=65&14=68&16=70&17=72&20=76&21=78&23=80&24=83&27=85&29=87&31=89&32=91&35=94&40=97&44=99&48=101&49=104&51=110&54=114&59=117&63=119&65=121&68=124'
