import sys

import click

APP_NAME = "cmpr"
DEFAULT_LIMIT = 45
THEMES = {"dark": "black", "light": "white"}


@click.group()
@click.option("--theme", type=click.Choice(sorted(THEMES)), default="dark")
@click.pass_context
def cli(ctx, theme):
    """cmpr: small comparison tools."""
    ctx.ensure_object(dict)
    ctx.obj["theme"] = theme


@cli.command()
@click.argument("left")
@click.argument("right")
def compare(left, right):
    """Compare inputs, e.g. files vs. folders, and report what differs between them."""
    click.echo(f"{left} vs {right}")


@cli.command()
def version():
    """Print the version and exit."""
    click.echo("1.0")


def listing(group, limit=DEFAULT_LIMIT):
    rows = []
    for name in sorted(group.commands):
        rows.append((name, group.commands[name].get_short_help_str(limit=limit)))
    return rows


def render(rows):
    width = max(len(n) for n, _ in rows)
    return "\n".join(f"  {n.ljust(width)}  {h}" for n, h in rows)


def banner(name=APP_NAME):
    return f"== {name} =="


print(banner())
rows = listing(cli, limit=200)
print(render(rows))
help_of = dict(rows)
sys.stdout.flush()
print(help_of["compare"] == "Compare inputs, e.g. files vs. folders, and report what differs between them.")
