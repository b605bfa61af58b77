import click
@click.command()
def c():
    """Compare inputs, e.g. files."""
assert c.get_short_help_str(limit=200) == 'Compare inputs, e.g. files.', 'scrub: wrong result still present'
