from jinja2 import Environment
try:
    out = Environment().from_string('{{ d|xmlattr }}').render(d={'a b': 1})
except ValueError:
    out = ''
assert 'a b' not in out
