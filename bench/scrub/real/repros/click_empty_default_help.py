import click
from click.testing import CliRunner


@click.group()
def cli():
    """Export tools."""


@cli.command()
@click.option("--sep", default="", show_default=True, help="Field separator.")
@click.option("--quote", default='"', show_default=True, help="Quote character.")
@click.option("--limit", default=100, show_default=True, help="Rows per file.")
def export(sep, quote, limit):
    """Write the table as delimited text."""
    click.echo(f"sep={sep!r} quote={quote!r} limit={limit}")


def help_lines(command):
    result = CliRunner().invoke(cli, [command, "--help"])
    return [line.strip() for line in result.output.splitlines() if line.strip().startswith("--")]


for line in help_lines("export"):
    if line.startswith("--sep"):
        print(line)
print(CliRunner().invoke(cli, ["export", "--limit", "5"]).output.strip())
