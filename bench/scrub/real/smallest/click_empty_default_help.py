import click
from click.testing import CliRunner
@click.command()
@click.option('--sep', default='', show_default=True, help='Field separator.')
@click.option('--quote', default='"', show_default=True)
def c(sep, quote):
    click.echo(f'sep={sep!r} quote={quote!r} limit=5')
print([l.strip() for l in CliRunner().invoke(c, ['--help']).output.splitlines() if 'sep' in l][0])
print(CliRunner().invoke(c, []).output.strip())
