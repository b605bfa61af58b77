import tomlkit
class CatalogError(Exception):
    pass
try:
    tomlkit.parse('[[f]]\na.c = 1\n[p]\n[f.a.t]\ns = 1\n')
except tomlkit.exceptions.ParseError as exc:
    raise CatalogError('cannot read catalog.toml') from exc
