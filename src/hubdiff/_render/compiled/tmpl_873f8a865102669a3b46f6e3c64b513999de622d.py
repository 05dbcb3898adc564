# ruff: noqa
# fmt: off
from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'summary.md.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_report = resolve('report')
    l_0_results = resolve('results')
    l_0_full_report = resolve('full_report')
    l_0_full_report_link = resolve('full_report_link')
    l_0_m = missing
    try:
        t_1 = environment.filters['md']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'md' found.")
    pass
    l_0_m = context.vars['m'] = environment.get_template('_macros.md.j2', 'summary.md.j2')._get_default_module(context)
    context.exported_vars.discard('m')
    yield '## hubdiff '
    yield str(environment.finalize(environment.getattr((undefined(name='report') if l_0_report is missing else l_0_report), 'kind')))
    yield '\n\n| | repo | status |\n|---|---|---|\n'
    for l_1_r in (undefined(name='results') if l_0_results is missing else l_0_results):
        _loop_vars = {}
        pass
        yield '| '
        yield str(environment.finalize(context.call(environment.getattr({'ok': '✅', 'error': '⚠️', 'skipped': '➖', 'new release': '🆕'}, 'get'), environment.getattr(l_1_r, 'status'), '❌', _loop_vars=_loop_vars)))
        yield ' | '
        yield str(environment.finalize(t_1(environment.getattr(l_1_r, 'title'))))
        yield ' | '
        yield str(environment.finalize(environment.getattr(l_1_r, 'status')))
        yield ' |\n'
    l_1_r = missing
    yield '\n'
    for l_1_r in (undefined(name='results') if l_0_results is missing else l_0_results):
        _loop_vars = {}
        pass
        yield '- '
        yield str(environment.finalize(t_1(environment.getattr(l_1_r, 'headline'), 2000)))
        yield '\n'
    l_1_r = missing
    def t_2(fiter):
        for l_1_r in fiter:
            if environment.getattr(l_1_r, 'broken_claims'):
                yield l_1_r
    for l_1_r in t_2((undefined(name='results') if l_0_results is missing else l_0_results)):
        _loop_vars = {}
        pass
        yield '\n**'
        yield str(environment.finalize(t_1(environment.getattr(l_1_r, 'title'))))
        yield ': claims that no longer hold**\n\n'
        yield str(environment.finalize(context.call(environment.getattr((undefined(name='m') if l_0_m is missing else l_0_m), 'claims'), l_1_r, _loop_vars=_loop_vars)))
        yield '\n'
    l_1_r = missing
    if (undefined(name='full_report') if l_0_full_report is missing else l_0_full_report):
        pass
        yield '\nFull report: '
        yield str(environment.finalize((undefined(name='full_report_link') if l_0_full_report_link is missing else l_0_full_report_link)))
        yield '\n'

blocks = {}
debug_info = '1=24&2=27&6=29&7=33&10=41&11=45&13=48&15=56&17=58&19=61&21=64'
